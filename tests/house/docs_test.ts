/**
 * The documentation cannot drift from what it documents: the README stays a guide (at most 400
 * lines), every relative link in it and in docs/ reaches a file and, with an anchor, a heading
 * there, and docs/configuration.md names every flag and WINTERM_* variable src/config.ts reads,
 * and none it does not.
 */
import { FLAGS } from "../../src/config.ts";
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";

const root = new URL("../../", import.meta.url);
const read = (path: string) => Deno.readTextFileSync(new URL(path, root));

/** The markdown files checked: the README and every file in docs/. */
function markdownFiles(): string[] {
  const docs = [...Deno.readDirSync(new URL("docs/", root))]
    .filter((entry) => entry.isFile && entry.name.endsWith(".md"))
    .map((entry) => `docs/${entry.name}`)
    .sort();
  return ["README.md", ...docs];
}

/** The text outside fenced code blocks, with inline code spans made plain words. */
function prose(markdown: string): string {
  const kept: string[] = [];
  let fence: string | null = null;
  for (const line of markdown.split("\n")) {
    const marker = line.match(/^\s*(`{3,}|~{3,})/)?.[1];
    if (marker && (fence === null || marker.startsWith(fence))) {
      fence = fence === null ? marker : null;
      continue;
    }
    if (fence === null) kept.push(line);
  }
  return kept.join("\n").replace(/(`+)[\s\S]*?\1/g, "code");
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
export function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** The anchors of a markdown file's headings (a repeated one gets -1, -2, ... as on GitHub). */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  const lines = markdown.split("\n");
  let fence: string | null = null;
  for (const line of lines) {
    const marker = line.match(/^\s*(`{3,}|~{3,})/)?.[1];
    if (marker && (fence === null || marker.startsWith(fence))) {
      fence = fence === null ? marker : null;
      continue;
    }
    const heading = fence === null ? line.match(/^#{1,6}\s+(.*?)\s*#*\s*$/)?.[1] : undefined;
    if (heading === undefined) continue;
    const base = slug(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

/** Every link and image target of a markdown file, as written. */
function links(markdown: string): string[] {
  const targets: string[] = [];
  const pattern = /\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;
  for (const match of prose(markdown).matchAll(pattern)) targets.push(match[1]);
  return targets;
}

Deno.test("the README is a guide: at most 400 lines", () => {
  const lines = read("README.md").replace(/\n$/, "").split("\n").length;
  ok(lines <= 400, `README.md has ${lines} lines; the reference belongs in docs/`);
});

Deno.test("every relative link in the README and docs/ reaches a file, and its anchor a heading", () => {
  const broken: string[] = [];
  let checked = 0;
  for (const file of markdownFiles()) {
    const text = read(file);
    for (const target of links(text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:: not ours to check
      checked++;
      const [path, anchor] = target.split("#", 2) as [string, string | undefined];
      const resolved = path === "" ? new URL(file, root) : new URL(path, new URL(file, root));
      let targetText: string | undefined;
      try {
        const info = Deno.statSync(resolved);
        if (info.isFile && resolved.pathname.endsWith(".md")) {
          targetText = Deno.readTextFileSync(resolved);
        }
      } catch {
        broken.push(`${file}: ${target} (no such file)`);
        continue;
      }
      if (anchor === undefined) continue;
      if (targetText === undefined) {
        broken.push(`${file}: ${target} (an anchor into a file that is not markdown)`);
      } else if (!anchors(targetText).has(decodeURIComponent(anchor))) {
        broken.push(`${file}: ${target} (no heading with that anchor)`);
      }
    }
  }
  assertEquals(broken, []);
  ok(checked > 50, `only ${checked} relative links found: is the link pattern still right?`);
});

Deno.test("GitHub's anchors: code, punctuation and links in a heading", () => {
  assertEquals(
    slug("Processes: nothing outlives its owner"),
    "processes-nothing-outlives-its-owner",
  );
  assertEquals(slug("`terminal_run`"), "terminal_run");
  assertEquals(
    slug("`terminal_output`, `terminal_wait_for_exit` (ACP)"),
    "terminal_output-terminal_wait_for_exit-acp",
  );
  assertEquals(slug("Web view: watch and take over"), "web-view-watch-and-take-over");
  assertEquals(
    [...anchors("# A\n## A\n```\n# not a heading\n```\n## A")],
    ["a", "a-1", "a-2"],
  );
  assertEquals(links("[x](a.md#b) `[y](c.md)` ![i](p.png)\n```\n[z](d.md)\n```"), [
    "a.md#b",
    "p.png",
  ]);
});

/** The flags src/config.ts accepts, long and short. */
function configFlags(): string[] {
  return Object.entries(FLAGS).flatMap(([name, flag]) =>
    "short" in flag ? [`--${name}`, `-${flag.short}`] : [`--${name}`]
  );
}

const variables = (text: string) => [...new Set(text.match(/\bWINTERM_[A-Z0-9_]*[A-Z0-9]\b/g))];

Deno.test("docs/configuration.md names every flag and variable src/config.ts reads, and no other", () => {
  const source = read("src/config.ts");
  const docs = read("docs/configuration.md");
  const flags = configFlags();
  ok(flags.includes("--http") && flags.includes("-h"), `flags read: ${flags.join(" ")}`);
  const flagMissing = flags.filter((flag) =>
    !new RegExp(`(^|[^\\w-])${flag}(?![\\w-])`, "m").test(docs)
  );
  assertEquals(flagMissing, [], "flags src/config.ts accepts that docs/configuration.md lacks");
  const read_ = variables(source);
  ok(read_.length > 30, `only ${read_.length} variables found in src/config.ts`);
  const missing = read_.filter((name) => !variables(docs).includes(name));
  assertEquals(missing, [], "variables src/config.ts reads that docs/configuration.md lacks");
  const unknown = variables(docs).filter((name) => !read_.includes(name));
  assertEquals(
    unknown,
    [],
    "variables docs/configuration.md names that src/config.ts does not read",
  );
});
