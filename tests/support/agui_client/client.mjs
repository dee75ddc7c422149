// The official AG-UI client (@ag-ui/client's HttpAgent, unedited) against the chat's AG-UI
// endpoint: sends a message, then answers each run's interrupts from their responseSchema
// (the first option, yes, the scale's minimum) with resume entries, for a few rounds.
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

function answer(interrupt) {
  const value = interrupt.responseSchema?.properties?.value;
  if (value?.oneOf?.length) return { status: "resolved", payload: { value: value.oneOf[0].const } };
  if (value?.type === "boolean") return { status: "resolved", payload: { value: true } };
  if (value?.type === "number") return { status: "resolved", payload: { value: value.minimum ?? 0 } };
  return { status: "cancelled" };
}

await agent.runAgent({}, subscriber);
for (let round = 0; round < Number(rounds) && agent.pendingInterrupts.length; round++) {
  const interrupts = agent.pendingInterrupts;
  seen.interrupts.push(interrupts.map((i) => [i.id, i.message, Boolean(i.responseSchema), i.expiresAt]));
  const responses = Object.fromEntries(interrupts.map((i) => [i.id, answer(i)]));
  await agent.runAgent({ resume: buildResumeArray(interrupts, responses) }, subscriber);
}
seen.messages = agent.messages.map((m) => [m.role, typeof m.content === "string" ? m.content : ""]);
console.log(JSON.stringify(seen));
