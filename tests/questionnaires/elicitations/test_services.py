"""Opening, answering, settling and closing elicitations, and their waits."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from chat.agent.context import context_messages
from chat.core.errors import ChatError
from chat.core.models import Event, Message, Wait
from questionnaires.elicitations.services import (
    ElicitationRefused,
    elicitation_answer,
    elicitation_complete,
    elicitations_expire_due,
    elicitations_settled,
)
from questionnaires.models import Elicitation
from questionnaires.registry import input_refuse_if_waiting
from tests.support.asking import open_elicitation

pytestmark = pytest.mark.django_db
GOOD = {"answer-name": ["Ann"], "answer-age": ["30"], "answer-tags": ["a"]}


def test_open_stores_a_pending_card_and_announces_its_message(conversation, pending):
    assert pending.status == "pending" and pending.server_name == "demo"
    message = Message.objects.get(pk=pending.message_id)
    assert message.role == "assistant" and "demo" in message.content
    assert Event.objects.filter(name="message_done", data__message_id=message.pk).exists()
    remaining = (pending.expires_at - timezone.now()).total_seconds()
    assert 1790 < remaining <= 1800
    # the card's message is for people: the model's context leaves it out
    assert all(
        "demo" not in str(m.get("content")) for m in context_messages(conversation=conversation)
    )


@pytest.mark.parametrize(
    ("overrides", "code"),
    [
        (
            {"requested_schema": {"type": "object", "properties": {"x": {"type": "object"}}}},
            "elicitation_schema_unsupported",
        ),
        (
            {"requested_schema": {"type": "object", "properties": {"apiKey": {"type": "string"}}}},
            "elicitation_secret_field",
        ),
        (
            {
                "requested_schema": {
                    "type": "object",
                    "properties": {"p": {"type": "string", "format": "password"}},
                }
            },
            "elicitation_secret_field",
        ),
        ({"mode": "url", "url": "javascript:alert(1)"}, "elicitation_url_invalid"),
        ({"mode": "url", "url": "https://exa mple.com"}, "elicitation_url_invalid"),
        ({"mode": "telepathy"}, "elicitation_mode_unsupported"),
    ],
)
def test_refused_requests_leave_a_visible_locked_card(conversation, overrides, code):
    with pytest.raises(ElicitationRefused) as refused:
        open_elicitation(conversation, **overrides)
    assert refused.value.code == code and refused.value.message
    row = Elicitation.objects.get()
    assert row.status == "refused" and row.refused_code == code and row.refused_reason
    assert refused.value.elicitation.pk == row.pk
    input_refuse_if_waiting(conversation=conversation)  # nothing waits


def test_accept_validates_and_stores_typed_content(user, pending):
    row = elicitation_answer(elicitation=pending, action="accept", data=GOOD, user=user)
    assert row.status == "accepted" and row.answered_by == user
    assert row.content == {"name": "Ann", "age": 30, "ok": False, "tags": ["a"]}
    assert Event.objects.filter(name="card_locked", data__elicitation_id=row.pk).exists()


def test_invalid_accept_changes_nothing_and_keeps_the_input(user, pending):
    with pytest.raises(ChatError) as error:
        elicitation_answer(
            elicitation=pending,
            action="accept",
            data={"answer-age": ["200"], "answer-name": ["Zed"]},
            user=user,
        )
    assert error.value.code == "elicitation_answer_invalid"
    assert set(error.value.details["fields"]) == {"age"}
    assert error.value.details["values"]["name"] == ["Zed"]
    assert Elicitation.objects.get().status == "pending"


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_decline_and_cancel_need_no_valid_content(user, pending, action):
    row = elicitation_answer(elicitation=pending, action=action, data={}, user=user)
    assert row.action == action and row.content is None


def test_a_second_answer_is_refused(user, pending):
    elicitation_answer(elicitation=pending, action="decline", data={}, user=user)
    with pytest.raises(ChatError) as error:
        elicitation_answer(elicitation=pending, action="accept", data=GOOD, user=user)
    assert error.value.code == "elicitation_not_pending" and error.value.status == 409
    assert Elicitation.objects.get().status == "declined"


def test_a_stale_copy_loses_the_conditional_update(user, pending):
    stale = Elicitation.objects.get(pk=pending.pk)
    elicitation_answer(elicitation=pending, action="cancel", data={}, user=user)
    with pytest.raises(ChatError) as error:
        elicitation_answer(elicitation=stale, action="accept", data=GOOD, user=user)
    assert error.value.code == "elicitation_not_pending"
    assert Elicitation.objects.get().status == "cancelled"


def test_settled_reads_answers_and_expires_overdue_cards(user, conversation, pending):
    assert elicitations_settled([pending.pk]) == {}  # still waiting
    elicitation_answer(elicitation=pending, action="accept", data=GOOD, user=user)
    outcome = elicitations_settled([pending.pk])[pending.pk]
    assert outcome.action == "accept" and outcome.content["name"] == "Ann"
    late = open_elicitation(conversation, tool_call_id="call_10")
    Elicitation.objects.filter(pk=late.pk).update(expires_at=timezone.now())
    assert elicitations_settled([late.pk])[late.pk].action == "cancel"
    assert Elicitation.objects.get(pk=late.pk).status == "expired"
    assert Event.objects.filter(name="card_locked", data__status="expired").exists()


def test_each_card_has_a_wait_that_ends_with_it(user, pending):
    wait = Wait.objects.get(ref=f"elicitation:{pending.pk}")
    assert (wait.kind, wait.status, wait.owner_id) == ("elicitation", "open", user.pk)
    assert abs((wait.deadline - pending.expires_at).total_seconds()) < 5
    elicitation_answer(elicitation=pending, action="decline", data={}, user=user)
    assert Wait.objects.get(pk=wait.pk).status == "answered"


def test_the_reaper_expires_an_overdue_card(pending):
    assert elicitations_expire_due(ids=[pending.pk]) == 1
    assert Elicitation.objects.get().status == "expired"
    assert Wait.objects.get().status == "expired"
    assert elicitations_expire_due(ids=[pending.pk]) == 0


def test_an_expired_card_refuses_answers(user, pending):
    Elicitation.objects.filter(pk=pending.pk).update(expires_at=timezone.now() - timedelta(1))
    pending.refresh_from_db()
    with pytest.raises(ChatError) as error:
        elicitation_answer(elicitation=pending, action="accept", data=GOOD, user=user)
    assert error.value.code == "elicitation_expired"
    assert Elicitation.objects.get().status == "expired"


def test_url_mode_accept_then_completion_from_its_own_session_only(user, conversation, pending_url):
    Elicitation.objects.filter(pk=pending_url.pk).update(session_ref="host:1")
    elicitation_answer(elicitation=pending_url, action="accept", data={}, user=user)
    assert elicitations_settled([pending_url.pk])[pending_url.pk].action == "accept"
    complete = elicitation_complete
    assert not complete(conversation_id=conversation.pk, remote_id="other", session_ref="host:1")
    # another server's (or session's) notice with the same id closes nothing
    assert not complete(conversation_id=conversation.pk, remote_id="rid-1", session_ref="host:2")
    assert complete(conversation_id=conversation.pk, remote_id="rid-1", session_ref="host:1")
    assert Elicitation.objects.get().status == "completed"
    assert not complete(conversation_id=conversation.pk, remote_id="rid-1", session_ref="host:1")


def test_a_link_shown_for_32042_waits_for_nobody(user, conversation):
    """-32042: the call has returned; the link doesn't block typing, and opening it is
    the end of it (no session will send a completion notice)."""
    row = open_elicitation(
        conversation, mode="url", requested_schema=None, url="https://x.example/a",
        session_ref="",
    )  # fmt: skip
    input_refuse_if_waiting(conversation=conversation)  # no refusal
    elicitation_answer(elicitation=row, action="accept", data={}, user=user)
    assert Elicitation.objects.get().status == "completed"


def test_typed_text_is_refused_while_a_card_waits(conversation, pending):
    with pytest.raises(ChatError) as error:
        input_refuse_if_waiting(conversation=conversation)
    assert error.value.code == "pending_elicitation" and error.value.status == 409
    assert error.value.details == {"elicitation_id": pending.pk}


def test_an_accepted_form_tells_the_server_how_each_field_came_to_be(user, pending):
    """Issue 27: the provenance travels in the result's `_meta` (the content must keep to
    the server's schema), the same words as the questionnaire envelopes."""
    from mcp import types

    from questionnaires.elicitations.services import ElicitationOutcome, outcome_of
    from questionnaires.protocol.provenance import PROVENANCE_META_KEY

    row = elicitation_answer(
        elicitation=pending, action="accept", data={**GOOD, "answer-ok": ["true"]}, user=user
    )
    outcome = outcome_of(row)
    assert outcome.provenance == {
        "name": "free_text",
        "age": "free_text",
        "ok": "default",
        "size": "skipped",
        "tags": "chosen",
        "day": "skipped",
        "email": "skipped",
    }
    result = types.ElicitResult(action="accept", content=outcome.content, _meta=outcome.meta)
    dumped = result.model_dump(by_alias=True, exclude_none=True)
    assert dumped["_meta"][PROVENANCE_META_KEY]["ok"] == "default"
    assert ElicitationOutcome(action="decline", content=None).meta is None
