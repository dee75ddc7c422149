// The official AG-UI client (@ag-ui/client's HttpAgent, unedited) against the chat's AG-UI
// endpoint: sends a message, then answers each run's interrupts from their responseSchema
// (the first option, yes, the scale's minimum; forms and MCP requests filled from their
// schema) with resume entries, for a few rounds.
// Prints one JSON object of what it saw.
import { HttpAgent, buildResumeArray } from "@ag-ui/client";

const [url, token, text, rounds] = process.argv.slice(2);
const agent = new HttpAgent({ url, headers: { Authorization: `Bearer ${token}` } });
agent.addMessage({ id: "m-1", role: "user", content: text });
const seen = { interrupts: [], finished: [], errors: [] };
const subscriber = {
  onRunFinishedEvent: (params) => { seen.finished.push(params.outcome); },
  onRunErrorEvent: ({ event }) => { seen.errors.push([event.code, event.message]); },
};

// Any other schema (a form's answers, an MCP server's requestedSchema) is filled the way a
// generic schema-driven form would be: every required property (all of them when the
// schema names none), the first choice, the minimum, a date, some text.
function fill(schema) {
  if (schema.oneOf?.length) return schema.oneOf[0].const;
  if (schema.enum?.length) return schema.enum[0];
  if (schema.type === "boolean") return true;
  if (schema.type === "number" || schema.type === "integer") return schema.minimum ?? 1;
  if (schema.type === "array") return [fill(schema.items ?? {})];
  if (schema.type === "object") {
    const properties = schema.properties ?? {};
    const names = schema.required ?? Object.keys(properties);
    return Object.fromEntries(names.map((name) => [name, fill(properties[name])]));
  }
  if (schema.format === "date") return "2026-01-02";
  if (schema.format === "email") return "agui@example.org";
  return "filled by an AG-UI client";
}

function answer(interrupt) {
  const value = interrupt.responseSchema?.properties?.value;
  if (value?.oneOf?.length) return { status: "resolved", payload: { value: value.oneOf[0].const } };
  if (value?.type === "boolean") return { status: "resolved", payload: { value: true } };
  if (value?.type === "number") return { status: "resolved", payload: { value: value.minimum ?? 0 } };
  if (interrupt.responseSchema?.type === "object" && !value) {
    return { status: "resolved", payload: fill(interrupt.responseSchema) };
  }
  return { status: "cancelled" };
}

await agent.runAgent({}, subscriber);
for (let round = 0; round < Number(rounds) && agent.pendingInterrupts.length; round++) {
  const interrupts = agent.pendingInterrupts;
  seen.interrupts.push(interrupts.map((i) => [i.id, i.message, Boolean(i.responseSchema), i.expiresAt, i.metadata ?? null]));
  const responses = Object.fromEntries(interrupts.map((i) => [i.id, answer(i)]));
  seen.sent = [...(seen.sent ?? []), responses];
  await agent.runAgent({ resume: buildResumeArray(interrupts, responses) }, subscriber);
}
seen.messages = agent.messages.map((m) => [m.role, typeof m.content === "string" ? m.content : ""]);
console.log(JSON.stringify(seen));
