// A client of the chat's JSON API written against the types openapi-typescript generates
// (default options) and openapi-fetch, used unedited: the interop test compiles it with
// `tsc --strict` next to a freshly generated `api.d.ts` and runs it against a live server.
// Prints one JSON object of what it saw.
import createClient from "openapi-fetch";
import type { paths } from "./api.js";

const [baseUrl, token] = process.argv.slice(2);
const client = createClient<paths>({
  baseUrl,
  headers: { Authorization: `Bearer ${token}` },
});

const created = await client.POST("/api/v1/conversations/", {});
if (!created.data) throw new Error(`create: ${JSON.stringify(created.error)}`);
const id = created.data.id;
const titled = await client.POST("/api/v1/conversations/", { body: { title: "From TypeScript" } });
const path = { params: { path: { conversation_id: id } } };
const posted = await client.POST("/api/v1/conversations/{conversation_id}/messages", {
  ...path,
  body: { role: "user", content: "Hello from a generated client" },
});
const reply = await client.POST("/api/v1/conversations/{conversation_id}/messages", {
  ...path,
  body: { role: "assistant", content: "Hi! How can I help?" },
});
const refused = await client.POST("/api/v1/conversations/{conversation_id}/messages", {
  ...path,
  // A role the API refuses: the error is typed as the API's `ErrorOut`.
  body: { role: "nobody" as "user", content: "x" },
});
const listed = await client.GET("/api/v1/conversations/{conversation_id}/messages", path);
console.log(
  JSON.stringify({
    created: created.response.status,
    url: created.data.url,
    titled: titled.response.status,
    posted: posted.response.status,
    reply: reply.data?.seq,
    refused: [refused.response.status, refused.error?.error],
    messages: listed.data?.messages.map((m) => [m.role, m.content]),
  }),
);
