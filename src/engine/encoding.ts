/**
 * The encodings of one child, for the services: the `encoding` argument read and checked, each
 * output stream's decoder, and how input text becomes the bytes the program reads.
 *
 * What the bytes are comes from the platform ({@link ChildProcess.codePage}): UTF-8 through a
 * Windows pseudoconsole (conhost translates); the program's own bytes through Windows pipes
 * (UTF-8 or the console's code page, followed run by run; input in the console's code page);
 * UTF-8 by convention on POSIX. An `encoding` argument, or the code page a shell was set to,
 * names the code page both ways (output that is valid UTF-8 still reads as UTF-8).
 *
 * @module
 */
import { type ChildProcess, HOST_FLAVOR, systemCodePages } from "../pty/mod.ts";
import { EngineError } from "./errors.ts";
import {
  codePageLabel,
  createDecoder,
  encodeText,
  EncodingError,
  loadCodePages,
  MalformedTextError,
  parseEncoding,
  type StreamDecoder,
  type StreamEncoding,
} from "./output/decode.ts";

/** An `encoding` argument, read: the iconv-lite label, and the Windows code page if it has one. */
export interface RequestedEncoding {
  label: string;
  codePage?: number;
}

/**
 * Loads the code page tables where a child's encodings may need them: on Windows (the console's
 * code pages), or for an `encoding` argument. Await it before {@link requestedEncoding} and
 * {@link ChildCodec}; a server that only sees UTF-8 never loads them.
 */
export function prepareEncodings(encoding: string | undefined): Promise<void> | undefined {
  return HOST_FLAVOR === "windows" || encoding !== undefined ? loadCodePages() : undefined;
}

/** Reads an `encoding` argument; throws {@link EngineError} naming `field`. */
export function requestedEncoding(
  text: string | undefined,
  field = "encoding",
): RequestedEncoding | undefined {
  if (text === undefined) return undefined;
  try {
    return parseEncoding(text, systemCodePages());
  } catch (error) {
    if (error instanceof EncodingError) {
      throw new EngineError("invalid_input", error.message, field);
    }
    throw error;
  }
}

/**
 * Refuses an encoding that would change nothing: a program on a Windows terminal always
 * reaches us in UTF-8 (conhost translates from the console's code page), and only the cmd and
 * PowerShell shells can be switched to another code page.
 */
export function checkTerminalEncoding(
  requested: RequestedEncoding | undefined,
  pty: boolean,
  shellCodePage: number | undefined,
  field = "encoding",
): void {
  if (!requested || !pty || HOST_FLAVOR !== "windows" || shellCodePage !== undefined) return;
  throw terminalEncodingRefusal(requested.label, field);
}

/**
 * The refusal of {@link checkTerminalEncoding}. Only pipes apply it: how a client asks for
 * them (run_command's `use_pty`, none over REST) is its front end's to say (hint `use-pipes`).
 */
export function terminalEncodingRefusal(label: string, field = "encoding"): EngineError {
  return new EngineError(
    "invalid_input",
    `'${label}' cannot apply here: on a Windows terminal a program's output reaches us in ` +
      "UTF-8 whatever its code page, and only the cmd and powershell shells can be switched to " +
      "a code page (with a code page number or name)",
    { field, hint: { code: "use-pipes" } },
  );
}

/** One child's decoders and input encoding. */
export class ChildCodec {
  /** The iconv-lite label input is encoded in (`utf-8` included). */
  readonly inputLabel: string;
  #output: StreamEncoding;
  /** The code page is the console's, which the command may change (nobody named one). */
  readonly #followsConsole: boolean;

  /**
   * `requested`: the caller's `encoding`; `shellCodePage`: the code page the shell was set to
   * (which the caller's encoding, if any, already names).
   */
  constructor(
    child: Pick<ChildProcess, "codePage">,
    requested: RequestedEncoding | undefined,
    shellCodePage: number | undefined,
  ) {
    const chosen = requested?.label ??
      (shellCodePage === undefined ? undefined : codePageLabel(shellCodePage));
    const codePage = child.codePage;
    if (codePage === "utf-8") {
      this.#output = { kind: "utf-8" };
      this.inputLabel = "utf-8";
    } else if (chosen !== undefined) {
      // The code page asked for is where the text that is not UTF-8 is read: a cmd switched
      // to it still runs programs that write UTF-8.
      this.#output = { kind: "mixed", codePage: chosen };
      this.inputLabel = chosen;
    } else if (codePage === null) {
      this.#output = { kind: "utf-8" };
      this.inputLabel = "utf-8";
    } else {
      const label = codePageLabel(codePage) ?? "utf-8";
      this.#output = { kind: "mixed", codePage: label };
      this.inputLabel = label;
    }
    this.#followsConsole = codePage !== "utf-8" && codePage !== null && chosen === undefined;
  }

  /** A decoder for one output stream (each stream decides its encoding on its own). */
  decoder(): StreamDecoder {
    return createDecoder(this.#output);
  }

  /**
   * Input text as the program reads it now: text beyond ASCII in the code page the child's
   * console has at this moment where that is the child's (Windows pipes: a `chcp` in the
   * command changes what cmd's `set /p` reads), else as {@link encode}. Throws
   * {@link EngineError} naming `field`.
   */
  async encodeNow(
    text: string,
    field: string,
    child: Pick<ChildProcess, "consoleCodePage">,
  ): Promise<Uint8Array> {
    // deno-lint-ignore no-control-regex -- ASCII reads the same in every code page
    if (this.#followsConsole && child.consoleCodePage && !/^[\x00-\x7f]*$/.test(text)) {
      const codePage = await child.consoleCodePage();
      const label = codePage === undefined ? undefined : codePageLabel(codePage);
      if (label !== undefined) return this.#encodeIn(text, label, field);
    }
    return this.encode(text, field);
  }

  /** Input text as the program reads it; throws {@link EngineError} naming `field`. */
  encode(text: string, field: string): Uint8Array {
    return this.#encodeIn(text, this.inputLabel, field);
  }

  #encodeIn(text: string, label: string, field: string): Uint8Array {
    try {
      return encodeText(text, label);
    } catch (error) {
      if (!(error instanceof EncodingError)) throw error;
      // Text that is no text: no encoding would do, so none is advised.
      if (error instanceof MalformedTextError) {
        throw new EngineError("invalid_input", error.message, field);
      }
      throw new EngineError(
        "invalid_input",
        `${error.message}; pass encoding (e.g. utf-8) when starting it if it reads another`,
        field,
      );
    }
  }
}
