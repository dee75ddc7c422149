// A TypeScript-SDK MCP *client* for the chat's tests: connects to the chat's own /mcp/
// endpoint (streamable HTTP) with a run token, lists the tools and calls the ones named
// on the command line; prints one JSON object. The SDK validates every successful
// result's structuredContent against the tool's outputSchema (it throws if it doesn't
// match), so a call that comes back here matched it.
//   node client.mjs URL TOKEN '[["tool", {args}], ...]'
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token, callsJson] = process.argv.slice(2);
const calls = JSON.parse(callsJson || "[]");
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: "qc-test-ts-client", version: "1.0.0" });
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
console.log(JSON.stringify({ serverVersion: client.getServerVersion(), tools, results }));
await client.close();
