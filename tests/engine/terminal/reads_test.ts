/**
 * Watching a terminal while it prints: a viewer that joins at any moment gets exactly the
 * output after its snapshot's offset (nothing missed, nothing twice), and drawing the snapshot
 * and then every event ends with the same screen as the engine's own; a resize in between is
 * part of the story. Real PTYs, the engine's TerminalService.
 */
import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
import {
  compilePattern,
  loadPatterns,
  type TerminalEvent,
  TerminalService,
  type Watch,
} from "../../../src/engine/terminal/mod.ts";
import { OutputBuffer } from "../../../src/engine/output/buffer.ts";
import { Screen } from "../../../src/engine/output/screen.ts";
import { concat, eventually, tempDir } from "../../helpers/process.ts";

await loadPatterns();

Deno.test({
  name: "viewers joining at any moment end with the engine's own screen",
  ignore: Deno.build.os === "windows",
  async fn() {
    const terminals = new TerminalService();
    // 8,000 coloured lines in bursts, then a full-screen switch. Halfway it waits for `go`, so
    // that viewers certainly join while it prints, however fast or slow the machine is.
    const dir = tempDir("winterm-watch-"), go = `${dir}/go`;
    const script = "for i in $(seq 1 8000); do printf 'line %d \\033[3%dmcolour\\033[0m\\n' $i " +
      "$((i % 8)); [ $((i % 500)) = 0 ] && sleep 0.06; " +
      `[ $i = 4000 ] && while [ ! -e ${go} ]; do sleep 0.01; done; done; ` +
      "printf '\\033[?1049h\\033[5;5Hfull screen'; sleep 30";
    const terminal = await terminals.create({
      command: "sh",
      args: ["-c", script],
      cols: 70,
      rows: 15,
    });
    const viewers: { screen: Screen; watch: Watch; received: Uint8Array[] }[] = [];
    const end = () => terminal.stats().totalBytes;
    try {
      // Three join while it waits halfway, the others while it goes on or after it has stopped.
      ok(await eventually(() => terminal.acpOutput(true).output.includes("line 4000 \x1b")));
      for (let joined = 0; joined < 6; joined++) {
        if (joined === 3) {
          terminal.resize(60, 12);
          Deno.writeTextFileSync(go, "");
        }
        if (joined > 3) await new Promise((resolve) => setTimeout(resolve, 40 * joined));
        // A viewer: its own emulator, drawing the snapshot and then every event, in order.
        const drawn = new OutputBuffer();
        const viewer: { screen?: Screen } = {};
        const received: Uint8Array[] = [];
        const watch = await terminal.watch((event) => {
          if (event.type === "output") {
            received.push(event.data.slice());
            drawn.append(event.data);
          } else if (event.type === "resize") viewer.screen!.resize(event.cols, event.rows);
        });
        const screen = viewer.screen = new Screen(drawn, watch.cols, watch.rows);
        drawn.append(watch.snapshot);
        watch.start();
        viewers.push({ screen, watch, received });
      }
      let engineView = "";
      ok(
        await eventually(() => engineView.includes("full screen"), undefined, async () => {
          engineView = (await terminal.screen()).text;
        }),
        engineView,
      );
      const expected = await terminal.screen();
      ok(
        viewers.some(({ watch }) => watch.offset > 0 && watch.offset < end() * 0.9),
        "someone joined while it printed",
      );
      // All of it is still kept (8,000 lines < the 10,000 kept) and fits one raw read.
      const all = terminal.acpOutput(true);
      ok(!all.truncated);
      const output = new TextEncoder().encode(all.output);
      assertEquals(output.length, end());
      for (const [i, { screen, watch, received }] of viewers.entries()) {
        // Exactly the bytes after the snapshot's offset.
        const got = concat(received), kept = output.subarray(watch.offset);
        assertEquals(got.length, kept.length, `viewer ${i}: ${got.length} bytes after its offset`);
        ok(got.every((byte, at) => byte === kept[at]), `viewer ${i}: the same bytes`);
        // Rendered until caught up: a render stops at its time budget, which a busy machine
        // reaches first (viewer 0 then showed line 6417 of 8,000).
        let seen = await screen.render();
        ok(
          await eventually(() => seen.unrenderedBytes === 0, undefined, async () => {
            seen = await screen.render();
          }),
          `viewer ${i}: ${seen.unrenderedBytes} bytes never rendered`,
        );
        assertEquals(
          [seen.text, seen.cols, seen.rows, seen.alternate, seen.cursorX, seen.cursorY],
          [
            expected.text,
            expected.cols,
            expected.rows,
            expected.alternate,
            expected.cursorX,
            expected.cursorY,
          ],
          `viewer ${i}`,
        );
      }
    } finally {
      for (const { screen, watch } of viewers) {
        watch.stop();
        screen.dispose();
      }
      await terminals.shutdown(200);
      Deno.removeSync(dir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "a viewer joining while the screen is behind gets the output kept after its snapshot, resizes in place",
  ignore: Deno.build.os === "windows",
  async fn() {
    const terminals = new TerminalService();
    // Whole-screen scrolls cost the emulator the most: 200,000 of them take it many seconds,
    // far beyond the second a look at the screen may take.
    const script = "s=$(printf '\\033[24S'); yes \"$s\" | head -n 200000 | tr -d '\\n'; " +
      "printf 'done\\n'; read line; printf 'after\\n'; sleep 30";
    const terminal = await terminals.create({
      command: "sh",
      args: ["-c", script],
      cols: 80,
      rows: 24,
    });
    let watch: Watch | undefined;
    const until = async (text: string) => {
      const pattern = compilePattern(text, "", "pattern");
      assertEquals((await terminal.wait({ pattern, timeoutMs: 20_000 })).condition, "pattern");
    };
    try {
      await until("done");
      ok((await terminal.screen()).unrenderedBytes > 0, "the screen is behind");
      const resizedAt = terminal.stats().totalBytes;
      terminal.resize(60, 20);
      await terminal.write("go\r");
      await until("after");
      const events: TerminalEvent[] = [];
      watch = await terminal.watch((event) => events.push(event));
      const end = terminal.stats().totalBytes;
      ok(watch.offset < resizedAt, `the snapshot at ${watch.offset}, the resize at ${resizedAt}`);
      assertEquals([watch.cols, watch.rows], [80, 24]);
      watch.start();
      // Exactly the kept bytes after the snapshot's offset, the resize where it happened.
      const all = new TextEncoder().encode(terminal.acpOutput(true).output);
      assertEquals(all.length, end);
      const resize = events.findIndex((event) => event.type === "resize");
      assertEquals(events[resize], { type: "resize", cols: 60, rows: 20 });
      const bytes = (from: number, to?: number) =>
        concat(
          events.slice(from, to).flatMap((event) => event.type === "output" ? [event.data] : []),
        );
      assertEquals(bytes(0, resize), all.subarray(watch.offset, resizedAt));
      assertEquals(bytes(resize + 1), all.subarray(resizedAt));
      match(new TextDecoder().decode(bytes(resize + 1)), /after/);
    } finally {
      watch?.stop();
      await terminals.shutdown(200);
    }
  },
});
