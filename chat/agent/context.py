"""The model's view of a conversation: OpenAI-format messages built from the database.

Hidden messages (self-check diagnostics and the invalid replies they refer to) are
included — the model must see what it is repairing — while the chat never shows them.
Runtime bookkeeping the model should not read is left out, and tool calls without a
stored result (a crashed run) are dropped so the endpoint accepts the history.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from chat.agent.tools import tools_prompt
from chat.core.models import Conversation, Message, Role
from questionnaires.protocol import system_prompt

# Message kinds (metadata["kind"]) that never go to the model.
# An elicitation card's message is for people: the tool result carries the answer.
EXCLUDED_KINDS = frozenset({"run_error", "elicitation"})


def system_prompt_for(lang: str) -> str:
    """The protocol prompt, then the sections of tools it doesn't teach (ask_user_options)."""
    return system_prompt(lang).rstrip("\n") + "\n\n" + tools_prompt(lang)


def context_messages(*, conversation: Conversation) -> list[dict[str, Any]]:
    """System prompt + every message of the conversation, in order."""
    stored = list(conversation.messages.order_by("seq"))
    answered = {m.tool_call_id for m in stored if m.role == Role.TOOL and m.tool_call_id}
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system_prompt_for(conversation.language)}
    ]
    issued: set[str] = set()
    for message in stored:
        metadata = message.metadata or {}
        # (a step's message stored before its tools ran: the loop adds the step itself)
        if metadata.get("kind") in EXCLUDED_KINDS or metadata.get("step") == "open":
            continue
        item = _to_openai(message, answered, issued)
        if item is not None:
            messages.append(item)
    return messages


def _to_openai(message: Message, answered: set[str], issued: set[str]) -> dict[str, Any] | None:
    if message.role == Role.TOOL:
        if message.tool_call_id not in issued:
            return None
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    if message.role == Role.ASSISTANT:
        calls = [c for c in _calls(message.tool_calls) if c["id"] in answered]
        issued.update(c["id"] for c in calls)
        if not calls and not message.content.strip():
            return None
        item: dict[str, Any] = {"role": "assistant", "content": message.content or None}
        if calls:
            item["tool_calls"] = calls
        return item
    role = message.role if message.role in (Role.USER, Role.SYSTEM) else Role.USER
    answer = (message.metadata or {}).get("structured_answer")
    if role == Role.USER and isinstance(answer, dict):
        return {"role": "user", "content": structured_answer_content(message, answer)}
    return {"role": str(role), "content": message.content}


def structured_answer_content(message: Message, answer: dict[str, Any]) -> str:
    """A structured answer (spec 004) as the model reads it: the readable line the chat
    shows, then the machine-readable envelope (`field`, `value`, `source`, …)."""
    readable = message.display_content or str(answer.get("display_text") or "")
    envelope = json.dumps(answer, ensure_ascii=False, separators=(",", ":"))
    return f"{readable}\n<structured_answer>{envelope}</structured_answer>"


def _calls(raw: Iterable[Any] | None) -> list[dict[str, Any]]:
    """Normalize stored tool calls to the OpenAI shape (arguments as a JSON string)."""
    calls = []
    for call in raw or []:
        if not isinstance(call, dict) or not call.get("id"):
            continue
        function = call.get("function") or {}
        arguments = function.get("arguments", "")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        name = str(function.get("name", ""))
        calls.append(
            {
                "id": str(call["id"]),
                "type": "function",
                "function": {"name": name, "arguments": arguments},
            }
        )
    return calls
