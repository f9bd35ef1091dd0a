/**
 * The agent-task suite through the real server and the SDK client: each task within its
 * budget of calls and bytes read (tests/helpers/agent_tasks.ts).
 */
import { ok } from "node:assert/strict";
import { Agent, AGENT_TASKS } from "../helpers/agent_tasks.ts";
import { serverTest } from "../helpers/mcp.ts";

const posix = Deno.build.os !== "windows";
const linux = Deno.build.os === "linux";

for (const task of AGENT_TASKS) {
  serverTest(
    `agent task: ${task.name}, in ${task.calls} calls and ${task.bytes} bytes`,
    async (mcp) => {
      const agent = new Agent(mcp);
      await task.run(agent);
      ok(agent.calls <= task.calls, `${agent.calls} calls (budget ${task.calls})`);
      ok(agent.bytes <= task.bytes, `${agent.bytes} bytes read (budget ${task.bytes})`);
    },
    { ignore: task.linuxOnly ? !linux : !posix },
  );
}
