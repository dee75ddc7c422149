"""The inline kind (spec 000): questionnaire cards inside the assistant's text, and
`questionnaire_async` cards built from that tool's result. It renders message bodies."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _

from questionnaires.inline.bodies import inline_bodies
from questionnaires.inline.interrupts import (
    inline_amend,
    inline_locate,
    inline_pending,
    inline_resolve,
)
from questionnaires.inline.models import KIND_NAME
from questionnaires.inline.presenter import DRAFT_PREFIX
from questionnaires.inline.selectors import questionnaire_open, questions_asked
from questionnaires.inline.services import answer_conflict, answer_row, inline_turn_wait
from questionnaires.registry import Answering, Kind

KIND = Kind(
    name=KIND_NAME,
    label=_("Questionnaire card"),
    body=inline_bodies,
    draft_prefix=DRAFT_PREFIX,
    draft_open=questionnaire_open,
    questions_asked=questions_asked,
    pending=inline_pending,
    resolve=inline_resolve,
    amend=inline_amend,
    locate=inline_locate,
    urls="questionnaires.inline.urls",
    answered_by_message=True,
    turn_wait=inline_turn_wait,
    analytics="questionnaires.inline.analytics",
    admin="questionnaires.inline.admin",
    answering=Answering(record=answer_row, conflict=answer_conflict),
)
