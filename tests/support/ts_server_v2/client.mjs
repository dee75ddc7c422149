// A TypeScript-SDK v2 MCP *client* (@modelcontextprotocol/client, 2026-07-28) for the
// chat's tests, as the SDK's docs write one: connects to the chat's own /mcp/ endpoint
// (streamable HTTP) with a run token, lists the tools and calls the ones named on the
// command line; prints one JSON object. Like v1, the client validates each successful
// result's structuredContent against the tool's outputSchema (a mismatch throws).
//   node client.mjs URL TOKEN '[["tool", {args}], ...]'
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const [url, token, callsJson] = process.argv.slice(2);
const calls = JSON.parse(callsJson || "[]");
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
// 'auto': probe with server/discover and speak 2026-07-28 where the server does (without
// it the v2 client connects the 2025 way, which the v1 client already checks).
const client = new Client(
  { name: "qc-test-ts-v2-client", version: "1.0.0" },
  { versionNegotiation: { mode: "auto" } },
);
await client.connect(transport);
const tools = (await client.listTools()).tools;
const results = [];
for (const [name, args] of calls) {
  try {
    const result = await client.callTool({ name, arguments: args });
    results.push({ isError: result.isError === true, structuredContent: result.structuredContent });
  } catch (error) {
    results.push({ thrown: String(error && error.message ? error.message : error) });
  }
}
console.log(JSON.stringify({
  protocolVersion: client.getNegotiatedProtocolVersion() ?? null,
  serverVersion: client.getServerVersion(),
  tools,
  results,
}));
await client.close();
