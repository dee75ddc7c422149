"""Load and fault test: simulated people answering questionnaires, nothing lost.

    python -m bench.load [--users 200] [--duration 30] [--workers 2] [--run-workers 2]
                         [--kill-worker] [--kill-run-worker] [--faults [web,run,redis,pg]]
                         [--seed N] [--json FILE]

Each simulated user owns a conversation with the scripted `load` agent (every answer
gets a new questionnaire at once). It opens the conversation's SSE stream, sends a first
message, then answers round after round until the duration ends: it waits for the
questionnaire on the stream, submits the card (some users send two submits at once),
and waits for the next turn. Some users drop their stream mid-round and reconnect with
`Last-Event-ID`. With `--kill-worker`, one web worker process is SIGKILLed half-way:
clients reconnect or retry (submits are idempotent) and must lose nothing. With
`--kill-run-worker` (runs on Celery: `--run-workers` > 0), one more user starts a slow
two-step turn half-way (scripts/slow; with `--faults`, once the matrix is over, so that
no other fault interrupts it first) and the Celery pool process running it is
SIGKILLed while its reply streams: the turn must resume on another process and finish.
With `--faults` (all four kinds unless listed), the fault matrix of bench/faults.py
strikes at random moments: a web worker, a Celery pool process, the Redis server (the
run gets a private one, restarted empty) and every PostgreSQL connection; each fault's
recovery time is reported, and every user must still get every next turn.

Afterwards the database is checked: every accepted answer exists exactly once, no
duplicate user messages, no assistant message stored twice by one run, no run left
queued or running or failed, every interrupted turn (a run with more than one attempt)
finished normally, every persisted event reached its client, zero 5xx, no run failed
(`worker_lost` or otherwise). Loopback only; bounded in time. Exit status 1 on any loss.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import statistics
import string
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from bench import faults as fault_matrix
from tests.support.liveserver import LiveServer
from tests.support.redis_server import RedisServer, redis_available

# A turn not seen within this long counts as lost. It detects loss, not slowness (latency
# is measured separately, next_turn_ms): 200 users' first turns alone keep this 2-core
# machine busy ~25 s, and a fault during that rush pushes some past 30 s of queueing.
ROUND_TIMEOUT = 60.0


@dataclass
class Stats:
    submit_ms: list[float] = field(default_factory=list)
    first_event_ms: list[float] = field(default_factory=list)
    next_turn_ms: list[float] = field(default_factory=list)
    answers: int = 0
    double_submits: int = 0
    reconnects: int = 0
    retries: int = 0
    status_5xx: int = 0
    errors: list[str] = field(default_factory=list)
    interrupted: list[int] = field(default_factory=list)


@dataclass
class Seen:
    """Events one client received, and waiters for the next interesting one."""

    ids: set[int] = field(default_factory=set)
    last_id: int = 0
    events: list[tuple[int, str, dict[str, Any], float]] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)


class User:
    def __init__(
        self,
        n: int,
        base: str,
        session: str,
        conversation_id: int,
        stats: Stats,
        rounds: list[fault_matrix.Round],
    ):
        self.n = n
        self.rounds = rounds
        self.conversation_id = conversation_id
        self.stats = stats
        self.seen = Seen()
        csrf = "".join(random.choices(string.ascii_letters + string.digits, k=32))
        self.client = httpx.AsyncClient(
            base_url=base,
            cookies={"sessionid": session, "csrftoken": csrf},
            headers={"X-CSRFToken": csrf, "Referer": base + "/"},
            timeout=httpx.Timeout(30.0, read=None),
        )
        self.stream_task: asyncio.Task[None] | None = None
        self.stop = False
        self.submitted: list[str] = []
        self.answered = 0

    # -- the event stream ---------------------------------------------------------------

    async def stream(self) -> None:
        url = f"/conversations/{self.conversation_id}/events"
        while not self.stop:
            headers = {"Last-Event-ID": str(self.seen.last_id)} if self.seen.last_id else {}
            try:
                async with self.client.stream("GET", url, headers=headers) as response:
                    if response.status_code >= 500:
                        self.stats.status_5xx += 1
                    await self._read(response)
            except (httpx.TransportError, httpx.StreamError):
                pass
            if not self.stop:
                self.stats.reconnects += 1
                await asyncio.sleep(0.2)

    async def _read(self, response: httpx.Response) -> None:
        event_id, name = 0, ""
        async for line in response.aiter_lines():
            if line.startswith("id: "):
                event_id = int(line[4:])
            elif line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: ") and event_id:
                if event_id not in self.seen.ids:
                    self.seen.ids.add(event_id)
                    self.seen.last_id = max(self.seen.last_id, event_id)
                    data = json.loads(line[6:])
                    self.seen.events.append((event_id, name, data, time.perf_counter()))
                    self.seen.changed.set()
                event_id, name = 0, ""

    def restart_stream(self) -> None:
        """Drop the stream mid-round; the loop reconnects with Last-Event-ID."""
        if self.stream_task is not None:
            self.stream_task.cancel()
        self.stats.reconnects += 1
        self.stream_task = asyncio.ensure_future(self.stream())

    async def wait_for(
        self, predicate: Any, after: int, timeout: float = ROUND_TIMEOUT
    ) -> tuple[int, dict[str, Any], float]:
        deadline = time.monotonic() + timeout
        while True:
            for event_id, name, data, at in self.seen.events[after:]:
                if predicate(name, data):
                    return event_id, data, at
            self.seen.changed.clear()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"user {self.n}: no matching event")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.seen.changed.wait(), remaining)

    # -- actions ------------------------------------------------------------------------

    async def post(self, url: str, **kwargs: Any) -> httpx.Response:
        """POST, retrying transport errors (a killed worker) a few times."""
        for attempt in range(4):
            try:
                response = await self.client.post(url, **kwargs)
            except httpx.TransportError:
                self.stats.retries += 1
                await asyncio.sleep(0.3 * (attempt + 1))
                continue
            if response.status_code >= 500:
                self.stats.status_5xx += 1
            return response
        raise RuntimeError(f"user {self.n}: POST {url} kept failing")

    async def send_first_message(self) -> None:
        url = f"/conversations/{self.conversation_id}/messages"
        # Not idempotent: send once; if the connection broke, the stream tells whether
        # the message was stored (its message_done arrives) before sending again.
        for _ in range(3):
            mark = len(self.seen.events)
            try:
                response = await self.client.post(
                    url, data={"content": "start"}, headers={"HX-Request": "true"}
                )
                if response.status_code >= 500:
                    self.stats.status_5xx += 1
                response.raise_for_status()
                return
            except httpx.TransportError:
                self.stats.retries += 1
                with contextlib.suppress(TimeoutError):
                    await self.wait_for(
                        lambda n, d: n == "message_done" and d.get("role") == "user", mark
                    )
                    return

    async def answer(self, message_id: int, double: bool) -> float:
        url = f"/conversations/{self.conversation_id}/messages/{message_id}/answer"
        body = {
            "questionnaire_id": f"{message_id}_q1",
            "answers": {"q1": random.choice(["alpha", "beta", "gamma"]), "q2": f"u{self.n}"},
        }
        started = time.perf_counter()
        posts = [self.post(url, json=body) for _ in range(2 if double else 1)]
        responses = await asyncio.gather(*posts)
        elapsed = (time.perf_counter() - started) * 1000
        codes = sorted(r.status_code for r in responses)
        ok = [r for r in responses if r.status_code == 201]
        refused = [r for r in responses if r.status_code == 409]
        if len(ok) > 1:
            self.stats.errors.append(f"user {self.n}: two submits both accepted")
        for r in refused:
            if r.json().get("error") != "questionnaire_already_submitted":
                self.stats.errors.append(f"user {self.n}: unexpected 409 {r.text[:200]}")
        if not ok and not refused:
            self.stats.errors.append(f"user {self.n}: submit failed {codes}")
        if double:
            self.stats.double_submits += 1
        self.submitted.append(body["questionnaire_id"])
        self.stats.submit_ms.append(elapsed)
        return started

    async def run(self, until: float, reconnecting: bool, doubling: bool) -> None:
        self.stream_task = asyncio.ensure_future(self.stream())
        try:
            mark = len(self.seen.events)
            first: fault_matrix.Round | None = fault_matrix.Round(self.n, time.perf_counter())
            self.rounds.append(first)
            await self.send_first_message()
            while True:
                _, data, seen_at = await self.wait_for(_assistant_message, mark)
                if first is not None:  # the first turn is a round too (faults strike early)
                    first.done, first = seen_at, None
                # Every user answers at least once, however slow the machine: a busy box
                # may spend the whole phase on the first turns and the faults' recoveries,
                # and a run that answered nothing would prove nothing.
                if time.monotonic() >= until and self.answered:
                    break
                mark = len(self.seen.events)
                if reconnecting and random.random() < 0.5:
                    self.restart_stream()
                this = fault_matrix.Round(self.n, time.perf_counter())
                self.rounds.append(this)
                started = await self.answer(data["message_id"], doubling and random.random() < 0.5)
                _, _, first_at = await self.wait_for(lambda n, d: True, mark)
                self.stats.first_event_ms.append((first_at - started) * 1000)
                _, _, next_at = await self.wait_for(_assistant_message, mark)
                this.done = next_at
                self.stats.next_turn_ms.append((next_at - started) * 1000)
                self.stats.answers += 1
                self.answered += 1
            # Let the final run's events arrive before checking what was received.
            await self.wait_for(lambda n, d: n == "run_finished", mark)
        except Exception as exc:
            self.stats.errors.append(f"user {self.n}: {type(exc).__name__}: {exc}")
        finally:
            self.stop = True
            if self.stream_task is not None:
                self.stream_task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self.stream_task
            await self.client.aclose()


def _assistant_message(name: str, data: dict[str, Any]) -> bool:
    return name == "message_done" and data.get("role") == "assistant"


SETUP = """
import json
from django.contrib.auth.models import User
from django.contrib.sessions.backends.db import SessionStore
from chat.core.models import Conversation
out = []
for n in range({users}):
    user = User.objects.create_user(f"load{{n}}")
    store = SessionStore()
    store.update({{"_auth_user_id": str(user.pk),
                  "_auth_user_backend": "django.contrib.auth.backends.ModelBackend",
                  "_auth_user_hash": user.get_session_auth_hash()}})
    store.create()
    script = "slow" if n == {users} - 1 and {victim} else "load"
    c = Conversation.objects.create(owner=user, agent="scripted", state={{"script": script}})
    out.append([store.session_key, c.pk])
print(json.dumps(out))
"""

VERIFY = """
import json
from collections import Counter
from chat.core.models import Event, Message, Run
from questionnaires.models import Submission
users = Message.objects.filter(role="user").values_list("conversation_id", flat=True)
subs = Submission.objects.values_list("conversation_id", "questionnaire_id", "user_message_id")
events = {}
for cid, eid in Event.objects.values_list("conversation_id", "id"):
    events.setdefault(cid, []).append(eid)
replies = Counter(
    Message.objects.filter(role="assistant", hidden=False, run__isnull=False)
    .values_list("run_id", "content")
)
print(json.dumps({
    "user_messages": Counter(users),
    "submissions": [list(s) for s in subs],
    "stuck_runs": Run.objects.filter(status__in=["queued", "running"]).count(),
    "failed_runs": list(Run.objects.filter(status="failed").values_list("id", "error")),
    "interrupted_runs": list(
        Run.objects.filter(attempts__gt=1).values_list("id", "status", "stop_reason", "attempts")
    ),
    "replies_stored_twice": [run for (run, _), n in replies.items() if n > 1],
    "events": events,
}))
"""


RUNS_OF = """
import json
from chat.core.models import Run
from chat.core.models import Event
events = Event.objects.filter(conversation_id={cid})
print(json.dumps([list(Run.objects.filter(conversation_id={cid}).values_list(
    "id", "status", "attempts", "worker", "error")), events.count(),
    max(events.values_list("id", flat=True), default=0)]))
"""


async def trivial_rps(base: str, concurrency: int, seconds: float) -> float:
    """Requests/s of /livez with the same concurrency: the machine's yardstick."""
    done = 0
    deadline = time.monotonic() + seconds
    async with httpx.AsyncClient(base_url=base, timeout=10) as client:

        async def hammer() -> None:
            nonlocal done
            while time.monotonic() < deadline:
                with contextlib.suppress(httpx.TransportError):
                    if (await client.get("/livez")).status_code == 200:
                        done += 1

        started = time.monotonic()
        await asyncio.gather(*(hammer() for _ in range(concurrency)))
        return done / (time.monotonic() - started)


def _percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {"p50": 0.0, "p95": 0.0, "p99": 0.0}
    qs = statistics.quantiles(values, n=100, method="inclusive") if len(values) > 1 else values * 99
    return {"p50": round(qs[49], 1), "p95": round(qs[94], 1), "p99": round(qs[98], 1)}


def verify(server: LiveServer, users: list[User], stats: Stats) -> list[str]:
    state = json.loads(server.shell(VERIFY))
    problems = list(stats.errors)
    by_conv: dict[int, list[list[Any]]] = {}
    for cid, qid, user_message_id in state["submissions"]:
        by_conv.setdefault(cid, []).append([qid, user_message_id])
    for user in users:
        cid = user.conversation_id
        subs = by_conv.get(cid, [])
        qids = [q for q, _ in subs]
        if sorted(qids) != sorted(user.submitted):
            problems.append(f"conversation {cid}: answers sent {user.submitted}, stored {qids}")
        if len({m for _, m in subs}) != len(subs):
            problems.append(f"conversation {cid}: two answers share a user message")
        expected_users = 1 + len(subs)
        if state["user_messages"].get(str(cid), 0) != expected_users:
            problems.append(
                f"conversation {cid}: {state['user_messages'].get(str(cid))} user messages, "
                f"expected {expected_users}"
            )
        missed = set(state["events"].get(str(cid), [])) - user.seen.ids
        missed = {e for e in missed if e <= user.seen.last_id}
        if missed:
            problems.append(f"conversation {cid}: events never delivered {sorted(missed)[:5]}")
    if state["stuck_runs"]:
        problems.append(f"{state['stuck_runs']} run(s) left queued or running")
    if state["failed_runs"]:
        problems.append(f"failed runs: {state['failed_runs'][:5]}")
    if state["replies_stored_twice"]:
        problems.append(f"runs that stored a reply twice: {state['replies_stored_twice'][:5]}")
    for run_id, status, stop_reason, _attempts in state["interrupted_runs"]:
        if status != "finished" or stop_reason == "error":
            problems.append(f"run {run_id} was interrupted and ended {status}/{stop_reason}")
    stats.interrupted = [row[0] for row in state["interrupted_runs"]]
    if stats.status_5xx:
        problems.append(f"{stats.status_5xx} responses with a 5xx status")
    return problems


async def kill_mid_turn(server: LiveServer, victim: User) -> dict[str, Any]:
    """Start the victim's slow turn and SIGKILL the Celery pool process running it while
    its reply streams; returns when the turn (resumed elsewhere) has finished."""
    victim.stream_task = asyncio.ensure_future(victim.stream())
    try:
        mark = len(victim.seen.events)
        await victim.send_first_message()
        _, data, _ = await victim.wait_for(
            # Its turn waits in the queue behind 200 users' turns first: this wait is for
            # the moment to strike, not a latency measurement.
            lambda n, d: n == "text_delta" and d.get("iteration") == 2,
            mark,
            timeout=3 * ROUND_TIMEOUT,
        )
        run_id = data["run_id"]
        pid = await asyncio.to_thread(server.kill_run_process, run_id)
        killed_at, after = time.perf_counter(), len(victim.seen.events)
        _, _, continued_at = await victim.wait_for(
            lambda n, d: n == "text_delta" and d.get("run_id") == run_id, after
        )
        _, finished, _ = await victim.wait_for(
            lambda n, d: n == "run_finished" and d.get("run_id") == run_id, after
        )
    finally:
        victim.stop = True
        if victim.stream_task is not None:
            victim.stream_task.cancel()
        await victim.client.aclose()
    if pid is None:
        victim.stats.errors.append(f"run {run_id}: no pool process to kill (it had finished)")
    return {
        "run_id": run_id,
        "pid": pid,
        "resume_seconds": round(continued_at - killed_at, 3),
        "stop_reason": finished.get("stop_reason"),
    }


async def _kill_mid_turn(server: LiveServer, victim: User, stats: Stats) -> dict[str, Any] | None:
    try:
        return await kill_mid_turn(server, victim)
    except Exception as exc:  # reported with the run's state, not a crashed load run
        runs = await asyncio.to_thread(server.json, RUNS_OF.format(cid=victim.conversation_id))
        seen = [(n, d.get("iteration")) for _, n, d, _ in victim.seen.events][-12:]
        stats.errors.append(
            f"mid-turn kill: {type(exc).__name__}: {exc}; runs {runs}; the victim saw {seen}"
        )
        return None


async def drive(
    server: LiveServer, args: argparse.Namespace, redis: RedisServer | None = None
) -> dict[str, Any]:
    victim_wanted = bool(args.kill_run_worker and args.run_workers)
    setup = SETUP.format(users=args.users + victim_wanted, victim=victim_wanted)
    pairs = json.loads(server.shell(setup))
    stats = Stats()
    rounds: list[fault_matrix.Round] = []
    users = [User(n, server.url, s, c, stats, rounds) for n, (s, c) in enumerate(pairs)]
    victim = users.pop() if victim_wanted else None
    rng = random.Random(7)
    roles = [(rng.random() < 0.15, rng.random() < 0.15) for _ in users]
    faults = fault_matrix.schedule(args.faults, args.duration, random.Random(args.seed))
    started = time.monotonic()
    until = started + args.duration
    tasks = [
        asyncio.ensure_future(user.run(until, reconnecting, doubling))
        for user, (reconnecting, doubling) in zip(users, roles, strict=True)
    ]
    injecting = asyncio.ensure_future(fault_matrix.inject(faults, server, redis, started))
    killed, mid_turn = None, None
    if args.kill_worker or (victim is not None and not faults):
        await asyncio.sleep(args.duration / 2)
    if args.kill_worker:
        killed = server.kill_one_worker()
    if victim is not None and not faults:
        mid_turn = await _kill_mid_turn(server, victim, stats)
    await asyncio.gather(*tasks)
    await injecting
    if victim is not None and faults:
        # After the matrix: a fault of its own must not interrupt the victim's turn before
        # this kill does (the matrix's `run` fault covers kills under load).
        mid_turn = await _kill_mid_turn(server, victim, stats)
    elapsed = time.monotonic() - started
    answers_per_s = stats.answers / elapsed
    await asyncio.sleep(1.0)  # the last runs finish
    rps = await trivial_rps(server.url, min(args.users, 64), 3.0)
    problems = verify(server, users, stats)
    if mid_turn is not None and mid_turn["run_id"] not in stats.interrupted:
        problems.append(f"run {mid_turn['run_id']} was killed mid-turn but has one attempt")
    matrix = fault_matrix.assess(faults, rounds)
    for fault in matrix["faults"]:
        if not fault["survived"]:
            problems.append(
                f"fault {fault['kind']} at {fault['at_s']} s: users without their next turn "
                f"{fault['users_without_next_turn']}"
            )
    return {
        **matrix,
        "seed": args.seed,
        "users": args.users,
        "workers": args.workers,
        "run_workers": args.run_workers,
        "killed_worker": killed,
        "killed_mid_turn": mid_turn,
        "interrupted_runs": stats.interrupted,
        "seconds": round(elapsed, 1),
        "answers": stats.answers,
        "answers_per_s": round(answers_per_s, 1),
        "trivial_rps": round(rps, 1),
        "submit_throughput_ratio": round(answers_per_s / rps, 4) if rps else 0.0,
        "submit_ms": _percentiles(stats.submit_ms),
        "first_event_ms": _percentiles(stats.first_event_ms),
        "next_turn_ms": _percentiles(stats.next_turn_ms),
        "double_submits": stats.double_submits,
        "reconnects": stats.reconnects,
        "retries": stats.retries,
        "status_5xx": stats.status_5xx,
        "problems": problems,
    }


def run_load(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        redis = None
        if args.faults:  # restarting the machine's shared Redis would hit everyone else
            redis = stack.enter_context(RedisServer(Path(tmp)))
        server = LiveServer(
            Path(tmp),
            database_url=os.environ.get("DATABASE_URL"),
            redis_url=redis.url if redis else os.environ.get("REDIS_URL"),
            workers=args.workers,
            run_workers=args.run_workers,
            env={"SSE_KEEPALIVE_SECONDS": "5"},
        )
        with server:
            try:
                return asyncio.run(drive(server, args, redis))
            finally:
                if os.environ.get("LOAD_SERVER_LOG"):
                    Path(os.environ["LOAD_SERVER_LOG"]).write_text(server.log())


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=200)
    parser.add_argument("--duration", type=float, default=30.0, help="seconds of answering")
    parser.add_argument("--workers", type=int, default=2, help="uvicorn worker processes")
    parser.add_argument("--run-workers", type=int, default=2, help="agent-run workers")
    parser.add_argument("--kill-worker", action="store_true", help="SIGKILL one web worker")
    parser.add_argument(
        "--kill-run-worker",
        action="store_true",
        help="SIGKILL the Celery pool process running a turn, mid-turn (needs --run-workers)",
    )
    parser.add_argument(
        "--faults",
        nargs="?",
        const="all",
        help=f"inject faults at random moments: all, or a list of {','.join(fault_matrix.KINDS)}",
    )
    parser.add_argument("--seed", type=int, help="the fault schedule's random seed")
    parser.add_argument("--json", help="also write the report to this file")
    args = parser.parse_args(argv)
    if (args.workers > 1 or args.run_workers) and not os.environ.get("REDIS_URL"):
        parser.error("several workers need REDIS_URL (and DATABASE_URL for PostgreSQL)")
    try:
        args.faults = fault_matrix.parse(args.faults)
    except ValueError as exc:
        parser.error(str(exc))
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(1_000_000)
    database = os.environ.get("DATABASE_URL", "")
    if "pg" in args.faults and not database.startswith(("postgres://", "postgresql://")):
        parser.error("the pg fault needs DATABASE_URL=postgres://…")
    if "run" in args.faults and not args.run_workers:
        parser.error("the run fault needs Celery run workers (--run-workers > 0)")
    if "web" in args.faults and args.workers < 2:
        parser.error("the web fault needs two web workers or more (--workers 2)")
    if args.faults and not redis_available():
        parser.error("the fault matrix needs redis-server (Debian package redis-server)")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    report = run_load(args)
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text)
    return 1 if report["problems"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
