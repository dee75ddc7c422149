"""One person can't hold every run worker (issue 34 item 3), against a real server.

With PostgreSQL (DATABASE_URL) and Redis (REDIS_URL) the server runs in production shape:
2 web workers + 1 Celery worker with 8 pool processes (the default; 24 turns would take them all);
without them, 1 web worker on SQLite with runs in threads. A *flooder* sends 3 messages
into each of 8 conversations of the slow scripted turn (~1.5 s a turn: 24 turns, ~36 s
of one worker's time); meanwhile a *bystander* asks 5 times, one after the other, in his
conversation of instant replies.

- `fairness_bystander_reply_ms`: the bystander's message posted (API) → his reply
  stored (read back through the API), worst of 5, taken while the flood still waits
  (the note gives the same before the flood: what the machine's load alone costs);
- `fairness_flooder_max_running`: the most turns the flooder ever had running at once
  (AGENT_RUNS_PER_PERSON, 3), and every conversation one turn at a time.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from tests.support.liveserver import LiveServer

CONVERSATIONS, MESSAGES, ASKS = 8, 3, 5
CAP = 3
POOL = 8  # the default AGENT_WORKER_CONCURRENCY: without the cap, the flood takes all 8

SETUP = f"""
import json
from django.contrib.auth.models import User
from chat.core.models import Conversation
from chat.core.services import api_token_create
flooder = User.objects.create_user("flooder")
bystander = User.objects.create_user("bystander")
floods = [
    Conversation.objects.create(owner=flooder, agent="scripted", state={{"script": "slow"}}).pk
    for _ in range({CONVERSATIONS})
]
mine = Conversation.objects.create(
    owner=bystander, agent="scripted", state={{"script": "bench_reply"}}
).pk
print(json.dumps({{
    "flooder": api_token_create(user=flooder)[1],
    "bystander": api_token_create(user=bystander)[1],
    "floods": floods,
    "mine": mine,
}}))
"""

STATE = """
import json
from chat.core.models import Run
runs = Run.objects.filter(conversation__owner__username="flooder")
print(json.dumps({
    "running": runs.filter(status="running").count(),
    "waiting": runs.filter(status="queued").count(),
}))
"""

INTERVALS = """
import json
from chat.core.models import Run
runs = Run.objects.filter(conversation__owner__username="flooder")
print(json.dumps([
    [r.conversation_id, r.status, r.started_at.timestamp() if r.started_at else None,
     r.finished_at.timestamp() if r.finished_at else None]
    for r in runs
]))
"""


BYSTANDER = """
from chat.core.models import Run, RunAttempt
for r in Run.objects.filter(conversation__owner__username="bystander").order_by("pk"):
    a = RunAttempt.objects.filter(run=r).first()
    print(r.pk, (r.started_at - r.created_at).total_seconds(),
          (r.finished_at - r.started_at).total_seconds(), a.worker if a else None)
"""


def _wait(probe: Any, what: str, timeout: float = 120) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.05)
    raise RuntimeError(f"timed out waiting for {what}")


def _max_overlap(intervals: list[tuple[float, float]]) -> int:
    edges = sorted([(start, 1) for start, _ in intervals] + [(end, -1) for _, end in intervals])
    most = now = 0
    for _, step in edges:  # an end before a start at the same instant
        now += step
        most = max(most, now)
    return most


def _ask(client: httpx.Client, base: str, conversation: int) -> float:
    url = f"{base}/api/v1/conversations/{conversation}/messages"

    def replies() -> int:
        messages = client.get(url).json()["messages"]
        return sum(1 for m in messages if m["role"] == "assistant")

    before = replies()
    started = time.perf_counter()
    response = client.post(url, json={"role": "user", "content": "Still there?"})
    response.raise_for_status()
    _wait(lambda: replies() > before, "the bystander's reply", timeout=180)
    return (time.perf_counter() - started) * 1000


def _measure(server: LiveServer) -> dict[str, Any]:
    setup = json.loads(server.shell(SETUP))
    base = server.url
    flooder = httpx.Client(headers={"Authorization": f"Bearer {setup['flooder']}"}, timeout=60)
    bystander = httpx.Client(headers={"Authorization": f"Bearer {setup['bystander']}"}, timeout=60)
    _ask(bystander, base, setup["mine"])  # warm-up: the first turn loads code and caches
    quiet = [_ask(bystander, base, setup["mine"]) for _ in range(ASKS)]  # no flood yet
    for conversation in setup["floods"]:
        for n in range(MESSAGES):
            url = f"{base}/api/v1/conversations/{conversation}/messages"
            flooder.post(url, json={"role": "user", "content": f"flood {n}"}).raise_for_status()
    state = lambda: json.loads(server.shell(STATE).strip().splitlines()[-1])  # noqa: E731
    _wait(lambda: state()["running"] >= CAP, "the flood to fill the flooder's slots")
    asks = [_ask(bystander, base, setup["mine"]) for _ in range(ASKS)]
    still_waiting = state()["waiting"]
    _wait(lambda: state() == {"running": 0, "waiting": 0}, "the flood to end", timeout=600)
    rows = json.loads(server.shell(INTERVALS).strip().splitlines()[-1])
    if os.environ.get("FAIRNESS_DEBUG"):  # the bystander's runs: queue wait, turn, worker
        print(server.shell(BYSTANDER))
    spans = [(start, end) for _, status, start, end in rows if status == "finished"]
    if len(spans) != CONVERSATIONS * MESSAGES:
        raise RuntimeError(f"the flood's turns did not all finish: {rows}")
    per_conversation = max(
        _max_overlap([(s, e) for c, _, s, e in rows if c == conversation])
        for conversation in setup["floods"]
    )
    return {
        "worst_ms": round(max(asks), 1),
        "median_ms": round(sorted(asks)[len(asks) // 2], 1),
        "quiet_worst_ms": round(max(quiet), 1),
        "flood_waiting_after": still_waiting,
        "max_running": _max_overlap(spans),
        "per_conversation": per_conversation,
    }


def _shape() -> tuple[dict[str, Any], str]:
    database = os.environ.get("DATABASE_URL", "")
    if database.startswith(("postgres://", "postgresql://")) and os.environ.get("REDIS_URL"):
        kwargs = {"database_url": database, "redis_url": os.environ["REDIS_URL"]}
        return {**kwargs, "workers": 2, "run_workers": 1}, f"2 web + 1 Celery worker x {POOL}"
    return {"workers": 1, "run_workers": 0}, "1 web worker, runs in threads, SQLite"


def run() -> dict[str, dict[str, Any]]:
    kwargs, shape = _shape()
    env = {"AGENT_WORKER_CONCURRENCY": str(POOL), "AGENT_RUNS_PER_PERSON": str(CAP)}
    with tempfile.TemporaryDirectory() as tmp, LiveServer(Path(tmp), env=env, **kwargs) as server:
        figures = _measure(server)
    if os.environ.get("FAIRNESS_DEBUG"):
        print(figures)
    if figures["per_conversation"] != 1:
        raise RuntimeError(f"a conversation ran two turns at once: {figures}")
    note = (
        f"{CONVERSATIONS}x{MESSAGES} slow turns flooding, {shape}; worst of {ASKS} "
        f"(median {figures['median_ms']} ms; {figures['quiet_worst_ms']} ms before the "
        f"flood), {figures['flood_waiting_after']} of the flood's turns still waiting after "
        "the last"
    )
    return {
        "fairness_bystander_reply_ms": {
            "value": figures["worst_ms"],
            "unit": "ms",
            "target": 2000,
            "note": note,
        },
        "fairness_flooder_max_running": {
            "value": figures["max_running"],
            "unit": "runs",
            "target": CAP,
            "note": "turns of the flooder's running at once (AGENT_RUNS_PER_PERSON); one per "
            "conversation",
        },
    }


if __name__ == "__main__":
    for name, result in run().items():
        print(name, result)
