"""The one waiting service (chat.core.waits): limits, closing, resuming suspended runs."""

from __future__ import annotations

import pytest

from chat.core.models import Run, RunAttempt, Wait
from chat.core.services import answer_post, conversation_create
from chat.core.waits import WaitLimited, run_resume_if_ready, wait_close, wait_open
from chat.runs.heartbeat import run_claim, run_suspend

pytestmark = pytest.mark.django_db


def _open(conversation, ref, **kw):
    return wait_open(conversation=conversation, kind="elicitation", ref=ref, seconds=60, **kw)


@pytest.mark.parametrize(
    ("setting", "code"),
    [
        ("WAITS_PER_USER", "wait_limit_user"),
        ("WAITS_PER_CONVERSATION", "wait_limit_conversation"),
        ("WAITS_PER_TOOL_CALL", "wait_limit_call"),
        ("WAITS_PER_TURN", "wait_limit_turn"),
    ],
)
def test_each_limit_refuses_with_its_code_and_stores_nothing(conversation, settings, setting, code):
    setattr(settings, setting, 2)
    run = Run.objects.create(conversation=conversation)
    _open(conversation, "a", run=run, tool_call_id="c1")
    _open(conversation, "b", run=run, tool_call_id="c1")
    with pytest.raises(WaitLimited) as refused:
        _open(conversation, "c", run=run, tool_call_id="c1")
    assert refused.value.code == code and refused.value.status == 429
    assert refused.value.message
    assert Wait.objects.count() == 2


def test_the_per_user_limit_counts_every_conversation(user, settings):
    settings.WAITS_PER_USER = 2
    for n in range(2):
        _open(conversation_create(owner=user, agent="echo"), f"w{n}")
    with pytest.raises(WaitLimited):
        _open(conversation_create(owner=user, agent="echo"), "w3")
    wait_close(ref="w0")  # answered: room again
    _open(conversation_create(owner=user, agent="echo"), "w4")


def test_an_answer_closes_the_cards_that_waited_for_a_new_message(conversation):
    wait_open(conversation=conversation, kind="inline", ref="inline:1", seconds=60)
    held = _open(conversation, "elicitation:1")
    answer_post(conversation=conversation, content="yes")
    assert Wait.objects.get(ref="inline:1").status == "answered"
    assert Wait.objects.get(pk=held.pk).status == "open"  # not a card of that kind


def test_a_suspended_run_resumes_when_its_last_wait_closes(conversation, settings):
    settings.AGENT_RUNNER = "celery"  # (queued, not executed: nothing listens)
    run = Run.objects.create(conversation=conversation)
    attempt = run_claim(run_id=run.pk, task_id="t")
    _open(conversation, "one", run=run, resumes_run=True)
    _open(conversation, "two", run=run, resumes_run=True)
    assert run_suspend(run=run, attempt=attempt)
    assert Run.objects.get(pk=run.pk).status == "suspended"
    wait_close(ref="one")
    assert Run.objects.get(pk=run.pk).status == "suspended"
    wait_close(ref="two", status="expired")
    run.refresh_from_db()
    assert run.status == "queued" and run.worker == ""
    assert RunAttempt.objects.get().outcome == "suspended"
    assert not run_resume_if_ready(run_id=run.pk)  # not suspended any more


def test_an_answer_that_beats_the_suspension_queues_the_run_at_once(conversation, settings):
    settings.AGENT_RUNNER = "celery"
    run = Run.objects.create(conversation=conversation)
    attempt = run_claim(run_id=run.pk, task_id="t")
    _open(conversation, "fast", run=run, resumes_run=True)
    wait_close(ref="fast")  # answered while the worker was still on its way out
    assert run_suspend(run=run, attempt=attempt)
    assert Run.objects.get(pk=run.pk).status == "queued"


def test_a_tour_turn_that_ends_on_a_card_records_its_wait(user):
    conversation = conversation_create(owner=user, agent="scripted")
    answer_post(conversation=conversation, content="hello")
    (wait,) = Wait.objects.filter(conversation=conversation)
    assert (wait.kind, wait.status, wait.resumes_run) == ("inline", "open", False)
    answer_post(conversation=conversation, content="my answer")
    assert Wait.objects.get(pk=wait.pk).status == "answered"
