"""The load test's fault matrix: processes and services that die at random moments.

    web    SIGKILL one uvicorn worker process (uvicorn starts a new one)
    run    SIGKILL one Celery pool process, one executing a run if any (Celery starts a
           new one; the broker hands the run to another process, which resumes it)
    redis  kill the load run's own Redis (broker, channel layer) and start it again empty
           a second later: queued messages and channel-layer groups are gone
    pg     pg_terminate_backend of every connection to the load run's database (web
           workers, Celery, beat), as a PostgreSQL restart or failover does

Each fault is injected at a random moment of the answering phase (`schedule`). Afterwards
`assess` measures, per fault, the users it affected — those whose round was in flight
when it struck, or (if none was) those who answered within AFTER_WINDOW seconds of it —
and how long from the fault until each got their next turn: the fault's recovery time,
which includes a normal turn's latency. A fault is survived when every round started
within ROUND_WINDOW seconds of it (before or after) completed.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass, field
from typing import Any

from tests.support.liveserver import LiveServer
from tests.support.redis_server import RedisServer

KINDS = ("web", "run", "redis", "pg")
ROUND_WINDOW = 10.0  # rounds started this near a fault must complete for it to count
AFTER_WINDOW = 2.0  # with no round in flight, the rounds started this soon after measure it
REDIS_DOWN_SECONDS = 1.0


@dataclass
class Round:
    """One answer of one user: submitted at `start`, next turn seen at `done` (or never)."""

    user: int
    start: float
    done: float | None = None


@dataclass
class Fault:
    kind: str
    at_offset: float  # seconds into the answering phase
    at: float = 0.0  # perf_counter when injected
    detail: str = ""
    affected: int = 0
    recovery_s: float | None = None
    survived: bool = True
    lost: list[int] = field(default_factory=list)

    def report(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "at_s": round(self.at_offset, 1),
            "detail": self.detail,
            "affected_users": self.affected,
            "recovery_s": None if self.recovery_s is None else round(self.recovery_s, 2),
            "survived": self.survived,
            "users_without_next_turn": self.lost[:10],
        }


def parse(value: str | None) -> tuple[str, ...]:
    """`--faults` (all kinds), `--faults web,pg`, or nothing."""
    if value is None:
        return ()
    if value in ("", "all"):
        return KINDS
    kinds = tuple(k.strip() for k in value.split(",") if k.strip())
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise ValueError(f"unknown fault(s) {unknown}; choose from {', '.join(KINDS)}")
    return kinds


def schedule(kinds: tuple[str, ...], duration: float, rng: random.Random) -> list[Fault]:
    """Random moments between 15 % and 80 % of the answering phase, in random order, at
    least a few seconds apart so each recovery is measured on its own."""
    if not kinds:
        return []
    first, last = 0.15 * duration, 0.8 * duration
    gap = min(4.0, (last - first) / max(len(kinds), 1))
    slots = sorted(rng.uniform(first, last - gap * (len(kinds) - 1)) for _ in kinds)
    order = list(kinds)
    rng.shuffle(order)
    return [
        Fault(kind, slot + gap * n) for n, (kind, slot) in enumerate(zip(order, slots, strict=True))
    ]


async def inject(
    faults: list[Fault], server: LiveServer, redis: RedisServer | None, started: float
) -> None:
    """Inject each fault at its moment (`started`: monotonic start of the phase)."""
    for fault in faults:
        await asyncio.sleep(max(0.0, started + fault.at_offset - time.monotonic()))
        fault.at = time.perf_counter()
        fault.detail = await asyncio.to_thread(_strike, fault.kind, server, redis)


def _strike(kind: str, server: LiveServer, redis: RedisServer | None) -> str:
    if kind == "web":
        pid = server.kill_one_worker()
        return f"web worker pid {pid}" if pid else "no second web worker to kill"
    if kind == "run":
        pid = server.kill_busy_run_process()
        return f"Celery pool pid {pid}" if pid else "no Celery pool process"
    if kind == "redis":
        if redis is None:
            return "no private Redis"
        redis.restart(down=REDIS_DOWN_SECONDS)
        return f"Redis down {REDIS_DOWN_SECONDS:.0f} s, back empty"
    if kind == "pg":
        return f"{server.terminate_db_connections()} connections terminated"
    raise ValueError(kind)


def assess(faults: list[Fault], rounds: list[Round]) -> dict[str, Any]:
    """Per-fault recovery and survival, and the run's `faults_survived` figures."""
    for fault in faults:
        hit = [
            r
            for r in rounds
            if r.start <= fault.at + ROUND_WINDOW and (r.done is None or r.done > fault.at)
        ]
        affected = [r for r in hit if r.start <= fault.at] or [
            r for r in hit if r.start <= fault.at + AFTER_WINDOW
        ]
        fault.affected = len({r.user for r in affected})
        # A round that never finished counts against the faults near its start.
        near = [r for r in rounds if abs(r.start - fault.at) <= ROUND_WINDOW]
        fault.lost = sorted({r.user for r in near if r.done is None})
        fault.survived = not fault.lost
        finished = [r.done - fault.at for r in affected if r.done is not None]
        fault.recovery_s = max(finished) if finished else None
    survived = sum(f.survived for f in faults)
    recoveries = [f.recovery_s for f in faults if f.recovery_s is not None]
    return {
        "faults": [f.report() for f in faults],
        "faults_injected": len(faults),
        "faults_survived": round(survived / len(faults), 3) if faults else None,
        "worst_recovery_s": round(max(recoveries), 2) if recoveries else None,
    }
