"""The ask kind (spec 004): `ask_user_options` widgets, structured answers and the
consultation state they fill (shown in a side panel)."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _

from questionnaires.asks.interrupts import ask_amend, ask_pending, ask_resolve
from questionnaires.asks.presenter import (
    DRAFT_PREFIX,
    answer_summary,
    ask_cards_for,
    model_text,
    state_panel_for,
)
from questionnaires.asks.selectors import ask_open_for_drafts, questions_asked
from questionnaires.registry import Kind

KIND = Kind(
    name="ask",
    label=_("Structured question"),
    card_template="chat/asks/card.html",
    present=ask_cards_for,
    draft_prefix=DRAFT_PREFIX,
    draft_open=ask_open_for_drafts,
    questions_asked=questions_asked,
    model_text=model_text,
    answer_summary=answer_summary,
    panel=state_panel_for,
    pending=ask_pending,
    resolve=ask_resolve,
    amend=ask_amend,
    urls="questionnaires.asks.urls",
    static=("js/asks.js", "css/asks.css"),
)
