/**
 * The C string arrays handed to posix_spawn (argv, envp), read back through the pointers.
 */
import { deepStrictEqual as assertEquals, throws } from "node:assert/strict";
import { cStringArray } from "../../../src/pty/posix/libc.ts";

const posix = Deno.build.os !== "windows";

/** The strings a NULL-terminated `char *[]` points to. */
function readBack(array: Uint8Array): string[] {
  const pointers = new BigUint64Array(array.buffer);
  const strings: string[] = [];
  for (const pointer of pointers) {
    if (pointer === 0n) return strings;
    strings.push(Deno.UnsafePointerView.getCString(Deno.UnsafePointer.create(pointer)!));
  }
  throw new Error("no NULL at the end");
}

Deno.test({
  name: "a C string array points at each string whole, and ends in NULL",
  ignore: !posix,
  fn() {
    for (
      const items of [[], [""], ["sh", "-c", "echo hi"], ["A=1", "", "EMPTY=", "中文=是", "😀=x"]]
    ) {
      const { array, keep } = cStringArray(items);
      assertEquals(readBack(array), items);
      assertEquals(keep.length, 1);
    }
  },
});

Deno.test({
  name: "a string holding NUL is refused, not cut short",
  ignore: !posix,
  fn() {
    throws(() => cStringArray(["ok", "a\0b"]), /NUL/);
  },
});
