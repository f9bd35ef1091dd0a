/**
 * A classic BPF interpreter for seccomp filters: runs a `struct sock_filter` program over a
 * `struct seccomp_data`, as the kernel does, for the instructions the filters use (loads of
 * 32-bit words, AND, JEQ, JGE, JSET, RET); any other instruction fails the test.
 *
 * @module
 */

/** What a seccomp filter sees of a system call. */
export interface SeccompData {
  nr: number;
  arch: number;
  /** Six arguments, 64 bits each. */
  args: bigint[];
}

/** The filter's verdict (SECCOMP_RET_* with its data). */
export function runFilter(program: Uint8Array, data: SeccompData): number {
  const input = new DataView(new ArrayBuffer(64));
  input.setInt32(0, data.nr, true);
  input.setUint32(4, data.arch, true);
  data.args.forEach((arg, index) =>
    input.setBigUint64(16 + 8 * index, BigInt.asUintN(64, arg), true)
  );
  const code = new DataView(program.buffer, program.byteOffset, program.byteLength);
  let accumulator = 0;
  for (let pc = 0, steps = 0; pc * 8 < program.length; pc++) {
    if (++steps > 4096) throw new Error("the filter does not end");
    const op = code.getUint16(pc * 8, true);
    const jt = code.getUint8(pc * 8 + 2), jf = code.getUint8(pc * 8 + 3);
    const k = code.getUint32(pc * 8 + 4, true);
    switch (op) {
      case 0x20: // LD W ABS
        if (k % 4 !== 0 || k + 4 > 64) throw new Error(`bad load offset ${k}`);
        accumulator = input.getUint32(k, true);
        break;
      case 0x54: // ALU AND K
        accumulator = (accumulator & k) >>> 0;
        break;
      case 0x15: // JEQ K
        pc += accumulator === k ? jt : jf;
        break;
      case 0x35: // JGE K
        pc += accumulator >= k ? jt : jf;
        break;
      case 0x45: // JSET K
        pc += (accumulator & k) !== 0 ? jt : jf;
        break;
      case 0x06: // RET K
        return k;
      default:
        throw new Error(`unknown instruction 0x${op.toString(16)} at ${pc}`);
    }
  }
  throw new Error("the filter ran off its end");
}
