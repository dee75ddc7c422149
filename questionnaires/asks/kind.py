"""The ask kind (spec 004): `ask_user_options` widgets, structured answers and the
consultation state they fill (shown in a side panel)."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _

from questionnaires.asks.interrupts import ask_amend, ask_locate, ask_pending, ask_resolve
from questionnaires.asks.models import KIND_NAME
from questionnaires.asks.presenter import (
    DRAFT_PREFIX,
    answer_summary,
    ask_cards_for,
    model_text,
    state_panel_for,
)
from questionnaires.asks.selectors import ask_open_for_drafts, ask_siblings_open, questions_asked
from questionnaires.asks.services import answer_conflict, answer_row
from questionnaires.registry import Answering, Kind

KIND = Kind(
    name=KIND_NAME,
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
    locate=ask_locate,
    urls="questionnaires.asks.urls",
    static=("js/asks.js", "css/asks.css"),
    answered_by_message=True,
    answer_keeps_open=ask_siblings_open,
    wait_tools=("ask_user_options",),  # the tool opens each ask's wait itself
    analytics="questionnaires.asks.analytics",
    admin="questionnaires.asks.admin",
    answering=Answering(record=answer_row, conflict=answer_conflict),
)
