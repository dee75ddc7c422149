"""The elicitation kind: an MCP server asks the person for input during a tool call (form
or URL mode). The tool call waits for the answer, so a pending card holds the run and the
conversation; its card message is for people only (the tool result carries the answer)."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _

from questionnaires.elicitations.presenter import DRAFT_PREFIX, elicitation_cards_for
from questionnaires.elicitations.selectors import elicitation_open_for_drafts, elicitation_waiting
from questionnaires.elicitations.services import KIND_NAME, answer_row
from questionnaires.registry import Answering, Kind, RunEffect

KIND = Kind(
    name=KIND_NAME,
    label=_("MCP elicitation"),
    card_template="questionnaires/cards/elicitation.html",
    present=elicitation_cards_for,
    draft_prefix=DRAFT_PREFIX,
    draft_open=elicitation_open_for_drafts,
    waiting=elicitation_waiting,
    run_effect=RunEffect.HOLDS_RUN,
    model_sees=False,
    urls="questionnaires.elicitations.urls",
    static=("js/elicitations.js",),
    answering=Answering(record=answer_row),
)
