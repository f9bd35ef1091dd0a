import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { ShellTracker } from "../../src/engine/services/shell_state.ts";

/** A tracker over a fake output whose line feeds are at `feeds` (offsets of "\n"). */
function tracker(feeds: number[]): ShellTracker {
  return new ShellTracker((offset) => {
    const feed = feeds.find((at) => at >= offset);
    return feed === undefined ? undefined : feed + 1;
  });
}

Deno.test("with C marks: output from C to D, the exit code and the cwd after it", () => {
  const shell = tracker([]);
  shell.onMark({ kind: "command-end", exitCode: 0 }, 0); // the first prompt: no command ran
  shell.onMark({ kind: "cwd", path: "/" }, 0);
  shell.onMark({ kind: "prompt-end" }, 5);
  ok(shell.atPrompt && shell.lastExitCode === undefined);
  shell.noteInput("cd /tmp && echo in-42\r", 5);
  // Before the first C nothing says the shell sends them: the line entered runs.
  assertEquals(shell.command?.text, "cd /tmp && echo in-42");
  shell.onMark({ kind: "output-start" }, 30);
  assertEquals([shell.command?.text, shell.outputStart()], ["cd /tmp && echo in-42", 30]);
  shell.onMark({ kind: "command-end", exitCode: 0 }, 36);
  shell.onMark({ kind: "cwd", path: "/tmp" }, 36);
  shell.onMark({ kind: "prompt-start" }, 36);
  shell.onMark({ kind: "prompt-end" }, 45);
  const done = shell.finishedAfter(5)!;
  assertEquals([done.start, done.end, done.exitCode, done.cwd], [30, 36, 0, "/tmp"]);
  assertEquals([shell.cwd, shell.lastExitCode, shell.atPrompt], ["/tmp", 0, true]);
  // An empty line: D without a command changes nothing.
  shell.noteInput("\r", 45);
  shell.onMark({ kind: "command-end", exitCode: 0 }, 47);
  assertEquals([shell.finished.length, shell.lastExitCode], [1, 0]);
  // Once it has sent C, a line entered waits for its C.
  shell.noteInput("true\r", 50);
  ok(shell.atPrompt);
});

Deno.test("without C: a line entered starts a command, whose output follows the echo", () => {
  // sh: every prompt carries D with $?; the echo of "false\r" ends with the feed at 11.
  const shell = tracker([11, 20]);
  shell.onMark({ kind: "command-end", exitCode: 0 }, 0);
  shell.onMark({ kind: "prompt-end" }, 4);
  shell.noteInput("  ", 4);
  assertEquals(shell.typed, "  ");
  shell.noteInput("oops\x15", 4);
  assertEquals(shell.typed, "");
  shell.noteInput("\r", 6);
  ok(shell.atPrompt, "a blank line runs nothing");
  shell.noteInput("false\r", 6);
  assertEquals([shell.atPrompt, shell.command?.text], [false, "false"]);
  // A console that redraws the prompt with the echo sends its marks again: not news.
  shell.onMark({ kind: "prompt-end" }, 8);
  assertEquals(shell.command?.text, "false");
  assertEquals(shell.outputStart(), 12);
  shell.onMark({ kind: "command-end", exitCode: 1 }, 21);
  const done = shell.finished.at(-1)!;
  assertEquals([done.start, done.end, done.exitCode], [12, 21, 1]);
});

Deno.test("cmd: C followed by its line break, and a prompt that ends a command without a code", () => {
  const shell = tracker([40, 50, 65]);
  shell.onMark({ kind: "prompt-end" }, 10);
  shell.noteInput("dir\r", 10);
  shell.onMark({ kind: "output-start", lineBreak: true }, 35);
  assertEquals(shell.outputStart(), 41);
  shell.onMark({ kind: "command-end", exitCode: 2 }, 50);
  assertEquals(shell.finished.at(-1)!.start, 41);
  assertEquals(shell.lastExitCode, 2);
  // A command typed by hand ends at the next prompt: no exit code.
  shell.noteInput("ver\r", 60);
  shell.onMark({ kind: "prompt-end" }, 90);
  assertEquals([shell.lastExitCode, shell.atPrompt], [null, true]);
});
