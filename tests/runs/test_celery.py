"""The Celery app, its tasks and AGENT_RUNNER=celery dispatch (no broker needed here;
tests/chat/test_celery_worker.py runs real worker processes)."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta
from io import StringIO

import pytest
from django.contrib.sessions.backends.db import SessionStore
from django.contrib.sessions.models import Session
from django.core.management import call_command
from django.utils import timezone

from chat import celery_app
from chat.models import Event, Run, RunStatus
from chat.runs.tasks import events_prune, run_execute_task, sessions_clear
from chat.settings import _next_redis_db
from chat.usecases import message_post_user

pytestmark = pytest.mark.django_db


def test_the_broker_is_redis_in_the_next_database():
    assert _next_redis_db("redis://127.0.0.1:6379/6") == "redis://127.0.0.1:6379/7"
    assert _next_redis_db("redis://:pw@cache:6380") == "redis://:pw@cache:6380/1"
    assert _next_redis_db("rediss://cache/15") == "rediss://cache/0"


def test_runs_are_acknowledged_late_and_redelivered_when_a_worker_dies():
    conf = celery_app.conf
    assert conf.task_acks_late and conf.task_reject_on_worker_lost
    assert conf.worker_prefetch_multiplier == 1
    assert conf.task_soft_time_limit < conf.task_time_limit
    assert conf.broker_transport_options["visibility_timeout"] > conf.task_time_limit
    celery_app.loader.import_default_modules()
    scheduled = {entry["task"] for entry in conf.beat_schedule.values()}
    assert scheduled <= set(celery_app.tasks)
    assert "chat.run_execute" in celery_app.tasks


def test_agent_runner_worker_is_refused_with_the_replacement_named():
    env = {**os.environ, "AGENT_RUNNER": "worker", "DJANGO_SETTINGS_MODULE": "chat.settings"}
    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode != 0 and "replaced by AGENT_RUNNER=celery" in result.stderr


@pytest.fixture
def celery_runner(settings, monkeypatch):
    settings.AGENT_RUNNER = "celery"
    sent = []

    def apply_async(args, queue, **options):
        sent.append((args, queue))

    monkeypatch.setattr(run_execute_task, "apply_async", apply_async)
    return sent


def test_a_message_sends_its_run_to_the_queue_after_commit(
    conversation, celery_runner, settings, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        message_post_user(conversation=conversation, content="hi")
    run = conversation.runs.get()
    assert celery_runner == [((run.pk,), settings.CELERY_TASK_DEFAULT_QUEUE)]
    assert run.status == RunStatus.QUEUED


def test_an_unreachable_broker_leaves_the_run_queued_for_the_reaper(
    conversation, settings, monkeypatch, django_capture_on_commit_callbacks
):
    """Redis restarting: the run is not failed at once; the reaper sends it again once
    the broker is back (and fails it visibly only after AGENT_QUEUE_TIMEOUT)."""
    settings.AGENT_RUNNER, settings.AGENT_HANDOFF_TIMEOUT = "celery", 3
    sent = []

    def down(**kwargs):
        raise ConnectionError("Error 111 connecting to 127.0.0.1:6379")

    monkeypatch.setattr(run_execute_task, "apply_async", down)
    with django_capture_on_commit_callbacks(execute=True):
        message_post_user(conversation=conversation, content="hi")
    run = conversation.runs.get()
    assert run.status == RunStatus.QUEUED and run.dispatched_at is not None
    assert not Event.objects.filter(name="error").exists()

    monkeypatch.setattr(run_execute_task, "apply_async", lambda **kw: sent.append(kw["args"]))
    Run.objects.filter(pk=run.pk).update(dispatched_at=timezone.now() - timedelta(seconds=4))
    with django_capture_on_commit_callbacks(execute=True):
        call_command("reap_runs", stdout=StringIO())
    assert sent == [(run.pk,)]


def test_the_task_executes_the_run_and_records_the_attempt(conversation):
    from chat.models import Message, Role

    trigger = Message.objects.create(conversation=conversation, seq=1, role=Role.USER, content="x")
    run = Run.objects.create(conversation=conversation, trigger_message=trigger)
    run_execute_task.apply(args=(run.pk,), task_id="message-1")
    run.refresh_from_db()
    assert (run.status, run.attempts) == (RunStatus.FINISHED, 1)
    attempt = run.attempt_log.get()
    assert attempt.task_id == "message-1" and attempt.worker.endswith(f":{os.getpid()}")
    assert attempt.outcome == "finished" and attempt.ended_at


def _event(conversation, name, age_seconds):
    event = Event.objects.create(conversation=conversation, name=name, data={})
    when = timezone.now() - timedelta(seconds=age_seconds)
    Event.objects.filter(pk=event.pk).update(created_at=when)
    return event.pk


def test_old_text_deltas_are_pruned_and_nothing_else(conversation, settings):
    settings.EVENT_DELTA_MAX_AGE = 3600
    old = [_event(conversation, "text_delta", 7200) for _ in range(3)]
    old.append(_event(conversation, "tool_progress", 7200))  # a finished call's progress
    kept = [
        _event(conversation, "text_delta", 60),
        _event(conversation, "tool_progress", 60),
        _event(conversation, "message_done", 7200),
        _event(conversation, "run_finished", 7200),
    ]
    assert events_prune() == 4
    remaining = set(Event.objects.values_list("pk", flat=True))
    assert remaining == set(kept) and not remaining & set(old)


def test_prune_events_command(conversation):
    _event(conversation, "text_delta", 120)
    out = StringIO()
    call_command("prune_events", "--older-than", "60", stdout=out)
    assert out.getvalue().strip() == "1 text_delta and tool_progress event(s) deleted"
    assert not Event.objects.exists()


def test_expired_sessions_are_cleared():
    expired, live = SessionStore(), SessionStore()
    expired.create()
    live.create()
    Session.objects.filter(pk=expired.session_key).update(
        expire_date=timezone.now() - timedelta(days=1)
    )
    sessions_clear()
    assert list(Session.objects.values_list("pk", flat=True)) == [live.session_key]
