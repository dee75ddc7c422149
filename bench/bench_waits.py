"""Waiting for people costs nothing (issue 21), on the production shape: PostgreSQL +
Redis + 2 web workers + 1 Celery worker (AGENT_WORKER_CONCURRENCY pool processes) + beat
+ the MCP session host, all started by `manage.py serve`.

1,000 open person-waits from 100 users: per user 3 MCP elicitations of a 2025-11-25 server
(held by the session host), 3 of a 2026-07-28 server (suspended runs, nothing held), 2
deferred forms (scripted turns) and 2 structured asks (API) — 600 elicitations, 400
cards, forms and asks. Both MCP servers are the official SDK's, on loopback ports.

- `waits_worker_slots_held`: runs in `running` once every wait is open (target 0);
- `waits_host_kb_per_call`: the session host's RSS growth per pending 2025-11-25 call;
- `waits_host_idle_cpu_percent`: its CPU over 10 idle seconds with them all pending;
- `waits_echo_first_event_ratio`: other users' echo turns, submit → `run_started` at
  their stream, p95 with the 1,000 waits open ÷ p95 before any (same server);
- `waits_thread_run_extra_threads`: under `make run`'s shape (AGENT_RUNNER=thread, one
  web process), threads added by 200 pending elicitations (100 of each revision).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from tests.support.liveserver import LiveServer, _children, _postgres_admin
from tests.support.mcp_servers import make_modern_server, make_server, serve

USERS = 100
PER_USER = {"mcp_srv": 3, "mcp_new": 3, "forms": 2, "ask": 2}
ECHO_USERS, ECHO_SECONDS = 10, 12
ASK = {
    "question": "Which day suits you?",
    "field": "day",
    "options": [{"label": "Monday", "value": "mon"}, {"label": "Friday", "value": "fri"}],
}

SETUP = """
import json
from django.contrib.auth.models import User
from chat.core.models import Conversation
from chat.core.services import api_token_create
from chat.mcphost.models import McpServer
McpServer.objects.update_or_create(name="srv", defaults={{"url": "{legacy}", "agents": ["scripted"]}})
McpServer.objects.update_or_create(name="new", defaults={{"url": "{modern}", "agents": ["scripted"]}})
out = []
plan = {plan}
for n in range({users}):
    user, _ = User.objects.get_or_create(username=f"{prefix}{{n}}")
    token = api_token_create(user=user)[1]
    conversations = []
    for kind, count in plan.items():
        for _ in range(count):
            agent = "external" if kind in ("ask", "echo") else "scripted"
            c = Conversation.objects.create(owner=user, agent=agent if kind != "echo" else "echo",
                                            state={{"script": kind}} if agent == "scripted" else {{}})
            conversations.append([kind, c.pk])
    out.append({{"token": token, "conversations": conversations}})
print(json.dumps(out))
"""


def _missing() -> str | None:
    if not os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")):
        return "needs DATABASE_URL=postgres://… (production shape)"
    if not os.environ.get("REDIS_URL"):
        return "needs REDIS_URL"
    return None


@contextlib.contextmanager
def server_stopped(server: LiveServer) -> Any:
    try:
        yield server
    finally:
        server.stop()


def _sql(server: LiveServer, query: str) -> Any:
    with _postgres_admin(server.env["DATABASE_URL"]) as conn:
        return conn.execute(query).fetchone()[0]


def _setup(server: LiveServer, legacy: str, modern: str, plan: dict[str, int], users: int,
           prefix: str) -> list[dict[str, Any]]:  # fmt: skip
    code = SETUP.format(legacy=legacy, modern=modern, plan=repr(plan), users=users, prefix=prefix)
    return list(server.json(code))


async def _open_waits(base: str, users: list[dict[str, Any]], kinds: set[str]) -> None:
    """Start every conversation of those kinds: a message (a turn that ends waiting) or,
    for asks, the API's ask (no turn)."""
    limit = asyncio.Semaphore(16)

    async def one(client: httpx.AsyncClient, token: str, kind: str, cid: int) -> None:
        headers = {"Authorization": f"Bearer {token}"}
        async with limit:
            if kind == "ask":
                url, body = f"/api/v1/conversations/{cid}/asks", {"payload": ASK}
            else:
                url, body = (
                    f"/api/v1/conversations/{cid}/messages",
                    {"role": "user", "content": "go"},
                )
            response = await client.post(url, json=body, headers=headers)
            response.raise_for_status()

    async with httpx.AsyncClient(base_url=base, timeout=60) as client:
        await asyncio.gather(
            *(
                one(client, user["token"], kind, cid)
                for user in users
                for kind, cid in user["conversations"]
                if kind in kinds
            )
        )


def _await_waits(server: LiveServer, expected: int, timeout: float = 600) -> None:
    """Until `expected` waits are open (a turn that failed — a queue timeout on an
    overloaded machine — counts as done; `_failed` reports it)."""
    deadline = time.monotonic() + timeout
    query = "SELECT count(*) FROM chat_wait WHERE status = 'open' AND kind <> 'mcp_call'"
    while _sql(server, query) + _failed(server) < expected:
        if time.monotonic() > deadline:
            raise RuntimeError(f"only {_sql(server, query)} of {expected} waits opened")
        time.sleep(1)
    busy = "SELECT count(*) FROM chat_run WHERE status IN ('queued', 'running')"
    while _sql(server, busy) and time.monotonic() < deadline:
        time.sleep(0.5)


def _failed(server: LiveServer) -> int:
    return int(_sql(server, "SELECT count(*) FROM chat_run WHERE status = 'failed'"))


async def _echo_p95(base: str, users: list[dict[str, Any]], seconds: float) -> float:
    """Echo turns of other users: submit → `run_started` at their open stream."""
    waits: list[float] = []
    until = time.monotonic() + seconds

    async def user_loop(client: httpx.AsyncClient, token: str, cid: int) -> None:
        headers = {"Authorization": f"Bearer {token}"}
        started: asyncio.Queue[float] = asyncio.Queue()

        async def stream() -> None:
            async with client.stream(
                "GET", f"/api/v1/conversations/{cid}/events", headers=headers
            ) as response:
                name = ""
                async for line in response.aiter_lines():
                    if line.startswith("event: "):
                        name = line[7:]
                    elif line.startswith("data: ") and name == "run_started":
                        started.put_nowait(time.perf_counter())

        reader = asyncio.ensure_future(stream())
        await asyncio.sleep(0.5)
        try:
            while time.monotonic() < until:
                while not started.empty():  # (a late event of the previous turn)
                    started.get_nowait()
                sent = time.perf_counter()
                body = {"role": "user", "content": "hi"}
                response = await client.post(
                    f"/api/v1/conversations/{cid}/messages", json=body, headers=headers
                )
                response.raise_for_status()
                at = await asyncio.wait_for(started.get(), 60)
                while at < sent:
                    at = await asyncio.wait_for(started.get(), 60)
                waits.append((at - sent) * 1000)
        finally:
            reader.cancel()
            with contextlib.suppress(BaseException):
                await reader

    async with httpx.AsyncClient(base_url=base, timeout=httpx.Timeout(60, read=None)) as client:
        await asyncio.gather(
            *(user_loop(client, u["token"], u["conversations"][0][1]) for u in users)
        )
    return statistics.quantiles(waits, n=20)[-1]


def _host_pid(server: LiveServer) -> int:
    for child in _children(server.procs[0].pid):
        if b"mcp_session_host" in Path(f"/proc/{child}/cmdline").read_bytes():
            return child
    raise RuntimeError("no session host process")


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _production(tmp: Path, legacy: str, modern: str) -> dict[str, float]:
    server = LiveServer(
        tmp,
        database_url=os.environ["DATABASE_URL"],
        redis_url=os.environ["REDIS_URL"],
        workers=2,
        run_workers=1,
        env={"LOG_LEVEL": "WARNING"},
    )
    server.start(timeout=180)
    with server_stopped(server):
        echo = _setup(server, legacy, modern, {"echo": 1}, ECHO_USERS, "echo")
        users = _setup(server, legacy, modern, PER_USER, USERS, "waiter")
        before = asyncio.run(_echo_p95(server.url, echo, ECHO_SECONDS))
        host = _host_pid(server)
        asyncio.run(_open_waits(server.url, users, {"mcp_new", "forms", "ask"}))
        _await_waits(server, USERS * 7)
        time.sleep(3)
        rss_before = _rss_kb(host)
        asyncio.run(_open_waits(server.url, users, {"mcp_srv"}))
        _await_waits(server, USERS * 10)
        time.sleep(3)
        rss_after = _rss_kb(host)
        cpu = _cpu_seconds(host)
        time.sleep(10)
        idle_cpu = (_cpu_seconds(host) - cpu) / 10 * 100
        held = _sql(server, "SELECT count(*) FROM chat_run WHERE status = 'running'")
        pending = _sql(server, "SELECT count(*) FROM chat_mcpcall WHERE state = 'hosted'")
        failed = _failed(server)
        after = asyncio.run(_echo_p95(server.url, echo, ECHO_SECONDS))
    return {
        "held": held,
        "kb_per_call": (rss_after - rss_before) / max(pending, 1),
        "idle_cpu": idle_cpu,
        "ratio": after / before,
        "before": before,
        "after": after,
        "pending": pending,
        "failed": failed,
    }


def _thread_count(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def _make_run(tmp: Path, legacy: str, modern: str) -> int:
    """`make run`'s shape: one web process runs turns and the session host in threads."""
    server = LiveServer(
        tmp,
        database_url=os.environ["DATABASE_URL"],
        redis_url=os.environ["REDIS_URL"],
        env={"LOG_LEVEL": "WARNING"},
    )
    server.start(timeout=180)
    with server_stopped(server):
        users = _setup(server, legacy, modern, {"mcp_srv": 1, "mcp_new": 1}, 100, "thread")
        web = server.web_worker_pids()[0]
        asyncio.run(_open_waits(server.url, users[:1], {"mcp_srv", "mcp_new"}))
        _await_waits(server, 2)
        time.sleep(2)
        threads = _thread_count(web)
        asyncio.run(_open_waits(server.url, users[1:], {"mcp_srv", "mcp_new"}))
        _await_waits(server, 200)
        time.sleep(3)
        return _thread_count(web) - threads


def run() -> dict[str, dict[str, Any]]:
    missing = _missing()
    if missing:
        return {"waits_skipped": {"value": 0, "unit": "", "target": None, "note": missing}}
    with (
        serve(make_server()) as legacy,
        serve(make_modern_server()) as modern,
        tempfile.TemporaryDirectory() as tmp,
    ):
        prod = _production(Path(tmp), legacy, modern)
        extra_threads = _make_run(Path(tmp), legacy, modern)
    note = (
        f"1,000 waits of 100 users ({prod['pending']:.0f} held by the session host, "
        f"{prod['failed']} turn(s) failed); echo p95 {prod['before']:.0f} → "
        f"{prod['after']:.0f} ms"
    )
    return {
        "waits_worker_slots_held": {"value": prod["held"], "unit": "", "target": 0, "note": note},
        "waits_host_kb_per_call": {
            "value": round(prod["kb_per_call"], 1), "unit": "KB", "target": 50, "note": note,
        },
        "waits_host_idle_cpu_percent": {
            "value": round(prod["idle_cpu"], 2), "unit": "%", "target": 2, "note": note,
        },
        "waits_echo_first_event_ratio": {
            "value": round(prod["ratio"], 3), "unit": "x", "target": 1.2, "note": note,
        },
        "waits_thread_run_extra_threads": {
            "value": extra_threads, "unit": "", "target": 10,
            "note": "make run's shape: 200 pending elicitations (100 per revision)",
        },
    }  # fmt: skip


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
