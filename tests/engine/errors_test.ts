/**
 * The engine's language (src/engine/errors.ts): its errors name fields by the engine's keys and
 * advise next steps by code; a front end's wording says both its own way, and nothing else of
 * the message changes, whatever text a client or a program put in it.
 */
import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
import fc from "fast-check";
import { EngineError, HINT_CODES, renameField, type Wording } from "../../src/engine/errors.ts";
import { terminalEncodingRefusal } from "../../src/engine/encoding.ts";
import { mcpWording } from "../../src/mcp/wording.ts";
import { REST_WORDING } from "../../src/http/wording.ts";
import { terminalTools } from "../../src/mcp/terminal_tools.ts";
import { wintermTools } from "../../src/mcp/winterm_tools.ts";

const CODES = HINT_CODES;

/** A wording that marks what it renames, to see exactly what it touched. */
const marking: Wording = {
  field: (key) => `<${key}>`,
  way: (way, hint) => `[${way}@${hint.terminalId}]`,
};

Deno.test("a message's text is never reworded: only the fields it names and the hint's advice", () => {
  fc.assert(
    fc.property(
      fc.array(fc.oneof(fc.string(), fc.record({ field: fc.string() }))),
      fc.option(fc.constantFrom(...CODES), { nil: undefined }),
      fc.string(),
      (words, code, id) => {
        const hint = code === undefined ? undefined : { code, terminalId: id };
        const error = new EngineError("busy", words, { hint });
        const plain = words.map((word) => typeof word === "string" ? word : word.field).join("");
        assertEquals(error.message, plain);
        const marked = words.map((word) => typeof word === "string" ? word : `<${word.field}>`)
          .join("");
        const said = error.worded(marking, false);
        ok(said.startsWith(marked));
        if (hint === undefined) assertEquals(said, marked);
        else ok(said.slice(marked.length).startsWith(": "));
      },
    ),
  );
});

Deno.test("every hint code advises steps in words that name no tool, and each front end words them", () => {
  // What frees a slot when a limit is reached, and how to get pipes, are about no one terminal.
  const NO_TERMINAL: readonly string[] = ["release-some", "end-some", "use-pipes"];
  for (const code of CODES) {
    const error = new EngineError("busy", "x", { hint: { code, terminalId: "t/1" } });
    const mcp = error.worded(mcpWording(), false);
    const rest = error.worded(REST_WORDING, false);
    match(mcp, /(terminal|query_command|terminate_command|run_command)_?[a-z]*/, code);
    ok(!/terminal_[a-z]+|ctrl_c|_command\b/.test(rest), rest);
    ok(!/\([^)]*\b(type|read|wait-prompt|interrupt|type-and-read)\)/.test(mcp), mcp);
    if (NO_TERMINAL.includes(code)) continue;
    // The id in a path is encoded: whatever it holds, the endpoint is one path.
    match(rest, /\/api\/terminals\/t%2F1\//, code);
  }
});

Deno.test("the encoding a terminal cannot apply: the engine names no front end's field, each front end says how it gets pipes", () => {
  // Issue 39: the engine named its own `usePty`, which terminal_create's client read as
  // "run_command's use_pty" and REST's as `usePty`, a field the API does not have.
  const refusal = terminalEncodingRefusal("cp437");
  assertEquals(refusal.field, "encoding");
  ok(refusal.words.every((word) => typeof word === "string"), JSON.stringify(refusal.words));
  const unused = () => Promise.reject(new Error("not used"));
  const tool = (tools: { name: string; fieldNames?: Record<string, string> }[], name: string) =>
    mcpWording(tools.find((tool) => tool.name === name)!.fieldNames);
  const said = {
    run_command: refusal.worded(tool(wintermTools(unused, "mcp-stdio"), "run_command"), false),
    terminal_create: refusal.worded(
      tool(terminalTools(unused, "mcp-stdio"), "terminal_create"),
      false,
    ),
    rest: refusal.worded(REST_WORDING, false),
  };
  for (const text of Object.values(said)) {
    match(
      text,
      /^'cp437' cannot apply here: .*: run it with pipes to have its bytes decoded as given \(/,
    );
    ok(!/usePty|run_command's/.test(text), text);
  }
  match(said.run_command, /\(run_command with use_pty: false\)$/);
  match(said.terminal_create, /\(run_command with use_pty: false\)$/);
  match(said.rest, /\(over MCP: the API starts terminals only\)$/);
  ok(!/use_pty|run_command/.test(said.rest), said.rest);
});

Deno.test("a field path's first part is renamed, the rest kept", () => {
  const names = { cwd: "working_directory", sandbox: "box" };
  assertEquals(renameField("cwd", names), "working_directory");
  assertEquals(renameField("sandbox.network.allow[2]", names), "box.network.allow[2]");
  assertEquals(renameField("sandbox[0]", names), "box[0]");
  assertEquals(renameField("command", names), "command");
  // Only its own keys: an inherited name is no field of the map.
  assertEquals(renameField("constructor", names), "constructor");
  assertEquals(mcpWording({ cwd: "working_directory" }).field("cwd"), "working_directory");
  assertEquals(REST_WORDING.field("terminalId"), "id");
});

Deno.test("local detail is for the local user only; a restated error keeps words, detail and hint", () => {
  const error = new EngineError("invalid_input", ["Pass ", { field: "allowAnsiMismatch" }], {
    field: "args",
    detail: "PATH=/bin",
    hint: { code: "one-line", terminalId: "t1" },
  });
  const snake = mcpWording({ allowAnsiMismatch: "allow_ansi_mismatch" });
  assertEquals(
    error.worded(snake, true),
    "Pass allow_ansi_mismatch (PATH=/bin): chain commands with ; or &&, or type anything else " +
      "(terminal_write)",
  );
  ok(!error.worded(snake, false).includes("PATH=/bin"));
  const restated = error.restated({ more: " (the interpreter)", field: "command" });
  assertEquals(restated.field, "command");
  assertEquals(
    restated.worded(snake, true),
    "Pass allow_ansi_mismatch (the interpreter) (PATH=/bin): chain commands with ; or &&, or " +
      "type anything else (terminal_write)",
  );
  assertEquals(restated.localMessage, "Pass allowAnsiMismatch (the interpreter) (PATH=/bin)");
});
