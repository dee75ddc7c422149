"""Storing an assistant message that carries tool calls — one path for every caller.

The built-in agent loop (`chat.runs.turn`), external runtimes over the JSON API and the
MCP endpoint all store tool-calling assistant messages here, so whatever a tool left for
its tool block (a deferred form's render payload) is attached the same way everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from django.db import transaction

from chat.core.metadata import MessageMetadata
from chat.core.models import Conversation, Message, Role, Run
from chat.core.services import message_create
from questionnaires.forms.services import form_attach_to_message
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
    if tool_calls:
        form_attach_to_message(message)
    return message
