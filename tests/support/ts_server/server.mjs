// A TypeScript-SDK MCP server (2025-11-25) for the chat's tests: streamable HTTP with
// sessions on 127.0.0.1:PORT; `book` asks the person mid-call with elicitInput and gives
// up after PATIENCE_MS (the SDK's own request timeout, 60 s by default); `login` sends
// them to a link (URL mode), `authorize` needs a link first (-32042), `count` reports
// progress and returns structured output (outputSchema + structuredContent).
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { UrlElicitationRequiredError, isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

const port = Number(process.argv[2]);
const patience = Number(process.env.PATIENCE_MS || 60000);

function makeServer() {
  const server = new McpServer({ name: "ts-test", version: "1.0.0" });
  server.tool("add", "Add two numbers.", { a: z.number(), b: z.number() }, async ({ a, b }) => ({
    content: [{ type: "text", text: String(a + b) }],
  }));
  server.tool("book", "Asks the person with a form.", {}, async () => {
    try {
      const answer = await server.server.elicitInput(
        {
          message: "How many of you?",
          requestedSchema: {
            type: "object",
            properties: {
              size: { type: "integer", title: "How many?" },
              seating: { type: "string", enum: ["indoor", "outdoor"] },
            },
            required: ["size"],
          },
        },
        { timeout: patience },
      );
      const text = answer.action === "accept"
        ? `booked ${answer.content.size} ${answer.content.seating || "indoor"}`
        : `not booked: ${answer.action}`;
      return { content: [{ type: "text", text }] };
    } catch (error) {
      return { content: [{ type: "text", text: `gave up waiting (${error.code})` }] };
    }
  });
  server.tool("login", "Sends the person to a sign-in link (URL mode).", {}, async () => {
    const answer = await server.server.elicitInput(
      { mode: "url", message: "Sign in", url: "https://example.test/sign-in", elicitationId: "el-7" },
      { timeout: patience },
    );
    if (answer.action === "accept") await server.server.createElicitationCompletionNotifier("el-7")();
    return { content: [{ type: "text", text: `login: ${answer.action}` }] };
  });
  server.tool("authorize", "Needs the person to open a link first (-32042).", {}, async () => {
    throw new UrlElicitationRequiredError([
      { mode: "url", message: "Authorize access", url: "https://example.test/authorize", elicitationId: "auth-1" },
    ]);
  });
  server.registerTool(
    "count",
    {
      description: "Counts to n, reporting progress; the result is structured.",
      inputSchema: { n: z.number().int().min(1).max(20) },
      outputSchema: { counted: z.number().int(), notified: z.number().int() },
    },
    async ({ n }, extra) => {
      const token = extra._meta?.progressToken;
      let notified = 0;
      for (let i = 1; i <= n; i++) {
        if (token !== undefined) {
          await extra.sendNotification({
            method: "notifications/progress",
            params: { progressToken: token, progress: i, total: n, message: `${i} of ${n}` },
          });
          notified++;
        }
      }
      const structuredContent = { counted: n, notified };
      return { content: [{ type: "text", text: JSON.stringify(structuredContent) }], structuredContent };
    },
  );
  return server;
}

const transports = {};

async function body(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
}

createServer(async (req, res) => {
  try {
    const parsed = req.method === "POST" ? await body(req) : undefined;
    const id = req.headers["mcp-session-id"];
    let transport = id ? transports[id] : undefined;
    if (!transport && req.method === "POST" && isInitializeRequest(parsed)) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => { transports[sid] = transport; },
      });
      transport.onclose = () => { if (transport.sessionId) delete transports[transport.sessionId]; };
      await makeServer().connect(transport);
    }
    if (!transport) {
      res.writeHead(400, { "content-type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message: "No session" }, id: null }));
      return;
    }
    await transport.handleRequest(req, res, parsed);
  } catch (error) {
    if (!res.headersSent) { res.writeHead(500); res.end(String(error)); }
  }
}).listen(port, "127.0.0.1", () => console.log(`listening on ${port}`));
