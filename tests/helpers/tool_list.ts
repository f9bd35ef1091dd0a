/**
 * What the tool list costs a client: measured on `tools/list` as a connected client receives it.
 * Used by tests/e2e/tool_list_test.ts (which holds the sizes to their goals) and by
 * scripts/bench.ts (which writes them into docs/benchmarks.md).
 *
 * @module
 */
import type { Client } from "./mcp.ts";

const encoder = new TextEncoder();

/** UTF-8 bytes of a value as JSON. */
export function jsonBytes(value: unknown): number {
  return encoder.encode(JSON.stringify(value)).length;
}

/** One tool's share of the list. */
export interface ToolCost {
  name: string;
  /** Bytes of `{name, description, inputSchema}` as JSON: what a model is shown of the tool. */
  modelVisible: number;
  /** Bytes of its description alone. */
  description: number;
  /** Bytes of its outputSchema as JSON (0 without one). */
  outputSchema: number;
  /** Bytes of the whole entry as JSON. */
  whole: number;
}

/** The tool list's size, in bytes of JSON. */
export interface ToolListCost {
  tools: ToolCost[];
  /** The tools' {@link ToolCost.modelVisible}, summed. */
  modelVisible: number;
  /** The whole `tools/list` result (every field: titles, annotations, outputSchemas). */
  whole: number;
}

/** Lists `client`'s tools and measures what the list costs. */
export async function measureToolList(client: Client): Promise<ToolListCost> {
  const result = await client.listTools();
  const tools = result.tools.map((tool) => ({
    name: tool.name,
    modelVisible: jsonBytes({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema,
    }),
    description: encoder.encode(tool.description ?? "").length,
    outputSchema: tool.outputSchema ? jsonBytes(tool.outputSchema) : 0,
    whole: jsonBytes(tool),
  }));
  return {
    tools,
    modelVisible: tools.reduce((sum, tool) => sum + tool.modelVisible, 0),
    whole: jsonBytes(result),
  };
}

/** The goals of issue 39, for the default set of tools (`--tools all`). */
export const TOOL_LIST_GOALS = {
  /** What a model is shown: names, descriptions and input schemas. */
  modelVisible: 14_000,
  /** The whole `tools/list` result. */
  whole: 32_000,
};
