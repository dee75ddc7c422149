"""The `LLMClient` protocol every backend implements.

`stream(messages, tools)` yields text fragments (`str`) as they arrive and finally one
`Completion` with the whole turn (content and tool calls) and, when known, its token
`Usage` — the endpoint's own count, or an estimate marked as one (offline backends, an
endpoint that reports none). Backends raise `LLMError` with a stable code for anything
that goes wrong (HTTP errors, timeouts, broken streams).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from chat.agent.events import ToolCall
from questionnaires.protocol.jsontypes import JsonValue


@dataclass(frozen=True)
class Usage:
    """Tokens one model call took in (the prompt) and gave out (the completion)."""

    prompt_tokens: int
    completion_tokens: int
    estimated: bool = False


@dataclass(frozen=True)
class Completion:
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str = "stop"
    usage: Usage | None = None


def tokens_estimate(text: str) -> int:
    """A rough token count with no tokenizer at hand: about four characters per token
    for ASCII text, one per character beyond it (CJK text is close to that)."""
    if not text:
        return 0
    wide = sum(1 for ch in text if ord(ch) > 127)
    return max(1, (len(text) - wide + 3) // 4 + wide)


def usage_estimate(
    messages: Sequence[dict[str, JsonValue]],
    tools: Sequence[dict[str, JsonValue]],
    completion: str,
    tool_calls: Sequence[ToolCall] = (),
) -> Usage:
    """What a call would have cost a model, estimated (`estimated=True`)."""
    prompt = json.dumps([list(messages), list(tools)], ensure_ascii=False)
    out = completion + "".join(c.name + c.arguments for c in tool_calls)
    return Usage(tokens_estimate(prompt), tokens_estimate(out), estimated=True)


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
