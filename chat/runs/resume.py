"""Durable turns: how far an interrupted turn got, so the next attempt picks up there.

A turn is a sequence of steps: a model call, the tool calls it asked for, a stored
message. Each step is persisted as it completes, and `Run.checkpoint` says where the turn
stands:

    {"state": {…}}              the loop's `LoopState` after the last stored step
    {"state": …, "step": {…}}   model call `iteration` asked for tools: its content and
                                calls, each result as it arrives, and the calls of
                                non-idempotent tools that began ("started")
    {"state": …, "stop": {…}}   the turn ended (written with its last message); only the
                                run's own bookkeeping was left to do

Every write is fenced by the attempt number: a worker whose run was taken over can store
nothing more (`AttemptSuperseded`).

When a later attempt takes the run (`Run.attempts` > 1), `resume_load` reads it back:
- a stop: the runner finishes the run with it; nothing runs again;
- a step: the model is not asked again — `ReplayClient` returns the stored completion,
  `journaled_tools` return stored results, run idempotent tools whose result was lost,
  and refuse a started call of any other tool (`tool_effect_unknown`: its effect is
  unknown, so the run fails visibly with Retry rather than risk doing it twice);
- otherwise the interrupted model call is made again on the context the stored messages
  rebuild (context.py). Text the previous attempt already streamed is not streamed twice:
  `DeltaMerger` holds the new text back while it repeats the old and sends only the rest,
  or replaces it (`text_delta` with `replace: true`) where it differs;
- `tool_call` / `tool_result` events already sent are not sent again.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from chat.agent.events import LoopState, ToolCall, ToolStepStarted
from chat.agent.llm.base import Completion, LLMClient
from chat.agent.tools.base import Tool, ToolContext, ToolStop
from chat.core.models import Event, Run, RunStatus


class AttemptSuperseded(Exception):
    """Another attempt took this run over (this worker was presumed dead): stop quietly."""


@dataclass
class Resume:
    """What earlier attempts of a run left behind (empty for a first attempt)."""

    attempt: int
    state: LoopState = field(default_factory=LoopState)
    step: dict[str, Any] | None = None
    streamed: str = ""  # text already streamed for the interrupted model call
    announced: set[str] = field(default_factory=set)  # tool_call events sent
    reported: set[str] = field(default_factory=set)  # tool_result events sent

    @property
    def calls_made(self) -> int:
        """Model calls a backend that replays a script must skip."""
        return self.state.iteration + (1 if self.step is not None else 0)

    def replay(self) -> Completion | None:
        if self.step is None:
            return None
        calls = tuple(
            ToolCall(c["id"], c["function"]["name"], c["function"]["arguments"])
            for c in self.step["tool_calls"]
        )
        return Completion(self.step["content"], calls, "tool_calls")


def resume_load(run: Run) -> Resume:
    resume = Resume(attempt=run.attempts)
    if run.attempts <= 1:
        return resume
    checkpoint = run.checkpoint or {}
    resume.state = LoopState.from_json(checkpoint.get("state"))
    resume.step = checkpoint.get("step")
    events = Event.objects.filter(conversation_id=run.conversation_id, data__run_id=run.pk)
    for name, call_id in events.filter(name__in=["tool_call", "tool_result"]).values_list(
        "name", "data__tool_call_id"
    ):
        (resume.announced if name == "tool_call" else resume.reported).add(str(call_id))
    if resume.step is None:
        deltas = events.filter(name="text_delta", data__iteration=resume.state.iteration + 1)
        for data in deltas.order_by("id").values_list("data", flat=True):
            text = str(data.get("text", ""))
            resume.streamed = text if data.get("replace") else resume.streamed + text
    return resume


class Journal:
    """Writes `Run.checkpoint` for one attempt (each write fenced by the attempt number)."""

    def __init__(self, run: Run, attempt: int) -> None:
        self.run_id = run.pk
        self.attempt = attempt
        self.doc: dict[str, Any] = dict(run.checkpoint or {}) if attempt > 1 else {}

    def write(self) -> None:
        written = Run.objects.filter(
            pk=self.run_id, attempts=self.attempt, status=RunStatus.RUNNING
        ).update(checkpoint=self.doc)
        if not written:
            raise AttemptSuperseded(f"run {self.run_id}: attempt {self.attempt} was replaced")

    def step_started(self, event: ToolStepStarted) -> None:
        step = self.doc.get("step")
        if step is not None and step.get("iteration") == event.iteration:
            return  # replayed: keep the results the earlier attempt journaled
        self.doc["step"] = {
            "iteration": event.iteration,
            "content": event.content,
            "tool_calls": [c.to_openai() for c in event.tool_calls],
            "results": {},
            "started": [],
        }
        self.write()

    def call_started(self, call_id: str) -> None:
        started = self.doc["step"]["started"]
        if call_id not in started:
            started.append(call_id)
            self.write()

    def call_finished(
        self, call_id: str, result: Mapping[str, Any], stop: Mapping[str, Any] | None
    ) -> None:
        step = self.doc["step"]
        if call_id not in step["results"]:
            # As JSON text: PostgreSQL's jsonb would reorder the keys the model sees.
            step["results"][call_id] = json.dumps(result, ensure_ascii=False)
            if stop is not None:  # this call's failure ends the run
                step.setdefault("stops", {})[call_id] = dict(stop)
            self.write()

    def step_stored(self, state: LoopState | None, stop: Mapping[str, Any] | None = None) -> None:
        """A step's message is being stored (call inside its transaction)."""
        self.doc = {"state": (state or LoopState()).to_json()}
        if stop is not None:
            self.doc["stop"] = dict(stop)
        self.write()


class ReplayClient:
    """Answers the first model call with the completion an earlier attempt journaled, then
    hands every later call to the real backend."""

    def __init__(self, completion: Completion, inner: LLMClient) -> None:
        self.completion: Completion | None = completion
        self.inner = inner

    def stream(
        self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]
    ) -> Iterator[str | Completion]:
        if self.completion is not None:
            completion, self.completion = self.completion, None
            yield completion
            return
        yield from self.inner.stream(messages, tools)


def effect_unknown_message(name: str) -> str:
    return (
        f"The worker running this turn stopped while the tool {name} was running, so "
        "whether it took effect is unknown; it is not run a second time on its own. "
        "Retry to run the turn again."
    )


def journaled_tools(tools: Sequence[Tool], resume: Resume) -> tuple[Tool, ...]:
    """The tools, answering calls of the replayed step from its journal."""
    step = resume.step or {}
    results: Mapping[str, Any] = step.get("results") or {}
    stops: Mapping[str, Any] = step.get("stops") or {}
    started = set(step.get("started") or [])

    def wrap(tool: Tool) -> Tool:
        def execute(arguments: Any, context: ToolContext) -> dict[str, Any]:
            stored = results.get(context.call_id)
            if stored is not None:
                result: dict[str, Any] = json.loads(stored)
                stop = stops.get(context.call_id)
                if stop is not None:  # it failed the run the first time: so it does again
                    raise ToolStop(stop["code"], stop["message"], result)
                return result
            if not (tool.idempotent or tool.resumable) and context.call_id in started:
                raise ToolStop("tool_effect_unknown", effect_unknown_message(tool.name))
            return tool.execute(arguments, context)

        return replace(tool, execute=execute)

    return tuple(wrap(tool) for tool in tools) if results or started else tuple(tools)


class DeltaMerger:
    """Streams a repeated model call so the user sees the earlier text continue.

    `feed` returns (text to send, replace?): nothing while the new text repeats what was
    streamed, then only what is new; if the new text differs, all of it, replacing.
    """

    def __init__(self, iteration: int, streamed: str) -> None:
        self.iteration = iteration
        self.streamed = streamed
        self.seen = ""
        self.done = not streamed

    def feed(self, iteration: int, text: str) -> tuple[str, bool]:
        if self.done or iteration != self.iteration:
            return text, False
        self.seen += text
        if self.streamed.startswith(self.seen):
            return "", False
        self.done = True
        if self.seen.startswith(self.streamed):
            return self.seen[len(self.streamed) :], False
        return self.seen, True

    def close(self) -> tuple[str, bool] | None:
        """The call ended: a reply shorter than what was streamed replaces it."""
        if self.done:
            return None
        self.done = True
        return (self.seen, True) if self.seen != self.streamed else None


def stop_json(reason: str, code: str = "", message: str = "") -> dict[str, Any]:
    return {"reason": reason, "code": code, "message": message}
