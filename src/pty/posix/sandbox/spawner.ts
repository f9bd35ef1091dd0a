/**
 * Starts sandboxed children through Workers (worker.ts), one per start: a confined thread
 * cannot be widened, and each child's rules name its own terminal, so no worker serves twice.
 *
 * A Worker costs 40-75 ms before it can take a job here: its constructor holds the calling
 * thread 20-30 ms (Deno waits for the new isolate), then its module and FFI bindings load on its
 * own thread. So one is kept ready once a sandboxed start has happened, and the next is made
 * {@link REFILL_DELAY_MS} after it is taken: a start then costs a message to a waiting thread,
 * the confinement and the spawn, and the constructor's wait falls on the event loop after the
 * start and after what a short command does at once (made at once, it held up the exit of the
 * command just started: echo's took 25 ms more). A start that finds no spare makes one and
 * waits for it.
 * (Made from another Worker instead, a worker took 520-610 ms to start here, Deno 2.9.6.) A
 * spare unused for {@link SPARE_IDLE_MS} is let go (about 10 MiB). An idle server that never
 * sandboxed anything has none and has not loaded this code.
 *
 * @module
 */
import { SpawnError } from "../../types.ts";
import type { ConfinedSpawnAnswer, ConfinedSpawnJob } from "./worker.ts";

/** How long a spare worker is kept without use. */
export const SPARE_IDLE_MS = 60_000;
/** How long after a start the next spare is made. */
export const REFILL_DELAY_MS = 100;

/** A worker whose module has loaded, waiting for its one job. */
interface ReadyWorker {
  worker: Worker;
  /** Settles with its answer (or a failure of the thread itself). */
  answer: Promise<ConfinedSpawnAnswer>;
}

let spare: Promise<ReadyWorker> | undefined;
let idle: ReturnType<typeof setTimeout> | undefined;

/** Starts a worker and waits until it is ready for a job. */
async function readyWorker(): Promise<ReadyWorker> {
  const { WORKER_URL } = await import("./worker.ts");
  const worker = new Worker(WORKER_URL, { type: "module", name: "winterm-sandbox" });
  let answered!: (answer: ConfinedSpawnAnswer) => void;
  let failed!: (error: Error) => void;
  const answer = new Promise<ConfinedSpawnAnswer>((resolve, reject) => {
    answered = resolve;
    failed = reject;
  });
  // Handled where it is awaited; until then a failure must not count as unhandled.
  answer.catch(() => {});
  return await new Promise<ReadyWorker>((resolve, reject) => {
    worker.onmessage = (event: MessageEvent<"ready" | ConfinedSpawnAnswer>) => {
      if (event.data === "ready") resolve({ worker, answer });
      else answered(event.data);
    };
    worker.onerror = (event) => {
      event.preventDefault();
      const error = new Error(`the sandbox's thread failed: ${event.message}`);
      reject(error);
      failed(error);
      worker.terminate();
    };
  });
}

/** The spare, or a new worker; a new spare is started behind it. */
async function takeWorker(): Promise<ReadyWorker> {
  const taken = spare ?? readyWorker();
  spare = undefined;
  clearTimeout(idle);
  return await taken;
}

function refill(): void {
  if (spare) return;
  const next = readyWorker();
  spare = next;
  next.catch(() => {
    if (spare === next) spare = undefined;
  });
  idle = setTimeout(() => {
    if (spare !== next) return;
    spare = undefined;
    next.then(({ worker }) => worker.terminate(), () => {});
  }, SPARE_IDLE_MS);
  Deno.unrefTimer(idle);
}

/**
 * Runs `job` on a fresh worker: confines it, starts the child there. Resolves to the child's
 * pid; rejects with {@link SpawnError} (code `ESANDBOX` when the confinement itself failed: no
 * child was started).
 */
export async function spawnConfined(job: ConfinedSpawnJob): Promise<number> {
  const { worker, answer } = await takeWorker();
  try {
    worker.postMessage(job);
    const result = await answer;
    if ("pid" in result) return result.pid;
    if ("spawnError" in result) {
      const { code, message, detail } = result.spawnError;
      throw new SpawnError(code, message, detail);
    }
    throw new SpawnError("ESANDBOX", `the sandbox cannot be applied: ${result.confinement}`);
  } catch (error) {
    if (error instanceof SpawnError) throw error;
    throw new SpawnError("ESANDBOX", (error as Error).message);
  } finally {
    scheduleRefill();
  }
}

let refilling: ReturnType<typeof setTimeout> | undefined;

function scheduleRefill(): void {
  if (refilling !== undefined) return;
  refilling = setTimeout(() => {
    refilling = undefined;
    refill();
  }, REFILL_DELAY_MS);
  Deno.unrefTimer(refilling);
}

/** Lets the spare go (at shutdown). */
export function releaseSpare(): void {
  clearTimeout(idle);
  clearTimeout(refilling);
  refilling = undefined;
  const held = spare;
  spare = undefined;
  held?.then(({ worker }) => worker.terminate(), () => {});
}
