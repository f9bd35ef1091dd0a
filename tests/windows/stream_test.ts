/**
 * The web view's server side on Windows, through the real server over HTTP: a terminal's
 * WebSocket stream (hello, the screen, live output from a pseudoconsole, the exit), its
 * recording, the page, and refusals. (Under Wine a console program reaches the pseudoconsole
 * by writing to CON.)
 */
import { deepStrictEqual as assertEquals, match, ok } from "node:assert/strict";
import { request, startHttpServer } from "../helpers/http.ts";
import { openStream, Refused } from "../helpers/stream.ts";
import { limitedTest } from "../helpers/limited.ts";

limitedTest({
  name: "Windows: a terminal's stream, recording and the page",
  ignore: Deno.build.os !== "windows",
  async fn() {
    const server = await startHttpServer();
    try {
      const created = await request(server, "POST", "/api/terminals", {
        body: {
          command: "cmd.exe",
          args: [
            "/d",
            "/c",
            "echo streamed-line>CON & ping -n 3 127.0.0.1 >CON & echo streamed-end>CON & exit 5",
          ],
        },
      });
      assertEquals(created.status, 201, JSON.stringify(created.json));
      const id = created.json.data.terminalId;
      const refused = await openStream(server, `/api/terminals/${id}/stream`, { token: null })
        .then(() => undefined, (error) => error);
      ok(refused instanceof Refused && refused.status === 401, String(refused));
      const stream = await openStream(server, `/api/terminals/${id}/stream`);
      try {
        await stream.until(
          () => stream.messages.some((m) => m.type === "exit"),
          "the exit",
          60_000,
        );
        const [hello] = stream.messages;
        assertEquals([hello.type, hello.kind, hello.id], ["hello", "terminal", id]);
        match(stream.output(), /streamed-line[\s\S]*streamed-end/);
        assertEquals(stream.messages.find((m) => m.type === "exit").exitStatus, {
          exitCode: 5,
          signal: null,
        });
      } finally {
        stream.close();
      }
      const recording = await fetch(`${server.url}/api/terminals/${id}/recording`, {
        headers: { authorization: `Bearer ${server.token}` },
      });
      const lines = (await recording.text()).trimEnd().split("\n").map((line) => JSON.parse(line));
      assertEquals(lines[0].version, 2);
      match(lines.slice(1).map((event) => event[2]).join(""), /streamed-line/);
      const page = await fetch(`${server.url}/`);
      assertEquals(page.status, 200);
      match(await page.text(), /<title>winterm<\/title>/);
      assertEquals((await request(server, "GET", "/api/terminals", { token: null })).status, 401);
    } finally {
      await server.stop();
    }
  },
});
