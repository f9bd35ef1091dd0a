/**
 * Origin checks: an Origin is this server only with its scheme, host and port (a page of this
 * host on another port is another origin), configured CORS origins as written or as browsers
 * write them, and hostile headers never throw nor match by accident.
 */
import { ok } from "node:assert/strict";
import { fc } from "../helpers/arbitraries.ts";
import { Guard, sameOrigin } from "../../src/http/security.ts";

const loopback = new Guard({ loopback: true, allowedHosts: [], corsOrigins: [] });

Deno.test("Origin: this host on another port is refused, with or without the default port", () => {
  ok(loopback.originAllowed("http://localhost:3001", "localhost:3001"));
  ok(loopback.originAllowed("http://127.0.0.1:3001", "127.0.0.1:3001"));
  ok(loopback.originAllowed("http://[::1]:3001", "[::1]:3001"));
  ok(loopback.originAllowed("https://localhost:3001", "localhost:3001"), "TLS in front");
  ok(loopback.originAllowed(null, "localhost:3001"), "no Origin: not a browser's cross-site call");
  // The issue's case: a page of this host on another port, with the token.
  ok(!loopback.originAllowed("http://localhost:8080", "localhost:3001"));
  ok(!loopback.originAllowed("http://127.0.0.1:3002", "127.0.0.1:3001"));
  ok(!loopback.originAllowed("http://localhost", "localhost:3001"));
  // Another name for this machine is another origin too.
  ok(!loopback.originAllowed("http://127.0.0.1:3001", "localhost:3001"));
  ok(loopback.originAllowed("http://localhost", "localhost:80"));
  ok(!loopback.originAllowed("http://localhost:80", "localhost"), "not as a browser writes it");
  // The Host itself must name this server.
  ok(!loopback.originAllowed("http://evil.example:3001", "evil.example:3001"));
  ok(!loopback.originAllowed("null", "localhost:3001"));
  ok(!loopback.originAllowed("file://", "localhost:3001"));
  ok(!loopback.originAllowed("http://localhost:3001/x", "localhost:3001"));
  ok(!loopback.originAllowed("http://user@localhost:3001", "localhost:3001"));
});

Deno.test("Origin: configured CORS origins and allowed hosts keep working", () => {
  const guard = new Guard({
    loopback: false,
    allowedHosts: ["winterm.example"],
    corsOrigins: ["https://app.example", "HTTP://Tools.Example:8080"],
  });
  ok(guard.originAllowed("https://app.example", "winterm.example"));
  ok(guard.originAllowed("http://tools.example:8080", "winterm.example"));
  ok(guard.corsAllowed("http://tools.example:8080"));
  ok(!guard.originAllowed("https://app.example:444", "winterm.example"));
  ok(guard.originAllowed("https://winterm.example", "winterm.example"), "behind TLS on 443");
  ok(!guard.originAllowed("https://winterm.example:8443", "winterm.example"));
});

Deno.test("Origin: an origin matches a Host exactly when host and port agree", () => {
  const name = fc.constantFrom("localhost", "127.0.0.1", "[::1]", "winterm.example");
  const port = fc.oneof(fc.constant(80), fc.constant(443), fc.integer({ min: 1, max: 65535 }));
  fc.assert(
    fc.property(
      fc.constantFrom("http", "https"),
      name,
      port,
      name,
      fc.option(port, { nil: undefined }),
      (scheme, originName, originPort, hostName, hostPort) => {
        const defaultPort = scheme === "http" ? 80 : 443;
        const origin = `${scheme}://${originName}${
          originPort === defaultPort ? "" : `:${originPort}`
        }`;
        const host = hostPort === undefined ? hostName : `${hostName}:${hostPort}`;
        const expected = originName === hostName && originPort === (hostPort ?? defaultPort);
        ok(sameOrigin(origin, host) === expected, `${origin} from ${host}`);
      },
    ),
    { numRuns: 3000 },
  );
});

Deno.test("Origin: hostile headers never throw, and match only what a browser writes", () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 80 }), fc.string({ maxLength: 40 }), (origin, host) => {
      const allowed = loopback.originAllowed(origin, host);
      if (allowed) ok(/^https?:\/\/[^/]+$/i.test(origin), origin);
    }),
    { numRuns: 3000 },
  );
});
