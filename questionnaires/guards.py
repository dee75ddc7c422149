"""Rules that hold across ways of asking.

Spec 003: while a deferred form waits for the user, other input is refused until the form
is submitted or cancelled — plain text, a card answer and an ask answer alike. A new kind
that pauses the agent adds its check here.
"""

from __future__ import annotations

from chat.core.models import Conversation
from questionnaires.elicitations.guards import elicitation_refuse_if_pending
from questionnaires.forms.answers import interactive_form_refuse_if_pending


def input_refuse_if_pending(*, conversation: Conversation) -> None:
    """Raise `ChatError` (409 `pending_interactive_form`, `pending_elicitation`) while
    something waits."""
    interactive_form_refuse_if_pending(conversation=conversation)
    elicitation_refuse_if_pending(conversation=conversation)
