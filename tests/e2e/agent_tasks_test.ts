/**
 * The agent-task suite through the real server and the SDK client: each task within its
 * budget of calls and bytes read (tests/helpers/agent_tasks.ts), every call one that the tool
 * list allows (what `tools/list` leaves out never stands in a task's way).
 */
import { ok } from "node:assert/strict";
// @ts-types="ajv/dist/2020.d.ts"
import { Ajv2020 } from "ajv/dist/2020.js";
import { Agent, AGENT_TASKS } from "../helpers/agent_tasks.ts";
import { serverTest } from "../helpers/mcp.ts";

const ajv = new Ajv2020({ strict: false });

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
      const { tools } = await mcp.client.listTools();
      for (const { name, args } of agent.sent) {
        const validate = ajv.compile(tools.find((tool) => tool.name === name)!.inputSchema);
        ok(validate(args), `${name} ${JSON.stringify(args)}: ${ajv.errorsText(validate.errors)}`);
      }
    },
    { ignore: task.linuxOnly ? !linux : !posix },
  );
}
