/**
 * The kernel32 functions the Windows layer calls, bound through Deno FFI, with the constants
 * and x64 struct layouts they need. Loaded on first use, so importing this module elsewhere
 * costs nothing.
 *
 * Handles are `pointer`s. Two calls can block and are declared nonblocking (they run on
 * Deno's blocking pool): GetQueuedCompletionStatusEx, which always ends by a completion or a
 * posted wake-up, and ClosePseudoConsole, which (before Windows 11 24H2) waits until conhost
 * has written its last output, so it must never sit on the reading path.
 *
 * @module
 */

/** Win32 constants. */
export const W = {
  GENERIC_READ: 0x80000000,
  GENERIC_WRITE: 0x40000000,
  OPEN_EXISTING: 3,
  PIPE_ACCESS_INBOUND: 0x1,
  PIPE_ACCESS_OUTBOUND: 0x2,
  FILE_FLAG_OVERLAPPED: 0x40000000,
  FILE_FLAG_FIRST_PIPE_INSTANCE: 0x00080000,
  PIPE_REJECT_REMOTE_CLIENTS: 0x8,
  ERROR_BROKEN_PIPE: 109,
  ERROR_NO_DATA: 232,
  ERROR_IO_PENDING: 997,
  ERROR_OPERATION_ABORTED: 995,
  EXTENDED_STARTUPINFO_PRESENT: 0x00080000,
  CREATE_UNICODE_ENVIRONMENT: 0x00000400,
  CREATE_SUSPENDED: 0x00000004,
  CREATE_NO_WINDOW: 0x08000000,
  STARTF_USESTDHANDLES: 0x100,
  PROC_THREAD_ATTRIBUTE_HANDLE_LIST: 0x00020002n,
  PROC_THREAD_ATTRIBUTE_PSEUDOCONSOLE: 0x00020016n,
  JobObjectAssociateCompletionPortInformation: 7,
  JobObjectExtendedLimitInformation: 9,
  JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE: 0x2000,
  JOB_OBJECT_MSG_ACTIVE_PROCESS_ZERO: 4,
  JOB_OBJECT_MSG_EXIT_PROCESS: 7,
  JOB_OBJECT_MSG_ABNORMAL_EXIT_PROCESS: 8,
  WAIT_OBJECT_0: 0,
  /** The exit code of a process ended by a console control event's default handler. */
  STATUS_CONTROL_C_EXIT: 0xc000013a,
  INFINITE: 0xffffffff,
  HANDLE_FLAG_INHERIT: 0x1,
} as const;

/** Struct sizes and offsets (x64). */
export const LAYOUT = {
  STARTUPINFOEXW: 112,
  SI_FLAGS: 60,
  SI_STDIN: 80,
  SI_STDOUT: 88,
  SI_STDERR: 96,
  SI_ATTRIBUTE_LIST: 104,
  PROCESS_INFORMATION: 24,
  OVERLAPPED: 32,
  OVERLAPPED_ENTRY: 32,
  JOB_EXTENDED_LIMIT: 144,
  JOB_LIMIT_FLAGS: 16,
  SECURITY_ATTRIBUTES: 24,
} as const;

const SYMBOLS = {
  CreateNamedPipeW: {
    parameters: ["buffer", "u32", "u32", "u32", "u32", "u32", "u32", "pointer"],
    result: "pointer",
  },
  CreateFileW: {
    parameters: ["buffer", "u32", "u32", "pointer", "u32", "u32", "pointer"],
    result: "pointer",
  },
  CreatePseudoConsole: {
    parameters: ["u32", "pointer", "pointer", "u32", "buffer"],
    result: "i32",
    optional: true,
  },
  ResizePseudoConsole: { parameters: ["pointer", "u32"], result: "i32", optional: true },
  ClosePseudoConsole: {
    parameters: ["pointer"],
    result: "void",
    nonblocking: true,
    optional: true,
  },
  InitializeProcThreadAttributeList: {
    parameters: ["pointer", "u32", "u32", "buffer"],
    result: "i32",
  },
  UpdateProcThreadAttribute: {
    parameters: ["buffer", "u32", "usize", "pointer", "usize", "pointer", "pointer"],
    result: "i32",
  },
  DeleteProcThreadAttributeList: { parameters: ["buffer"], result: "void" },
  CreateProcessW: {
    parameters: [
      "buffer",
      "buffer",
      "pointer",
      "pointer",
      "i32",
      "u32",
      "buffer",
      "buffer",
      "buffer",
      "buffer",
    ],
    result: "i32",
  },
  ResumeThread: { parameters: ["pointer"], result: "u32" },
  TerminateProcess: { parameters: ["pointer", "u32"], result: "i32" },
  GetExitCodeProcess: { parameters: ["pointer", "buffer"], result: "i32" },
  WaitForSingleObject: { parameters: ["pointer", "u32"], result: "u32" },
  CreateJobObjectW: { parameters: ["pointer", "pointer"], result: "pointer" },
  SetInformationJobObject: { parameters: ["pointer", "u32", "buffer", "u32"], result: "i32" },
  AssignProcessToJobObject: { parameters: ["pointer", "pointer"], result: "i32" },
  TerminateJobObject: { parameters: ["pointer", "u32"], result: "i32" },
  CreateIoCompletionPort: { parameters: ["pointer", "pointer", "usize", "u32"], result: "pointer" },
  GetQueuedCompletionStatusEx: {
    parameters: ["pointer", "buffer", "u32", "buffer", "u32", "i32"],
    result: "i32",
    nonblocking: true,
  },
  PostQueuedCompletionStatus: { parameters: ["pointer", "u32", "usize", "pointer"], result: "i32" },
  ReadFile: { parameters: ["pointer", "pointer", "u32", "pointer", "pointer"], result: "i32" },
  WriteFile: { parameters: ["pointer", "pointer", "u32", "pointer", "pointer"], result: "i32" },
  CancelIoEx: { parameters: ["pointer", "pointer"], result: "i32" },
  SetHandleInformation: { parameters: ["pointer", "u32", "u32"], result: "i32" },
  CloseHandle: { parameters: ["pointer"], result: "i32" },
  GetLastError: { parameters: [], result: "u32" },
  SetConsoleCtrlHandler: { parameters: ["pointer", "i32"], result: "i32" },
  GetOEMCP: { parameters: [], result: "u32" },
  GetACP: { parameters: [], result: "u32" },
  WideCharToMultiByte: {
    parameters: ["u32", "u32", "buffer", "i32", "buffer", "i32", "pointer", "buffer"],
    result: "i32",
  },
  MultiByteToWideChar: {
    parameters: ["u32", "u32", "buffer", "i32", "buffer", "i32"],
    result: "i32",
  },
  GetSystemDirectoryW: { parameters: ["buffer", "u32"], result: "u32" },
} as const satisfies Deno.ForeignLibraryInterface;

type Kernel32 = Deno.DynamicLibrary<typeof SYMBOLS>["symbols"];
let loaded: Kernel32 | undefined;

/** The bound functions (Windows only). */
export function kernel32(): Kernel32 {
  loaded ??= Deno.dlopen("kernel32.dll", SYMBOLS).symbols;
  return loaded;
}

/** A handle value, or null. */
export type Handle = Deno.PointerValue;

const INVALID_HANDLE_VALUE = 0xffff_ffff_ffff_ffffn;

/** True for NULL and INVALID_HANDLE_VALUE. */
export function isInvalid(handle: Handle): boolean {
  return handle === null || BigInt(Deno.UnsafePointer.value(handle)) === INVALID_HANDLE_VALUE;
}

/** A NUL-terminated UTF-16LE copy of a string, for `LPCWSTR` parameters. */
export function wide(text: string): Uint8Array<ArrayBuffer> {
  const units = new Uint16Array(text.length + 1);
  for (let i = 0; i < text.length; i++) units[i] = text.charCodeAt(i);
  return new Uint8Array(units.buffer);
}

/** A Win32 failure with the call and GetLastError's code. */
export class Win32Error extends Error {
  constructor(readonly call: string, readonly code: number) {
    super(`${call} failed: ${WIN32_ERROR_NAMES[code] ?? "error"} (${code})`);
    this.name = "Win32Error";
  }
}

/** Names of the errors a user may meet, for readable messages. */
const WIN32_ERROR_NAMES: Record<number, string> = {
  2: "ERROR_FILE_NOT_FOUND",
  3: "ERROR_PATH_NOT_FOUND",
  5: "ERROR_ACCESS_DENIED",
  8: "ERROR_NOT_ENOUGH_MEMORY",
  87: "ERROR_INVALID_PARAMETER",
  109: "ERROR_BROKEN_PIPE",
  193: "ERROR_BAD_EXE_FORMAT",
  206: "ERROR_FILENAME_EXCED_RANGE",
  231: "ERROR_PIPE_BUSY",
  267: "ERROR_DIRECTORY",
  740: "ERROR_ELEVATION_REQUIRED",
};

/** The POSIX-style code the rest of the project uses for a Win32 error. */
export function errnoFor(code: number): string {
  switch (code) {
    case 2:
    case 3:
    case 267:
      return "ENOENT";
    case 5:
    case 740:
      return "EACCES";
    case 193:
      return "ENOEXEC";
    default:
      return `WIN32_${code}`;
  }
}

/** `COORD` passed by value: `rows << 16 | cols`. */
export function coord(cols: number, rows: number): number {
  return ((rows & 0xffff) << 16 | (cols & 0xffff)) >>> 0;
}

/** The system's code pages (Windows): OEM (consoles) and ANSI (GUI programs); else undefined. */
export function systemCodePages(): { oem: number; ansi: number } | undefined {
  if (Deno.build.os !== "windows") return undefined;
  const k = kernel32();
  return { oem: k.GetOEMCP(), ansi: k.GetACP() };
}

/** The system directory (`C:\Windows\System32`), from Windows itself rather than any variable. */
export function systemDirectory(): string {
  const buffer = new Uint16Array(1024);
  const length = kernel32().GetSystemDirectoryW(new Uint8Array(buffer.buffer), buffer.length);
  if (length === 0 || length >= buffer.length) {
    throw new Win32Error("GetSystemDirectoryW", kernel32().GetLastError());
  }
  return String.fromCharCode(...buffer.subarray(0, length));
}

let wineVersion: string | null | undefined;

/** The Wine version when running under Wine (whose ntdll exports wine_get_version), else null. */
export function runningUnderWine(): string | null {
  if (wineVersion !== undefined) return wineVersion;
  wineVersion = null;
  if (Deno.build.os !== "windows") return wineVersion;
  try {
    const ntdll = Deno.dlopen("ntdll.dll", {
      wine_get_version: { parameters: [], result: "pointer", optional: true },
    });
    const version = ntdll.symbols.wine_get_version?.();
    if (version) wineVersion = Deno.UnsafePointerView.getCString(version);
    ntdll.close();
  } catch {
    // not Wine
  }
  return wineVersion;
}
