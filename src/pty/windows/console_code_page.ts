/**
 * The code page a console has now, asked of the console itself. Windows has no call that reads
 * another console's code page, and a command in pipe mode can change its console's (`chcp`),
 * after which cmd's `set /p` and legacy programs read their input in the new one. A short-lived
 * `cmd /d /c chcp` attached to the same pseudoconsole says which ("Active code page: 936", in
 * the system's language: the number ends the line). Bounded: a helper that has not answered
 * within the limit is ended, and the answer is "not known".
 *
 * @module
 */
import { type Handle, kernel32, LAYOUT, W, wide } from "./kernel32.ts";
import { pipePair } from "./named_pipe.ts";
import { ProcThreadAttributeList } from "./procthreadattr.ts";
import { reactor } from "./reactor.ts";
import { OverlappedReader } from "./streams.ts";

/** How long the helper may take to answer. */
const ANSWER_LIMIT_MS = 10_000;

/**
 * Asks the pseudoconsole `console` for its output code page with the system's `cmd` (a path).
 * Undefined when the helper could not start (the console is gone), or did not answer in time.
 */
export async function askConsoleCodePage(
  console: Handle,
  cmd: string,
  limitMs = ANSWER_LIMIT_MS,
): Promise<number | undefined> {
  const k = kernel32();
  const [ours, theirs] = pipePair(true, true);
  let process: Handle;
  const attributes = new ProcThreadAttributeList(2);
  try {
    attributes.setPseudoConsole(console);
    attributes.setHandleList([theirs]);
    const startup = new Uint8Array(LAYOUT.STARTUPINFOEXW);
    const view = new DataView(startup.buffer);
    view.setUint32(0, LAYOUT.STARTUPINFOEXW, true);
    view.setUint32(LAYOUT.SI_FLAGS, W.STARTF_USESTDHANDLES, true);
    const handle = BigInt(Deno.UnsafePointer.value(theirs));
    view.setBigUint64(LAYOUT.SI_STDOUT, handle, true);
    view.setBigUint64(LAYOUT.SI_STDERR, handle, true);
    view.setBigUint64(LAYOUT.SI_ATTRIBUTE_LIST, attributes.address, true);
    const info = new Uint8Array(LAYOUT.PROCESS_INFORMATION);
    const started = k.CreateProcessW(
      wide(cmd),
      wide(`"${cmd}" /d /c chcp`),
      null,
      null,
      1,
      W.EXTENDED_STARTUPINFO_PRESENT | W.CREATE_UNICODE_ENVIRONMENT,
      null,
      null,
      startup,
      info,
    );
    if (!started) {
      k.CloseHandle(ours);
      return undefined;
    }
    const result = new DataView(info.buffer);
    process = Deno.UnsafePointer.create(result.getBigUint64(0, true));
    k.CloseHandle(Deno.UnsafePointer.create(result.getBigUint64(8, true)));
  } finally {
    attributes.dispose();
    k.CloseHandle(theirs);
  }
  const chunks: number[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  await new Promise<void>((resolve) => {
    const keep = (data: Uint8Array) => {
      if (chunks.length < 256) chunks.push(...data.subarray(0, 256));
    };
    const reader = new OverlappedReader(reactor(), ours, keep, resolve);
    timer = setTimeout(() => {
      k.TerminateProcess(process, 1);
      reader.stop();
    }, limitMs);
  });
  clearTimeout(timer);
  k.TerminateProcess(process, 1); // (gone already, unless it closed its output and lingered)
  k.CloseHandle(process);
  const answer = String.fromCharCode(...chunks).trim().match(/(\d{3,5})$/);
  return answer ? Number(answer[1]) : undefined;
}
