// Times Sage's own splitter (splitInlineQuestionnaireContent, imported from the module
// path given) over a corpus of messages (a JSON array of strings), the way
// bench/bench_peer_sage.py times parse_message: `passes` passes over every message, each
// timed alone; prints {"seconds": [...], "parts": N} (parts: a checksum of the work done).
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [modulePath, corpusPath, passes] = process.argv.slice(2);
const { splitInlineQuestionnaireContent } = await import(pathToFileURL(modulePath).href);
const messages = JSON.parse(readFileSync(corpusPath, "utf8"));
const seconds = [];
let parts = 0;
for (let pass = 0; pass < Number(passes); pass++) {
  parts = 0;
  const started = process.hrtime.bigint();
  for (let i = 0; i < messages.length; i++) {
    parts += splitInlineQuestionnaireContent(messages[i], `m${i}`).length;
  }
  seconds.push(Number(process.hrtime.bigint() - started) / 1e9);
}
console.log(JSON.stringify({ seconds, parts }));
