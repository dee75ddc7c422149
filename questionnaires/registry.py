"""The card registry: every kind of card a message can carry, and how it is shown.

A message's body (Markdown with inline questionnaire cards, spec 000) is rendered from its
segments by `questionnaires.inline.render`; every other way of asking attaches cards to
the message it belongs to. Each entry here names the kind, the template that renders one
card (its context is `card`) and the presenter that builds the cards of a batch of
messages with a fixed number of queries. `chat.edge.page` renders every
message through this one list; a new way of asking is one subpackage plus one line here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from chat.core.models import Conversation, Message
from questionnaires.asks.presenters import ask_cards_for
from questionnaires.drafts import Drafts
from questionnaires.elicitations.presenter import card_live, elicitation_cards_for
from questionnaires.forms.presenter import form_cards_for

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Card:
    """One card attached to a message: its kind, the view model its template gets as
    `card`, and whether it can still be answered (open tabs refresh it when that ends)."""

    kind: str
    view: Any
    live: bool

    @property
    def template(self) -> str:
        return REGISTRY[self.kind].template

    @property
    def state(self) -> str:
        kind = REGISTRY[self.kind]
        if kind.state_of is not None:
            return kind.state_of(self.view)
        return kind.state_letter if self.live else ""


# (conversation, messages, drafts) -> {message id: [view, ...]}; view -> still answerable?
Presenter = Callable[..., dict[int, list[Any]]]


@dataclass(frozen=True)
class CardKind:
    name: str
    template: str
    present: Presenter
    live: Callable[[Any], bool]
    # Added to the message's card state while one of its cards is live, so open tabs
    # get the message again (locked) once it is answered; "" when the kind refreshes
    # itself (asks keep what the user typed, see chat/asks/_frame.html).
    state_letter: str = ""
    # For kinds whose live card goes through several states (an opened link waiting for
    # its completion): the letter from the view itself.
    state_of: Callable[[Any], str] | None = None


KINDS: tuple[CardKind, ...] = (
    CardKind("ask", "chat/asks/card.html", ask_cards_for, lambda v: bool(v.answerable)),
    CardKind(
        "form",
        "questionnaires/cards/interactive_form.html",
        form_cards_for,
        lambda v: bool(v.answerable),
        state_letter="f",
    ),
    CardKind(
        "elicitation",
        "questionnaires/cards/elicitation.html",
        elicitation_cards_for,
        card_live,
        state_of=lambda v: str(v.state_letter),
    ),
)
REGISTRY: dict[str, CardKind] = {kind.name: kind for kind in KINDS}


def cards_for(
    *, conversation: Conversation, messages: Sequence[Message], drafts: Drafts | None = None
) -> dict[int, tuple[Card, ...]]:
    """Every attached card of `messages`, by message id, in registry order; open cards
    show their saved `drafts` (questionnaires.drafts)."""
    found: dict[int, list[Card]] = {}
    for kind in KINDS:
        try:
            presented = kind.present(
                conversation=conversation, messages=messages, drafts=drafts or {}
            )
        except Exception:  # one broken kind must not take the conversation down with it
            logger.exception(
                "conversation %s: %s cards failed to render", conversation.pk, kind.name
            )
            continue
        for message_id, views in presented.items():
            found.setdefault(message_id, []).extend(Card(kind.name, v, kind.live(v)) for v in views)
    return {message_id: tuple(cards) for message_id, cards in found.items()}


def card_of(kind: str, view: Any) -> Card:
    """A single card (e.g. one re-rendered with the user's refused input)."""
    return Card(kind, view, REGISTRY[kind].live(view))
