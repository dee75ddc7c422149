"""What a tool is: a name, a JSON schema for the model, and an `execute` function.

Tools return the JSON object the model sees. Two result flags steer the loop:
`should_end: true` with `success: true` ends the turn awaiting the user's answer
(`questionnaire_async`), and `__deferred_user_input__: true` ends it as `deferred`
(the interactive form tool). A tool that raises ends the run with an error.

A tool's effect on the message that carries its call happens in one place, its
`persisted` hook: the adapter calls it with a `StoredCall` (the call, its result, the run
and the stored assistant message) in the transaction that saves the message with every
result of its step — `ask_user_options` creates its ask there, `interactive_form_question`
its form. `execute` itself writes nothing the chat shows, so a step repaired by
self-check leaves nothing behind, and running it again after a crash is harmless.

Durable turns: a turn interrupted by a dying worker resumes from its last persisted step,
and a tool call that already has its result is never run again. A call whose result was
lost with the worker runs again only when the tool is `idempotent` (no effect outside
its result, or an effect keyed by the call id); for any other tool the resumed run fails
visibly (`tool_effect_unknown`) instead of risking a second effect.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from questionnaires.protocol.jsontypes import JsonValue

DEFERRED_FLAG = "__deferred_user_input__"

# An option in a tool's JSON schema: a string, or {label, value} (both questionnaire tools).
OPTION_SCHEMA: dict[str, JsonValue] = {
    "description": "An option: its text (label and value alike), or {label, value}.",
    "anyOf": [
        {"type": "string"},
        {
            "type": "object",
            "properties": {
                "label": {"type": "string", "description": "What the person sees."},
                "value": {"type": "string", "description": "What the answer records."},
            },
            "required": ["label", "value"],
        },
    ],
}
# A question's `default`: one option value or text, or (multiple choice) a list of values.
DEFAULT_SCHEMA: dict[str, JsonValue] = {
    "type": ["string", "array"],
    "items": {"type": "string"},
}


# What every result says (the MCP `outputSchema` of each tool adds its own fields).
_ERROR_ITEM: dict[str, JsonValue] = {
    "type": "object",
    "description": "One problem with the arguments.",
    "properties": {
        "code": {"type": "string", "description": "A stable machine code."},
        "path": {"type": "string", "description": "Where, e.g. questions[1].options."},
        "message": {"type": "string", "description": "What is wrong, in the chat's language."},
        "details": {"type": "object", "description": "Facts such as the bad value."},
    },
    "required": ["code", "path", "message"],
}
RESULT_PROPERTIES: dict[str, JsonValue] = {
    "success": {
        "type": "boolean",
        "description": "false: nothing was shown; fix what `errors` lists and call again.",
    },
    "status": {
        "type": "string",
        "description": "awaiting_user_input, waiting_for_user_response or error.",
    },
    "error_code": {
        "type": "string",
        "description": "When success is false: a stable code, e.g. INVALID_ARGUMENT.",
    },
    "message": {"type": "string", "description": "A sentence about the outcome."},
    "validation_passed": {"type": "boolean", "description": "The arguments were valid."},
    "errors": {
        "type": "array",
        "description": "When success is false: every problem at once.",
        "items": _ERROR_ITEM,
    },
}


def result_schema(properties: Mapping[str, JsonValue], description: str) -> dict[str, JsonValue]:
    """A tool's result as a JSON schema (its MCP `outputSchema`): the common fields and
    `properties`, for a success and a refusal alike."""
    return {
        "type": "object",
        "description": description,
        "properties": {**RESULT_PROPERTIES, **properties},
        "required": ["success", "status"],
    }


class ToolStop(Exception):
    """A tool that must not run (or go on): the run ends with this stable code and message;
    the model sees `result` (default: an error result with the code)."""

    def __init__(self, code: str, message: str, result: dict[str, JsonValue] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.result = result


class ToolSuspended(Exception):
    """The call waits on something outside this process — a person answering an MCP
    server's question, the MCP session host — and has recorded what it waits for: the
    run suspends (its worker is released) and a later attempt executes the call again,
    which picks up where it stands (only `resumable` tools raise this)."""


@dataclass(frozen=True)
class ToolContext:
    """What a tool may know about its caller: the language and opaque adapter data
    (the Django adapter puts `run_id` and `conversation_id` there)."""

    lang: str = "en"
    extra: Mapping[str, object] = field(default_factory=dict)
    # The id of the tool call being executed (the interactive form binds to it).
    call_id: str = ""
    # The results of the step's earlier calls (one form per run: a second call of the
    # same step sees the first one's deferral).
    earlier_results: tuple[Mapping[str, JsonValue], ...] = ()


@dataclass(frozen=True)
class StoredCall:
    """What a `persisted` hook gets: one call, its result, and where they were stored
    (`run`, `message`: the adapter's rows; this module knows no Django)."""

    call_id: str
    arguments: object
    result: Mapping[str, JsonValue]
    run: Any
    message: Any
    lang: str = "en"


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: dict[str, JsonValue]
    execute: Callable[[object, ToolContext], dict[str, JsonValue]]
    # What `execute` returns, as a JSON schema (the MCP endpoint's `outputSchema`).
    output_schema: dict[str, JsonValue] = field(default_factory=dict)
    # Its effect on the stored message; see the module docstring.
    persisted: Callable[[StoredCall], None] | None = None
    # Safe to run again for the same call id after a crash lost its result (see above).
    idempotent: bool = False
    # Executed again by a resumed attempt even when it had started: the tool keeps its
    # own record per call id and picks up from it (MCP tools; chat.mcphost.calling).
    resumable: bool = False
    # For people: what the tool does, as the chat shows it while it runs ("Reserve a
    # table…"); MCP tools take their server's `title`. Empty: the name, as words.
    title: str = ""

    @property
    def label(self) -> str:
        if self.title:
            return self.title
        words = self.name.rsplit("__", 1)[-1].replace("_", " ").replace("-", " ").strip()
        return words[:1].upper() + words[1:] if words else self.name

    def schema(self) -> dict[str, JsonValue]:
        """The OpenAI `tools` entry."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


def ends_awaiting_user(result: Mapping[str, JsonValue]) -> bool:
    return result.get("success") is True and result.get("should_end") is True


def is_deferred(result: Mapping[str, JsonValue]) -> bool:
    return result.get(DEFERRED_FLAG) is True
