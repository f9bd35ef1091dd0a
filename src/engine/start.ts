/**
 * What both services (commands, terminals) do to start a child: a slot in their table (their
 * limit, the starts under way counted against it, none once the engine shuts down), then the
 * child's directory, environment and encodings, its launch, and its codec.
 *
 * @example
 * ```ts
 * import { EngineError } from "./errors.ts";
 * import { SlotTable } from "./start.ts";
 * const open = new Set<string>();
 * const slots = new SlotTable(
 *   2,
 *   () => open.size,
 *   (count) => new EngineError("limit", `${count} open, the most allowed`),
 *   () => {},
 * );
 * await slots.take(async () => open.add("a"));
 * ```
 * @module
 */
import { childCodePage, type ChildProcess, type StdioMode } from "../pty/mod.ts";
import { EngineError } from "./errors.ts";
import { malformedText } from "./output/code_pages.ts";
import { type LaunchContext, type Launcher, resolveDirectory } from "./launching/launcher.ts";
import { childEnvironment, pagerEnvironment } from "./launching/environment.ts";
import type { Launch, StartRequest } from "./launching/request.ts";
import { checkTerminalEncoding, ChildCodec, requestedEncoding } from "./encoding.ts";

/** A service's slots: how many may be open at once, and the starts under way (they count). */
export class SlotTable {
  #starting = 0;

  constructor(
    readonly limit: number,
    /** How many are open now (the starts under way aside). */
    private readonly open: () => number,
    /** The refusal at the limit, given how many are open with those starting. */
    private readonly full: (open: number) => EngineError,
    /** Throws once the engine shuts down (see Launcher.checkOpen): that refusal comes first. */
    private readonly checkOpen: () => void,
  ) {}

  /**
   * Runs `start` in a slot: refused once the engine shuts down, or at the limit; the slot
   * counts until `start` settles (then what it started is open, or nothing is). Nothing waits
   * between the check and the count, so no other start can come between them.
   */
  async take<T>(start: () => Promise<T>): Promise<T> {
    this.checkOpen();
    const open = this.open() + this.#starting;
    if (open >= this.limit) throw this.full(open);
    this.#starting++;
    try {
      return await start();
    } finally {
      this.#starting--;
    }
  }
}

/**
 * Refuses text that is no text (a lone surrogate: see malformedText), naming its field: a
 * program, an argument, a directory or a variable made of it would get U+FFFD in its place.
 */
function refuseMalformed(texts: readonly (readonly [string | undefined, string])[]): void {
  for (const [text, field] of texts) {
    const malformed = text === undefined ? undefined : malformedText(text);
    if (malformed !== undefined) {
      throw new EngineError(
        "invalid_input",
        malformed.replace("nothing was sent", "nothing was started"),
        field,
      );
    }
  }
}

/** What a child on a terminal is told of it. */
const TERMINAL_ENV = { TERM: "xterm-256color" };

/**
 * The part of a {@link Launch} every service makes alike: the request's directory resolved,
 * its environment made (pagers that do not wait; on a terminal, its TERM, unless the request
 * sets them), its encoding read. Throws {@link EngineError} naming the field at fault.
 */
export function resolvePlace(
  request: StartRequest,
  mode: StdioMode,
): Pick<Launch, "cwd" | "env" | "encoding"> {
  refuseMalformed([
    [request.cwd, "cwd"],
    ...Object.entries(request.env ?? {}).flat().map((text) => [text, "env"] as const),
  ]);
  const cwd = resolveDirectory(request.cwd, "cwd");
  const defaults = mode === "pty" ? { ...pagerEnvironment(), ...TERMINAL_ENV } : pagerEnvironment();
  return {
    cwd,
    env: childEnvironment(request.env, defaults),
    encoding: requestedEncoding(request.encoding),
  };
}

/**
 * Starts `launch`: what runs checked (no text that is no text, the encoding asked for one the
 * program can be read in), its codec made, `beforeLaunch` asked (a refusal it throws starts
 * nothing), then launched (policy, audit, sandbox). The encodings must have been prepared (see
 * prepareEncodings). Throws {@link EngineError} naming the field at fault.
 */
export async function startChild(
  launcher: Launcher,
  launch: Launch,
  context: LaunchContext,
  signal?: AbortSignal,
  beforeLaunch?: (codec: ChildCodec) => void,
): Promise<{ child: ChildProcess; codec: ChildCodec }> {
  const { invocation, fields } = launch;
  const argsField = invocation.shell === "executable" ? fields.args : fields.program;
  refuseMalformed([
    [invocation.file, fields.program],
    ...invocation.args.map((arg) => [arg, argsField] as const),
  ]);
  checkTerminalEncoding(launch.encoding, launch.mode === "pty", invocation.codePage);
  const codec = new ChildCodec(
    { codePage: childCodePage(launch.mode) },
    launch.encoding,
    invocation.codePage,
  );
  beforeLaunch?.(codec);
  const child = await launcher.launch(launch, context, signal);
  return { child, codec };
}
