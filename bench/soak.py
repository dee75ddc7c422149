"""Soak test (issue 38.5): an hour of faults, nothing lost, memory flat.

    python -m bench.soak [--users 200] [--minutes 60] [--fault-every 30] [--model-share 0.2]
                         [--think 1] [--faults KINDS] [--seed N] [--busy] [--json FILE]

The load test's simulated people (bench/load.py) for a long time: most answer the
scripted `load` agent's questionnaires round after round; a share (`--model-share`) talk
to the `openai` agent, pointed at a fake OpenAI-compatible server in this process
(tests/support/fake_openai.py), whose every turn calls the `add` tool of an MCP server
also served here (tests/support/mcp_servers.py) and then answers with its result. Every
`--fault-every` seconds one fault of a random kind strikes (bench/faults.py): a web
worker or a Celery pool process SIGKILLed, the run's Redis restarted empty, every
PostgreSQL connection terminated, the model answering several seconds late, or the MCP
server not answering, each of the last two for `FAULT_SECONDS`. A model turn whose tool
call meets the hung server must end with a tool error (MCP_TOOL_TIMEOUT) or recover
when the server answers again, never hang.

Meanwhile the RSS of every server process (the supervisor, web workers, Celery master
and pool, beat, the MCP session host) is sampled every `--sample-every` seconds. The
report (JSON) gives lost turns (rounds whose next turn never came), 5xx responses, the
database check of bench/load.py, each fault's recovery, and the least-squares slope of
the total RSS in MB/hour after the warm-up with its standard error: "flat" when the
slope is within two standard errors of zero. Exit status 1 unless all pass.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import logging
import math
import os
import random
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.requests import ClientDisconnect

from bench import faults as fault_matrix
from bench.load import SETUP, Stats, User, _assistant_message, _percentiles, run_load, verify
from tests.support.fake_openai import FakeOpenAI, Reply
from tests.support.liveserver import LiveServer, _children
from tests.support.mcp_servers import make_modern_server, serve
from tests.support.redis_server import RedisServer, redis_available

SOAK_KINDS = fault_matrix.KINDS + fault_matrix.PEER_KINDS
TOOL = "soak__add"  # the MCP server is registered as "soak"; its tool is `add`
SLOW_MODEL_DELAY = 4.0  # seconds each model reply is late during a slow_model fault
# How a turn ends when the worker running it died during an MCP tool call (chat/mcphost/
# calling.py): the call is not replayed (it may have acted), the person is told to retry.
EFFECT_UNKNOWN = "so whether it took effect is unknown"


# -- the model and the MCP server, and their faults --------------------------------------


@dataclass
class ModelScript:
    """The fake model's side of every model turn: a user message asks it to add two
    numbers, it calls the MCP tool, and answers with what the tool returned. It counts
    the tool results it saw: the right sum, an error, or no tool offered at all."""

    tool_ok: int = 0
    tool_errors: int = 0
    no_tool: int = 0
    outages: list[str] = field(default_factory=list)  # the app's notes on why, a few
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, request: dict[str, Any]) -> Reply:
        messages = request.get("messages") or [{}]
        last = messages[-1]
        if last.get("role") == "tool":
            call = _last_tool_call(messages)
            expected = str(call.get("a", 0) + call.get("b", 0))
            content = _text(last.get("content"))
            ok = expected in content and "error" not in content.lower()
            with self.lock:
                if ok:
                    self.tool_ok += 1
                else:
                    self.tool_errors += 1
            verdict = f"The sum is {expected}." if ok else "The tool failed; try again later."
            return Reply(text=verdict)
        offered = {t.get("function", {}).get("name") for t in request.get("tools") or []}
        if TOOL not in offered:
            notes = [
                _text(m.get("content"))
                for m in messages
                if m.get("role") == "system" and "MCP server" in _text(m.get("content"))
            ]
            with self.lock:
                self.no_tool += 1
                for note in notes[-1:]:
                    clipped = note[note.find("MCP server") :][:200]
                    if len(self.outages) < 5 and clipped not in self.outages:
                        self.outages.append(clipped)
            return Reply(text="No calculator is available right now.")
        numbers = [int(w) for w in _text(last.get("content")).split() if w.isdigit()][:2]
        a, b = (numbers + [1, 2])[:2]
        arguments = json.dumps({"a": a, "b": b})
        return Reply(tool_calls=[(f"call_{random.getrandbits(48):x}", TOOL, arguments)])


def _text(content: Any) -> str:
    if isinstance(content, list):  # content parts
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content or "")


def _last_tool_call(messages: list[dict[str, Any]]) -> dict[str, int]:
    for message in reversed(messages):
        for call in message.get("tool_calls") or []:
            with contextlib.suppress(ValueError, TypeError):
                arguments = json.loads(call["function"]["arguments"])
                return {"a": int(arguments["a"]), "b": int(arguments["b"])}
    return {}


class SlowModel:
    """The slow_model fault: every reply of the fake model late for a while."""

    def __init__(self, model: FakeOpenAI, delay: float) -> None:
        self.model = model
        self.delay = delay

    def disrupt(self, seconds: float) -> str:
        self.model.slow_delay = self.delay
        self.model.slow_until = time.monotonic() + seconds
        return f"model replies {self.delay:.0f} s late for {seconds:.0f} s"


class HungMcp:
    """The hung_mcp fault, as ASGI middleware around the MCP server: while it lasts,
    every HTTP request is held unanswered (served once it ends, if its client is still
    there). Requests already being answered carry on."""

    def __init__(self) -> None:
        self.app: Any = None
        self.until = 0.0
        self.held = 0

    def wrap(self, app: Any) -> HungMcp:
        self.app = app
        return self

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or time.monotonic() >= self.until:
            await self.app(scope, receive, send)
            return
        self.held += 1
        while time.monotonic() < self.until:
            await asyncio.sleep(0.1)
        # its client has likely given up (MCP_TOOL_TIMEOUT) and gone
        with contextlib.suppress(ClientDisconnect):
            await self.app(scope, receive, send)

    def disrupt(self, seconds: float) -> str:
        self.until = time.monotonic() + seconds
        return f"MCP server silent for {seconds:.0f} s"


# -- the people who talk to the model ----------------------------------------------------


class ModelUser(User):
    """Sends "add A and B", waits for the turn's reply and its end, and again."""

    sent = 0
    turns = 0

    def expected_user_messages(self, submissions: int) -> int:
        return self.sent

    async def run(self, until: float, reconnecting: bool, doubling: bool) -> None:
        self.stream_task = asyncio.ensure_future(self.stream())
        self.sent = self.turns = 0
        try:
            while True:
                mark = len(self.seen.events)
                this = fault_matrix.Round(self.n, time.perf_counter())
                self.rounds.append(this)
                started = this.start
                await self.send_first_message(
                    f"add {random.randrange(100)} and {random.randrange(100)}"
                )
                self.sent += 1
                await self.wait_for(_assistant_message, mark)
                _, _, done = await self.wait_for(lambda n, d: n == "run_finished", mark)
                this.done = done
                self.stats.next_turn_ms.append((done - started) * 1000)
                self.turns += 1
                if time.monotonic() >= until:
                    break
                if self.think:
                    await asyncio.sleep(random.uniform(0, 2 * self.think))
                if reconnecting and random.random() < 0.5:
                    self.restart_stream()
        except Exception as exc:
            self.stats.errors.append(f"model user {self.n}: {type(exc).__name__}: {exc}")
        finally:
            self.stop = True
            if self.stream_task is not None:
                self.stream_task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self.stream_task
            await self.client.aclose()


# -- memory ------------------------------------------------------------------------------


def _role(pid: int) -> str:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "gone"
    text = b" ".join(argv)
    if b"uvicorn" in text or b"multiprocessing" in text:
        return "web"
    if b"mcp_session_host" in text:
        return "session_host"
    if b"celery" in text:
        return "beat" if b"beat" in argv else "celery"
    return "supervisor"


def _rss_mb(pid: int) -> float:
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def process_rss(root: int) -> dict[int, tuple[str, float]]:
    """Role and RSS in MB of every process under `root` (itself included)."""
    found: dict[int, tuple[str, float]] = {}
    pending = [root]
    while pending:
        pid = pending.pop()
        with contextlib.suppress(OSError):
            pending.extend(_children(pid))
        role = _role(pid)
        if role != "gone":
            found[pid] = (role, _rss_mb(pid))
    return found


def by_role(processes: dict[int, tuple[str, float]]) -> dict[str, float]:
    """RSS summed by role, and the total."""
    sums: dict[str, float] = {}
    for role, mb in processes.values():
        sums[role] = sums.get(role, 0.0) + mb
    sums["total"] = sum(mb for _, mb in processes.values())
    return sums


def sample_rss(root: int) -> dict[str, float]:
    """RSS in MB of every process under `root` (itself included), summed by role."""
    return by_role(process_rss(root))


def slope(points: list[tuple[float, float]]) -> dict[str, Any]:
    """Least-squares slope of (hours, MB) points in MB/hour, its standard error, and
    whether it is within noise (|slope| <= 2 standard errors)."""
    n = len(points)
    if n < 3:
        return {"samples": n, "slope_mb_per_hour": None, "stderr_mb_per_hour": None, "flat": None}
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    b = sum((x - mx) * (y - my) for x, y in points) / sxx
    residual = sum((y - my - b * (x - mx)) ** 2 for x, y in points)
    se = math.sqrt(residual / (n - 2) / sxx)
    return {
        "samples": n,
        "slope_mb_per_hour": round(b, 2),
        "stderr_mb_per_hour": round(se, 2),
        "flat": abs(b) <= 2 * se,
        "first_mb": round(points[0][1], 1),
        "last_mb": round(points[-1][1], 1),
    }


Sample = tuple[float, dict[int, tuple[str, float]]]  # seconds in, each process's role and MB


async def sample_memory(
    server: LiveServer, every: float, out: list[Sample], stop: asyncio.Event
) -> None:
    root = server.procs[0].pid
    started = time.monotonic()
    while not stop.is_set():
        processes = await asyncio.to_thread(process_rss, root)
        out.append((time.monotonic() - started, processes))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), every)


def memory_report(samples: list[Sample], warmup: float) -> dict[str, Any]:
    """The total's slope after the warm-up (its first `warmup` seconds), and each role's;
    and where the change between the first and last kept sample is: in processes alive at
    both (growth of long-lived processes: a leak shows here) or in processes the faults
    replaced (a killed worker's successor starts small and warms up again)."""
    kept = [(t, by_role(processes)) for t, processes in samples if t >= warmup]
    roles = sorted({role for _, rss in kept for role in rss})
    slopes = {role: slope([(t / 3600, rss.get(role, 0.0)) for t, rss in kept]) for role in roles}
    report = {"warmup_s": round(warmup, 1), **slopes.pop("total", slope([])), "by_role": slopes}
    if kept:
        first = next(p for t, p in samples if t >= warmup)
        last = samples[-1][1]
        both = first.keys() & last.keys()
        report["change_mb"] = {
            "in_processes_alive_throughout": round(sum(last[p][1] - first[p][1] for p in both), 1),
            "processes_gone": len(first.keys() - both),
            "their_mb": round(sum(first[p][1] for p in first.keys() - both), 1),
            "processes_new": len(last.keys() - both),
            "new_mb": round(sum(last[p][1] for p in last.keys() - both), 1),
        }
    return report


# -- the run -----------------------------------------------------------------------------


async def drive(
    server: LiveServer,
    args: argparse.Namespace,
    redis: RedisServer | None,
    *,
    mcp_url: str,
    model: FakeOpenAI,
    script: ModelScript,
    hung: HungMcp,
) -> dict[str, Any]:
    model_users = round(args.users * args.model_share)
    conversation = f'("openai", {{}}) if n < {model_users} else ("scripted", {{"script": "load"}})'
    before = (
        "from chat.mcphost.models import McpServer\n"
        f'McpServer.objects.create(name="soak", url="{mcp_url}", agents=["openai"])'
    )
    pairs = json.loads(
        server.shell(SETUP.format(users=args.users, before=before, conversation=conversation))
    )
    stats = Stats()
    rounds: list[fault_matrix.Round] = []
    users = [
        (ModelUser if n < model_users else User)(n, server.url, s, c, stats, rounds)
        for n, (s, c) in enumerate(pairs)
    ]
    for user in users:
        user.think = args.think
    rng = random.Random(args.seed)
    roles = [(rng.random() < 0.15, rng.random() < 0.15) for _ in users]
    duration = args.minutes * 60
    faults = fault_matrix.periodic(args.faults, duration, args.fault_every, rng)
    peers: dict[str, fault_matrix.Peer] = {
        "slow_model": SlowModel(model, args.slow_delay),
        "hung_mcp": hung,
    }
    samples: list[Sample] = []
    stop_sampling = asyncio.Event()
    sampling = asyncio.ensure_future(
        sample_memory(server, args.sample_every, samples, stop_sampling)
    )
    started = time.monotonic()
    until = started + duration
    tasks = [
        asyncio.ensure_future(user.run(until, reconnecting, doubling))
        for user, (reconnecting, doubling) in zip(users, roles, strict=True)
    ]
    injecting = asyncio.ensure_future(fault_matrix.inject(faults, server, redis, started, peers))
    await asyncio.gather(*tasks)
    await injecting
    elapsed = time.monotonic() - started
    stop_sampling.set()
    await sampling
    await asyncio.sleep(1.0)  # the last runs finish
    problems = verify(server, users, stats, accepted_failure=EFFECT_UNKNOWN)
    matrix = fault_matrix.assess(faults, rounds)
    lost = [r for r in rounds if r.done is None]
    memory = memory_report(samples, args.warmup_share * elapsed)
    if memory["flat"] is False:
        problems.append(
            f"memory grows {memory['slope_mb_per_hour']} ± {memory['stderr_mb_per_hour']} MB/h"
        )
    model_turns = sum(u.turns for u in users if isinstance(u, ModelUser))
    full = args.users >= 200 and args.minutes >= 60 and args.fault_every <= 30
    return {
        "scale": "full" if full else "scaled down",
        "seed": args.seed,
        "users": args.users,
        "model_users": model_users,
        "minutes": args.minutes,
        "fault_every_s": args.fault_every,
        "fault_seconds": fault_matrix.FAULT_SECONDS,
        "think_s": args.think,
        "busy": args.busy,
        "workers": args.workers,
        "run_workers": args.run_workers,
        "seconds": round(elapsed, 1),
        "lost_turns": len(lost),
        "status_5xx": stats.status_5xx,
        "rss_slope_mb_per_hour": memory["slope_mb_per_hour"],
        "rss_slope_stderr_mb_per_hour": memory["stderr_mb_per_hour"],
        "rss_flat": memory["flat"],
        "passed": not lost and not stats.status_5xx and memory["flat"] is True and not problems,
        "rounds": len(rounds),
        "answers": stats.answers,
        "model_turns": model_turns,
        "tool_results_ok": script.tool_ok,
        "tool_errors": script.tool_errors,
        "turns_without_tool": script.no_tool,
        "tool_outage_notes": script.outages,
        "model_replies_slowed": model.slowed,
        "mcp_requests_held": hung.held,
        "next_turn_ms": _percentiles(stats.next_turn_ms),
        "reconnects": stats.reconnects,
        "retries": stats.retries,
        "double_submits": stats.double_submits,
        "interrupted_runs": len(stats.interrupted),
        "turns_ended_effect_unknown": stats.accepted_failures,
        **matrix,
        "memory": memory,
        "problems": problems,
    }


def run_soak(args: argparse.Namespace) -> dict[str, Any]:
    script, hung = ModelScript(), HungMcp()
    mcp_server = make_modern_server()
    # The SDK's server sets up INFO logging, which would print every request users make.
    for name in ("httpx", "mcp"):
        logging.getLogger(name).setLevel(logging.WARNING)
    with FakeOpenAI() as model, serve(mcp_server, wrap=hung.wrap) as mcp_url:
        model.respond = script
        env = {
            "LLM_BASE_URL": model.base_url,
            "LLM_API_KEY": "soak",
            "LLM_MODEL": "fake-model",
            # a hung MCP call ends with a tool error inside a fault; the breaker that
            # then leaves the server out (chat/mcphost/health.py) tries again sooner than
            # its production 30 s doubling to 30 min, so that every hang's recovery is seen
            "MCP_TOOL_TIMEOUT": str(args.mcp_timeout),
            "MCP_BREAKER_COOLOFF": "10",
            "MCP_BREAKER_MAX_COOLOFF": "60",
        }
        driver = functools.partial(drive, mcp_url=mcp_url, model=model, script=script, hung=hung)
        return run_load(args, driver, env)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=200, help="simulated people")
    parser.add_argument("--minutes", type=float, default=60.0, help="minutes of answering")
    parser.add_argument("--fault-every", type=float, default=30.0, help="seconds between faults")
    parser.add_argument(
        "--model-share", type=float, default=0.2, help="share of people talking to the model"
    )
    parser.add_argument(
        "--think", type=float, default=1.0, help="mean seconds a person thinks before answering"
    )
    parser.add_argument("--workers", type=int, default=2, help="uvicorn worker processes")
    parser.add_argument("--run-workers", type=int, default=2, help="Celery workers")
    parser.add_argument("--faults", default="all", help=f"all, or a list of {','.join(SOAK_KINDS)}")
    parser.add_argument(
        "--slow-delay", type=float, default=SLOW_MODEL_DELAY, help="slow model's delay (s)"
    )
    parser.add_argument(
        "--mcp-timeout", type=float, default=8.0, help="the app's MCP_TOOL_TIMEOUT (s)"
    )
    parser.add_argument("--sample-every", type=float, default=5.0, help="RSS sampling period")
    parser.add_argument(
        "--warmup-share",
        type=float,
        default=0.2,
        help="share of the run left out of the RSS slope (start-up, caches filling)",
    )
    parser.add_argument("--seed", type=int, help="the faults' and people's random seed")
    parser.add_argument(
        "--busy", action="store_true", help="another process keeps one core busy all along"
    )
    parser.add_argument("--json", help="also write the report to this file")
    args = parser.parse_args(argv)
    try:
        args.faults = fault_matrix.parse(args.faults, SOAK_KINDS)
    except ValueError as exc:
        parser.error(str(exc))
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(1_000_000)
    if not os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")):
        parser.error("the soak needs DATABASE_URL=postgres://… (and REDIS_URL)")
    if not os.environ.get("REDIS_URL"):
        parser.error("the soak needs REDIS_URL")
    if not redis_available():
        parser.error("the soak needs redis-server (Debian package redis-server)")
    if "run" in args.faults and not args.run_workers:
        parser.error("the run fault needs Celery run workers (--run-workers > 0)")
    if "web" in args.faults and args.workers < 2:
        parser.error("the web fault needs two web workers or more (--workers 2)")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    report = run_soak(args)
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text)
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
