"""The load script's small mode: 20 users for 12 s against PostgreSQL + Redis, runs on
Celery, under the whole fault matrix (a web worker and a Celery pool process SIGKILLed,
the run's own Redis restarted empty, every PostgreSQL connection terminated, at random
moments), and the Celery pool process running a slow turn is killed mid-turn. Fails on
any lost or duplicated answer (issue 8), any user without their next turn, any 5xx, and
an interrupted turn that did not finish (issue 17)."""

from __future__ import annotations

import os

import pytest

from bench.load import parse_args, run_load
from tests.support.redis_server import redis_available

pytestmark = pytest.mark.load


def _services() -> str | None:
    database = os.environ.get("DATABASE_URL", "")
    if not database.startswith(("postgres://", "postgresql://")):
        return "DATABASE_URL does not point at PostgreSQL"
    if not os.environ.get("REDIS_URL"):
        return "REDIS_URL is not set"
    if not redis_available():
        return "redis-server is not installed (the fault matrix restarts one of its own)"
    return None


def test_small_load_loses_nothing():
    missing = _services()
    if missing:
        if os.environ.get("REQUIRE_SERVICES"):
            pytest.fail(f"REQUIRE_SERVICES is set but {missing}")
        pytest.skip(f"needs PostgreSQL and Redis: {missing}")
    args = parse_args(
        ["--users", "20", "--duration", "12", "--workers", "2", "--run-workers", "1",
         "--kill-run-worker", "--faults"]
    )  # fmt: skip
    report = run_load(args)
    assert report["problems"] == [], report["faults"]
    assert report["answers"] >= 20, report
    assert sorted(f["kind"] for f in report["faults"]) == ["pg", "redis", "run", "web"]
    assert report["faults_survived"] == 1.0, report["faults"]
    assert report["status_5xx"] == 0
    mid_turn = report["killed_mid_turn"]
    assert mid_turn["pid"] is not None and mid_turn["stop_reason"] == "completed"
    assert mid_turn["run_id"] in report["interrupted_runs"]
