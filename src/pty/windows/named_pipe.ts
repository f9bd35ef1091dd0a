/**
 * Named pipe pairs for a child's streams: our end overlapped (its completions go to the
 * reactor's port), theirs synchronous, as node-pty does. Anonymous pipes cannot do overlapped
 * I/O, and a blocking read per stream would tie up Deno's thread pool.
 *
 * @module
 */
import { type Handle, isInvalid, kernel32, W, wide, Win32Error } from "./kernel32.ts";

/** Buffer size of each pipe (ConPTY and busy programs want at least 64 KiB). */
const PIPE_BUFFER = 64 * 1024;
let pipeCounter = 0;

/**
 * A pipe pair: [ours, theirs]. `inbound`: data flows to us. `inheritable`: their end may be
 * inherited (pipe mode, through the process's handle list only).
 */
export function pipePair(inbound: boolean, inheritable: boolean): [Handle, Handle] {
  const k = kernel32();
  const name = wide(`\\\\.\\pipe\\winterm-${Deno.pid}-${++pipeCounter}-${crypto.randomUUID()}`);
  const ours = k.CreateNamedPipeW(
    name,
    (inbound ? W.PIPE_ACCESS_INBOUND : W.PIPE_ACCESS_OUTBOUND) | W.FILE_FLAG_OVERLAPPED |
      W.FILE_FLAG_FIRST_PIPE_INSTANCE,
    W.PIPE_REJECT_REMOTE_CLIENTS,
    1,
    PIPE_BUFFER,
    PIPE_BUFFER,
    0,
    null,
  );
  if (isInvalid(ours)) throw new Win32Error("CreateNamedPipeW", k.GetLastError());
  const theirs = k.CreateFileW(
    name,
    inbound ? W.GENERIC_WRITE : W.GENERIC_READ,
    0,
    null,
    W.OPEN_EXISTING,
    0,
    null,
  );
  if (isInvalid(theirs)) {
    const code = k.GetLastError();
    k.CloseHandle(ours);
    throw new Win32Error("CreateFileW(pipe)", code);
  }
  if (inheritable) k.SetHandleInformation(theirs, W.HANDLE_FLAG_INHERIT, W.HANDLE_FLAG_INHERIT);
  return [ours, theirs];
}
