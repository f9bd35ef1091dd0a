/**
 * A sandbox's network allowlist: which hosts a sandboxed program may reach through the proxy.
 * An entry is a host name (`api.example.com`), every name below one (`*.example.org`, not
 * `example.org` itself), or an IP literal (`10.0.0.5`, `[::1]`), each optionally with a port
 * (`api.example.com:443`). Names are compared in lower case without a trailing dot. A name that
 * resolves to loopback, link-local or a cloud metadata address is refused however it is
 * listed: an IP literal is the only way to allow one.
 *
 * Allowlists combine by intersection: a connection must be allowed by every list in force (the
 * operator's, the policy file's, the call's), so a call can only narrow what it is given.
 *
 * @example
 * ```ts
 * import { allows, parseHostRule } from "./hosts.ts";
 * const rule = parseHostRule("*.example.org");
 * typeof rule !== "string" && allows([rule], "api.example.org", 443); // true
 * ```
 * @module
 */

/** One allowlist entry, parsed. */
export interface HostRule {
  /** As written. */
  text: string;
  /** Lower case, no trailing dot; for a wildcard, the suffix after `*.`; IPv6 without brackets. */
  host: string;
  wildcard: boolean;
  /** An IP literal (then only that address matches). */
  literal?: "ipv4" | "ipv6";
  port?: number;
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** Whether `text` is an IPv6 address (no brackets, no zone). */
export function isIpv6(text: string): boolean {
  if (!/^[0-9a-f:.]+$/i.test(text) || !text.includes(":")) return false;
  return ipv6Words(text) !== undefined;
}

/** The eight 16-bit words of an IPv6 address, or undefined if it is not one. */
export function ipv6Words(text: string): number[] | undefined {
  let tail: number[] = [];
  let body = text;
  const v4 = body.match(/^(.*:)(\d+\.\d+\.\d+\.\d+)$/);
  if (v4) {
    if (!IPV4.test(v4[2])) return undefined;
    const [a, b, c, d] = v4[2].split(".").map(Number);
    tail = [(a << 8) | b, (c << 8) | d];
    body = v4[1].endsWith("::") ? v4[1] : v4[1].slice(0, -1);
  }
  const halves = body.split("::");
  if (halves.length > 2) return undefined;
  const words = (part: string) => (part === "" ? [] : part.split(":"));
  const parse = (list: string[]) =>
    list.map((word) => (/^[0-9a-f]{1,4}$/i.test(word) ? parseInt(word, 16) : NaN));
  const head = parse(words(halves[0]));
  const rest = halves.length === 2 ? parse(words(halves[1])) : [];
  if ([...head, ...rest].some(Number.isNaN)) return undefined;
  const count = head.length + rest.length + tail.length;
  if (halves.length === 1 ? count !== 8 : count > 7) return undefined;
  return [...head, ...Array(8 - count).fill(0), ...rest, ...tail];
}

/** Parses an entry; answers why it is not one (a string) when it is not. */
export function parseHostRule(text: string): HostRule | string {
  let rest = text.trim().toLowerCase();
  let port: number | undefined;
  let literal: HostRule["literal"];
  const bracketed = rest.match(/^\[([^\]]+)\](?::(\d+))?$/);
  if (bracketed) {
    if (!isIpv6(bracketed[1])) return "not an IPv6 address in brackets";
    rest = bracketed[1];
    literal = "ipv6";
    if (bracketed[2] !== undefined) port = Number(bracketed[2]);
  } else if (isIpv6(rest)) {
    literal = "ipv6";
  } else {
    const withPort = rest.match(/^(.*):(\d+)$/);
    if (withPort) {
      rest = withPort[1];
      port = Number(withPort[2]);
    }
    if (IPV4.test(rest)) literal = "ipv4";
  }
  if (port !== undefined && (!Number.isInteger(port) || port < 1 || port > 65535)) {
    return "its port must be 1 to 65535";
  }
  if (literal) return { text, host: rest, wildcard: false, literal, ...(port ? { port } : {}) };
  const wildcard = rest.startsWith("*.");
  const name = (wildcard ? rest.slice(2) : rest).replace(/\.$/, "");
  if (name.length === 0 || name.length > 253) return "a host name of 1 to 253 characters";
  const labels = name.split(".");
  if (!labels.every((label) => LABEL.test(label))) {
    return "a host name (letters, digits, '-', dots), '*.' and a name, or an IP address";
  }
  if (wildcard && labels.length < 2) return "'*.' must be followed by a name with a dot";
  return { text, host: name, wildcard, ...(port ? { port } : {}) };
}

/** Normalises a requested host: lower case, no trailing dot, IPv6 without brackets. */
export function normalHost(host: string): string {
  const lower = host.toLowerCase().replace(/\.$/, "");
  return lower.startsWith("[") && lower.endsWith("]") ? lower.slice(1, -1) : lower;
}

/** Whether `rule` allows `host` (normalised) on `port`. */
export function ruleAllows(rule: HostRule, host: string, port: number): boolean {
  if (rule.port !== undefined && rule.port !== port) return false;
  if (rule.literal === "ipv6") return sameIpv6(rule.host, host);
  if (rule.wildcard) return host.endsWith("." + rule.host);
  return host === rule.host;
}

function sameIpv6(a: string, b: string): boolean {
  const x = ipv6Words(a), y = ipv6Words(b);
  return x !== undefined && y !== undefined && x.every((word, index) => word === y[index]);
}

/** Whether some rule of `list` allows it. */
export function allows(list: readonly HostRule[], host: string, port: number): boolean {
  return list.some((rule) => ruleAllows(rule, host, port));
}

/** Whether `outer` allows everything `inner` allows. */
export function covers(outer: HostRule, inner: HostRule): boolean {
  if (outer.port !== undefined && outer.port !== inner.port) return false;
  if (inner.wildcard) {
    return outer.wildcard && (inner.host === outer.host || inner.host.endsWith("." + outer.host));
  }
  return ruleAllows({ ...outer, port: undefined }, inner.host, 0);
}

/** Whether a literal address is loopback, link-local, unspecified or a metadata service. */
export function isForbiddenAddress(address: string): boolean {
  if (IPV4.test(address)) {
    const [a, b] = address.split(".").map(Number);
    return a === 127 || a === 0 || (a === 169 && b === 254) || address === "100.100.100.200";
  }
  const words = ipv6Words(address);
  if (!words) return true; // not an address at all: nothing to connect to
  if (words.slice(0, 5).every((word) => word === 0) && words[5] === 0xffff) {
    // IPv4-mapped: judged as the IPv4 address.
    const v4 = `${words[6] >> 8}.${words[6] & 255}.${words[7] >> 8}.${words[7] & 255}`;
    return isForbiddenAddress(v4);
  }
  const loopbackOrUnspecified = words.slice(0, 7).every((word) => word === 0) && words[7] <= 1;
  const linkLocal = (words[0] & 0xffc0) === 0xfe80;
  const awsMetadata = words[0] === 0xfd00 && words[1] === 0x0ec2 && words[7] === 0x254 &&
    words.slice(2, 7).every((word) => word === 0);
  return loopbackOrUnspecified || linkLocal || awsMetadata;
}
