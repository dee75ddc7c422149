"""Starting an intake conversation: remember its definition and run the first turn."""

from __future__ import annotations

from django.utils.translation import gettext as _

from chat.agent.dispatch import run_dispatch
from chat.errors import ChatError
from chat.intake.agent import intake_select
from chat.intake.definitions import definition_ids
from chat.models import AgentKind, Conversation, Run


def intake_begin(*, conversation: Conversation, definition_id: str = "") -> Run | None:
    """Store the chosen definition (if any) and start the first turn without waiting for a
    user message: the agent opens with its intro and first questions."""
    if conversation.agent != AgentKind.INTAKE:
        return None
    if definition_id:
        if definition_id not in dict(definition_ids()):
            raise ChatError("intake_unknown", _("Unknown intake “%(id)s”.") % {"id": definition_id})
        intake_select(conversation=conversation, definition_id=definition_id)
    run = Run.objects.create(conversation=conversation)
    # The intake agent is offline and instant: its first turn runs within the request, so
    # the page (also without JavaScript) opens with the first questions.
    run_dispatch(run_id=run.pk, inline=True)
    return run
