"""The load script's small mode: 20 users for 10 s against PostgreSQL + Redis, runs on
Celery; half-way one web worker is killed, and the Celery pool process running a slow
turn is killed mid-turn. Fails on any lost or duplicated answer (issue 8) and on an
interrupted turn that did not finish."""

from __future__ import annotations

import os

import pytest

from bench.load import parse_args, run_load

pytestmark = pytest.mark.load


def _services() -> str | None:
    database = os.environ.get("DATABASE_URL", "")
    if not database.startswith(("postgres://", "postgresql://")):
        return "DATABASE_URL does not point at PostgreSQL"
    if not os.environ.get("REDIS_URL"):
        return "REDIS_URL is not set"
    return None


def test_small_load_loses_nothing():
    missing = _services()
    if missing:
        if os.environ.get("REQUIRE_SERVICES"):
            pytest.fail(f"REQUIRE_SERVICES is set but {missing}")
        pytest.skip(f"needs PostgreSQL and Redis: {missing}")
    args = parse_args(
        ["--users", "20", "--duration", "10", "--workers", "2", "--run-workers", "1",
         "--kill-worker", "--kill-run-worker"]
    )  # fmt: skip
    report = run_load(args)
    assert report["problems"] == []
    assert report["answers"] >= 20, report
    assert report["killed_worker"] is not None
    assert report["status_5xx"] == 0
    mid_turn = report["killed_mid_turn"]
    assert mid_turn["pid"] is not None and mid_turn["stop_reason"] == "completed"
    assert mid_turn["run_id"] in report["interrupted_runs"]
