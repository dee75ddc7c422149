"""Stream benchmarks (live streams at scale), against a real uvicorn server on loopback.

One conversation's event stream opened many times over the API, all figures from one run
so the ratios hold on any machine:

- `stream_fanout_ratio`: p95 delivery of one event (an API-posted message's
  `message_done`, from the POST to each stream's arrival) to 1,000 streams of a
  conversation ÷ the same to 10 streams of another; rounds alternate between the two, and
  each figure is the median over ROUNDS events of that event's p95 over its streams;
- `stream_open_rate`: streams opened per second when 1,000 open at once (first request
  byte to every stream's `: connected`), and the server's CPU per open beside it;
- `stream_memory_kb`: growth of the server processes' RSS per idle stream (the 1,000).

The shape of `make run` (one worker, SQLite, in-memory layer); with DATABASE_URL
(PostgreSQL) and REDIS_URL also two web workers on PostgreSQL + Redis (`*_redis`).

The clients are a minimal HTTP/1.1 event-stream reader on `asyncio.Protocol`: on this
2-core machine httpx's per-connection cost in the same process was the bottleneck (1,000
streams: ~120 opens/s and ~1 s p95 with httpx, ~300/s and ~0.17 s with this reader against
the same server), and the benchmark is about the server.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from tests.support.liveserver import LiveServer

SMALL, LARGE = 10, 1000
ROUNDS = 25
CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


class StreamReader(asyncio.Protocol):
    """Reads one event stream: `connected` resolves on `: connected`, `arrivals` gets the
    arrival time of every `message_done` frame."""

    def __init__(self, request: bytes) -> None:
        self.request = request
        self.connected: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self.arrivals: list[float] = []
        self.transport: asyncio.Transport | None = None
        self._buffer = b""
        self._head = True

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        now = time.perf_counter()
        self._buffer += data
        if self._head:
            end = self._buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            status = self._buffer[9:12]
            if status != b"200" and not self.connected.done():
                self.connected.set_exception(RuntimeError(f"stream refused: {status!r}"))
            self._buffer, self._head = self._buffer[end + 4 :], False
        while True:  # chunked transfer coding: size line, chunk, CRLF
            line_end = self._buffer.find(b"\r\n")
            if line_end < 0:
                return
            size = int(self._buffer[:line_end], 16)
            end = line_end + 2 + size
            if len(self._buffer) < end + 2:
                return
            chunk, self._buffer = self._buffer[line_end + 2 : end], self._buffer[end + 2 :]
            if b": connected" in chunk and not self.connected.done():
                self.connected.set_result(now)
            self.arrivals.extend([now] * chunk.count(b"event: message_done"))

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.connected.done():
            self.connected.set_exception(ConnectionError("stream closed before it opened"))

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


class Bench:
    def __init__(self, server: LiveServer, token: str) -> None:
        self.server = server
        self.token = token
        self.client = httpx.AsyncClient(
            base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=60
        )

    async def conversation(self) -> int:
        created = await self.client.post("/api/v1/conversations/", json={"agent": "external"})
        created.raise_for_status()
        conversation_id: int = created.json()["id"]
        return conversation_id

    async def open(self, conversation_id: int, count: int) -> tuple[list[StreamReader], float]:
        """`count` streams opened at once; returns them and the seconds until all connected."""
        loop = asyncio.get_running_loop()
        request = (
            f"GET /api/v1/conversations/{conversation_id}/events HTTP/1.1\r\n"
            f"Host: 127.0.0.1:{self.server.port}\r\nAuthorization: Bearer {self.token}\r\n"
            "Accept: text/event-stream\r\n\r\n"
        ).encode()

        async def one() -> StreamReader:
            _transport, reader = await loop.create_connection(
                lambda: StreamReader(request), "127.0.0.1", self.server.port
            )
            await asyncio.wait_for(reader.connected, 60)
            return reader

        started = time.perf_counter()
        readers = await asyncio.gather(*(one() for _ in range(count)))
        return readers, max(r.connected.result() for r in readers) - started

    async def deliver(self, conversation_id: int, readers: list[StreamReader]) -> list[float]:
        """Post one message: ms from the POST to its `message_done` at each stream."""
        await asyncio.sleep(0.05)
        seen = [len(r.arrivals) for r in readers]
        started = time.perf_counter()
        url = f"/api/v1/conversations/{conversation_id}/messages"
        posted = await self.client.post(url, json={"role": "assistant", "content": "hello"})
        posted.raise_for_status()
        deadline = time.monotonic() + 60
        while any(len(r.arrivals) == s for r, s in zip(readers, seen, strict=True)):
            if time.monotonic() > deadline:
                raise TimeoutError("an event did not reach every stream")
            await asyncio.sleep(0.002)
        return [(r.arrivals[s] - started) * 1000 for r, s in zip(readers, seen, strict=True)]


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]


def _stat(pids: list[int]) -> tuple[float, int]:
    """(CPU seconds, RSS bytes) summed over the server's web worker processes."""
    cpu, rss = 0.0, 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        cpu += (int(fields[11]) + int(fields[12])) / CLK_TCK
        rss += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE_SIZE
    return cpu, rss


async def _measure(server: LiveServer, token: str) -> dict[str, float]:
    """Opens SMALL streams on one conversation and LARGE on another, then alternates
    deliveries between the two, so both see the same machine (the ratio is robust to a
    busy machine; the absolute figures are not)."""
    bench = Bench(server, token)
    pids = server.web_worker_pids()
    try:
        small_id, large_id = await bench.conversation(), await bench.conversation()
        warm, _ = await bench.open(large_id, 50)  # code paths, the fan-out, connections
        for _ in range(3):
            await bench.deliver(large_id, warm)
        for reader in warm:
            reader.close()
        small, _ = await bench.open(small_id, SMALL)
        await asyncio.sleep(1)
        cpu_before, rss_before = _stat(pids)
        large, seconds = await bench.open(large_id, LARGE)
        cpu_after, _ = _stat(pids)
        await asyncio.sleep(1)
        _, rss_after = _stat(pids)
        to_small: list[float] = []
        to_large: list[float] = []
        for _ in range(ROUNDS):
            to_small.append(_p95(await bench.deliver(small_id, small)))
            to_large.append(_p95(await bench.deliver(large_id, large)))
        for reader in small + large:
            reader.close()
    finally:
        await bench.client.aclose()
    return {  # the typical event: one stalled round of a busy machine doesn't decide
        "p95_small": statistics.median(to_small),
        "p95_large": statistics.median(to_large),
        "open_rate": LARGE / seconds,
        "open_cpu_ms": (cpu_after - cpu_before) * 1000 / LARGE,
        "memory_kb": (rss_after - rss_before) / 1024 / LARGE,
    }


def _token(server: LiveServer) -> str:
    server.shell("from django.contrib.auth.models import User\nUser.objects.create_user('bench')")
    token: str = server.manage("create_api_token", "bench").strip().split()[-1]
    return token


def _run_shape(**server_options: Any) -> dict[str, float]:
    env = {
        "LOG_LEVEL": "WARNING",
        "SSE_KEEPALIVE_SECONDS": "30",
        "SSE_MAX_STREAMS": "5000",
        "SSE_MAX_STREAMS_PER_USER": "5000",  # one user opens them all
    }
    with (
        tempfile.TemporaryDirectory() as tmp,
        LiveServer(Path(tmp), env=env, **server_options) as server,
    ):
        return asyncio.run(_measure(server, _token(server)))


def _results(figures: dict[str, float], suffix: str, note: str) -> dict[str, dict[str, Any]]:
    return {
        f"stream_fanout_ratio{suffix}": {
            "value": round(figures["p95_large"] / figures["p95_small"], 2),
            "unit": "x",
            "target": 5,
            "note": f"p95 of one event to {LARGE:,} streams ÷ to {SMALL} ({note})",
        },
        f"stream_delivery_p95_{SMALL}_ms{suffix}": {
            "value": round(figures["p95_small"], 1),
            "unit": "ms",
            "target": None,
            "note": f"p95 over {SMALL} streams of POST -> message_done, median of {ROUNDS} ({note})",
        },
        f"stream_delivery_p95_{LARGE}_ms{suffix}": {
            "value": round(figures["p95_large"], 1),
            "unit": "ms",
            "target": None,
            "note": f"p95 over {LARGE:,} streams of POST -> message_done, median of {ROUNDS} ({note})",
        },
        f"stream_open_rate{suffix}": {
            "value": round(figures["open_rate"]),
            "unit": "op/s",
            "target": 500,
            "higher_is_better": True,
            "note": f"{LARGE:,} streams opened at once ({note})",
        },
        f"stream_open_cpu_ms{suffix}": {
            "value": round(figures["open_cpu_ms"], 2),
            "unit": "ms",
            "target": None,
            "note": f"server CPU per stream open, {LARGE:,} at once ({note})",
        },
        f"stream_memory_kb{suffix}": {
            "value": round(figures["memory_kb"], 1),
            "unit": "KB",
            "target": 50,
            "note": f"server RSS growth per idle stream, {LARGE:,} open ({note})",
        },
    }


def run() -> dict[str, dict[str, Any]]:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 4 * LARGE
    if soft != resource.RLIM_INFINITY and soft < wanted:
        limit = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))
    results = _results(_run_shape(), "", "1 worker, SQLite, in-memory layer")
    database, redis = os.environ.get("DATABASE_URL", ""), os.environ.get("REDIS_URL", "")
    if database.startswith(("postgres://", "postgresql://")) and redis:
        figures = _run_shape(database_url=database, redis_url=redis, workers=2)
        results.update(_results(figures, "_redis", "2 web workers, PostgreSQL + Redis"))
    return results


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
