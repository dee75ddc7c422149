"""Deferred interactive forms in the chat (spec 003): the follow-up message rules.

`questionnaires.forms.services` owns the form rows and the checks; this module adds what
needs the chat: the refusal of plain text while a form is pending, the answer's tool
result and readable user message, and the next run. Every entry point (page, htmx, JSON
API, MCP) goes through `interactive_form_answer`; plain text goes through
`chat.usecases.message_post_user`, which refuses it while a form is pending.
"""

from __future__ import annotations

import json

from django.db import transaction
from django.utils import translation
from django.utils.translation import gettext as _

from chat.core.errors import ChatError
from chat.core.models import Conversation, Message, Role
from chat.core.services import answer_post, message_create
from chat.obs import metrics
from questionnaires.drafts import draft_clear
from questionnaires.forms.presenter import DRAFT_PREFIX
from questionnaires.forms.services import (
    CheckedAnswer,
    form_answer_summary,
    form_check_answer,
    form_link_answer_message,
    form_resolve,
    form_tool_result,
)


def interactive_form_answer(*, conversation: Conversation, payload: object) -> Message:
    """Accept an answer (or a cancellation) of the pending form and resume the agent.

    The model receives the answer as the tool result of the form's tool call; people see
    a readable user message, which also starts the next run. Of two concurrent submits
    exactly one is accepted; the other gets `interactive_form_not_pending`.
    """
    checked = form_check_answer(
        conversation_id=conversation.pk, payload=payload, lang=conversation.language
    )
    with transaction.atomic():
        if not form_resolve(checked=checked):
            raise ChatError(
                "interactive_form_not_pending",
                _("This form was already answered."),
                status=409,
            )
        _tool_result_store(conversation, checked)
        message = _user_message(conversation, checked)
        form_link_answer_message(form=checked.form, message_id=message.pk)
        outcome = "answered" if checked.status == "answered" else "cancelled"
        metrics.on_commit(lambda: metrics.ANSWERS.labels("form", outcome).inc())
        draft_clear(conversation=conversation, card=f"{DRAFT_PREFIX}:{checked.form.ask_id}")
    return message


def _tool_result_store(conversation: Conversation, checked: CheckedAnswer) -> None:
    """Write the answer as THE tool result of the form's tool call.

    If the runtime stored the deferred result as a tool message, that message is replaced
    (one result per tool call, and no "waiting" text stays in the model's context).
    """
    content = json.dumps(form_tool_result(checked=checked), ensure_ascii=False)
    tool_use_id = checked.form.tool_use_id
    existing = conversation.messages.filter(role=Role.TOOL, tool_call_id=tool_use_id)
    if existing.exists():
        existing.update(content=content)
        return
    message_create(
        conversation=conversation,
        role=Role.TOOL,
        content=content,
        tool_call_id=tool_use_id,
        metadata={"interactive_form": checked.form.ask_id},
    )


def _user_message(conversation: Conversation, checked: CheckedAnswer) -> Message:
    with translation.override(conversation.language):
        summary = form_answer_summary(checked=checked)
    return answer_post(
        conversation=conversation,
        content=summary,
        metadata={
            "interactive_form_answer": {
                "type": "interactive_form_question",
                "ask_id": checked.form.ask_id,
                "tool_use_id": checked.form.tool_use_id,
                "status": checked.status,
            }
        },
        lock_event={"ask_id": checked.form.ask_id, "status": checked.status},
    )
