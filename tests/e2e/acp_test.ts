/**
 * ACP compatibility through the real server: requests as ACP clients and agents send them
 * (checked first against the JSON schema shipped in npm @agentclientprotocol/sdk, so the test
 * cannot send what ACP does not allow), answered, and every answer checked against the schema
 * of ACP's response for that method.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
// @ts-types="ajv/dist/2020.d.ts"
import { Ajv2020 } from "ajv/dist/2020.js";
import { type Connection, serverTest } from "../helpers/mcp.ts";

const posix = Deno.build.os !== "windows";

/** The schema file of the pinned SDK, from Deno's npm cache (the package exports no path to it). */
async function acpSchema(): Promise<Record<string, unknown>> {
  const info = await new Deno.Command(Deno.execPath(), { args: ["info", "--json"] }).output();
  const { npmCache } = JSON.parse(new TextDecoder().decode(info.stdout));
  const path =
    `${npmCache}/registry.npmjs.org/@agentclientprotocol/sdk/2.4.0/schema/v1/schema.json`;
  return JSON.parse(await Deno.readTextFile(path));
}

const ajv = new Ajv2020({ strict: false, allErrors: true });
// The schema's numeric formats (from Rust types), checked for what they say.
const integer = (low: number, high: number) => (n: number) =>
  Number.isInteger(n) && n >= low && n <= high;
for (
  const [name, validate] of Object.entries({
    uint16: integer(0, 0xffff),
    uint32: integer(0, 0xffff_ffff),
    uint64: integer(0, Number.MAX_SAFE_INTEGER),
    int64: integer(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER),
    double: Number.isFinite,
  })
) ajv.addFormat(name, { type: "number", validate });
ajv.addSchema(await acpSchema(), "acp");

/** Throws unless `value` is valid as ACP's `definition`. */
function check(definition: string, value: unknown): void {
  const validate = ajv.getSchema(`acp#/$defs/${definition}`);
  ok(validate, `no ${definition} in the schema`);
  ok(
    validate(value),
    `${definition}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(value)}`,
  );
}

/** Sends an ACP request (valid as `definition`) to `tool`; checks the answer as `answer`. */
async function call<T>(
  mcp: Connection,
  tool: string,
  request: Record<string, unknown>,
  definition: string,
  answer: string,
): Promise<T> {
  check(definition, request);
  const result = await mcp.callOk<T>(tool, request);
  check(answer, result);
  return result;
}

const sessionId = "sess_abc123def456";

serverTest(
  "ACP requests with sessionId, _meta and nulls are accepted, answers match ACP's schema",
  async (mcp) => {
    ok(acp.PROTOCOL_VERSION >= 1);
    const cwd = Deno.realPathSync(Deno.makeTempDirSync());
    try {
      const created = await call<{ terminalId: string }>(
        mcp,
        "terminal_create",
        {
          sessionId,
          command: "printf",
          args: ["%s\\n", "acp-ok"],
          env: [{ name: "ACP_ENV", value: "1", _meta: { source: "test" } }],
          cwd,
          outputByteLimit: 1_048_576,
          _meta: { "zed.dev/toolCallId": "call_002" },
        },
        "CreateTerminalRequest",
        "CreateTerminalResponse",
      );
      const { terminalId } = created;
      const exit = await call<{ exitCode: number }>(
        mcp,
        "terminal_wait_for_exit",
        {
          sessionId,
          terminalId,
          _meta: null,
        },
        "WaitForTerminalExitRequest",
        "WaitForTerminalExitResponse",
      );
      assertEquals(exit.exitCode, 0);
      const output = await call<{ output: string; truncated: boolean }>(
        mcp,
        "terminal_output",
        {
          sessionId,
          terminalId,
          _meta: {},
        },
        "TerminalOutputRequest",
        "TerminalOutputResponse",
      );
      assertEquals([output.output, output.truncated], ["acp-ok\n", false]);
      await call(
        mcp,
        "terminal_kill",
        { sessionId, terminalId },
        "KillTerminalRequest",
        "KillTerminalResponse",
      );
      await call(
        mcp,
        "terminal_release",
        { sessionId, terminalId, _meta: { x: [1] } },
        "ReleaseTerminalRequest",
        "ReleaseTerminalResponse",
      );
    } finally {
      Deno.removeSync(cwd, { recursive: true });
    }

    // null for every optional field, as serde-based clients send an absent Option.
    const nulls = {
      sessionId,
      command: "echo null-ok",
      args: null,
      env: null,
      cwd: null,
      outputByteLimit: null,
      _meta: null,
    };
    const second = await mcp.callOk<{ terminalId: string }>("terminal_create", nulls);
    check("CreateTerminalResponse", second);
    await mcp.callOk("terminal_wait_for_exit", { sessionId, terminalId: second.terminalId });
    const shown = await call<{ output: string }>(
      mcp,
      "terminal_output",
      {
        sessionId,
        terminalId: second.terminalId,
      },
      "TerminalOutputRequest",
      "TerminalOutputResponse",
    );
    assertEquals(shown.output, "null-ok\n");
    await mcp.callOk("terminal_release", { sessionId, terminalId: second.terminalId });
  },
  { ignore: !posix },
);

serverTest(
  "ACP: outputByteLimit 0 keeps nothing; args [] is a command line for the shell, as Zed runs it",
  async (mcp) => {
    const run = async (request: Record<string, unknown>) => {
      const { terminalId } = await call<{ terminalId: string }>(
        mcp,
        "terminal_create",
        { sessionId, ...request },
        "CreateTerminalRequest",
        "CreateTerminalResponse",
      );
      const exit = await mcp.callOk<{ exitCode: number | null }>("terminal_wait_for_exit", {
        sessionId,
        terminalId,
      });
      const out = await call<{ output: string; truncated: boolean }>(
        mcp,
        "terminal_output",
        {
          sessionId,
          terminalId,
        },
        "TerminalOutputRequest",
        "TerminalOutputResponse",
      );
      await mcp.callOk("terminal_release", { sessionId, terminalId });
      return { ...out, exitCode: exit.exitCode };
    };
    assertEquals(await run({ command: "echo something", outputByteLimit: 0 }), {
      output: "",
      truncated: true,
      exitStatus: { exitCode: 0, signal: null },
      exitCode: 0,
    });
    // What kimi-cli, claude-agent-acp and others send: a whole command line, no args, or [].
    const line = "echo $((6 * 7)) | tr 4 x && exit 3";
    const withEmpty = await run({ command: line, args: [] });
    const without = await run({ command: line });
    assertEquals(withEmpty.output, "x2\n");
    assertEquals([withEmpty.exitCode, without.exitCode, without.output], [3, 3, "x2\n"]);
    // With arguments: that program, with exactly those arguments (no shell between).
    const exact = await run({ command: "printf", args: ["[%s]", "$HOME", "a b"] });
    assertEquals(exact.output, "[$HOME][a b]");
  },
  { ignore: !posix },
);
