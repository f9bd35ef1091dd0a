/**
 * A worker that flips a symbolic link between two targets as fast as it can, each flip atomic
 * (a new link renamed over the old one), until it is terminated. For policy race tests.
 *
 * Message in: `{ link, targets: [a, b] }`; message out: `"flipping"` once it has started.
 *
 * @module
 */
/// <reference lib="deno.worker" />
self.onmessage = (event: MessageEvent<{ link: string; targets: [string, string] }>) => {
  const { link, targets } = event.data;
  const draft = `${link}.flip`;
  self.postMessage("flipping");
  for (let i = 0;; i++) {
    try {
      Deno.removeSync(draft);
    } catch {
      // not there
    }
    Deno.symlinkSync(targets[i % 2], draft);
    Deno.renameSync(draft, link);
  }
};
