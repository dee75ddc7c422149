"""The elicitation kind: an MCP server asks the person for input during a tool call (form
or URL mode). The tool call waits for the answer, so a pending card holds the run and the
conversation; its card message is for people only (the tool result carries the answer)."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _

from questionnaires.elicitations.interrupts import (
    elicitation_pending_for_client,
    elicitation_resolve_for_client,
)
from questionnaires.elicitations.models import KIND_NAME
from questionnaires.elicitations.presenter import DRAFT_PREFIX, elicitation_cards_for
from questionnaires.elicitations.selectors import (
    elicitation_locate,
    elicitation_open_for_drafts,
    elicitation_waiting,
)
from questionnaires.elicitations.services import elicitation_wait_expire, elicitations_stop
from questionnaires.registry import Kind, RunEffect

KIND = Kind(
    name=KIND_NAME,
    label=_("MCP elicitation"),
    card_template="questionnaires/cards/elicitation.html",
    present=elicitation_cards_for,
    draft_prefix=DRAFT_PREFIX,
    draft_open=elicitation_open_for_drafts,
    waiting=elicitation_waiting,
    run_effect=RunEffect.HOLDS_RUN,
    locate=elicitation_locate,
    model_sees=False,
    pending=elicitation_pending_for_client,
    resolve=elicitation_resolve_for_client,
    urls="questionnaires.elicitations.urls",
    static=("js/elicitations.js",),
    on_expire=elicitation_wait_expire,
    on_stop=elicitations_stop,
    analytics="questionnaires.elicitations.analytics",
    admin="questionnaires.elicitations.admin",
    mcp_elicitation="questionnaires.elicitations.services",
)
