import { deepStrictEqual as assertEquals, throws } from "node:assert/strict";
import {
  CommandLineError,
  quotePosix,
  splitPosix,
  splitWindows,
} from "../../../src/engine/launching/argv.ts";
import { SpawnError } from "../../../src/pty/mod.ts";
import { quoteWindowsArg, quoteWindowsCommandLine } from "../../../src/pty/windows/command_line.ts";
import { fc, stringOf } from "../../helpers/arbitraries.ts";

const NASTY = [
  "a",
  "b",
  " ",
  "\t",
  '"',
  "'",
  "\\",
  "\\\\",
  "$",
  "`",
  "中",
  "😀",
  "*",
  "&",
  "|",
  ";",
  "%",
  "^",
  "\n",
];

const args = fc.array(stringOf(NASTY, 8), { maxLength: 6 });

Deno.test("POSIX: quoting then splitting gives the arguments back", () => {
  fc.assert(
    fc.property(args, (args) => {
      assertEquals(splitPosix(args.map(quotePosix).join(" ")), args);
    }),
    { numRuns: 500 },
  );
});

Deno.test("POSIX: splitting follows shell quoting rules", () => {
  assertEquals(splitPosix(`grep -n "a b" 'c d' e\\ f`), ["grep", "-n", "a b", "c d", "e f"]);
  assertEquals(splitPosix(`echo "a\\"b" 'it''s' "\\$HOME" "\\x"`), [
    "echo",
    'a"b',
    "its",
    "$HOME",
    "\\x",
  ]);
  assertEquals(splitPosix(`a "" ''`), ["a", "", ""]);
  assertEquals(splitPosix("  a\t\tb \\\n c  "), ["a", "b", "c"]);
  assertEquals(splitPosix(""), []);
  throws(() => splitPosix(`echo "unclosed`), CommandLineError);
  throws(() => splitPosix(`echo 'unclosed`), CommandLineError);
  throws(() => splitPosix(`echo \\`), CommandLineError);
});

Deno.test("Windows: quoting then splitting gives the arguments back", () => {
  const program = fc.constantFrom("prog.exe", "C:\\Program Files\\x\\y.exe", "C:\\a\\b.exe", "");
  fc.assert(
    fc.property(program, args, (program, args) => {
      assertEquals(splitWindows(quoteWindowsCommandLine([program, ...args])), [program, ...args]);
    }),
    { numRuns: 500 },
  );
});

Deno.test("Windows: splitting follows CommandLineToArgvW's documented examples", () => {
  // The examples of Microsoft's "Parsing C++ command-line arguments", after a program name.
  assertEquals(splitWindows(`p "a b c" d e`), ["p", "a b c", "d", "e"]);
  assertEquals(splitWindows(`p "ab\\"c" "\\\\" d`), ["p", 'ab"c', "\\", "d"]);
  assertEquals(splitWindows(`p a\\\\\\b d"e f"g h`), ["p", "a\\\\\\b", "de fg", "h"]);
  assertEquals(splitWindows(`p a\\\\\\"b c d`), ["p", 'a\\"b', "c", "d"]);
  assertEquals(splitWindows(`p a\\\\\\\\"b c" d e`), ["p", "a\\\\b c", "d", "e"]);
  // The program name takes quotes literally and backslashes as they are.
  assertEquals(splitWindows(`"C:\\Program Files\\a.exe" x`), ["C:\\Program Files\\a.exe", "x"]);
  assertEquals(splitWindows(`C:\\a\\b.exe`), ["C:\\a\\b.exe"]);
  assertEquals(splitWindows(`  `), []);
});

Deno.test("Windows: quoting only what needs it", () => {
  assertEquals(quoteWindowsArg("plain"), "plain");
  assertEquals(quoteWindowsArg(""), '""');
  assertEquals(quoteWindowsArg("a b"), '"a b"');
  assertEquals(quoteWindowsArg('say "hi"'), '"say \\"hi\\""');
  assertEquals(quoteWindowsArg("C:\\dir with space\\"), '"C:\\dir with space\\\\"');
  assertEquals(quoteWindowsArg("C:\\no\\space\\"), "C:\\no\\space\\");
  throws(() => quoteWindowsCommandLine(['a"b.exe']), SpawnError);
});
