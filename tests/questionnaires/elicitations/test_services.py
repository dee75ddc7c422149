"""Opening, answering, waiting for and closing elicitations."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from django.db import connections
from django.utils import timezone

from chat.agent.context import context_messages
from chat.core.errors import ChatError
from chat.core.models import Event, Message
from questionnaires.elicitations.services import (
    ElicitationRefused,
    elicitation_abandon,
    elicitation_answer,
    elicitation_complete,
    elicitation_wait,
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


def test_wait_returns_the_answer_given_meanwhile(user, pending):
    def answer_now() -> bool:
        elicitation_answer(elicitation=pending, action="accept", data=GOOD, user=user)
        return False

    outcome = elicitation_wait(pending.pk, poll=0.01, cancelled=answer_now)
    assert outcome.action == "accept" and outcome.content["name"] == "Ann"


def test_wait_past_its_time_expires_the_card_and_answers_cancel(pending):
    Elicitation.objects.filter(pk=pending.pk).update(expires_at=timezone.now())
    outcome = elicitation_wait(pending.pk, poll=0.01)
    assert (outcome.action, outcome.content) == ("cancel", None)
    assert Elicitation.objects.get().status == "expired"
    assert Event.objects.filter(name="card_locked", data__status="expired").exists()


def test_wait_timeout_and_cancelled_run(conversation, pending):
    assert elicitation_wait(pending.pk, timeout=0.05, poll=0.01).action == "cancel"
    other = open_elicitation(conversation)
    assert elicitation_wait(other.pk, poll=0.01, cancelled=lambda: True).action == "cancel"
    assert Elicitation.objects.get(pk=other.pk).status == "cancelled"


def test_an_expired_card_refuses_answers(user, pending):
    Elicitation.objects.filter(pk=pending.pk).update(expires_at=timezone.now() - timedelta(1))
    pending.refresh_from_db()
    with pytest.raises(ChatError) as error:
        elicitation_answer(elicitation=pending, action="accept", data=GOOD, user=user)
    assert error.value.code == "elicitation_expired"
    assert Elicitation.objects.get().status == "expired"


def test_url_mode_accept_then_completion(user, conversation, pending_url):
    elicitation_answer(elicitation=pending_url, action="accept", data={}, user=user)
    assert elicitation_wait(pending_url.pk, poll=0.01).action == "accept"
    assert not elicitation_complete(conversation_id=conversation.pk, remote_id="other")
    assert elicitation_complete(conversation_id=conversation.pk, remote_id="rid-1")
    assert Elicitation.objects.get().status == "completed"
    assert not elicitation_complete(conversation_id=conversation.pk, remote_id="rid-1")


def test_abandon_locks_the_card_with_its_reason(pending):
    elicitation_abandon(pending.pk, "The MCP server disconnected.")
    row = Elicitation.objects.get()
    assert row.status == "abandoned" and row.refused_reason == "The MCP server disconnected."
    elicitation_abandon(12345, "gone")  # unknown ids are ignored


def test_typed_text_is_refused_while_a_card_waits(conversation, pending):
    with pytest.raises(ChatError) as error:
        input_refuse_if_waiting(conversation=conversation)
    assert error.value.code == "pending_elicitation" and error.value.status == 409
    assert error.value.details == {"elicitation_id": pending.pk}


@pytest.mark.django_db(transaction=True)
def test_wait_in_a_worker_thread_sees_an_answer_from_the_request_thread(user, conversation):
    row = open_elicitation(conversation)
    outcomes = []

    def worker() -> None:
        try:
            outcomes.append(elicitation_wait(row.pk, poll=0.02, timeout=10))
        finally:
            connections.close_all()

    thread = threading.Thread(target=worker)
    thread.start()
    time.sleep(0.1)
    elicitation_answer(elicitation=row, action="decline", data={}, user=user)
    thread.join(timeout=15)
    assert [o.action for o in outcomes] == ["decline"]
