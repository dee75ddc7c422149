"""Load benchmarks (issue 8): the load script at two sizes, figures for the table.

With PostgreSQL (DATABASE_URL) and Redis (REDIS_URL) the server runs in production shape
(2 web workers + 1 Celery worker with AGENT_WORKER_CONCURRENCY pool processes, + beat);
without them, 1 worker on SQLite with runs in threads (the notes say which). Users answer round after round with no think time (closed loop), so:

- *light* (10 users, 15 s) measures latency: submit and first SSE event, p50/p95/p99;
- *heavy* (100 users, 20 s) saturates the machine and measures throughput:
  `load_answers_per_second` and `submit_throughput_ratio` = answers/s divided by
  /livez requests/s measured right after on the same server, which survives a noisy
  machine. A round is a submit, an agent turn and ~7 streamed events; the ratio's target
  (>= 0.03: a round costs at most ~33 trivial requests) is a regression guard.

Both runs fail the benchmark if anything was lost or duplicated.
"""

from __future__ import annotations

import os
from typing import Any

from bench.load import parse_args, run_load


def _shape() -> list[str]:
    database = os.environ.get("DATABASE_URL", "")
    if database.startswith(("postgres://", "postgresql://")) and os.environ.get("REDIS_URL"):
        return ["--workers", "2", "--run-workers", "1"]
    return ["--workers", "1", "--run-workers", "0"]


def _load(users: int, seconds: int) -> dict[str, Any]:
    report = run_load(parse_args(["--users", str(users), "--duration", str(seconds), *_shape()]))
    if report["problems"]:
        raise RuntimeError(f"load run lost or duplicated data: {report['problems'][:5]}")
    return report


def _note(report: dict[str, Any]) -> str:
    if not report["run_workers"]:
        return f"{report['users']} users, {report['workers']} web worker, SQLite"
    concurrency = os.environ.get("AGENT_WORKER_CONCURRENCY", "8")
    return (
        f"{report['users']} users, {report['workers']} web + {report['run_workers']} Celery "
        f"worker x {concurrency}, PostgreSQL + Redis"
    )


def run() -> dict[str, dict[str, Any]]:
    light, heavy = _load(10, 15), _load(100, 20)
    results: dict[str, dict[str, Any]] = {}
    targets = {"submit_ms": {"p95": 500}, "first_event_ms": {"p95": 1000}}
    for metric in ("submit_ms", "first_event_ms"):
        for q in ("p50", "p95", "p99"):
            results[f"load_{metric[:-3]}_{q}_ms"] = {
                "value": light[metric][q],
                "unit": "ms",
                "target": targets[metric].get(q),
                "note": _note(light),
            }
    results["load_answers_per_second"] = {
        "value": heavy["answers_per_s"],
        "unit": "ans/s",
        "target": None,
        "note": _note(heavy),
    }
    results["submit_throughput_ratio"] = {
        "value": heavy["submit_throughput_ratio"],
        "unit": "x",
        "target": 0.03,
        "higher_is_better": True,
        "note": _note(heavy),
    }
    return results
