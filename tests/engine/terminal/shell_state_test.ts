import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import fc from "fast-check";
import { ShellTracker } from "../../../src/engine/terminal/shell_state.ts";

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
  // Once it has sent C, a line entered waits for its C: the shell is not at its prompt meanwhile.
  shell.noteInput("true\r", 50);
  assertEquals([shell.atPrompt, shell.command, shell.entered], [false, undefined, "true"]);
  shell.onMark({ kind: "output-start" }, 56);
  assertEquals([shell.command?.text, shell.entered], ["true", undefined]);
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
  shell.onMark({ kind: "prompt-end" }, 55);
  // A command typed by hand ends at the next prompt: no exit code.
  shell.noteInput("ver\r", 60);
  shell.onMark({ kind: "prompt-end" }, 90);
  assertEquals([shell.lastExitCode, shell.atPrompt], [null, true]);
});

/** A shell that sends C, at its prompt (output offset 10) after its first command. */
function atItsPrompt(): ShellTracker {
  const shell = tracker([]);
  shell.onMark({ kind: "prompt-end" }, 0);
  shell.noteInput("true\r", 0);
  shell.onMark({ kind: "output-start" }, 6);
  shell.onMark({ kind: "command-end", exitCode: 0 }, 6);
  shell.onMark({ kind: "prompt-end" }, 10);
  return shell;
}

Deno.test("a line entered is the shell's until its C, or the prompt after it if it starts nothing", () => {
  const shell = atItsPrompt();
  ok(shell.atPrompt);
  // A comment starts nothing: no C, and the next prompt settles it.
  shell.noteInput("# just a note\r", 10);
  assertEquals([shell.atPrompt, shell.entered], [false, "# just a note"]);
  shell.onMark({ kind: "prompt-end" }, 30);
  assertEquals([shell.atPrompt, shell.entered], [true, undefined]);
  // A loop over three lines is one command: its one C settles all of it.
  shell.noteInput("for i in 1 2; do\recho $i\rdone\r", 30);
  assertEquals(shell.entered, "done");
  shell.onMark({ kind: "output-start" }, 60);
  assertEquals([shell.entered, shell.command?.text], [undefined, "done"]);
  shell.onMark({ kind: "command-end", exitCode: 0 }, 64);
  shell.onMark({ kind: "prompt-end" }, 70);
  // An open quote: the shell reads on (no prompt), and Ctrl+C drops the line.
  shell.noteInput("echo 'oops\r", 70);
  assertEquals(shell.entered, "echo 'oops");
  shell.noteInput("\x03", 82);
  assertEquals([shell.entered, shell.typed], [undefined, ""]);
});

Deno.test("text typed after a line entered stays typed through its command and the prompt after", () => {
  // The shell reads it after the line's command: a run typed then would be appended to it.
  const shell = atItsPrompt();
  shell.noteInput("echo one\recho tw", 10);
  assertEquals([shell.entered, shell.typed], ["echo one", "echo tw"]);
  shell.onMark({ kind: "output-start" }, 20);
  shell.onMark({ kind: "command-end", exitCode: 0 }, 28);
  shell.onMark({ kind: "prompt-end" }, 35);
  assertEquals([shell.atPrompt, shell.typed], [true, "echo tw"]);
  shell.noteInput("\x15", 35);
  assertEquals(shell.typed, "");
});

Deno.test("typed while a command runs: a line break ends what was typed, part of a line is unknown", () => {
  const shell = atItsPrompt();
  // A shell that says whether a line waits (bash, zsh) has a line editor, which echoes.
  shell.onMark({ kind: "line-waiting", waiting: false }, 10);
  shell.noteInput("cat\rabc", 10);
  shell.onMark({ kind: "output-start" }, 20);
  assertEquals([shell.typed, shell.typedMaybe], ["abc", false]);
  // Its Enter, while cat runs: cat reads "abc" (or the shell would, as a line).
  shell.noteInput("\r", 25);
  assertEquals([shell.typed, shell.typedMaybe], ["", false]);
  // Part of a line: cat may take it, or the shell's next line holds it.
  shell.noteInput("echo part", 30);
  assertEquals([shell.typed, shell.typedMaybe], ["", "visible"]);
  shell.onMark({ kind: "command-end", exitCode: 0 }, 40);
  shell.onMark({ kind: "prompt-end" }, 45);
  ok(shell.typedMaybe && shell.atPrompt);
  shell.noteInput("\x15", 45);
  assertEquals(shell.typedMaybe, false);
  // A key that acts unseen (Escape as a prefix): only Ctrl+C clears it.
  shell.noteInput("sleep 1\r", 45);
  shell.onMark({ kind: "output-start" }, 55);
  shell.noteInput("\x1b", 56);
  assertEquals(shell.typedMaybe, "hidden");
  shell.onMark({ kind: "command-end", exitCode: 0 }, 60);
  shell.onMark({ kind: "prompt-end" }, 65);
  shell.noteInput("\x15", 65);
  assertEquals(shell.typedMaybe, "hidden");
  shell.noteInput("\x03", 65);
  assertEquals(shell.typedMaybe, false);
});

Deno.test("without a line editor that reports (sh), part of a line typed while a command runs is hidden", () => {
  const shell = tracker([11]);
  shell.onMark({ kind: "prompt-end" }, 4);
  shell.noteInput("sleep 1\r", 4);
  shell.noteInput("echo pa", 12);
  assertEquals(shell.typedMaybe, "hidden");
});

Deno.test("Ctrl+U after a key that may move the cursor takes nothing back", () => {
  const shell = atItsPrompt();
  shell.noteInput("abcdef\x1b[D\x1b[D\x15", 10);
  ok(shell.typed.startsWith("abcdef"));
  shell.noteInput("\x03", 10);
  assertEquals(shell.typed, "");
});

Deno.test("a paste whose end never comes is over at Ctrl+C, or at the next prompt", () => {
  const shell = atItsPrompt();
  shell.noteInput("\x1b[200~echo pasted", 10);
  shell.noteInput("\x03", 20);
  shell.noteInput("echo after\r", 30);
  assertEquals(shell.entered, "echo after");
  shell.onMark({ kind: "output-start" }, 40);
  shell.onMark({ kind: "command-end", exitCode: 0 }, 50);
  shell.noteInput("\x1b[200~echo again", 55);
  shell.onMark({ kind: "prompt-end" }, 60);
  shell.noteInput("\x15echo next\r", 60);
  assertEquals(shell.entered, "echo next");
});

Deno.test("a bracketed paste enters no line: its line breaks are text, until Enter after it", () => {
  const shell = atItsPrompt();
  shell.noteInput("\x1b[200~echo a\recho", 10);
  shell.noteInput(" b\n\x15\x1b[201~", 20);
  assertEquals([shell.entered, shell.atPrompt], [undefined, true]);
  ok(shell.typed.includes("echo a\recho b\n"), JSON.stringify(shell.typed));
  shell.noteInput("\r", 30);
  assertEquals([shell.entered, shell.atPrompt, shell.typed], ["echo a echo b", false, ""]);
});

Deno.test("a line typed while the prompt hooks run counts until the prompt after the one it is read at", () => {
  const shell = atItsPrompt();
  shell.noteInput("sleep 1\r", 10);
  shell.onMark({ kind: "output-start" }, 19);
  shell.onMark({ kind: "command-end", exitCode: 0 }, 19);
  ok(shell.promptPending);
  shell.noteInput("echo ahead\r", 19);
  // Ctrl+U, or nothing at all, typed after it do not take it back.
  shell.noteInput("\x15", 30);
  shell.noteInput("", 30);
  assertEquals([shell.atPrompt, shell.entered], [false, "echo ahead"]);
  // The prompt it is read at is not the end of it.
  shell.onMark({ kind: "prompt-end" }, 40);
  assertEquals([shell.atPrompt, shell.entered], [false, "echo ahead"]);
  shell.onMark({ kind: "output-start" }, 52);
  assertEquals([shell.entered, shell.command?.text], [undefined, "echo ahead"]);
});

Deno.test("a shell that says a line waits before its prompt: counted, whoever typed it", () => {
  // bash: `W;1` when a whole line typed ahead waits in the terminal, `W;0` when none does.
  const shell = atItsPrompt();
  shell.noteInput("sleep 1\r", 10);
  shell.onMark({ kind: "output-start" }, 19);
  // Typed while the command runs (not seen here): the shell says so before its prompt.
  shell.onMark({ kind: "command-end", exitCode: 0 }, 19);
  shell.onMark({ kind: "line-waiting", waiting: true }, 19);
  shell.onMark({ kind: "prompt-end" }, 25);
  assertEquals([shell.atPrompt, shell.entered], [false, null]);
  shell.onMark({ kind: "output-start" }, 40);
  shell.onMark({ kind: "command-end", exitCode: 0 }, 45);
  shell.onMark({ kind: "line-waiting", waiting: false }, 45);
  shell.onMark({ kind: "prompt-end" }, 50);
  assertEquals([shell.atPrompt, shell.entered], [true, undefined]);
  // Typed once the command ended: after the shell looked, so its `W;0` does not take it back.
  shell.noteInput("sleep 1\r", 50);
  shell.onMark({ kind: "output-start" }, 59);
  shell.onMark({ kind: "command-end", exitCode: 0 }, 59);
  shell.noteInput("echo late\r", 59);
  shell.onMark({ kind: "line-waiting", waiting: false }, 63);
  shell.onMark({ kind: "prompt-end" }, 70);
  assertEquals([shell.atPrompt, shell.entered], [false, "echo late"]);
});

Deno.test("before the first prompt, a line that the startup files read is not the shell's", () => {
  // Written before the question was asked (no program read the terminal yet): the shell's
  // `W;0` at its first prompt says no line waits.
  const shell = tracker([]);
  shell.noteInput("yes\r", 0);
  assertEquals(shell.entered, "yes");
  shell.onMark({ kind: "command-end", exitCode: null }, 10);
  shell.onMark({ kind: "line-waiting", waiting: false }, 10);
  shell.onMark({ kind: "prompt-end" }, 20);
  assertEquals([shell.atPrompt, shell.entered], [true, undefined]);
});

Deno.test("before the first prompt: a line is the shell's, unless a program reads the terminal", () => {
  const shell = tracker([]);
  shell.noteInput("answer\r", 0, { readElsewhere: true });
  assertEquals(shell.entered, undefined);
  shell.noteInput("cd /tmp\r", 7);
  assertEquals(shell.entered, "cd /tmp");
  shell.onMark({ kind: "prompt-end" }, 20);
  assertEquals([shell.atPrompt, shell.entered], [false, "cd /tmp"]);
  shell.onMark({ kind: "prompt-end" }, 40);
  assertEquals([shell.atPrompt, shell.entered], [true, undefined]);
});

Deno.test("a continuation prompt's mark: the line entered is not a command; the shell reads on", () => {
  // bash, zsh, fish: the line waits for its C; the continuation mark says none will come yet.
  const shell = atItsPrompt();
  shell.noteInput("echo 'open\r", 10);
  assertEquals([shell.readsOn, shell.entered, shell.command], [false, "echo 'open", undefined]);
  shell.onMark({ kind: "continuation" }, 22);
  assertEquals([shell.readsOn, shell.atPrompt, shell.command], [true, false, undefined]);
  // The rest of it, entered: read on again, or run.
  shell.noteInput("still'|\r", 25);
  assertEquals([shell.readsOn, shell.entered], [false, "still'|"]);
  shell.onMark({ kind: "continuation" }, 36);
  ok(shell.readsOn);
  shell.noteInput("cat\r", 40);
  shell.onMark({ kind: "output-start" }, 45);
  assertEquals([shell.readsOn, shell.command?.text], [false, "cat"]);
  shell.onMark({ kind: "command-end", exitCode: 0 }, 50);
  shell.onMark({ kind: "prompt-end" }, 60);
  // Ctrl+C drops it: the shell no longer reads on for it, and its next prompt is the prompt.
  shell.noteInput("cat <<EOF\r", 60);
  shell.onMark({ kind: "continuation" }, 72);
  shell.noteInput("\x03", 75);
  assertEquals([shell.readsOn, shell.entered], [false, undefined]);
  shell.onMark({ kind: "command-end", exitCode: 130 }, 80);
  shell.onMark({ kind: "prompt-end" }, 90);
  assertEquals([shell.atPrompt, shell.finished.length, shell.lastExitCode], [true, 2, 0]);
});

Deno.test("without C (sh): a line the shell reads on from was no command after all", () => {
  const shell = tracker([20, 40, 48]);
  shell.onMark({ kind: "command-end", exitCode: 0 }, 0);
  shell.onMark({ kind: "prompt-end" }, 4);
  shell.noteInput("echo a |\r", 4);
  assertEquals(shell.command?.text, "echo a |");
  shell.onMark({ kind: "continuation" }, 21);
  assertEquals([shell.readsOn, shell.command, shell.entered], [true, undefined, "echo a |"]);
  // Ctrl+C: its prompt's D is no command's end.
  shell.noteInput("\x03", 25);
  shell.onMark({ kind: "command-end", exitCode: 130 }, 30);
  shell.onMark({ kind: "prompt-end" }, 34);
  assertEquals([shell.atPrompt, shell.finished.length, shell.readsOn], [true, 0, false]);
  // Entered, the rest makes it whole: the command runs from that line.
  shell.noteInput("echo b |\r", 34);
  shell.onMark({ kind: "continuation" }, 41);
  shell.noteInput("cat\r", 43);
  assertEquals([shell.readsOn, shell.command?.text], [false, "cat"]);
  shell.onMark({ kind: "command-end", exitCode: 0 }, 60);
  assertEquals(shell.finished.at(-1)!.exitCode, 0);
});

Deno.test("property: at the prompt means no line waits; entered lines are short and plain", () => {
  const marks = fc.oneof(
    fc.constant({ kind: "prompt-start" as const }),
    fc.constant({ kind: "continuation" as const }),
    fc.constant({ kind: "prompt-end" as const }),
    fc.record({ kind: fc.constant("output-start" as const), lineBreak: fc.boolean() }),
    fc.record({
      kind: fc.constant("command-end" as const),
      exitCode: fc.option(fc.integer(), { nil: null }),
    }),
    fc.record({ kind: fc.constant("command" as const), text: fc.string({ maxLength: 3000 }) }),
    fc.record({ kind: fc.constant("line-waiting" as const), waiting: fc.boolean() }),
  );
  const keys = fc.constantFrom(
    "\r",
    "\n",
    "\r\n",
    "\x03",
    "\x15",
    "\x1a",
    "\x1c",
    "\x04",
    " ",
    "\x1b[200~",
    "\x1b[201~",
  );
  const input = fc.array(
    fc.oneof(keys, fc.string({ maxLength: 1500 }), fc.string({ unit: "binary", maxLength: 40 })),
    {
      maxLength: 6,
    },
  ).map((parts) => parts.join(""));
  const event = fc.oneof(
    fc.record({ mark: marks }),
    fc.record({ input, readElsewhere: fc.boolean() }),
  );
  fc.assert(
    fc.property(fc.array(event, { maxLength: 60 }), (events) => {
      const shell = tracker([5, 50, 500]);
      let offset = 0;
      /** After a paste began, what enters a line depends on where it ends: not checked. */
      let pasted = false;
      for (const step of events) {
        offset += 7;
        if ("mark" in step) shell.onMark(step.mark, offset);
        else {
          const idle = shell.command === undefined && (shell.active || !step.readElsewhere);
          shell.noteInput(step.input, offset, { readElsewhere: step.readElsewhere });
          // A line that is not blank, after the last key that drops lines, is the shell's to run.
          // deno-lint-ignore no-control-regex -- the keys that drop lines
          const lines = step.input.replaceAll("\x1b[201~", "").split(/[\x03\x1a\x1c]/).at(-1)!
            .split(/\r\n|\r|\n/);
          const aLine = lines.slice(0, -1).some((line) =>
            // deno-lint-ignore no-control-regex -- the line as the shell reads it
            line.split("\x15").at(-1)!.replace(/[\x00-\x1f\x7f]/g, "").trim() !== ""
          );
          pasted ||= step.input.includes("\x1b[200~");
          if (idle && aLine && !pasted) ok(shell.entered !== undefined);
          // deno-lint-ignore no-control-regex -- the keys that drop what the terminal holds
          const dropped = /[\x03\x1a\x1c]/.test(step.input) &&
            // deno-lint-ignore no-control-regex -- and no line entered after the last of them
            !/[\r\n]/.test(step.input.split(/[\x03\x1a\x1c]/).at(-1)!);
          if (dropped) assertEquals(shell.entered, undefined);
        }
        if (shell.atPrompt) assertEquals([shell.entered, shell.readsOn], [undefined, false]);
        const entered = shell.entered;
        if (entered !== undefined && entered !== null) {
          ok(entered.length <= 1001 && entered.trim() === entered && entered !== "");
          // deno-lint-ignore no-control-regex -- a line as entered holds no keys
          ok(!/[\x00-\x1f\x7f]/.test(entered));
        }
      }
    }),
    { numRuns: 500 },
  );
});
