"""Storing an assistant message that carries tool calls — one path for every caller.

The built-in agent loop (`chat.runs.turn`), external runtimes over the JSON API and the
MCP endpoint all store tool-calling assistant messages here. What a tool's call adds to
its message (a deferred form's render payload) is its `persisted` hook's work
(chat.agent.steps), in the same transaction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from django.db import transaction

from chat.core.metadata import MessageMetadata
from chat.core.models import Conversation, Message, Role, Run
from chat.core.services import message_create
from questionnaires.protocol.jsontypes import JsonValue


@transaction.atomic
def assistant_message_create(
    *,
    conversation: Conversation,
    content: str,
    tool_calls: Sequence[Mapping[str, JsonValue]],
    metadata: MessageMetadata | None = None,
    readonly: bool = False,
    run: Run | None = None,
) -> Message:
    message = message_create(
        conversation=conversation,
        role=Role.ASSISTANT,
        content=content,
        tool_calls=tool_calls,
        metadata=metadata,
        readonly=readonly,
        run=run,
    )
    return message
