/**
 * Windows-only test helpers through FFI: the process list (Toolhelp32), the real
 * CommandLineToArgvW (shell32), to check our quoting against the parser programs use, and this
 * process's handles (how many; whether one is still open), for handle accounting.
 *
 * @module
 */

import { Buffer } from "node:buffer";
import iconv from "iconv-lite";
import { resolveProgram, runningUnderWine, systemCodePages } from "../../src/pty/mod.ts";

const PROCESSENTRY32W_SIZE = 568;
let kernel: ReturnType<typeof openKernel> | undefined;
let shell: ReturnType<typeof openShell> | undefined;

function openKernel() {
  return Deno.dlopen("kernel32.dll", {
    CreateToolhelp32Snapshot: { parameters: ["u32", "u32"], result: "pointer" },
    Process32FirstW: { parameters: ["pointer", "buffer"], result: "i32" },
    Process32NextW: { parameters: ["pointer", "buffer"], result: "i32" },
    CloseHandle: { parameters: ["pointer"], result: "i32" },
    LocalFree: { parameters: ["pointer"], result: "pointer" },
    GetHandleInformation: { parameters: ["pointer", "buffer"], result: "i32" },
    CreateEventW: { parameters: ["pointer", "i32", "i32", "pointer"], result: "pointer" },
  }).symbols;
}

function openShell() {
  return Deno.dlopen("shell32.dll", {
    CommandLineToArgvW: { parameters: ["buffer", "buffer"], result: "pointer" },
  }).symbols;
}

/** A running process. */
export interface ProcessEntry {
  pid: number;
  ppid: number;
  exe: string;
}

/** Every process on the machine. */
export function listProcesses(): ProcessEntry[] {
  kernel ??= openKernel();
  const snapshot = kernel.CreateToolhelp32Snapshot(0x2, /* TH32CS_SNAPPROCESS */ 0);
  const entry = new Uint8Array(PROCESSENTRY32W_SIZE);
  const view = new DataView(entry.buffer);
  view.setUint32(0, PROCESSENTRY32W_SIZE, true);
  const result: ProcessEntry[] = [];
  for (
    let ok = kernel.Process32FirstW(snapshot, entry);
    ok;
    ok = kernel.Process32NextW(snapshot, entry)
  ) {
    const exe = String.fromCharCode(...new Uint16Array(entry.buffer, 44, 260)).split("\0")[0];
    result.push({ pid: view.getUint32(8, true), ppid: view.getUint32(32, true), exe });
  }
  kernel.CloseHandle(snapshot);
  return result;
}

/** Splits a command line with shell32's CommandLineToArgvW. */
export function commandLineToArgv(commandLine: string): string[] {
  kernel ??= openKernel();
  shell ??= openShell();
  const units = new Uint16Array(commandLine.length + 1);
  for (let i = 0; i < commandLine.length; i++) units[i] = commandLine.charCodeAt(i);
  const count = new Int32Array(1);
  const argv = shell.CommandLineToArgvW(new Uint8Array(units.buffer), new Uint8Array(count.buffer));
  if (!argv) throw new Error("CommandLineToArgvW failed");
  const view = new Deno.UnsafePointerView(argv);
  const args: string[] = [];
  for (let i = 0; i < count[0]; i++) {
    const pointer = Deno.UnsafePointer.create(view.getBigUint64(i * 8));
    const chars = new Deno.UnsafePointerView(pointer!);
    let text = "";
    for (let at = 0;; at += 2) {
      const unit = chars.getUint16(at);
      if (unit === 0) break;
      text += String.fromCharCode(unit);
    }
    args.push(text);
  }
  kernel.LocalFree(argv);
  return args;
}

/** A new handle of our own (an event), to see whether someone else's close takes it. */
export function canaryHandle(): { value: bigint; valid(): boolean; close(): void } {
  kernel ??= openKernel();
  const k = kernel;
  const handle = k.CreateEventW(null, 1, 0, null);
  if (handle === null) throw new Error("CreateEventW failed");
  return {
    value: BigInt(Deno.UnsafePointer.value(handle)),
    valid: () => k.GetHandleInformation(handle, new Uint8Array(4)) !== 0,
    close: () => void k.CloseHandle(handle),
  };
}

/** The system's OEM code page (what cmd writes to pipes), as an iconv-lite label; cp437 elsewhere. */
export function oemLabel(): string {
  return `cp${systemCodePages()?.oem ?? 437}`;
}

/**
 * Text beyond ASCII that the OEM code page holds exactly: Chinese at 936, Japanese at 932,
 * Latin at 437 and 850. `kind` picks a sample: a word, or a longer line.
 */
export function nativeText(kind: "word" | "line" = "word"): string {
  const samples = kind === "word"
    ? ["中文输入", "日本語入力", "café ü", "Привет"]
    : ["批处理：中文", "バッチ：日本語", "batch: café ü", "пакет: Привет"];
  const label = oemLabel();
  const fits = samples.find((sample) =>
    iconv.decode(Buffer.from(iconv.encode(sample, label)), label) === sample
  );
  if (!fits) throw new Error(`no sample text fits ${label}`);
  return fits;
}

/**
 * The PowerShells of this Windows, each by name and path: PowerShell 7 (`pwsh`, on PATH or in
 * its standard folder) and Windows PowerShell 5.1 (`powershell.exe` in System32). None under
 * Wine (its powershell.exe is a stub) or elsewhere.
 */
export function powerShells(): { name: string; path: string }[] {
  if (Deno.build.os !== "windows" || runningUnderWine()) return [];
  const env = Deno.env.toObject();
  const found = (path: string) => {
    try {
      return Deno.statSync(path).isFile;
    } catch {
      return false;
    }
  };
  const onPath = (name: string) => {
    try {
      return resolveProgram(name, { cwd: Deno.cwd(), env, flavor: "windows" });
    } catch {
      return undefined;
    }
  };
  const programFiles = env.ProgramFiles ?? "C:\\Program Files";
  const systemRoot = env.SystemRoot ?? "C:\\Windows";
  const pwsh = onPath("pwsh.exe") ?? `${programFiles}\\PowerShell\\7\\pwsh.exe`;
  const windowsPowerShell = `${systemRoot}\\System32\\WindowsPowerShell\\v1.0\\powershell.exe`;
  return [
    { name: "pwsh (PowerShell 7)", path: pwsh },
    { name: "powershell.exe (Windows PowerShell 5.1)", path: windowsPowerShell },
  ].filter((shell) => found(shell.path));
}
