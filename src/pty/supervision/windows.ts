/**
 * Supervision on Windows: nothing to do. Every child runs in a job object that ends its whole
 * tree when its last handle closes (`../windows/job.ts`), and the kernel closes the server's
 * handles however it dies: nothing it started outlives it, so nothing is recorded, nothing is
 * left for the next server to recover, and nothing is left for a shutdown's last sweep.
 *
 * @module
 */
import type { Supervision } from "./types.ts";

/** See the module documentation. */
export const WINDOWS_SUPERVISION: Supervision = { recovered: 0, endAll: () => 0 };
