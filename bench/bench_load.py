"""Load benchmarks (issue 8): the load script at bench size, figures for the table.

With PostgreSQL (DATABASE_URL) and Redis (REDIS_URL): 2 web workers + 2 agent-run
workers, 100 users for 20 s. Without them: 1 worker on SQLite, 30 users for 15 s (the
figures say which). `submit_throughput_ratio` is answers/s divided by /livez requests/s
measured right after on the same server, so it survives a noisy machine. A round is a
submit, an agent turn and ~7 streamed events, so its target (>= 0.03: one round costs at
most ~33 trivial requests) is a regression guard; the latencies have no target, because
closed-loop users without think time saturate 2 cores by design (latency ~ users / rate).
"""

from __future__ import annotations

import os
from typing import Any

from bench.load import parse_args, run_load


def _scale() -> list[str]:
    database = os.environ.get("DATABASE_URL", "")
    if database.startswith(("postgres://", "postgresql://")) and os.environ.get("REDIS_URL"):
        return ["--users", "100", "--duration", "20", "--workers", "2", "--run-workers", "2"]
    return ["--users", "30", "--duration", "15", "--workers", "1", "--run-workers", "0"]


def run() -> dict[str, dict[str, Any]]:
    report = run_load(parse_args(_scale()))
    if report["problems"]:
        raise RuntimeError(f"load run lost or duplicated data: {report['problems'][:5]}")
    shape = (
        f"{report['users']} users, {report['workers']} web + {report['run_workers']} run workers"
    )
    results: dict[str, dict[str, Any]] = {
        "load_answers_per_second": {
            "value": report["answers_per_s"],
            "unit": "ans/s",
            "target": None,
            "note": shape,
        },
        "submit_throughput_ratio": {
            "value": report["submit_throughput_ratio"],
            "unit": "x",
            "target": 0.03,
            "higher_is_better": True,
            "note": shape,
        },
    }
    for metric in ("submit_ms", "first_event_ms"):
        for q in ("p50", "p95", "p99"):
            results[f"load_{metric[:-3]}_{q}_ms"] = {
                "value": report[metric][q],
                "unit": "ms",
                "target": None,
                "note": shape,
            }
    return results
