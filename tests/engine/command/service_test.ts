/**
 * Following a command's output (run_command's enable_streaming): whoever starts following late
 * (after the command printed, or after it ended) still gets every line from the first, once.
 * Real PTYs, the engine's CommandService.
 */
import { deepStrictEqual as assertEquals, match, rejects } from "node:assert/strict";
import { type Command, CommandService } from "../../../src/engine/command/mod.ts";
import { TerminalService } from "../../../src/engine/terminal/mod.ts";
import { Launcher } from "../../../src/engine/launching/launcher.ts";

/** Follows `command` until its exit; resolves with what stdout delivered. */
function followed(command: Command): Promise<string> {
  let text = "";
  return new Promise((resolve) =>
    command.follow((stream, piece) => {
      if (stream === "stdout") text += piece;
    }, () => resolve(text))
  );
}

Deno.test({
  name: "a command followed late is followed from its first line, once",
  ignore: Deno.build.os === "windows",
  async fn() {
    const service = new CommandService();
    try {
      // Followed once its first line is in, while it still runs.
      const { command: running } = await service.run({
        command: "echo first; read _; echo second",
        shellType: "sh",
      });
      // Output may be in before run() is back (the reactor can read it meanwhile): then no
      // event will tell of it, and waiting for one hung until the timeout (6 in 300 runs here).
      const first = await new Promise<string>((resolve) => {
        const { kept, stop } = running.watch((event) => {
          stop();
          resolve(event.type);
        });
        if (kept.length > 0) {
          stop();
          resolve("output");
        }
      });
      // An end before any output would otherwise leave this test waiting with nothing pending.
      const { exitCode, signal } = running;
      assertEquals(first, "output", `it ended first: ${JSON.stringify({ exitCode, signal })}`);
      const whileRunning = followed(running);
      await running.type({ text: "" });
      assertEquals(await whileRunning, "first\n\nsecond\n");

      // Followed after it ended: everything, then the exit.
      const { command: ended } = await service.run({ command: "echo a; echo b", shellType: "sh" });
      await ended.done;
      assertEquals(await followed(ended), "a\nb\n");
    } finally {
      await service.shutdown();
    }
  },
});

Deno.test({
  name: "starts at once beyond the limit: exactly the limit runs, the rest are told which setting",
  ignore: Deno.build.os === "windows",
  async fn() {
    const service = new CommandService({ maxRunning: 2 });
    try {
      // Started together, each waiting for its spawn: the limit counts those starting too.
      const starts = await Promise.allSettled(
        Array.from({ length: 6 }, () => service.run({ command: "sleep 30", shellType: "sh" })),
      );
      assertEquals(starts.filter((start) => start.status === "fulfilled").length, 2);
      for (const start of starts) {
        if (start.status === "rejected") {
          match(
            String(start.reason),
            /2 commands are running, the most allowed \(WINTERM_MAX_COMMANDS\)/,
          );
        }
      }
    } finally {
      await service.shutdown(100);
    }
  },
});

Deno.test({
  name: "at the limit during a shutdown, a start is refused for the shutdown, not the limit",
  ignore: Deno.build.os === "windows",
  async fn() {
    const launcher = new Launcher();
    const commands = new CommandService({ maxRunning: 1, launcher });
    const terminals = new TerminalService({ maxTerminals: 1, launcher });
    try {
      await commands.run({ command: "sleep 30", shellType: "sh" });
      await terminals.create({ command: "sleep", args: ["30"] });
      launcher.close();
      await rejects(commands.run({ command: "true", shellType: "sh" }), /shutting down/);
      await rejects(terminals.create({ command: "true" }), /shutting down/);
    } finally {
      await Promise.all([commands.shutdown(100), terminals.shutdown(100)]);
    }
  },
});
