import { deepStrictEqual as assertEquals, throws } from "node:assert/strict";
import { KEY_NAMES, keySequence } from "../../../src/engine/terminal/keys.ts";
import { enterOn, typedInput } from "../../../src/engine/terminal/typing.ts";
import { fc, hostileOutput, stringOf, TEXT_PIECES } from "../../helpers/arbitraries.ts";

/** Text a client may type: plain, line ends in any place, control keys, escape sequences. */
const typedText = fc.oneof(
  stringOf([...TEXT_PIECES, "\r", "\n", "\r\n", "\x03", "\x04"], 20),
  hostileOutput,
);
const keys = fc.array(fc.constantFrom(...KEY_NAMES), { maxLength: 6 });
const enterKeys = fc.constantFrom("\r", "\n", "\r\n");

Deno.test("the Enter rule: the text, Enter when the rule says, then the keys, nothing else", () => {
  fc.assert(
    fc.property(
      fc.option(typedText, { nil: undefined }),
      fc.option(keys, { nil: undefined }),
      fc.option(fc.boolean(), { nil: undefined }),
      fc.option(fc.boolean(), { nil: undefined }),
      enterKeys,
      (text, keyNames, enter, enterUnlessEnded, enterKey) => {
        const typed = typedInput({ text, keys: keyNames, enter, enterUnlessEnded }, enterKey);
        const pressed = text !== undefined && !keyNames?.length && enter !== false &&
          !(enterUnlessEnded && (text.endsWith("\r") || text.endsWith("\n")));
        assertEquals(
          typed,
          (text ?? "") + (pressed ? enterKey : "") + (keyNames ?? []).map(keySequence).join(""),
        );
      },
    ),
  );
});

Deno.test("the Enter rule as each front end documents it", () => {
  // terminal_write: Enter follows the text unless appendNewline is false or keys are given.
  assertEquals(typedInput({ text: "ls" }), "ls\r");
  assertEquals(typedInput({ text: "ls", enter: false }), "ls");
  assertEquals(typedInput({ text: "ls", keys: ["tab"] }), "ls\t");
  assertEquals(typedInput({ keys: ["up", "enter"] }), "\x1b[A\r");
  assertEquals(typedInput({ text: "" }), "\r");
  // REST: not after input that already ends a line.
  assertEquals(typedInput({ text: "ls\n", enterUnlessEnded: true }), "ls\n");
  assertEquals(typedInput({ text: "ls\r", enterUnlessEnded: true }), "ls\r");
  assertEquals(typedInput({ text: "ls", enterUnlessEnded: true }), "ls\r");
  // send_command_input: Enter is the key on a terminal, the host's line end on a pipe.
  assertEquals(typedInput({ text: "print(1)" }, enterOn("pty", "windows")), "print(1)\r");
  assertEquals(typedInput({ text: "print(1)" }, enterOn("pipe", "windows")), "print(1)\r\n");
  assertEquals(typedInput({ text: "print(1)" }, enterOn("pipe", "posix")), "print(1)\n");
  assertEquals(typedInput({ text: "\x03", enter: false }, enterOn("pipe", "posix")), "\x03");
  throws(() => typedInput({ keys: ["no_such_key"] }), /unknown key/);
});
