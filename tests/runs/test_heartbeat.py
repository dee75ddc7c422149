from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from chat.core.models import Event, Run, RunStatus
from chat.runs.heartbeat import heartbeat, run_claim, run_reap_stale

pytestmark = pytest.mark.django_db


def _run(conversation, **fields) -> Run:
    return Run.objects.create(conversation=conversation, **fields)


def test_claim_is_exclusive(conversation):
    run = _run(conversation)
    assert run_claim(run_id=run.pk) is True
    assert run_claim(run_id=run.pk) is False
    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING and run.worker and run.heartbeat_at


def test_dead_worker_run_is_failed_with_events(conversation, settings):
    settings.AGENT_HEARTBEAT_TIMEOUT = 30
    old = timezone.now() - timedelta(seconds=31)
    dead = _run(conversation, status=RunStatus.RUNNING, started_at=old, heartbeat_at=old)
    alive = _run(conversation, status=RunStatus.RUNNING, heartbeat_at=timezone.now())
    assert run_reap_stale() == [dead.pk]
    dead.refresh_from_db()
    alive.refresh_from_db()
    assert dead.status == RunStatus.FAILED and dead.error.startswith("worker_lost")
    assert alive.status == RunStatus.RUNNING
    names = list(Event.objects.filter(conversation=conversation).values_list("name", flat=True))
    assert names == ["error", "run_finished"]
    assert run_reap_stale() == []  # idempotent


def test_queued_run_nobody_took_is_failed(conversation, settings):
    settings.AGENT_QUEUE_TIMEOUT = 60
    stuck = _run(conversation)
    Run.objects.filter(pk=stuck.pk).update(created_at=timezone.now() - timedelta(seconds=61))
    fresh = _run(conversation)
    assert run_reap_stale(conversation_id=conversation.pk) == [stuck.pk]
    fresh.refresh_from_db()
    assert fresh.status == RunStatus.QUEUED


@pytest.mark.django_db(transaction=True)
def test_heartbeat_refreshes_while_running(conversation):
    run = _run(conversation)
    run_claim(run_id=run.pk)
    Run.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    with heartbeat(run_id=run.pk, interval=0.02):
        time.sleep(0.15)
    run.refresh_from_db()
    assert timezone.now() - run.heartbeat_at < timedelta(seconds=5)


def test_new_message_reaps_the_conversations_dead_run(client_in, conversation, settings):
    old = timezone.now() - timedelta(hours=1)
    dead = _run(conversation, status=RunStatus.RUNNING, started_at=old, heartbeat_at=old)
    client_in.post(f"/conversations/{conversation.pk}/messages", {"content": "hi"})
    dead.refresh_from_db()
    assert dead.status == RunStatus.FAILED


def test_external_runs_expire_with_their_tokens(conversation, settings):
    from chat.core.identity import RunIdentity
    from chat.core.models import EXTERNAL_WORKER
    from chat.core.selectors import run_identity_live

    settings.RUN_TOKEN_MAX_AGE_SECONDS = 3600
    fresh = _run(conversation, status=RunStatus.RUNNING, worker=EXTERNAL_WORKER)
    old = _run(conversation, status=RunStatus.RUNNING, worker=EXTERNAL_WORKER)
    Run.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(hours=2))
    assert run_reap_stale() == [old.pk]  # an external run has no heartbeat: only age counts
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
