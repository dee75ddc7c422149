from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from chat.core.models import Event, Run, RunAttempt, RunStatus
from chat.core.services import conversation_create
from chat.runs.heartbeat import heartbeat, run_claim, run_reap_stale
from tests.support import wait_for

pytestmark = pytest.mark.django_db


def _run(conversation, **fields) -> Run:
    return Run.objects.create(conversation=conversation, **fields)


def test_claim_is_exclusive(conversation):
    run = _run(conversation)
    attempt = run_claim(run_id=run.pk)
    assert attempt is not None and attempt.number == 1
    assert run_claim(run_id=run.pk) is None
    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING and run.worker and run.heartbeat_at
    assert run.attempts == 1 and attempt.worker == run.worker


def test_dead_worker_run_is_failed_with_events(conversation, settings):
    settings.AGENT_HEARTBEAT_TIMEOUT = 30
    old = timezone.now() - timedelta(seconds=31)
    dead = _run(conversation, status=RunStatus.RUNNING, started_at=old, heartbeat_at=old)
    alive = _run(conversation, status=RunStatus.RUNNING, heartbeat_at=timezone.now())
    assert run_reap_stale().failed == [dead.pk]
    dead.refresh_from_db()
    alive.refresh_from_db()
    assert dead.status == RunStatus.FAILED and dead.error.startswith("worker_lost")
    assert alive.status == RunStatus.RUNNING
    names = list(Event.objects.filter(conversation=conversation).values_list("name", flat=True))
    assert names == ["error", "run_finished"]
    assert run_reap_stale().failed == []  # idempotent


def test_queued_run_nobody_took_is_failed(conversation, settings):
    settings.AGENT_QUEUE_TIMEOUT = 60
    stuck = _run(conversation)
    Run.objects.filter(pk=stuck.pk).update(created_at=timezone.now() - timedelta(seconds=61))
    fresh = _run(conversation)
    assert run_reap_stale(conversation_id=conversation.pk).failed == [stuck.pk]
    fresh.refresh_from_db()
    assert fresh.status == RunStatus.QUEUED


@pytest.mark.django_db(transaction=True)
def test_heartbeat_refreshes_while_running(conversation):
    run = _run(conversation)
    run_claim(run_id=run.pk)
    Run.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    with heartbeat(run_id=run.pk, attempt=1, interval=0.02):
        wait_for(
            lambda: timezone.now() - Run.objects.get(pk=run.pk).heartbeat_at < timedelta(minutes=5),
            "a heartbeat",
        )


def test_a_new_message_leaves_dead_runs_to_the_reaper(client_in, conversation, settings):
    """No reaper sweep inside an answer's transaction (issue 24): the message is stored
    and its run started; the dead run is the reaper's."""
    old = timezone.now() - timedelta(hours=1)
    dead = _run(conversation, status=RunStatus.RUNNING, started_at=old, heartbeat_at=old)
    client_in.post(f"/conversations/{conversation.pk}/messages", {"content": "hi"})
    dead.refresh_from_db()
    assert dead.status == RunStatus.RUNNING
    assert conversation.runs.exclude(pk=dead.pk).get().status == RunStatus.FINISHED
    assert run_reap_stale().failed == [dead.pk]


def test_external_runs_expire_with_their_tokens(conversation, settings):
    from chat.core.identity import RunIdentity
    from chat.core.models import EXTERNAL_WORKER
    from chat.core.selectors import run_identity_live

    settings.RUN_TOKEN_MAX_AGE_SECONDS = 3600
    fresh = _run(conversation, status=RunStatus.RUNNING, worker=EXTERNAL_WORKER)
    old = _run(conversation, status=RunStatus.RUNNING, worker=EXTERNAL_WORKER)
    Run.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(hours=2))
    assert run_reap_stale().failed == [old.pk]  # an external run has no heartbeat: only age counts
    old.refresh_from_db()
    assert old.status == RunStatus.FAILED and old.error.startswith("run_expired")
    identity = RunIdentity(conversation.pk, old.pk, conversation.owner_id)
    assert not run_identity_live(identity)
    assert run_identity_live(RunIdentity(conversation.pk, fresh.pk, conversation.owner_id))


def test_run_tokens_die_with_their_user(conversation):
    from chat.core.identity import RunIdentity
    from chat.core.selectors import run_identity_live

    run = _run(conversation, status=RunStatus.RUNNING)
    identity = RunIdentity(conversation.pk, run.pk, conversation.owner_id)
    assert run_identity_live(identity)
    conversation.owner.is_active = False
    conversation.owner.save()
    assert not run_identity_live(identity)


# --- attempts: who may take a running run over ---------------------------------------


def _running(conversation, task_id="t1", age=0):
    run = _run(conversation)
    run_claim(run_id=run.pk, task_id=task_id, worker="w1:1")
    beat = timezone.now() - timedelta(seconds=age)
    Run.objects.filter(pk=run.pk).update(heartbeat_at=beat)
    return run


def test_a_live_attempt_is_not_taken_over_by_another_message(conversation):
    run = _running(conversation)
    assert run_claim(run_id=run.pk, task_id="t2") is None


def test_a_redelivered_message_takes_over_at_once(conversation):
    run = _running(conversation)
    attempt = run_claim(run_id=run.pk, task_id="t1", worker="w2:2")
    assert attempt is not None and attempt.number == 2 and attempt.worker == "w2:2"
    first = RunAttempt.objects.get(run=run, number=1)
    assert first.outcome == RunAttempt.Outcome.LOST and first.ended_at


def test_a_silent_attempt_is_taken_over_by_any_message(conversation, settings):
    settings.AGENT_HEARTBEAT_TIMEOUT = 30
    run = _running(conversation, age=31)
    assert run_claim(run_id=run.pk, task_id="t2").number == 2


@pytest.mark.django_db(transaction=True)
def test_heartbeat_of_a_replaced_attempt_stops_counting(conversation):
    run = _running(conversation, age=3600)
    with heartbeat(run_id=run.pk, attempt=2, interval=0.01):
        time.sleep(0.05)
    run.refresh_from_db()
    assert timezone.now() - run.heartbeat_at > timedelta(minutes=59)


@pytest.fixture
def enqueued(monkeypatch, settings, django_capture_on_commit_callbacks):
    settings.AGENT_RUNNER = "celery"
    sent = []
    monkeypatch.setattr("chat.runs.dispatch.run_enqueue", lambda *, run_id: sent.append(run_id))
    return sent


def test_reaper_queues_a_dead_workers_run_again_with_celery(
    conversation, settings, enqueued, django_capture_on_commit_callbacks
):
    settings.AGENT_HEARTBEAT_TIMEOUT = 30
    run = _running(conversation, age=31)
    with django_capture_on_commit_callbacks(execute=True):
        reaped = run_reap_stale()
    assert (reaped.requeued, reaped.failed) == ([run.pk], [])
    assert enqueued == [run.pk]
    run.refresh_from_db()
    assert (run.status, run.worker, run.attempts) == (RunStatus.QUEUED, "", 1)
    assert timezone.now() - run.heartbeat_at < timedelta(seconds=5)  # queued since now
    assert RunAttempt.objects.get(run=run).outcome == RunAttempt.Outcome.LOST
    assert not Event.objects.filter(name="error").exists()  # the user sees it continue
    assert run_reap_stale().requeued == []  # not again while it waits in the queue


def test_reaper_fails_a_run_whose_attempts_are_used_up(conversation, settings, enqueued):
    settings.AGENT_HEARTBEAT_TIMEOUT, settings.AGENT_MAX_ATTEMPTS = 30, 1
    run = _running(conversation, age=31)
    assert run_reap_stale().failed == [run.pk]
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED and run.error.startswith("worker_lost")
    assert enqueued == []


def test_reap_runs_command(conversation, settings):
    from io import StringIO

    from django.core.management import call_command

    settings.AGENT_HEARTBEAT_TIMEOUT = 30
    run = _running(conversation, age=31)
    out = StringIO()
    call_command("reap_runs", stdout=out)
    assert out.getvalue().strip() == (
        f"0 run(s) queued again: []; 0 handed off again: []; 1 failed: [{run.pk}]; "
        "0 overdue wait(s) ended"
    )


# -- lost hand-offs: queued, committed, never taken --------------------------------------


def _queued(conversation, *, created: float, dispatched: float | None) -> Run:
    now = timezone.now()
    run = _run(conversation)
    Run.objects.filter(pk=run.pk).update(
        created_at=now - timedelta(seconds=created),
        dispatched_at=None if dispatched is None else now - timedelta(seconds=dispatched),
    )
    run.refresh_from_db()
    return run


def test_a_run_whose_hand_off_was_lost_is_handed_off_again(
    conversation, settings, enqueued, django_capture_on_commit_callbacks
):
    """The web process died after the commit, before sending the run (no dispatched_at),
    or the broker lost the message: seconds later the reaper sends it again."""
    settings.AGENT_HANDOFF_TIMEOUT = 3
    # (three chats: one conversation runs one turn at a time, a later one waits unsent)
    chats = [conversation_create(owner=conversation.owner, title=t, agent="echo") for t in "ab"]
    never_sent = _queued(conversation, created=4, dispatched=None)
    lost = _queued(chats[0], created=5, dispatched=4)
    fresh = _queued(chats[1], created=1, dispatched=1)
    with django_capture_on_commit_callbacks(execute=True):
        reaped = run_reap_stale()
    assert sorted(reaped.redispatched) == sorted([never_sent.pk, lost.pk])
    assert sorted(enqueued) == sorted([never_sent.pk, lost.pk])
    assert reaped.failed == [] and fresh.pk not in enqueued
    lost.refresh_from_db()
    assert lost.status == RunStatus.QUEUED
    assert timezone.now() - lost.dispatched_at < timedelta(seconds=2)
    assert not Event.objects.filter(name="error").exists()  # nothing to see: it just runs
    assert run_reap_stale().redispatched == []  # not again at once


def test_a_run_waiting_in_a_long_queue_is_handed_off_again_ever_more_rarely(
    conversation, settings, enqueued
):
    settings.AGENT_HANDOFF_TIMEOUT, settings.AGENT_QUEUE_TIMEOUT = 3, 600
    # Handed off again 40 s after it was created: the next one waits 40 s more.
    waiting = _queued(conversation, created=60, dispatched=20)
    assert run_reap_stale().redispatched == []
    Run.objects.filter(pk=waiting.pk).update(dispatched_at=timezone.now() - timedelta(seconds=31))
    assert run_reap_stale().redispatched == [waiting.pk]


def test_two_reapers_hand_a_run_off_once(
    conversation, settings, enqueued, django_capture_on_commit_callbacks
):
    from chat.runs.heartbeat import _redispatch

    settings.AGENT_HANDOFF_TIMEOUT = 3
    run = _queued(conversation, created=10, dispatched=9)
    now = timezone.now()
    with django_capture_on_commit_callbacks(execute=True):
        assert _redispatch(run, now) is True
        assert _redispatch(run, now) is False  # the other reaper saw the same stale row
    assert enqueued == [run.pk]


def test_a_queued_run_nobody_took_in_time_fails_with_its_own_code(conversation, settings):
    settings.AGENT_QUEUE_TIMEOUT = 60
    run = _queued(conversation, created=61, dispatched=2)
    assert run_reap_stale().failed == [run.pk]
    run.refresh_from_db()
    assert run.error.startswith("queue_timeout")
    error = Event.objects.get(name="error").data
    assert error["code"] == "queue_timeout" and "Retry" in error["message"]


@pytest.mark.django_db(transaction=True)
def test_the_heartbeat_survives_a_failing_database_call(conversation, monkeypatch):
    from django.db import OperationalError
    from django.db.models import QuerySet

    run = _run(conversation)
    run_claim(run_id=run.pk)
    calls = []
    original = QuerySet.update

    def flaky(self, **kwargs):
        calls.append(kwargs)
        if len(calls) == 1:
            raise OperationalError("server closed the connection unexpectedly")
        return original(self, **kwargs)

    monkeypatch.setattr(QuerySet, "update", flaky)
    with heartbeat(run_id=run.pk, attempt=1, interval=0.02):
        wait_for(lambda: len(calls) >= 3, "beats after the failed one")  # it kept beating


def _dead_pid() -> int:
    import subprocess

    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_process_gone_tells_a_dead_process_on_this_machine():
    import os
    import socket

    from chat.runs.heartbeat import process_gone

    host = socket.gethostname()
    assert process_gone(f"runs0@{host}:{_dead_pid()}")
    assert process_gone(f"{host}:{_dead_pid()}")
    assert not process_gone(f"runs0@{host}:{os.getpid()}")
    assert not process_gone(f"runs0@elsewhere:{_dead_pid()}")  # can't tell: heartbeat decides
    assert not process_gone("external") and not process_gone("")


def test_a_run_whose_process_vanished_is_resumed_without_waiting_for_the_heartbeat(
    conversation, settings, enqueued, django_capture_on_commit_callbacks
):
    import socket

    settings.AGENT_HEARTBEAT_TIMEOUT = 30
    run = _run(conversation)
    run_claim(run_id=run.pk, task_id="t1", worker=f"runs0@{socket.gethostname()}:{_dead_pid()}")
    # fresh heartbeat, its process unknown here (another chat: one turn per conversation)
    other = conversation_create(owner=conversation.owner, title="Other", agent="echo")
    alive = _running(other, task_id="t2")
    with django_capture_on_commit_callbacks(execute=True):
        reaped = run_reap_stale()
    assert reaped.requeued == [run.pk] and enqueued == [run.pk]
    alive.refresh_from_db()
    assert alive.status == RunStatus.RUNNING


def test_a_running_run_that_never_beat_is_left_alone_until_a_minute_after_it_started(
    conversation, settings
):
    """(A runtime's run row made by hand has no heartbeat and no start: not dead.)"""
    unstarted = _run(conversation, status=RunStatus.RUNNING)
    recent = _run(conversation, status=RunStatus.RUNNING, started_at=timezone.now())
    old = _run(
        conversation,
        status=RunStatus.RUNNING,
        started_at=timezone.now() - timedelta(seconds=61),
    )
    assert run_reap_stale().failed == [old.pk]
    assert {r.status for r in Run.objects.filter(pk__in=[unstarted.pk, recent.pk])} == {
        RunStatus.RUNNING
    }
