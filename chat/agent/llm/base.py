"""The `LLMClient` protocol every backend implements.

`stream(messages, tools)` yields text fragments (`str`) as they arrive and finally one
`Completion` with the whole turn (content and tool calls). Backends raise `LLMError`
with a stable code for anything that goes wrong (HTTP errors, timeouts, broken streams).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from chat.agent.events import ToolCall
from questionnaires.protocol.jsontypes import JsonValue


@dataclass(frozen=True)
class Completion:
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str = "stop"


class LLMError(Exception):
    """A backend failure. `code` is stable (`llm_http_error`, `llm_timeout`, …)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class LLMClient(Protocol):
    def stream(
        self, messages: Sequence[dict[str, JsonValue]], tools: Sequence[dict[str, JsonValue]]
    ) -> Iterator[str | Completion]:
        """Yield text fragments, then exactly one `Completion`."""
        ...
