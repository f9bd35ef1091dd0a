/**
 * Password prompts through the real server (Linux): each answer of `input` holds the prompt the
 * program printed before it began to wait, every time, beside load; what is typed at one is
 * answered.
 */
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { type Connection, serverTest } from "../helpers/mcp.ts";

const linux = Deno.build.os === "linux";

interface Waited {
  condition: string;
  output: string;
  exitStatus?: { exitCode: number | null; signal: string | null };
}

function ttyTest(name: string, fn: (mcp: Connection) => Promise<void>, ignore = false): void {
  serverTest(name, fn, { ignore: ignore || !linux });
}

const create = async (mcp: Connection, command: string): Promise<string> =>
  (await mcp.callOk<{ terminalId: string }>("terminal_create", { command })).terminalId;

const waitInput = (mcp: Connection, terminalId: string, timeoutMs = 30_000): Promise<Waited> =>
  mcp.callOk<Waited>("terminal_wait", { terminalId, input: true, timeoutMs });

ttyTest(
  "a line typed while the echo is off is no echo: output that holds it is kept",
  async (mcp) => {
    const terminalId = await create(
      mcp,
      `bash --norc -c 'read -s -p "PIN: " pin; echo; echo "PIN $pin taken"'`,
    );
    assertEquals((await waitInput(mcp, terminalId)).condition, "input");
    const done = await mcp.callOk<Waited>("terminal_write", {
      terminalId,
      input: "1234",
      exit: true,
    });
    // It was taken for the echo of "1234", and the answer came back empty.
    assertEquals(done.output, "\nPIN 1234 taken\n");
  },
);

ttyTest(
  "input: every answer holds the prompt printed before the read, beside load (50 rounds)",
  async (mcp) => {
    // A terminal that floods keeps the server's reads and a CPU busy.
    await create(mcp, "yes");
    for (let round = 0; round < 50; round++) {
      const terminalId = await create(
        mcp,
        `bash --norc -c 'read -s -p "Password ${round}: " x; echo "got $x"'`,
      );
      const asked = await waitInput(mcp, terminalId);
      assertEquals(
        [asked.condition, asked.output],
        ["input", `Password ${round}: `],
        `round ${round}`,
      );
      await mcp.callOk("terminal_release", { terminalId });
    }
  },
);
