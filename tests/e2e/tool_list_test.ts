/**
 * What the tool list costs, and whether every client can read it (issue 39): `tools/list` of
 * the server as the README starts it (the default set of 18 tools), through the SDK client.
 */
import { deepStrictEqual as assertEquals, ok } from "node:assert/strict";
import { serverTest } from "../helpers/mcp.ts";
import { schemaPortability } from "../helpers/schema_portability.ts";
import { measureToolList, TOOL_LIST_GOALS } from "../helpers/tool_list.ts";

serverTest(
  `tools/list: at most ${TOOL_LIST_GOALS.modelVisible} bytes shown to a model (names, ` +
    `descriptions, input schemas), ${TOOL_LIST_GOALS.whole} in all`,
  async (mcp) => {
    const cost = await measureToolList(mcp.client);
    assertEquals(cost.tools.length, 18);
    const table = cost.tools.map((tool) => `${tool.name} ${tool.modelVisible}`).join(", ");
    ok(
      cost.modelVisible <= TOOL_LIST_GOALS.modelVisible,
      `${cost.modelVisible} bytes shown to a model (${table})`,
    );
    ok(cost.whole <= TOOL_LIST_GOALS.whole, `${cost.whole} bytes in all`);
  },
);

serverTest(
  "tools/list: no schema a client could refuse or misread (the MCP Inspector's rules)",
  async (mcp) => {
    const { tools } = await mcp.client.listTools();
    assertEquals(schemaPortability(tools), []);
    // What ACP clients send besides a tool's arguments is accepted, and not taught to models.
    for (const tool of tools) {
      const names = Object.keys(tool.inputSchema.properties ?? {});
      ok(!names.includes("_meta") && !names.includes("sessionId"), tool.name);
    }
  },
);
