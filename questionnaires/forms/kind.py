"""The deferred form kind (spec 003): `interactive_form_question` shows a form and stops the
run; while it waits, every other input is refused until it is submitted or cancelled."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _

from questionnaires.forms.interrupts import form_pending_for_client, form_resolve_for_client
from questionnaires.forms.models import KIND_NAME
from questionnaires.forms.presenter import DRAFT_PREFIX, form_cards_for
from questionnaires.forms.selectors import (
    form_locate,
    form_open_for_drafts,
    form_waiting,
    questions_asked,
)
from questionnaires.registry import Kind, RunEffect

KIND = Kind(
    name=KIND_NAME,
    label=_("Deferred form"),
    card_template="questionnaires/cards/interactive_form.html",
    present=form_cards_for,
    draft_prefix=DRAFT_PREFIX,
    draft_open=form_open_for_drafts,
    questions_asked=questions_asked,
    waiting=form_waiting,
    refusal_template="questionnaires/cards/interactive_form_pending.html",
    run_effect=RunEffect.DEFERS_RUN,
    locate=form_locate,
    pending=form_pending_for_client,
    resolve=form_resolve_for_client,
    urls="questionnaires.forms.urls",
    answered_by_message=True,
    analytics="questionnaires.forms.analytics",
    admin="questionnaires.forms.admin",
)
