"""Use cases that span ways of asking: a person sends a message; an intake begins."""

from __future__ import annotations

from django.utils.translation import gettext as _

from chat.agent.intake import intake_select
from chat.core.errors import ChatError
from chat.core.models import AgentKind, Conversation, Message, Run
from chat.core.runs import run_create, run_start
from chat.core.services import answer_post
from questionnaires.asks.definitions import definition_ids
from questionnaires.forms.answers import interactive_form_answer
from questionnaires.registry import input_refuse_if_waiting


def intake_begin(*, conversation: Conversation, definition_id: str = "") -> Run | None:
    """Store the chosen definition (if any) and start the first turn without waiting for a
    user message: the agent opens with its intro and first questions."""
    if conversation.agent != AgentKind.INTAKE:
        return None
    if definition_id:
        if definition_id not in dict(definition_ids()):
            raise ChatError("intake_unknown", _("Unknown intake “%(id)s”.") % {"id": definition_id})
        intake_select(conversation=conversation, definition_id=definition_id)
    run = run_create(conversation=conversation)
    # The intake agent is offline and instant: its first turn runs within the request, so
    # the page (also without JavaScript) opens with the first questions.
    run_start(run_id=run.pk, inline=True)
    return run


def message_post_user(
    *, conversation: Conversation, content: str, form_answer: object = None
) -> Message:
    """A person (or an API client) sends a chat message: store it and start the agent.

    `form_answer` (an `interactive_form_question` answer payload) answers the pending
    form instead; plain text while something is pending is refused (spec 003).
    """
    if form_answer is not None:
        return interactive_form_answer(conversation=conversation, payload=form_answer)
    if not content.strip():
        raise ChatError("message_empty", _("Type a message first."))
    input_refuse_if_waiting(conversation=conversation)
    return answer_post(conversation=conversation, content=content)
