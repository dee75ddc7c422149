"""Typed events the agent loop yields; the Django adapter persists and streams them.

Pure data (no Django): the loop can be driven and tested without a database.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ToolCall:
    """One tool call of an assistant turn; `arguments` is the raw JSON text."""

    id: str
    name: str
    arguments: str

    def to_openai(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass(frozen=True)
class ToolResult:
    call: ToolCall
    result: dict[str, Any]


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
class ToolCallEvent:
    """The model asked for a tool; emitted before the tool runs."""

    call: ToolCall


@dataclass(frozen=True)
class ToolResultEvent:
    """A tool finished; `result` is what the model sees (JSON object)."""

    call: ToolCall
    result: dict[str, Any]


@dataclass(frozen=True)
class AssistantMessage:
    """A visible assistant message to persist, with its tool calls and their results.

    `kind` is "reply" for model output, "pause" / "loop_recovery" for the runtime's own
    questionnaires, "self_check_gave_up" for a reply shown after 3 failed self-checks.
    """

    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_results: tuple[ToolResult, ...] = ()
    kind: str = "reply"


@dataclass(frozen=True)
class SelfCheckFailed:
    """A final reply failed self-check: store it hidden plus the hidden diagnostic."""

    reply: str
    diagnostic: str
    attempt: int
    issues: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class RunStopped:
    """The run ends. `error_code`/`error_message` are set when stop_reason is "error"."""

    stop_reason: str
    error_code: str = ""
    error_message: str = ""
    details: dict[str, Any] = field(default_factory=dict)


AgentEvent = (
    IterationStarted
    | TextDelta
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
