// A stock TypeScript-SDK v2 MCP server (2026-07-28, with the SDK's stateless 2025-era
// fallback) for the chat's interop tests, written as the SDK's docs show: one factory,
// `createMcpHandler`, mounted on node:http with `toNodeHandler`. Its tools ask the ways
// the SDK offers: a form (`inputRequired.elicit`, answered, declined or cancelled), a
// link (`inputRequired.elicitUrl`; -32042 `UrlElicitationRequiredError` on the 2025 leg),
// progress notifications, and structured output (outputSchema + structuredContent).
//   node server.mjs PORT
import { createServer } from "node:http";
import { toNodeHandler } from "@modelcontextprotocol/node";
import {
  McpServer,
  UrlElicitationRequiredError,
  createMcpHandler,
  inputRequired,
  inputResponse,
} from "@modelcontextprotocol/server";
import { z } from "zod";

const port = Number(process.argv[2]);

const booking = z.object({
  size: z.number().int().meta({ title: "How many?" }),
  seating: z.enum(["indoor", "outdoor"]).optional(),
});

function factory() {
  const server = new McpServer({ name: "ts-v2-test", version: "1.0.0" });

  server.registerTool(
    "add",
    { description: "Add two numbers.", inputSchema: z.object({ a: z.number(), b: z.number() }) },
    async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }),
  );

  server.registerTool(
    "book",
    { description: "Asks the person with a form (an input request)." },
    async (ctx) => {
      const answer = inputResponse(ctx.mcpReq.inputResponses, "party");
      if (answer.kind !== "elicit") {
        return inputRequired({
          inputRequests: {
            party: inputRequired.elicit({ message: "How many of you?", requestedSchema: booking }),
          },
        });
      }
      const text = answer.action === "accept"
        ? `booked ${answer.content.size} ${answer.content.seating || "indoor"}`
        : `not booked: ${answer.action}`;
      return { content: [{ type: "text", text }] };
    },
  );

  server.registerTool(
    "authorize",
    { description: "Needs the person to open a link first." },
    async (ctx) => {
      const link = { message: "Authorize access", url: "https://example.test/authorize" };
      if (!ctx.mcpReq.envelope) {
        // the 2025-era leg: -32042, the call ends and the link is the person's next step
        throw new UrlElicitationRequiredError([{ mode: "url", elicitationId: "auth-1", ...link }]);
      }
      const answer = inputResponse(ctx.mcpReq.inputResponses, "auth");
      if (answer.kind !== "elicit") {
        return inputRequired({ inputRequests: { auth: inputRequired.elicitUrl(link) } });
      }
      return { content: [{ type: "text", text: `authorize: ${answer.action}` }] };
    },
  );

  server.registerTool(
    "count",
    {
      description: "Counts to n, reporting progress; the result is structured.",
      inputSchema: z.object({ n: z.number().int().min(1).max(20) }),
      outputSchema: z.object({ counted: z.number().int(), notified: z.number().int() }),
    },
    async ({ n }, ctx) => {
      const token = ctx.mcpReq._meta?.progressToken;
      let notified = 0;
      for (let i = 1; i <= n; i++) {
        if (token !== undefined) {
          await ctx.mcpReq.notify({
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

const handler = toNodeHandler(createMcpHandler(factory));
createServer((req, res) => handler(req, res)).listen(port, "127.0.0.1", () =>
  console.log(`listening on ${port}`),
);
