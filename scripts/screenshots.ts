/**
 * Takes the screenshots (README, docs/web-view.md) of the web view from the real server (main.ts --http) and a
 * real browser (Debian's chromium, or WINTERM_CHROMIUM): a shell watched live at 1366, 1000 and
 * 390 px wide (a phone), a full-screen program, a take-over, a recording replayed. Writes
 * docs/web-*.png.
 *
 * ```sh
 * deno run --allow-all scripts/screenshots.ts
 * ```
 * @module
 */
import { fileURLToPath } from "node:url";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Client } from "../tests/helpers/mcp.ts";
import { request, startHttpServer } from "../tests/helpers/http.ts";
import { launchBrowser } from "../tests/helpers/browser.ts";

const DOCS = fileURLToPath(new URL("../docs/", import.meta.url));

const server = await startHttpServer([], { WINTERM_LOG_LEVEL: "error" });
const browser = await launchBrowser();
const mcp = new Client({ name: "screenshots", version: "1" });
try {
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${server.token}` } },
    }),
  );
  const create = async (body: Record<string, unknown>) =>
    (await request(server, "POST", "/api/terminals", { body })).json.data.terminalId as string;
  const type = (id: string, input: string) =>
    request(server, "POST", `/api/terminals/${id}/input`, { body: { input } });
  const shell = await create({
    command: "bash",
    args: ["--norc", "--noprofile"],
    env: { PS1: "\\[\\e[32m\\]agent\\[\\e[0m\\]:\\[\\e[34m\\]\\w\\[\\e[0m\\]$ " },
    cols: 96,
    rows: 26,
  });
  // A build in a deep folder (the list shows its path's end), and one that failed.
  const project = await Deno.makeTempDir({ prefix: "winterm-shots-" });
  const deep = `${project}/work/acme/services/payments-api`;
  await Deno.mkdir(deep, { recursive: true });
  await create({ command: "sh", args: ["-c", "echo building; sleep 600"], cwd: deep });
  await create({ command: "sh", args: ["-c", "echo 'tests failed'; exit 3"], cwd: deep });
  await type(shell, "seq -f 'earlier output, line %g' 1 40");
  await type(shell, "cd /usr/share && ls --color=always -d */ | head -12");
  await type(shell, "printf '\\e[1mbuilding\\e[0m ... '; sleep 0.3; printf '\\e[32mok\\e[0m\\n'");
  await mcp.callTool({ name: "run_command", arguments: { command: "uname -sr && sleep 5" } });
  await mcp.callTool({ name: "run_command", arguments: { command: "git --version" } });
  const notes = await Deno.makeTempFile({ suffix: ".md" });
  await Deno.writeTextFile(
    notes,
    "# Release notes\n\n- The web view shows every terminal live.\n- Take over to type alongside " +
      "the agent.\n- Recordings replay in the page.\n",
  );
  const editor = await create({ command: "vim", args: ["-u", "NONE", "-N", "-n", notes] });
  await new Promise((resolve) => setTimeout(resolve, 1500));

  const page = await browser.newPage({ viewport: { width: 1360, height: 760 } });
  await page.goto(server.loginLink);
  await page.waitForSelector(`#terminals tr[data-id="${shell}"]`);
  await page.click(`#terminals tr[data-id="${shell}"]`);
  await page.waitForSelector('#screen .xterm-rows:has-text("building ... ok")');
  await page.screenshot({ path: `${DOCS}web-view.png` });
  // Narrower: a laptop's window, and a phone (the lists above the terminal).
  await page.setViewportSize({ width: 1000, height: 700 });
  await page.waitForTimeout(300);
  await page.screenshot({ path: `${DOCS}web-1000.png` });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForTimeout(300);
  await page.screenshot({ path: `${DOCS}web-phone.png` });
  await page.setViewportSize({ width: 1360, height: 760 });

  await page.click(`#terminals tr[data-id="${editor}"]`);
  await page.waitForSelector('#screen .xterm-rows:has-text("Release notes")');
  await page.check("#takeover");
  await page.waitForSelector('#view-state:has-text("you have taken over")');
  await page.keyboard.type("Go- Typed by a person, beside the agent.");
  await page.keyboard.press("Escape");
  await page.waitForTimeout(500);
  await page.screenshot({ path: `${DOCS}web-takeover.png` });
  await page.keyboard.type(":q!\n");

  await page.click(`#terminals tr[data-id="${shell}"]`);
  await page.click("#recording");
  await page.waitForSelector("#player .ap-player");
  await page.waitForTimeout(2500);
  await page.screenshot({ path: `${DOCS}web-recording.png` });
  await Deno.remove(project, { recursive: true });
  console.error(
    "docs/web-view.png, docs/web-1000.png, docs/web-phone.png, docs/web-takeover.png, " +
      "docs/web-recording.png",
  );
} finally {
  await mcp.close().catch(() => {});
  await browser.close();
  await server.stop();
}
