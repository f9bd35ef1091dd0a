/**
 * The bundle the executables are compiled from (scripts/compile.ts), made for a test.
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { bundle } from "../../scripts/compile.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/**
 * Bundles main.ts into a fresh folder under dist/ (where `deno task compile` bundles, so that
 * deno.json applies when it runs), calls `fn` with the path of its main.js, then removes it.
 */
export async function withBundle(fn: (main: string) => Promise<void>): Promise<void> {
  Deno.mkdirSync(`${ROOT}dist`, { recursive: true });
  const dir = Deno.makeTempDirSync({ dir: `${ROOT}dist`, prefix: "test-bundle-" });
  try {
    await fn(await bundle(dir));
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}
