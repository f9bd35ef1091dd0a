/**
 * Starts sandboxed children through Workers (worker.ts), one per start: a confined thread
 * cannot be widened, and each child's rules name its own terminal, so no worker serves twice.
 * Starting a Worker costs 13-21 ms here, most of a sandboxed start; so one is kept ready (its
 * module loaded, not yet confined) once a sandboxed start has happened, and replaced as soon as
 * it is used. A spare unused for {@link SPARE_IDLE_MS} is let go (about 10 MiB each). An idle
 * server that never sandboxed anything has none and has not loaded this code.
 *
 * @module
 */
import { SpawnError } from "../../types.ts";
import type { ConfinedSpawnAnswer, ConfinedSpawnJob } from "./worker.ts";

/** How long a spare worker is kept without use. */
export const SPARE_IDLE_MS = 60_000;

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
    refill();
  }
}

/** Lets the spare go (at shutdown). */
export function releaseSpare(): void {
  clearTimeout(idle);
  const held = spare;
  spare = undefined;
  held?.then(({ worker }) => worker.terminate(), () => {});
}
