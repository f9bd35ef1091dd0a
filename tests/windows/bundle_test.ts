/**
 * The bundle the Windows executable is compiled from (scripts/compile.ts), served by deno.exe
 * with the start task's permissions (the nearest thing to the executable a test can build: see
 * tests/e2e/bundle_test.ts). On Windows the first program loads the code page tables
 * (iconv-lite, CommonJS given its `require` by the bundle): a GBK file typed by cmd through
 * pipes must come out as the text it is.
 */
import { deepStrictEqual as assertEquals, match } from "node:assert/strict";
import iconv from "iconv-lite";
import { systemCodePages } from "../../src/pty/mod.ts";
import { withBundle } from "../helpers/bundle.ts";
import { type CommandQuery, connect } from "../helpers/mcp.ts";
import { tempDir } from "../helpers/process.ts";
import { limitedTest } from "../helpers/limited.ts";

limitedTest({
  name: "bundle: cmd types a GBK file through pipes, decoded by the bundle's code page tables",
  ignore: Deno.build.os !== "windows",
  async fn() {
    const dir = tempDir("winterm bundle ");
    const file = `${dir}\\gbk.txt`;
    Deno.writeFileSync(file, iconv.encode("GBK文本：中文输出\r\n", "gbk"));
    try {
      await withBundle(async (main) => {
        const mcp = await connect([], {}, main);
        try {
          const version = await mcp.callOk<{ platform: string }>("get_version");
          assertEquals(version.platform, "windows");
          const result = await mcp.callOk<CommandQuery>("run_command", {
            command: `type "${file}"`,
            shell_type: "cmd",
            use_pty: false,
            wait_ms: 30_000,
            // A Chinese Windows (code page 936) reads GBK by itself; any other is told.
            ...(systemCodePages()?.oem === 936 ? {} : { encoding: "gbk" }),
          });
          assertEquals(result.status, "completed");
          match(result.stdout, /GBK文本：中文输出/);
        } finally {
          await mcp.close();
        }
      });
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  },
});
