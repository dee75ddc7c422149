"""Typed events the agent loop yields; the Django adapter persists and streams them.

Pure data (no Django): the loop can be driven and tested without a database.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from questionnaires.protocol.jsontypes import JsonValue

# A tool step's identity for loop detection: (tool name, canonical JSON arguments) per call.
Signature = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class ToolCall:
    """One tool call of an assistant turn; `arguments` is the raw JSON text."""

    id: str
    name: str
    arguments: str

    def to_openai(self) -> dict[str, JsonValue]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass(frozen=True)
class ToolResult:
    call: ToolCall
    result: dict[str, JsonValue]


@dataclass(frozen=True)
class LoopState:
    """What a turn has done so far, as far as the loop's own decisions go: the model calls
    completed, failed self-checks, the names a repair must contain, and the tool-step
    signatures (loop detection). Persisted with every step, so a turn interrupted by a
    dying worker resumes with the same counters (durable turns)."""

    iteration: int = 0
    failed_checks: int = 0
    required_names: tuple[str, ...] = ()
    signatures: tuple[Signature, ...] = ()

    def to_json(self) -> dict[str, JsonValue]:
        return {
            "iteration": self.iteration,
            "failed_checks": self.failed_checks,
            "required_names": list(self.required_names),
            "signatures": [[list(pair) for pair in sig] for sig in self.signatures],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> LoopState:
        if not data:
            return cls()
        signatures = tuple(
            tuple((str(name), str(args)) for name, args in sig) for sig in data["signatures"]
        )
        return cls(
            iteration=int(data["iteration"]),
            failed_checks=int(data["failed_checks"]),
            required_names=tuple(str(n) for n in data["required_names"]),
            signatures=signatures,
        )


@dataclass(frozen=True)
class IterationStarted:
    """A model call begins; `iteration` counts model calls in this run (1-based)."""

    iteration: int


@dataclass(frozen=True)
class TextDelta:
    """A fragment of streamed assistant text of model call `iteration`."""

    iteration: int
    text: str


@dataclass(frozen=True)
class ToolStepStarted:
    """Model call `iteration` asked for tools; emitted before the first of them runs, so the
    adapter can journal the decided step (a resumed turn replays it instead of asking the
    model again)."""

    iteration: int
    content: str
    tool_calls: tuple[ToolCall, ...]


@dataclass(frozen=True)
class ToolCallEvent:
    """The model asked for a tool; emitted before the tool runs."""

    call: ToolCall


@dataclass(frozen=True)
class ToolResultEvent:
    """A tool finished; `result` is what the model sees (JSON object). `stop` is set when
    this call's failure ends the run (the step's later calls are not executed)."""

    call: ToolCall
    result: dict[str, JsonValue]
    stop: RunStopped | None = None


@dataclass(frozen=True)
class AssistantMessage:
    """A visible assistant message to persist, with its tool calls and their results.

    `kind` is "reply" for model output, "pause" / "loop_recovery" for the runtime's own
    questionnaires, "self_check_gave_up" for a reply shown after 3 failed self-checks,
    "stopped" for the text streamed before the person pressed Stop.
    `state` is the loop's state once this message is stored; `stop` is set when the turn
    ends with this message (the `RunStopped` that follows), so both can be persisted in
    the same transaction as the message.
    """

    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_results: tuple[ToolResult, ...] = ()
    kind: str = "reply"
    state: LoopState | None = None
    stop: RunStopped | None = None


@dataclass(frozen=True)
class SelfCheckFailed:
    """A reply (a final one, or a tool step's text, before its tools ran) failed
    self-check: store it hidden plus the hidden diagnostic."""

    reply: str
    diagnostic: str
    attempt: int
    issues: tuple[dict[str, JsonValue], ...] = ()
    state: LoopState | None = None


@dataclass(frozen=True)
class RunStopped:
    """The run ends. `error_code`/`error_message` are set when stop_reason is "error"."""

    stop_reason: str
    error_code: str = ""
    error_message: str = ""
    details: dict[str, JsonValue] = field(default_factory=dict)


AgentEvent = (
    IterationStarted
    | TextDelta
    | ToolStepStarted
    | ToolCallEvent
    | ToolResultEvent
    | AssistantMessage
    | SelfCheckFailed
    | RunStopped
)


class Stop:
    """Stop reasons; the values equal `chat.models.StopReason`'s."""

    COMPLETED = "completed"
    AWAITING_USER_INPUT = "awaiting_user_input"
    DEFERRED = "deferred"
    MAX_ITERATIONS = "max_iterations"
    LOOP_DETECTED = "loop_detected"
    CANCELLED = "cancelled"
    ERROR = "error"
    # Not an end: the run waits outside any process and resumes later (RunStatus.SUSPENDED).
    SUSPENDED = "suspended"
