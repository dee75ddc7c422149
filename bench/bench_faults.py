"""Fault benchmark (issue 17): the load run under the whole fault matrix.

10 users answer for 30 s in production shape (2 web workers, 1 Celery worker x
AGENT_WORKER_CONCURRENCY, beat, PostgreSQL, a Redis of the run's own) while a web worker
and a Celery pool process are SIGKILLed, Redis is restarted empty and every PostgreSQL
connection is terminated, at random moments (bench/faults.py). Reports

- `faults_survived`: the share of injected faults after which every user still got every
  next turn (target 1.0);
- `fault_worst_recovery_seconds`: the longest time from a fault to the next turn of the
  users it affected (target <= 5 s). It includes an ordinary turn's latency, so the run
  is light, like `load_*_ms`'s: at 200 users (`make load`) a round waits ~15 s in the
  queue of a saturated 2-core machine whatever happens, and at 40 still 3-7 s; that, not
  the fault, would be measured.

Needs DATABASE_URL (PostgreSQL), REDIS_URL and redis-server; without them the figures
are reported as not measured.
"""

from __future__ import annotations

import os
from typing import Any

from bench.load import parse_args, run_load
from tests.support.redis_server import redis_available


def _missing() -> str | None:
    if not os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")):
        return "needs DATABASE_URL=postgres://…"
    if not os.environ.get("REDIS_URL"):
        return "needs REDIS_URL"
    if not redis_available():
        return "needs redis-server"
    return None


def run() -> dict[str, dict[str, Any]]:
    missing = _missing()
    if missing:
        note = f"not measured: {missing}"
        return {
            "faults_survived": {"value": None, "unit": "x", "target": 1.0, "note": note},
            "fault_worst_recovery_seconds": {"value": None, "unit": "s", "target": 5, "note": note},
        }
    argv = ["--users", "10", "--duration", "30", "--workers", "2", "--run-workers", "1"]
    report = run_load(parse_args([*argv, "--faults"]))
    kinds = ", ".join(
        f"{f['kind']} {f['recovery_s'] if f['recovery_s'] is not None else '-'} s"
        for f in report["faults"]
    )
    if report["problems"]:
        raise RuntimeError(f"the fault run lost turns or data: {report['problems'][:5]}")
    note = f"10 users, seed {report['seed']}: {kinds}"
    return {
        "faults_survived": {
            "value": report["faults_survived"],
            "unit": "x",
            "target": 1.0,
            "higher_is_better": True,
            "note": note,
        },
        "fault_worst_recovery_seconds": {
            "value": report["worst_recovery_s"],
            "unit": "s",
            "target": 5,
            "note": note,
        },
    }
