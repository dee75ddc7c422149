"""Durable turns (issue: runs on Celery): how long a user waits when the worker process
running their turn is SIGKILLed.

`resume_after_kill_seconds`: a real server in production shape (uvicorn + one Celery
worker + beat, PostgreSQL + Redis) runs the slow scripted turn (scripts/slow: a tool
step, then a reply streamed in 8-character pieces every 50 ms); right after the reply's
first piece reaches an SSE client, the Celery pool process running the turn is
SIGKILLed; the figure is the time until the next new piece of the reply reaches the
client (Celery redelivers the message, a new pool process takes the run over, rebuilds
the context from the stored messages and asks the model again; the one piece already
shown is held back, not repeated). Median of 3. Needs DATABASE_URL (PostgreSQL) and
REDIS_URL; without them the figure is reported as not measured.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from bench.bench_agent import _conversation, _post, _stream
from tests.support.liveserver import LiveServer

SAMPLES = 3


def _services() -> bool:
    database = os.environ.get("DATABASE_URL", "")
    return database.startswith(("postgres://", "postgresql://")) and bool(
        os.environ.get("REDIS_URL")
    )


def _kill_and_resume(client: httpx.Client, server: LiveServer, conversation_id: int) -> float:
    stream = _stream(client, server, conversation_id)
    _post(client, server, conversation_id, "go")
    while True:  # the reply's first piece (model call 2)
        _at, name, data = stream.events.get(timeout=30)
        if name == "text_delta" and data.get("iteration") == 2:
            break
    run_id = data["run_id"]
    if server.kill_run_process(run_id) is None:
        raise RuntimeError(f"run {run_id}: no pool process to kill")
    killed = time.perf_counter()
    resumed: float | None = None
    while True:
        at, name, data = stream.events.get(timeout=30)
        if name == "text_delta" and data.get("run_id") == run_id and resumed is None:
            resumed = at - killed
        if name == "run_finished" and data.get("run_id") == run_id:
            if data.get("stop_reason") != "completed" or resumed is None:
                raise RuntimeError(f"run {run_id} ended {data}")
            return resumed


def run() -> dict[str, dict[str, Any]]:
    what = {"unit": "s", "target": 2.0, "note": "kill the pool process mid-reply -> it continues"}
    if not _services():
        return {
            "resume_after_kill_seconds": {"value": None, **what, "note": "needs PostgreSQL + Redis"}
        }
    samples = []
    with (
        tempfile.TemporaryDirectory() as tmp,
        LiveServer(
            Path(tmp),
            database_url=os.environ["DATABASE_URL"],
            redis_url=os.environ["REDIS_URL"],
            run_workers=1,
            env={"LOG_LEVEL": "WARNING", "AGENT_WORKER_CONCURRENCY": "2"},
        ) as server,
    ):
        server.shell(
            "from django.contrib.auth.models import User\nUser.objects.create_user('bench')"
        )
        token = server.manage("create_api_token", "bench").strip().split()[-1]
        with httpx.Client(headers={"Authorization": f"Bearer {token}"}, timeout=30) as client:
            for _ in range(SAMPLES):
                conversation_id = _conversation(client, server, "slow")
                samples.append(_kill_and_resume(client, server, conversation_id))
    return {"resume_after_kill_seconds": {"value": round(statistics.median(samples), 3), **what}}


if __name__ == "__main__":
    print(run())
