"""An offline backend that replays a YAML script of assistant turns.

A script is a list of *steps*, one per user message of the conversation; each step is
a list of *turns*, one per model call of that run (a tool step, a self-check repair and
the final reply are separate turns). A turn has `text`, optional `tool_calls`
(`name` + `arguments` — an object, or a string sent verbatim so scripts can send
malformed JSON), optional `error` (`code`, `message`) to simulate a backend failure, and
optional `when_result`: other texts for when the last tool result contains a phrase, read
from the context like a real model would (`{contains: "No reservation", text: "…"}`: the
reply never claims a success the tool did not have).

```yaml
stream: {chunk_chars: 16, delay_seconds: 0}
steps:
  - max_iterations: 2          # optional: a smaller loop limit for this step
    budget: {per_turn: 2}      # optional: this step's question budget (issue 27)
    turns:
      - text: "Let me ask you."
        tool_calls: [{name: questionnaire_async, arguments: {questions: []}}]
fallback:
  turns: [{text: "The script is over."}]
```
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from chat.agent.events import ToolCall
from questionnaires.protocol.budget import QuestionBudget
from questionnaires.protocol.jsontypes import JsonValue

from .base import Completion, LLMError, usage_estimate

SCRIPTS_DIR = Path(__file__).resolve().parent.parent / "scripts"


class ScriptError(ValueError):
    """The script file is malformed."""


@dataclass(frozen=True)
class Turn:
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    error: tuple[str, str] | None = None
    when_result: tuple[tuple[str, str], ...] = ()  # (phrase in the last tool result, text)

    def reading(self, messages: Sequence[Mapping[str, object]]) -> Turn:
        """This turn as it answers the context: the first `when_result` whose phrase the
        last tool result contains replaces the text."""
        last = next((m for m in reversed(messages) if m.get("role") == "tool"), None)
        content = str(last.get("content") or "") if last is not None else ""
        for phrase, text in self.when_result:
            if last is not None and phrase in content:
                return Turn(text, self.tool_calls, self.error)
        return self


@dataclass(frozen=True)
class Step:
    turns: tuple[Turn, ...]
    max_iterations: int | None = None
    # The step's own question budget (`per_turn`, `per_conversation`, `one_card`), shown
    # by the tour; None: the agent's.
    budget: QuestionBudget | None = None


@dataclass(frozen=True)
class Script:
    steps: tuple[Step, ...]
    fallback: Step = field(default_factory=lambda: Step((Turn("(end of script)"),)))
    chunk_chars: int = 16
    delay_seconds: float = 0.0

    def step(self, index: int) -> Step:
        return self.steps[index] if 0 <= index < len(self.steps) else self.fallback


def _turn(data: Any, where: str) -> Turn:
    if not isinstance(data, Mapping):
        raise ScriptError(f"{where}: a turn must be a mapping")
    calls = []
    for n, call in enumerate(data.get("tool_calls") or [], start=1):
        if not isinstance(call, Mapping) or not isinstance(call.get("name"), str):
            raise ScriptError(f"{where}.tool_calls[{n}]: needs a name")
        arguments = call.get("arguments", {})
        raw = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
        calls.append(ToolCall(id=str(call.get("id") or ""), name=call["name"], arguments=raw))
    error = data.get("error")
    err = (str(error.get("code", "llm_error")), str(error.get("message", ""))) if error else None
    when = []
    for n, alt in enumerate(data.get("when_result") or [], start=1):
        if not isinstance(alt, Mapping) or not isinstance(alt.get("contains"), str):
            raise ScriptError(f"{where}.when_result[{n}]: needs contains and text")
        when.append((alt["contains"], str(alt.get("text") or "")))
    return Turn(
        text=str(data.get("text") or ""),
        tool_calls=tuple(calls),
        error=err,
        when_result=tuple(when),
    )


def _step(data: Any, where: str) -> Step:
    if not isinstance(data, Mapping) or not isinstance(data.get("turns"), list):
        raise ScriptError(f"{where}: a step needs a list of turns")
    turns = tuple(_turn(t, f"{where}.turns[{n}]") for n, t in enumerate(data["turns"], 1))
    limit = data.get("max_iterations")
    budget = data.get("budget")
    if budget is not None and not isinstance(budget, Mapping):
        raise ScriptError(f"{where}.budget: must be a mapping")
    return Step(
        turns=turns,
        max_iterations=int(limit) if limit else None,
        budget=_budget(budget) if budget is not None else None,
    )


def _budget(data: Mapping[str, object]) -> QuestionBudget:
    def limit(key: str) -> int | None:
        value = data.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ScriptError(f"budget.{key}: must be a non-negative integer")
        return value

    return QuestionBudget(
        per_turn=limit("per_turn"),
        per_conversation=limit("per_conversation"),
        one_card=bool(data.get("one_card", False)),
    )


def script_parse(text: str) -> Script:
    data = yaml.safe_load(text)
    if not isinstance(data, Mapping) or not isinstance(data.get("steps"), list):
        raise ScriptError("a script needs a list of steps")
    steps = tuple(_step(s, f"steps[{n}]") for n, s in enumerate(data["steps"], 1))
    stream = data.get("stream") or {}
    fallback = _step(data["fallback"], "fallback") if data.get("fallback") else None
    return Script(
        steps=steps,
        fallback=fallback or Script(steps=()).fallback,
        chunk_chars=int(stream.get("chunk_chars", 16)),
        delay_seconds=float(stream.get("delay_seconds", 0.0)),
    )


def script_load(name: str, lang: str = "en") -> Script:
    """`scripts/<name>.<lang>.yaml`, falling back to English."""
    code = "zh-hans" if lang.lower().startswith("zh") else "en"
    path = SCRIPTS_DIR / f"{name}.{code}.yaml"
    if not path.exists():
        path = SCRIPTS_DIR / f"{name}.en.yaml"
    return script_parse(path.read_text(encoding="utf-8"))


class ScriptedClient:
    """Replays the turns of one step, one per `stream` call; then repeats the last turn's
    text-only form so a run can always end."""

    def __init__(
        self,
        turns: Sequence[Turn],
        *,
        chunk_chars: int = 16,
        delay_seconds: float = 0.0,
        call_prefix: str = "call",
        start: int = 0,
    ) -> None:
        self.turns = list(turns)
        self.chunk_chars = max(chunk_chars, 1)
        self.delay_seconds = delay_seconds
        self.call_prefix = call_prefix
        # The first `start` turns were already played (a resumed run): the next call
        # plays turn `start`, with the same tool call ids as the first attempt would have.
        self.start = start
        self.calls = 0
        self.seen: list[list[dict[str, JsonValue]]] = []  # the context of every call (tests)

    def stream(
        self, messages: Sequence[dict[str, JsonValue]], tools: Sequence[dict[str, JsonValue]]
    ) -> Iterator[str | Completion]:
        self.seen.append([dict(m) for m in messages])
        index = self.start + self.calls
        self.calls += 1
        turn = self.turns[index] if index < len(self.turns) else Turn("(end of script)")
        turn = turn.reading(messages)
        if turn.error:
            raise LLMError(*turn.error)
        for start in range(0, len(turn.text), self.chunk_chars):
            if self.delay_seconds:
                time.sleep(self.delay_seconds)
            yield turn.text[start : start + self.chunk_chars]
        calls = tuple(
            ToolCall(c.id or f"{self.call_prefix}_{index + 1}_{n}", c.name, c.arguments)
            for n, c in enumerate(turn.tool_calls, start=1)
        )
        # An offline script costs nothing: its usage is what a model would have taken,
        # estimated (and marked so), so budgets and dashboards can be tried out offline.
        usage = usage_estimate(messages, tools, turn.text, calls)
        yield Completion(turn.text, calls, "tool_calls" if calls else "stop", usage)
