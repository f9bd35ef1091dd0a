/**
 * A worker that flips a symbolic link between two targets, each flip atomic (a new link renamed
 * over the old one), thousands of times a second with a pause of a few microseconds between
 * flips (so it does not take a whole core from the rest of the machine), until told to stop.
 * For policy race tests.
 *
 * Message in: `{ link, targets: [a, b], stop }` (`stop`: a shared Int32Array; set its first
 * element to 1 to stop). Messages out: `"flipping"` once started, then the number of flips
 * once stopped.
 *
 * @module
 */
/// <reference lib="deno.worker" />
self.onmessage = (
  event: MessageEvent<{ link: string; targets: [string, string]; stop: Int32Array }>,
) => {
  const { link, targets, stop } = event.data;
  const draft = `${link}.flip`;
  self.postMessage("flipping");
  let flips = 0;
  while (Atomics.load(stop, 0) === 0) {
    try {
      Deno.removeSync(draft);
    } catch {
      // not there
    }
    Deno.symlinkSync(targets[flips % 2], draft);
    Deno.renameSync(draft, link);
    flips++;
    Atomics.wait(stop, 0, 0, 0.02);
  }
  self.postMessage(flips);
};
