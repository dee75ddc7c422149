"""The elicitation's part of the rule across kinds (questionnaires.guards)."""

from __future__ import annotations

from django.utils.translation import gettext as _

from chat.core.errors import ChatError
from chat.core.models import Conversation
from questionnaires.elicitations.selectors import elicitation_pending


def elicitation_refuse_if_pending(*, conversation: Conversation) -> None:
    """Typed text while an MCP server waits on its card is refused (409
    `pending_elicitation`): answer, decline or cancel the card first."""
    pending = elicitation_pending(conversation_id=conversation.pk)
    if pending is not None:
        raise ChatError(
            "pending_elicitation",
            _(
                "“%(server)s” is waiting for your answer on its card. Submit, decline or "
                "cancel it first."
            )
            % {"server": pending.server_name},
            status=409,
            details={"elicitation_id": pending.pk},
        )
