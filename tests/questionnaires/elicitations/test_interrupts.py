"""An MCP elicitation as an AG-UI interrupt (questionnaires.elicitations.interrupts): its
schema is the server's own, a client's answer reaches the server as the card's would, and
the AG-UI endpoint's rules hold across kinds (every open question answered in one request,
or nothing is; an expired one only abandoned)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from chat.core.errors import ChatError
from chat.core.models import Wait, WaitStatus
from chat.edge.agui import _resume, interrupts_of
from questionnaires.elicitations.interrupts import (
    elicitation_pending_for_client,
    elicitation_resolve_for_client,
)
from questionnaires.elicitations.models import Elicitation
from questionnaires.elicitations.services import outcome_of
from questionnaires.models import InteractiveForm
from tests.support.asking import SCHEMA, open_form

pytestmark = pytest.mark.django_db


def _resolve(conversation, user, row, payload):
    elicitation_resolve_for_client(
        conversation=conversation,
        ref=f"elicitation:{row.pk}",
        payload=payload,
        user=user,
        lang="en",
    )
    row.refresh_from_db()


def test_a_form_request_is_the_servers_schema_and_its_answer_the_servers_result(
    conversation, user, pending
):
    seen = elicitation_pending_for_client(conversation, f"elicitation:{pending.pk}")
    assert seen is not None
    assert seen.message == "Who is coming?" and seen.tool_call_id == "call_9"
    assert seen.response_schema == SCHEMA
    assert seen.metadata == {"server": "demo", "mode": "form"}
    content = {"name": "Ann", "age": 41, "ok": False, "tags": ["b"], "day": "2026-03-01"}
    _resolve(conversation, user, pending, content)
    assert pending.status == "accepted" and pending.answered_by == user
    outcome = outcome_of(pending)
    assert (outcome.action, outcome.content) == ("accept", content)
    assert outcome.provenance["ok"] == "chosen" and outcome.provenance["email"] == "skipped"
    assert Wait.objects.get(ref=f"elicitation:{pending.pk}").status == WaitStatus.ANSWERED
    assert elicitation_pending_for_client(conversation, f"elicitation:{pending.pk}") is None


@pytest.mark.parametrize(
    ("content", "fields"),
    [
        ({"name": "Ann"}, {"age"}),
        ({"name": "Ann", "age": "41"}, {"age"}),
        ({"name": "Ann", "age": 4.5}, {"age"}),
        ({"name": "Ann", "age": 200, "size": "m"}, {"age", "size"}),
        ({"name": "Ann", "age": 4, "email": "nope", "shoe": 42}, {"email", "shoe"}),
        ({"name": ["Ann"], "age": 4, "ok": "yes"}, {"name", "ok"}),
    ],
)
def test_a_bad_answer_names_every_field_and_nothing_changes(
    conversation, user, pending, content, fields
):
    with pytest.raises(ChatError) as refused:
        _resolve(conversation, user, pending, content)
    assert (refused.value.status, refused.value.code) == (400, "elicitation_answer_invalid")
    assert set(refused.value.field_messages()) == fields
    assert pending.status == "pending" and pending.content is None


def test_cancelled_declines_and_a_second_answer_is_a_409(conversation, user, pending):
    _resolve(conversation, user, pending, None)
    assert pending.status == "declined" and outcome_of(pending).action == "decline"
    with pytest.raises(ChatError) as refused:
        _resolve(conversation, user, pending, {"name": "Ann", "age": 4})
    assert (refused.value.status, refused.value.code) == (409, "elicitation_not_pending")


def test_a_link_is_offered_as_a_browser_reads_it_and_resolved_with_nothing(
    conversation, user, pending_url
):
    seen = elicitation_pending_for_client(conversation, f"elicitation:{pending_url.pk}")
    assert seen is not None and seen.message == "Pay here"
    assert seen.metadata == {
        "server": "demo",
        "mode": "url",
        "url": "https://xn--bcher-kva.example/pay?x=%3Cb%3E",
    }
    assert seen.response_schema["properties"] == {}
    with pytest.raises(ChatError) as refused:
        _resolve(conversation, user, pending_url, {"done": True})
    assert refused.value.code == "interrupt_payload_invalid"
    _resolve(conversation, user, pending_url, {})
    assert pending_url.status == "accepted"


def test_an_expired_card_is_closed_as_expired_when_abandoned(conversation, user, pending):
    Elicitation.objects.filter(pk=pending.pk).update(expires_at=timezone.now() - timedelta(1))
    pending.refresh_from_db()
    _resolve(conversation, user, pending, None)
    assert pending.status == "expired" and outcome_of(pending).action == "cancel"
    assert Wait.objects.get(ref=f"elicitation:{pending.pk}").status == WaitStatus.EXPIRED


# --- the AG-UI endpoint's rules over forms and elicitations ---------------------------------


def _entry(ref: str, payload: object = None):
    from ag_ui.core import ResumeEntry

    if payload is None:
        return ResumeEntry(interrupt_id=ref, status="cancelled")
    return ResumeEntry(interrupt_id=ref, status="resolved", payload=payload)


def test_every_kind_is_an_answerable_interrupt_and_answered_all_at_once_or_not_at_all(
    conversation, user, pending
):
    open_form(conversation)
    form_ref = f"form:{InteractiveForm.objects.get().pk}"
    elic_ref = f"elicitation:{pending.pk}"
    interrupts = {i.id: i for i in interrupts_of(conversation)}
    assert set(interrupts) == {form_ref, elic_ref}
    assert all(
        i.response_schema and i.metadata != {"answerIn": "page"} for i in interrupts.values()
    )
    assert interrupts[elic_ref].metadata == {"server": "demo", "mode": "form"}

    good_form = _entry(form_ref, {"answers": {"color": "red"}})
    with pytest.raises(ChatError) as refused:
        _resume(conversation, [good_form], user, "en")
    assert refused.value.code == "interrupts_uncovered"
    bad_elic = _entry(elic_ref, {"name": "Ann"})
    with pytest.raises(ChatError) as refused:
        _resume(conversation, [good_form, bad_elic], user, "en")
    assert refused.value.code == "elicitation_answer_invalid"
    assert refused.value.details["interrupt"] == elic_ref  # which entry was refused
    assert InteractiveForm.objects.get().status == "pending"  # the good one is not kept
    pending.refresh_from_db()
    assert pending.status == "pending"

    _resume(conversation, [good_form, _entry(elic_ref, {"name": "Ann", "age": 4})], user, "en")
    pending.refresh_from_db()
    assert InteractiveForm.objects.get().answer["answers"]["color"] == "red"
    assert pending.content == {"name": "Ann", "age": 4}
    assert interrupts_of(conversation) == []


def test_expired_questions_can_only_be_abandoned(conversation, user, pending):
    open_form(conversation)
    form_ref = f"form:{InteractiveForm.objects.get().pk}"
    elic_ref = f"elicitation:{pending.pk}"
    past = timezone.now() - timedelta(seconds=1)
    Wait.objects.filter(ref__in=[form_ref, elic_ref]).update(deadline=past)
    Elicitation.objects.filter(pk=pending.pk).update(expires_at=past)
    with pytest.raises(ChatError) as refused:
        _resume(
            conversation, [_entry(form_ref), _entry(elic_ref, {"name": "A", "age": 1})], user, "en"
        )
    assert (refused.value.status, refused.value.code) == (409, "interrupt_expired")
    _resume(conversation, [_entry(form_ref), _entry(elic_ref)], user, "en")
    pending.refresh_from_db()
    assert InteractiveForm.objects.get().status == "cancelled" and pending.status == "expired"
