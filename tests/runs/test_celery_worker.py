"""Durable turns on real Celery workers (issue: "turns that survive a worker's death").

A scripted two-step turn (chat/agent/scripts/slow.en.yaml: a tool step, then a reply
streamed over ~1.3 s) runs on a real `celery -A chat worker` process:

1. the whole worker (master + pool process) is SIGKILLed while the reply streams, like a
   machine dying; another worker (with beat) is started: the reaper finds the silent run
   and queues it again, and the new worker resumes the turn;
2. on that worker the pool process running the next turn is SIGKILLed: Celery hands the
   message back at once (task_reject_on_worker_lost) and a new pool process resumes it.

Both turns must end with `run_finished` / `completed`, one run_started each, the tool
step not redone, no message stored twice and the streamed text never repeated. Needs
PostgreSQL (DATABASE_URL) and Redis (REDIS_URL); skips with the reason otherwise, and
fails instead under REQUIRE_SERVICES=1.
"""

from __future__ import annotations

import os
import time
import uuid

import pytest
from django.db import connection

from chat.models import Conversation, Event, Run, RunAttempt
from chat.usecases import message_post_user
from tests.support.liveserver import CeleryWorker, broker_cleanup

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.django_db(transaction=True)]


def _services() -> None:
    missing = None
    if not os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")):
        missing = "DATABASE_URL does not point at PostgreSQL"
    elif not os.environ.get("REDIS_URL"):
        missing = "REDIS_URL is not set"
    if missing:
        if os.environ.get("REQUIRE_SERVICES") == "1":
            pytest.fail(f"REQUIRE_SERVICES=1 but {missing}")
        pytest.skip(f"needs PostgreSQL and Redis for real Celery workers: {missing}")


@pytest.fixture
def celery_env(settings, tmp_path):
    _services()
    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    queue = f"test-durable-{uuid.uuid4().hex[:8]}"
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{auth}@{db['HOST']}:{db['PORT'] or 5432}/{db['NAME']}",
        "DJANGO_SETTINGS_MODULE": "chat.settings",
        "AGENT_RUNNER": "celery",
        "CELERY_QUEUE": queue,
        # A silent run is found within ~2 s (the defaults are 30 s and 10 s).
        "AGENT_HEARTBEAT_TIMEOUT": "1.5",
        "AGENT_REAP_INTERVAL": "0.5",
        "AGENT_TURN_SOFT_TIME_LIMIT": "20",
        "AGENT_TURN_TIME_LIMIT": "25",
        "CELERY_VISIBILITY_TIMEOUT": "30",
        "DB_POOL_MAX_SIZE": "4",
        "PYTHONUNBUFFERED": "1",
    }
    settings.AGENT_RUNNER = "celery"
    settings.CELERY_TASK_DEFAULT_QUEUE = queue
    workers: list[CeleryWorker] = []

    def start(name: str, *, beat: bool = False, **extra: str) -> CeleryWorker:
        worker = CeleryWorker(tmp_path, {**env, **extra}, name, beat=beat)
        workers.append(worker)
        worker.wait_ready()
        return worker

    start.queue = queue  # type: ignore[attr-defined]
    yield start
    for worker in workers:
        worker.stop()
    broker_cleanup(env)


def _wait(predicate, timeout: float, what: str, workers=()):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            logs = "\n".join(w.text()[-3000:] for w in workers)
            raise AssertionError(f"timed out waiting for {what}\n{logs}")
        time.sleep(0.05)


def _streaming_reply(run: Run) -> bool:
    """The second model call (the reply) has streamed some text."""
    return Event.objects.filter(
        conversation_id=run.conversation_id,
        name="text_delta",
        data__run_id=run.pk,
        data__iteration=2,
    ).exists()


def _finished(run: Run):
    return Event.objects.filter(
        conversation_id=run.conversation_id, name="run_finished", data__run_id=run.pk
    ).first()


def _check_turn(run: Run) -> None:
    """Exactly what an uninterrupted turn leaves, whatever the kill interrupted."""
    run.refresh_from_db()
    finished = _finished(run)
    assert finished is not None and finished.data["stop_reason"] == "completed"
    assert (run.status, run.stop_reason, run.attempts) == ("finished", "completed", 2)
    messages = list(run.messages.order_by("seq").values_list("role", "content"))
    assert [role for role, _ in messages] == ["assistant", "tool", "assistant"]
    assert messages[0][1] == "Let me check the form first."
    events = Event.objects.filter(conversation_id=run.conversation_id, data__run_id=run.pk)
    assert events.filter(name="run_started").count() == 1
    assert events.filter(name="tool_call").count() == 1  # the tool step was not redone
    assert events.filter(name="error").count() == 0
    streamed = ""
    for data in events.filter(name="text_delta", data__iteration=2).values_list("data", flat=True):
        streamed = data["text"] if data.get("replace") else streamed + data["text"]
    assert streamed == messages[2][1]  # shown once, never repeated


def test_a_turn_survives_its_workers_death(celery_env, user):
    conversation = Conversation.objects.create(
        owner=user, agent="scripted", state={"script": "slow"}
    )
    first = celery_env("first")
    message_post_user(conversation=conversation, content="one")
    run = conversation.runs.get()
    _wait(lambda: _streaming_reply(run), 15, "the reply to stream", [first])
    first.kill()  # the whole worker machine dies mid-turn
    killed_at = time.monotonic()
    second = celery_env("second", beat=True)
    _wait(lambda: _finished(run) is not None, 20, "the resumed turn", [second])
    resumed_after = time.monotonic() - killed_at
    _check_turn(run)
    lost, done = run.attempt_log.order_by("number")
    assert lost.outcome == RunAttempt.Outcome.LOST and lost.worker.startswith("first@")
    assert done.outcome == RunAttempt.Outcome.FINISHED and done.worker.startswith("second@")
    assert resumed_after < 20

    # The pool process running the next turn dies; Celery redelivers its message at once.
    message_post_user(conversation=conversation, content="two")
    run = conversation.runs.order_by("-id").first()
    _wait(lambda: _streaming_reply(run), 15, "the second reply to stream", [second])
    run.refresh_from_db()
    pid = int(run.worker.rpartition(":")[2])
    assert pid in second.pool_pids()
    os.kill(pid, 9)
    _wait(lambda: _finished(run) is not None, 15, "the redelivered turn", [second])
    _check_turn(run)
    lost, done = run.attempt_log.order_by("number")
    assert lost.task_id == done.task_id  # the same message, delivered again
    assert lost.worker != done.worker and done.worker.startswith("second@")


def test_a_worker_outlives_a_redis_restart(celery_env, user, tmp_path):
    """Redis dies mid-turn and comes back empty: the worker reconnects (kombu can make
    it exit while putting back the turn's unacknowledged message; chat/celery.py), the
    turn in flight finishes, and the next run it is sent runs."""
    from celery import Celery

    from tests.support.redis_server import RedisServer, redis_available

    if not redis_available():
        pytest.skip("needs redis-server to restart a Redis of the test's own")
    with RedisServer(tmp_path) as redis:
        worker = celery_env("restarts", CELERY_BROKER_URL=redis.url, REDIS_URL=redis.url)
        sender = Celery(broker=redis.url)
        slow = Conversation.objects.create(owner=user, agent="scripted", state={"script": "slow"})
        message_post_user(conversation=slow, content="one")  # (its hand-off: the shared broker)
        in_flight = slow.runs.get()
        sender.send_task("chat.run_execute", args=(in_flight.pk,), queue=celery_env.queue)
        _wait(lambda: _streaming_reply(in_flight), 15, "the turn to be in flight", [worker])
        redis.restart(down=1.0)
        _wait(lambda: _finished(in_flight) is not None, 15, "the turn in flight", [worker])
        time.sleep(2)  # the worker has met the lost connection by now
        assert worker.proc.poll() is None, worker.text()[-3000:]
        conversation = Conversation.objects.create(owner=user, agent="echo")
        run = Run.objects.create(conversation=conversation)
        sender.send_task("chat.run_execute", args=(run.pk,), queue=celery_env.queue)
        _wait(lambda: _finished(run) is not None, 15, "the run after the restart", [worker])
