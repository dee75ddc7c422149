"""The agent loop (SimpleAgent): call the model, run its tools, repeat until the turn ends.

Pure Python — no Django. It takes an `LLMClient`, a tuple of tools and the model
context (OpenAI-format messages), and yields typed events (`chat.agent.events`); the
caller persists and streams them. The loop never invents user input: a turn that needs
the user ends with `awaiting_user_input`, `deferred`, `max_iterations` or
`loop_detected`, and the user's next message starts a new run.

Durable turns: every message event carries the loop's `LoopState`, and a tool step is
announced (`ToolStepStarted`) before its tools run, so the adapter can persist each
step; `LoopConfig.start` resumes a turn from such a state.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field, replace

from questionnaires.protocol import QuestionnaireSegment, parse_message, self_check
from questionnaires.protocol.budget import QuestionBudget, call_questions
from questionnaires.protocol.jsontypes import JsonValue

from .events import (
    AgentEvent,
    AssistantMessage,
    IterationStarted,
    LoopState,
    RunStopped,
    SelfCheckFailed,
    Signature,
    Stop,
    TextDelta,
    ToolCall,
    ToolCallEvent,
    ToolResult,
    ToolResultEvent,
    ToolStepStarted,
)
from .llm.base import Completion, LLMClient, LLMError
from .notices import loop_recovery_notice, pause_notice
from .tools.base import Tool, ToolContext, ToolStop, ToolSuspended, ends_awaiting_user, is_deferred


@dataclass(frozen=True)
class LoopConfig:
    lang: str = "en"
    max_iterations: int = 50
    self_check_attempts: int = 3
    # This many consecutive tool steps with identical calls count as a loop.
    loop_repeat_limit: int = 3
    tool_extra: dict[str, object] = field(default_factory=dict)
    # The agent's question budget (issue 27), checked by self-check; None: unlimited.
    budget: QuestionBudget | None = None
    # Where the turn starts: a fresh turn, or the persisted state of an interrupted one.
    start: LoopState = field(default_factory=LoopState)


# A sub-step yields events and returns the stop event, or None to keep going.
_Step = Generator[AgentEvent, None, "RunStopped | None"]


class _Stopped(Exception):
    def __init__(self, event: RunStopped) -> None:
        super().__init__(event.stop_reason)
        self.event = event


def has_questionnaire(content: str) -> bool:
    """Does the reply carry an answerable inline questionnaire?"""
    segments = parse_message(content, message_id="reply")
    return any(isinstance(s, QuestionnaireSegment) for s in segments)


def error_result(code: str, message: str) -> dict[str, JsonValue]:
    return {"success": False, "status": "error", "error_code": code, "message": message}


def run_loop(
    *,
    client: LLMClient,
    tools: Sequence[Tool],
    messages: Sequence[dict[str, JsonValue]],
    config: LoopConfig | None = None,
    cancelled: Callable[[], bool] = lambda: False,
) -> Iterator[AgentEvent]:
    """Run one turn; the last event is always `RunStopped`."""
    loop = _Loop(client, tools, messages, config or LoopConfig(), cancelled)
    try:
        yield from loop.run()
    except _Stopped as stopped:
        yield stopped.event


class _Loop:
    def __init__(
        self,
        client: LLMClient,
        tools: Sequence[Tool],
        messages: Sequence[dict[str, JsonValue]],
        config: LoopConfig,
        cancelled: Callable[[], bool],
    ) -> None:
        self.client = client
        self.tools = {tool.name: tool for tool in tools}
        self.schemas = [tool.schema() for tool in tools]
        self.history = list(messages)
        self.config = config
        self.cancelled = cancelled
        start = config.start
        self.iteration = start.iteration
        self.failed_checks = start.failed_checks
        self.required_names: frozenset[str] = frozenset(start.required_names)
        self.signatures: list[Signature] = list(start.signatures)
        self.context = ToolContext(lang=config.lang, extra=config.tool_extra)

    def state(self) -> LoopState:
        return LoopState(
            iteration=self.iteration,
            failed_checks=self.failed_checks,
            required_names=tuple(sorted(self.required_names)),
            signatures=tuple(self.signatures),
        )

    def _check_cancelled(self) -> None:
        if self.cancelled():
            raise _Stopped(RunStopped(Stop.CANCELLED))

    def run(self) -> Iterator[AgentEvent]:
        while True:
            self._check_cancelled()
            if self.iteration >= self.config.max_iterations:
                notice = pause_notice(lang=self.config.lang, limit=self.config.max_iterations)
                paused = RunStopped(Stop.MAX_ITERATIONS)
                yield AssistantMessage(notice, kind="pause", state=self.state(), stop=paused)
                yield paused
                return
            self.iteration += 1
            yield IterationStarted(self.iteration)
            completion = yield from self._call_model()
            if completion.tool_calls:
                stop = yield from self._tool_step(completion)
            else:
                stop = yield from self._final_reply(completion.content)
            if stop is not None:
                yield stop
                return

    def _call_model(self) -> Generator[AgentEvent, None, Completion]:
        """Stream one model call; returns its `Completion` (via `yield from`)."""
        completion: Completion | None = None
        streamed: list[str] = []
        stream = self.client.stream(self.history, self.schemas)
        try:
            for chunk in stream:
                if isinstance(chunk, Completion):
                    completion = chunk
                elif chunk:
                    streamed.append(chunk)
                    yield TextDelta(self.iteration, chunk)
                    if self.cancelled():
                        yield from self._stopped_mid_reply("".join(streamed))
        except LLMError as exc:
            raise _Stopped(RunStopped(Stop.ERROR, exc.code, exc.message)) from exc
        finally:
            # A stopped turn ends the call now, not whenever the generator is collected:
            # the backend closes its connection, and the call's usage is recorded.
            close = getattr(stream, "close", None)
            if close is not None:
                close()
        if completion is None:
            message = "The model stream ended without a completion."
            raise _Stopped(RunStopped(Stop.ERROR, "llm_incomplete", message))
        return completion

    def _stopped_mid_reply(self, text: str) -> Generator[AgentEvent, None, None]:
        """Stop pressed while the model wrote: what the person saw streamed stays, as the
        turn's last message (kind "stopped", shown as stopped), and it is what the model
        reads next time — the record says what the person saw (DESIGN §4.14). No tool of
        the half-written step runs. A Retry replaces it like any message of the turn."""
        stop = RunStopped(Stop.CANCELLED)
        if text.strip():
            yield AssistantMessage(text, kind="stopped", state=self.state(), stop=stop)
        raise _Stopped(stop)

    # --- tools ---------------------------------------------------------------------

    def _tool_step(self, completion: Completion) -> _Step:
        # The step's text is checked before any of its tools runs: a failing step is
        # repaired with nothing of it shown and no tool effect (a deferred form, an ask)
        # left behind, whatever the tools would have ended the turn with.
        kind = yield from self._checked(completion.content, completion.tool_calls)
        if kind is None:
            return None
        yield ToolStepStarted(self.iteration, completion.content, completion.tool_calls)
        results: list[ToolResult] = []
        failure: RunStopped | None = None
        for call in completion.tool_calls:
            yield ToolCallEvent(call)
            stop: RunStopped | None = None
            if failure is None:
                result, stop = self._execute(call, results)
                failure = stop
            else:
                result = error_result("NOT_EXECUTED", "Skipped after an earlier tool failed.")
            results.append(ToolResult(call, result))
            yield ToolResultEvent(call, result, stop)
        stop = failure
        if stop is None and any(is_deferred(r.result) for r in results):
            stop = RunStopped(Stop.DEFERRED)
        awaiting = any(ends_awaiting_user(r.result) for r in results)
        self.history.append(_assistant_dict(completion.content, completion.tool_calls))
        self.history.extend(_tool_dict(r) for r in results)
        self.signatures.append(
            tuple((c.name, _canonical(c.arguments)) for c in completion.tool_calls)
        )
        if stop is None and awaiting:
            stop = RunStopped(Stop.AWAITING_USER_INPUT)
        step = AssistantMessage(completion.content, completion.tool_calls, tuple(results), kind)
        if stop is None and self._looping():
            yield replace(step, state=self.state())
            stop = RunStopped(Stop.LOOP_DETECTED)
            notice = loop_recovery_notice(lang=self.config.lang)
            yield AssistantMessage(notice, kind="loop", state=self.state(), stop=stop)
            return stop
        yield replace(step, state=self.state(), stop=stop)
        return stop

    def _execute(
        self, call: ToolCall, earlier: Sequence[ToolResult] = ()
    ) -> tuple[dict[str, JsonValue], RunStopped | None]:
        tool = self.tools.get(call.name)
        if tool is None:
            known = ", ".join(self.tools) or "none"
            message = f"Unknown tool {call.name!r}. Available tools: {known}."
            return error_result("UNKNOWN_TOOL", message), None
        try:
            arguments = json.loads(call.arguments) if call.arguments.strip() else {}
        except (ValueError, RecursionError) as exc:
            message = f"The arguments of {call.name} are not valid JSON: {exc}"
            stop = RunStopped(Stop.ERROR, "tool_arguments_invalid", message)
            return error_result("INVALID_JSON", message), stop
        try:
            context = replace(
                self.context, call_id=call.id, earlier_results=tuple(r.result for r in earlier)
            )
            return tool.execute(arguments, context), None
        except ToolSuspended:
            # The call waits outside the run (journaled by its tool): the turn stops here
            # and a later attempt replays this step up to this call.
            raise _Stopped(RunStopped(Stop.SUSPENDED)) from None
        except ToolStop as exc:
            stop = RunStopped(Stop.ERROR, exc.code, exc.message)
            return exc.result or error_result(exc.code.upper(), exc.message), stop
        except Exception as exc:
            message = f"The tool {call.name} failed: {type(exc).__name__}: {exc}"
            return error_result("TOOL_EXCEPTION", message), RunStopped(
                Stop.ERROR, "tool_failed", message
            )

    def _looping(self) -> bool:
        """The last `loop_repeat_limit` tool steps made identical calls."""
        limit = self.config.loop_repeat_limit
        recent = self.signatures[-limit:]
        return limit > 0 and len(recent) == limit and len(set(recent)) == 1

    # --- self-check and final replies -------------------------------------------------

    def _checked(
        self, content: str, calls: Sequence[ToolCall] = ()
    ) -> Generator[AgentEvent, None, str | None]:
        """Self-check text a person is about to see (spec 000, DESIGN §4.13): every model
        text, however the turn then ends — a final reply, or the text of a tool step
        that ends it awaiting input or deferred, or that the turn goes on after.

        Returns the kind of the message to show ("reply", or "self_check_gave_up" once
        the turn's attempts are spent), or None when the model was asked to repair: the
        failed text and its calls stay in the model's context only, each call answered
        "not run" (a chat-completions history needs a result for every call).
        """
        tool_cards = [call_questions(c.name, c.arguments) for c in calls]
        if not content.strip() and not (self.config.budget and any(tool_cards)):
            return "reply"
        check = self_check(
            content,
            lang=self.config.lang,
            required_names=self.required_names,
            budget=self.config.budget,
            tool_cards=tool_cards,
        )
        if check.passed:
            self.required_names = frozenset()
            return "reply"
        self.failed_checks += 1
        if self.failed_checks >= self.config.self_check_attempts:
            self.required_names = frozenset()
            return "self_check_gave_up"  # shown as it is
        diagnostic = check.diagnostic or ""
        issues = tuple(i.to_dict() for i in check.issues)
        self.history.append(_assistant_dict(content, calls))
        self.history.extend(_tool_dict(ToolResult(call, _NOT_RUN)) for call in calls)
        self.history.append({"role": "user", "content": diagnostic})
        self.required_names = check.failed_names
        yield SelfCheckFailed(content, diagnostic, self.failed_checks, issues, self.state())
        return None

    def _final_reply(self, content: str) -> _Step:
        if not content.strip():
            return RunStopped(Stop.COMPLETED)
        kind = yield from self._checked(content)
        if kind is None:
            return None  # ask the model again
        self.history.append({"role": "assistant", "content": content})
        stop = RunStopped(
            Stop.AWAITING_USER_INPUT if has_questionnaire(content) else Stop.COMPLETED
        )
        yield AssistantMessage(content, kind=kind, state=self.state(), stop=stop)
        return stop


_NOT_RUN = error_result(
    "NOT_EXECUTED",
    "Not run: the reply failed self-check. Output the complete corrected reply again, "
    "with its tool calls.",
)


def _canonical(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), sort_keys=True, ensure_ascii=False)
    except (ValueError, RecursionError):
        return arguments


def _assistant_dict(content: str, calls: Sequence[ToolCall]) -> dict[str, JsonValue]:
    message: dict[str, JsonValue] = {"role": "assistant", "content": content or None}
    if calls:
        message["tool_calls"] = [c.to_openai() for c in calls]
    return message


def _tool_dict(result: ToolResult) -> dict[str, JsonValue]:
    return {
        "role": "tool",
        "tool_call_id": result.call.id,
        "content": json.dumps(result.result, ensure_ascii=False),
    }
