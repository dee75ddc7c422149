"""The model's view of a conversation: OpenAI-format messages built from the database.

Hidden messages (self-check diagnostics and the invalid replies they refer to) are
included — the model must see what it is repairing — while the chat never shows them.
Runtime bookkeeping the model should not read is left out, and tool calls without a
stored result (a crashed run) are dropped so the endpoint accepts the history.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from chat.agent.events import ToolCall
from chat.agent.tools import tools_prompt
from chat.core.metadata import metadata_of
from chat.core.models import Conversation, Message, Role
from questionnaires import registry
from questionnaires.protocol import system_prompt
from questionnaires.protocol.jsontypes import JsonValue

# Messages (metadata["kind"]) of the runtime's own that never go to the model; kinds say
# for themselves (`Kind.model_sees`: an elicitation card's message is for people, the tool
# result carries the answer).
RUNTIME_ONLY = frozenset({"run_error"})


def system_prompt_for(lang: str) -> str:
    """The protocol prompt, then the sections of tools it doesn't teach (ask_user_options)."""
    return system_prompt(lang).rstrip("\n") + "\n\n" + tools_prompt(lang)


def context_messages(*, conversation: Conversation) -> list[dict[str, JsonValue]]:
    """System prompt + every message of the conversation, in order."""
    stored = list(conversation.messages.order_by("seq"))
    answered = {m.tool_call_id for m in stored if m.role == Role.TOOL and m.tool_call_id}
    messages: list[dict[str, JsonValue]] = [
        {"role": "system", "content": system_prompt_for(conversation.language)}
    ]
    issued: set[str] = set()
    hidden = RUNTIME_ONLY | registry.hidden_from_model()
    for message in stored:
        metadata = metadata_of(message)
        # (a step's message stored before its tools ran: the loop adds the step itself)
        if metadata.get("kind") in hidden or metadata.get("step") == "open":
            continue
        if metadata.get("superseded"):  # a stopped turn that a Retry replaced
            continue
        item = _to_openai(message, answered, issued)
        if item is not None:
            messages.append(item)
    return messages


def _to_openai(
    message: Message, answered: set[str], issued: set[str]
) -> dict[str, JsonValue] | None:
    if message.role == Role.TOOL:
        if message.tool_call_id not in issued:
            return None
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    if message.role == Role.ASSISTANT:
        calls = [c for c in _calls(message.tool_calls) if c.id in answered]
        issued.update(c.id for c in calls)
        if not calls and not message.content.strip():
            return None
        item: dict[str, JsonValue] = {"role": "assistant", "content": message.content or None}
        if calls:
            item["tool_calls"] = [c.to_openai() for c in calls]
        return item
    role = message.role if message.role in (Role.USER, Role.SYSTEM) else Role.USER
    text = registry.model_text(message) if role == Role.USER else None
    return {"role": str(role), "content": message.content if text is None else text}


def _calls(raw: Iterable[object] | None) -> list[ToolCall]:
    """Normalize stored tool calls to the OpenAI shape (arguments as a JSON string)."""
    calls = []
    for call in raw or []:
        if not isinstance(call, dict) or not call.get("id"):
            continue
        function = call.get("function")
        function = function if isinstance(function, dict) else {}
        arguments = function.get("arguments", "")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        calls.append(ToolCall(str(call["id"]), str(function.get("name", "")), arguments))
    return calls
