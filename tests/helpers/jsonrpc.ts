/** Raw JSON-RPC messages for tests that talk to the server without the SDK's client. */

/** The `initialize` request a client sends first (id 1), naming itself `client`. */
export function initializeRequest(client: string) {
  return {
    jsonrpc: "2.0" as const,
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: client, version: "1" },
    },
  };
}
