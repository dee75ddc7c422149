"""The product's Prometheus metrics (prometheus-client) and what a scrape reads.

Every process records into these objects. With `PROMETHEUS_MULTIPROC_DIR` set (`make
serve` sets it and empties it on start) each process writes its values to memory-mapped
files there and a scrape sums them over every web worker, Celery pool process, the
session host and the supervisor (`prometheus_client.multiprocess`); without it (`make
run`, tests) they live in this process's default registry.

Labels are bounded: views are URL names, agents and wait kinds are fixed sets, MCP
servers are admin-registered names, models come from settings.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from django.db import transaction
from prometheus_client import REGISTRY, Counter, Gauge, Histogram, generate_latest
from prometheus_client.metrics_core import Metric
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead
from prometheus_client.registry import Collector, CollectorRegistry

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def multiproc_dir() -> str:
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR", "")


if multiproc_dir():  # prometheus-client writes here from the first metric on
    Path(multiproc_dir()).mkdir(parents=True, exist_ok=True)

_SECONDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
_TURN_SECONDS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0)
_LONG_SECONDS = (*_TURN_SECONDS, 1800.0, 3600.0, 4 * 3600.0, 24 * 3600.0)

HTTP_REQUEST_SECONDS = Histogram(
    "chat_http_request_duration_seconds",
    "Django requests by view (URL name), method and status: time to the response.",
    ["view", "method", "status"],
    buckets=_SECONDS,
)
RUNS = Counter(
    "chat_runs_total",
    "Agent runs that ended, by agent and outcome (the stop reason).",
    ["agent", "outcome"],
)
RUN_SECONDS = Histogram(
    "chat_run_duration_seconds",
    "Agent runs that ended: from the request that asked for the turn to its end "
    "(a person's answer to a waiting run included).",
    ["agent"],
    buckets=_LONG_SECONDS,
)
RUN_ATTEMPT_SECONDS = Histogram(
    "chat_run_attempt_duration_seconds",
    "One attempt of a run on a worker, by agent and how it ended "
    "(finished, failed, cancelled, suspended).",
    ["agent", "outcome"],
    buckets=_TURN_SECONDS,
)
RUN_QUEUE_WAIT_SECONDS = Histogram(
    "chat_run_queue_wait_seconds",
    "A queued run (new, resumed or handed back) until a worker took it.",
    ["agent"],
    buckets=_SECONDS,
)
RUN_ATTEMPTS = Counter(
    "chat_run_attempts_total",
    "Takes of a run by a worker: first, resumed (after a wait) or takeover (its previous "
    "worker died).",
    ["agent", "reason"],
)
RUN_SUSPENSIONS = Counter(
    "chat_run_suspensions_total", "Runs suspended to wait for a person or the MCP host.", ["agent"]
)
ANSWERS = Counter(
    "chat_answers_total",
    "What people did with questions (cards, forms, asks, MCP elicitations): answered, "
    "skipped, declined, cancelled, expired.",
    ["kind", "outcome"],
)
SELF_CHECK = Counter(
    "chat_self_check_total",
    "Self-check of model text: `repair` asked the model to repair it, `gave_up` showed it "
    "as it was after the last attempt.",
    ["agent", "result"],
)
STREAMS_OPEN = Gauge(
    "chat_event_streams_open",
    "Server-Sent Event streams open now (summed over live processes).",
    multiprocess_mode="livesum",
)
STREAMS_REFUSED = Counter(
    "chat_event_streams_refused_total",
    "Event streams refused: `overloaded` (SSE_MAX_STREAMS), `user` (per-user limit).",
    ["reason"],
)
MCP_CALLS = Counter(
    "chat_mcp_calls_total",
    "Calls of admin-registered MCP servers' tools by server and outcome (ok, error, "
    "waiting: suspended on a person or the session host).",
    ["server", "outcome"],
)
MCP_CALL_SECONDS = Histogram(
    "chat_mcp_call_duration_seconds",
    "An MCP tool call's time on its worker (a person's time is not in it).",
    ["server"],
    buckets=_SECONDS,
)
MODEL_CALLS = Counter(
    "chat_model_calls_total", "Model calls by model and outcome (ok, error).", ["model", "outcome"]
)
MODEL_CALL_SECONDS = Histogram(
    "chat_model_call_duration_seconds",
    "A model call from request to its last streamed piece.",
    ["model"],
    buckets=_TURN_SECONDS,
)
MODEL_TOKENS = Counter(
    "chat_model_tokens_total",
    "Tokens by model and direction (in: prompt, out: completion); offline agents' are "
    "estimates (see chat_model_tokens_estimated_total).",
    ["model", "direction"],
)
MODEL_TOKENS_ESTIMATED = Counter(
    "chat_model_tokens_estimated_total",
    "Of chat_model_tokens_total, the tokens that were estimated (the backend reported none).",
    ["model", "direction"],
)
TURNS_REFUSED = Counter(
    "chat_turns_refused_total",
    "New turns refused before anything was stored, by code (token_budget_exhausted).",
    ["code"],
)


def on_commit(record: Callable[[], None]) -> None:
    """Record once the caller's transaction commits (at once outside one): a refused,
    rolled-back answer counts nothing."""
    transaction.on_commit(record)


# --- scraping --------------------------------------------------------------------------

_DB_FILE = re.compile(r"^gauge_live\w*_(\d+)\.db$")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def forget_dead_processes(directory: str | None = None) -> list[int]:
    """Drop the live gauges of processes that are gone (SIGKILLed workers never say so):
    every process sharing a multiprocess directory runs on this machine. Counters and
    histograms of dead processes stay: they were counted."""
    directory = directory or multiproc_dir()
    if not directory:
        return []
    dead: set[int] = set()
    for path in Path(directory).glob("gauge_live*.db"):
        match = _DB_FILE.match(path.name)
        if match and not _alive(int(match.group(1))):
            dead.add(int(match.group(1)))
    for pid in dead:
        mark_process_dead(pid, directory)  # type: ignore[no-untyped-call]
    return sorted(dead)


def process_exit() -> None:
    """A process that ends cleanly (a Celery pool process, a web worker) drops its live
    gauges at once."""
    if multiproc_dir():
        mark_process_dead(os.getpid(), multiproc_dir())  # type: ignore[no-untyped-call]


def multiproc_reset(directory: str | None = None, *, keep_pid: int | None = None) -> int:
    """Empty the multiprocess directory (a new start of the set: the old processes' files
    would be summed forever); the files of `keep_pid` (the caller) stay. Returns the
    number of files removed."""
    directory = directory or multiproc_dir()
    if not directory:
        return 0
    removed = 0
    for path in Path(directory).glob("*.db"):
        if keep_pid is not None and path.name.endswith(f"_{keep_pid}.db"):
            continue
        path.unlink(missing_ok=True)
        removed += 1
    return removed


class ScrapeRegistry(Collector):
    """What one scrape reads: every process's values (multiprocess mode) or this one's,
    plus collectors that read the database at scrape time."""

    def __init__(self, extra: Iterable[Collector] = ()) -> None:
        self.extra = list(extra)
        self.multi: CollectorRegistry | None = None
        if multiproc_dir():
            self.multi = CollectorRegistry(auto_describe=False)
            MultiProcessCollector(self.multi)  # type: ignore[no-untyped-call]

    def collect(self) -> Iterator[Metric]:
        if self.multi is not None:
            forget_dead_processes()
            yield from self.multi.collect()
        else:
            yield from REGISTRY.collect()
        for collector in self.extra:
            yield from collector.collect()


def exposition(registry: ScrapeRegistry) -> bytes:
    """The Prometheus text format of one scrape."""
    return generate_latest(registry)
