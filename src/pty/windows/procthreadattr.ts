/**
 * A process-thread attribute list (STARTUPINFOEXW.lpAttributeList): the pseudoconsole the
 * child runs on, and/or the exact list of handles it may inherit. The list and the values it
 * points at stay referenced here until {@link ProcThreadAttributeList.dispose}.
 *
 * @module
 */
import { type Handle, kernel32, W, Win32Error } from "./kernel32.ts";

/** See the module documentation. */
export class ProcThreadAttributeList {
  readonly #list: Uint8Array<ArrayBuffer>;
  #value: BigUint64Array | undefined;

  /** A list with room for `count` attributes. */
  constructor(count = 1) {
    const k = kernel32();
    const size = new BigUint64Array(1);
    k.InitializeProcThreadAttributeList(null, count, 0, new Uint8Array(size.buffer));
    this.#list = new Uint8Array(Number(size[0]));
    if (
      !k.InitializeProcThreadAttributeList(
        Deno.UnsafePointer.of(this.#list),
        count,
        0,
        new Uint8Array(size.buffer),
      )
    ) {
      throw new Win32Error("InitializeProcThreadAttributeList", kernel32().GetLastError());
    }
  }

  /** The list's address, for STARTUPINFOEXW. */
  get address(): bigint {
    return BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(this.#list)));
  }

  /** The child runs on this pseudoconsole. */
  setPseudoConsole(console: Handle): void {
    this.#update(W.PROC_THREAD_ATTRIBUTE_PSEUDOCONSOLE, console, 8);
  }

  /** The child inherits exactly these handles (which must be inheritable). */
  setHandleList(handles: Handle[]): void {
    this.#value = new BigUint64Array(handles.map((h) => BigInt(Deno.UnsafePointer.value(h))));
    this.#update(
      W.PROC_THREAD_ATTRIBUTE_HANDLE_LIST,
      Deno.UnsafePointer.of(this.#value),
      this.#value.byteLength,
    );
  }

  /** Frees the list (after CreateProcessW has returned). */
  dispose(): void {
    kernel32().DeleteProcThreadAttributeList(this.#list);
  }

  #update(attribute: bigint, value: Deno.PointerValue, size: number): void {
    const k = kernel32();
    if (!k.UpdateProcThreadAttribute(this.#list, 0, attribute, value, BigInt(size), null, null)) {
      throw new Win32Error("UpdateProcThreadAttribute", k.GetLastError());
    }
  }
}
