"""Where a pending 2025-11-25 MCP call's bytes go in the session host (issue 21's
`waits_host_kb_per_call`), measured without the whole production shape.

N calls of the 2025-11-25 test server's `book` tool (it asks with `ctx.elicit`) are made
the session host's way (`client.tool_call_async` with an elicitation hook that waits on a
future, as `SessionHost.elicit` does) against the server in a subprocess of its own, so
only the client side is counted. Once all N wait for "a person", tracemalloc's snapshot is
diffed with the one taken before they started (after a warm-up round, so lazily built
caches are not counted), and the process's RSS growth is read too. Then every card is
declined and every call must end with the server's "not booked: decline".

`hostmem_kb_per_pending_call`: traced Python memory per pending call (the target of
issue 21 is 50 KB per pending legacy call); its note names the libraries the bytes
belong to and the RSS growth (allocator slack included: noisier).

`python -m bench.bench_hostmem [N] [--top K]` prints the biggest allocation sites too.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any

from tests.support.liveserver import free_port

CALLS = 50
BATCH = 10
TRACE_FRAMES = 30


def _rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _where(trace: tracemalloc.Traceback) -> str:
    """The allocation's owner: the innermost frame in a library the client uses (mcp,
    httpx2, httpcore2, anyio, h11…), else the innermost frame."""
    for frame in reversed(trace):  # (a traceback lists the oldest frame first)
        name = frame.filename
        if "site-packages" in name:
            package = name.split("site-packages/")[1].split("/")[0]
            return f"{package} ({name.split('site-packages/')[1]}:{frame.lineno})"
    frame = trace[-1]
    return f"{frame.filename}:{frame.lineno}"


async def _measure(url: str, calls: int, top: int) -> dict[str, Any]:
    import mcp_types as types

    from chat.mcphost import client

    endpoint = client.Endpoint("bench", url)
    asked = 0
    waiting: list[asyncio.Future[None]] = []
    all_asked = asyncio.Event()
    target = 0

    async def elicit(_params: Any, budget: client.Budget) -> types.ElicitResult:
        nonlocal asked
        with budget.paused():
            future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            waiting.append(future)
            asked += 1
            if asked >= target:
                all_asked.set()
            await future
        return types.ElicitResult(action="decline")

    hooks = client.Hooks(elicit=elicit)
    shared = None if os.environ.get("BENCH_HOSTMEM_PER_CALL_CLIENT") else client.HttpClients()

    async def round_of(n: int) -> list[types.CallToolResult]:
        nonlocal target, asked
        asked = 0
        tasks: list[asyncio.Task[types.CallToolResult]] = []
        for start in range(0, n, BATCH):  # a loaded machine's connect timeout is not tested here
            target = min(start + BATCH, n)
            all_asked.clear()
            tasks += [
                asyncio.create_task(
                    client.tool_call_async(endpoint, "book", {}, hooks, shared=shared)
                )
                for _ in range(target - start)
            ]
            await asyncio.wait_for(all_asked.wait(), 120)
        await asyncio.sleep(0.5)  # the GET streams and keep-alives settle
        return await _finish(tasks)

    async def _finish(tasks: list[asyncio.Task[types.CallToolResult]]) -> list[Any]:
        state["pending"] = len(waiting)
        if state.get("measure"):
            gc.collect()
            state["after"] = tracemalloc.take_snapshot()
            state["rss_after"] = _rss_kb()
        for future in waiting:
            future.set_result(None)
        waiting.clear()
        return list(await asyncio.gather(*tasks))

    state: dict[str, Any] = {}
    await round_of(3)  # warm-up: imports, caches, the connection pool's first use
    gc.collect()
    tracemalloc.start(TRACE_FRAMES)
    state["measure"] = True
    gc.collect()
    before = tracemalloc.take_snapshot()
    rss_before = _rss_kb()
    results = await round_of(calls)
    tracemalloc.stop()
    texts = {getattr(r.content[0], "text", "") for r in results if r.content}
    if texts != {"not booked: decline"}:
        raise RuntimeError(f"the calls did not end as declined: {texts}")
    after: tracemalloc.Snapshot = state["after"]
    keep = [tracemalloc.Filter(False, tracemalloc.__file__)]
    diff = after.filter_traces(keep).compare_to(before.filter_traces(keep), "traceback")
    total = sum(stat.size_diff for stat in diff)
    owners: dict[str, int] = {}
    for stat in diff:
        owner = _where(stat.traceback)
        owners[owner] = owners.get(owner, 0) + stat.size_diff
    packages: dict[str, int] = {}
    for owner, size in owners.items():
        package = owner.split(" ")[0]
        packages[package] = packages.get(package, 0) + size
    sites: dict[str, int] = {}
    for stat in diff:  # the SDK's line that led to it (its innermost frame in mcp/)
        sdk = [f for f in stat.traceback if "site-packages/mcp/" in f.filename]
        frame = sdk[-1] if sdk else stat.traceback[-1]
        site = f"{frame.filename.split('site-packages/')[-1]}:{frame.lineno}"
        sites[site] = sites.get(site, 0) + stat.size_diff
    return {
        "calls": calls,
        "pending": state["pending"],
        "kb_per_call": total / 1024 / calls,
        "rss_kb_per_call": (state["rss_after"] - rss_before) / calls,
        "by_package_kb_per_call": {
            k: round(v / 1024 / calls, 2)
            for k, v in sorted(packages.items(), key=lambda kv: -kv[1])
            if abs(v) / calls >= 100
        },
        "top_sites_kb_per_call": {
            k: round(v / 1024 / calls, 2)
            for k, v in sorted(owners.items(), key=lambda kv: -kv[1])[:top]
        },
        "sdk_lines_kb_per_call": {
            k: round(v / 1024 / calls, 2)
            for k, v in sorted(sites.items(), key=lambda kv: -kv[1])[:top]
        },
    }


def measure(calls: int = CALLS, top: int = 25) -> dict[str, Any]:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chat.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ.setdefault("MCP_CONNECT_TIMEOUT", "60")  # a loaded machine: not measured here
    os.environ.setdefault("MCP_TOOL_TIMEOUT", "600")
    import django

    django.setup()
    logging.getLogger("httpx2").setLevel(logging.WARNING)
    logging.getLogger("mcp").setLevel(logging.WARNING)
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.support.mcp_servers", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        from tests.support.mcp_servers import _await_port

        _await_port(port, server, "the 2025-11-25 MCP server")
        return asyncio.run(_measure(f"http://127.0.0.1:{port}/mcp", calls, top))
    finally:
        server.kill()
        server.wait(5)


def run() -> dict[str, dict[str, Any]]:
    """In a fresh interpreter: other benchmarks' imports and garbage don't count."""
    out = subprocess.run(
        [sys.executable, "-m", "bench.bench_hostmem", str(CALLS), "--json"],
        capture_output=True,
        text=True,
        check=True,
        timeout=1800,
    )
    found = json.loads(out.stdout.strip().splitlines()[-1])
    biggest = ", ".join(f"{k} {v}" for k, v in list(found["by_package_kb_per_call"].items())[:5])
    note = (
        f"traced Python memory of {found['calls']} pending calls of the SDK's 2025-11-25 "
        f"server, KB per call by library: {biggest}; RSS growth "
        f"{found['rss_kb_per_call']:.0f} KB per call (allocator slack included)"
    )
    return {
        "hostmem_kb_per_pending_call": {
            "value": round(found["kb_per_call"], 1), "unit": "KB", "target": 50, "note": note,
        },
    }  # fmt: skip


if __name__ == "__main__":
    args = sys.argv[1:]
    n = int(args[0]) if args and args[0].isdigit() else CALLS
    top = int(args[args.index("--top") + 1]) if "--top" in args else 25
    found = measure(n, top)
    if "--json" in args:
        print(json.dumps(found))
    else:
        print(json.dumps(found, indent=2))
