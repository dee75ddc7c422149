"""Storing one step of an agent's turn: the assistant message with its tool calls, each
call's result, and what a tool does once its call is stored (`Tool.persisted`: the one
way a tool's effect attaches to its message).

The one path for every caller that executes tools: the built-in loop (`chat.runs.turn`)
and external runtimes calling the same tools over MCP (`chat.edge.mcp`), so a tool call
looks and behaves the same in the chat wherever it came from.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from django.db import transaction

from chat.agent.events import ToolCall, ToolResult
from chat.agent.tools import TOOLS_BY_NAME
from chat.agent.tools.base import StoredCall
from chat.core.metadata import MessageMetadata
from chat.core.models import Message, Role, Run
from chat.core.services import message_create

# `metadata["step"]` of a step's message stored before its tools ran ("open" until the
# step is stored whole): the model's context leaves it out meanwhile (chat.agent.context).
STEP_OPEN = "open"


def step_message_open(*, run: Run, content: str, calls: Sequence[ToolCall]) -> Message:
    """Store a step's assistant message before its tools run (a step calling MCP tools,
    so the text shows before a server's question); `step_persist(opened=…)` completes it."""
    return message_create(
        conversation=run.conversation,
        role=Role.ASSISTANT,
        content=content,
        tool_calls=[c.to_openai() for c in calls],
        metadata={"kind": "reply", "step": STEP_OPEN},
        run=run,
    )


@transaction.atomic
def step_persist(
    *,
    run: Run,
    content: str,
    calls: Sequence[ToolCall],
    results: Sequence[ToolResult],
    metadata: MessageMetadata | None = None,
    opened: int | None = None,
) -> Message:
    """One transaction: open tabs fetch the assistant message together with its tool
    results, so a `questionnaire_async` card is complete when it first appears.
    `opened`: the step's message was stored before its tools ran; complete that one."""
    conversation = run.conversation
    assistant = Message.objects.filter(pk=opened, run=run).first() if opened else None
    if assistant is None:
        assistant = message_create(
            conversation=conversation,
            role=Role.ASSISTANT,
            content=content,
            tool_calls=[c.to_openai() for c in calls],
            metadata=metadata,
            run=run,
        )
    else:
        assistant.metadata = dict(metadata or {})
        Message.objects.filter(pk=assistant.pk).update(metadata=assistant.metadata)
    for result in results:
        message_create(
            conversation=conversation,
            role=Role.TOOL,
            content=json.dumps(result.result, ensure_ascii=False),
            tool_call_id=result.call.id,
            metadata={"name": result.call.name},
            run=run,
        )
    for result in results:  # each tool's effect on the message: an ask, a form
        tool = TOOLS_BY_NAME.get(result.call.name)
        if tool is not None and tool.persisted is not None:
            tool.persisted(_stored(result, run, assistant))
    return assistant


def _stored(result: ToolResult, run: Run, message: Message) -> StoredCall:
    try:
        arguments = json.loads(result.call.arguments) if result.call.arguments.strip() else {}
    except (ValueError, RecursionError):
        arguments = {}
    return StoredCall(
        call_id=result.call.id,
        arguments=arguments,
        result=result.result,
        run=run,
        message=message,
        lang=run.conversation.language,
    )
