"""The MCP session host: one asyncio event loop that makes every tool call to a
2025-11-25 server, whose session must stay open while a person answers its question.

A pending call is a coroutine here — no process, no thread. Calls arrive through the
database (chat.mcphost.hosted: the worker marks the `McpCall` row `hosted`; each tick the
host takes what is free), and so do answers: each tick one query reads the cards this host
waits on that are no longer pending, and wakes their coroutines. The ORM work runs on a
small fixed pool of threads (`DB_THREADS`), whatever the number of pending calls.

Where it runs: `manage.py mcp_session_host` (started and supervised by `manage.py serve`
next to the Celery workers), or, under `make run` / AGENT_RUNNER=thread (and in tests),
one background thread of the web process (`host_ensure`). The host holds a lease
(`McpHostLease`, refreshed every third of MCP_HOST_LEASE_SECONDS); if it dies, its calls
end as interrupted (hosted.calls_interrupt_stale) and nothing else is lost. It introduces
itself to servers as this product (client.CLIENT_INFO).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import mcp_types as types
from django.conf import settings
from django.db import connections

from chat.mcphost import client, elicit, hosted, progress
from chat.mcphost.records import McpCall
from chat.mcphost.results import call_result, error_result, url_elicitation_required

logger = logging.getLogger(__name__)
T = TypeVar("T")

TICK_SECONDS = 1.0
DB_THREADS = 4
OUTAGES = (client.MCP_UNAVAILABLE, client.MCP_TIMEOUT)


def _orm(function: Callable[[], T]) -> T:
    """Run ORM work and give the thread's connection back (the pool's threads outlive
    it; a kept connection would stay checked out of the pool)."""
    try:
        return function()
    finally:
        connections.close_all()


def _beat(host: str, stop: threading.Event) -> None:
    """The lease's heartbeat, on a thread of its own: however busy the event loop and
    its ORM threads are, a live host never looks dead."""
    try:
        while not stop.wait(settings.MCP_HOST_LEASE_SECONDS / 3):
            try:
                hosted.lease_beat(host)
            except Exception:  # the database restarting: the next beat tries again
                logger.warning("MCP session host %s: lease beat failed", host, exc_info=True)
                connections.close_all()
    finally:
        connections.close_all()


class SessionHost:
    """Holds the pending calls of one host process (see the module docstring)."""

    def __init__(self, *, tick: float = TICK_SECONDS) -> None:
        self.host_id = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"[:64]
        self.tick = tick
        self.pool = ThreadPoolExecutor(DB_THREADS, thread_name_prefix="mcphost-db")
        self.calls: dict[int, asyncio.Task[None]] = {}
        self.cards: dict[int, asyncio.Future[Any]] = {}
        self.services = elicit.backend()
        self.http = client.HttpClients()  # one connection pool per server, not per call

    async def db(self, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        loop = asyncio.get_running_loop()
        call = functools.partial(function, *args, **kwargs)
        return await loop.run_in_executor(self.pool, _orm, call)

    async def serve(self, stop: threading.Event) -> None:
        """Run until `stop` is set; then the calls still pending end as interrupted."""
        await self.db(hosted.lease_take, self.host_id)
        logger.info("MCP session host %s started", self.host_id)
        beating = threading.Event()
        beat = threading.Thread(
            target=_beat, args=(self.host_id, beating), name="mcphost-lease", daemon=True
        )
        beat.start()
        try:
            while not stop.is_set():
                try:
                    await self.take_calls()
                    await self.settle_cards()
                except Exception:  # the database restarting, say: the next tick tries again
                    logger.exception("MCP session host %s: a tick failed", self.host_id)
                await asyncio.sleep(self.tick)
        finally:
            beating.set()
            await self.shutdown()

    async def take_calls(self) -> None:
        for call in await self.db(hosted.calls_claim, self.host_id):
            task = asyncio.create_task(self.execute(call), name=f"mcp-call-{call.pk}")
            self.calls[call.pk] = task
            task.add_done_callback(functools.partial(self._forget, call.pk))

    def _forget(self, pk: int, _task: asyncio.Task[None]) -> None:
        self.calls.pop(pk, None)

    async def settle_cards(self) -> None:
        if not self.cards or self.services is None:
            return
        settled = await self.db(self.services.elicitations_settled, list(self.cards))
        for pk, outcome in settled.items():
            future = self.cards.pop(pk, None)
            if future is not None and not future.done():
                future.set_result(outcome)

    async def shutdown(self) -> None:
        tasks = list(self.calls.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.http.aclose()
        with contextlib.suppress(Exception):
            await self.db(hosted.lease_release, self.host_id)
        self.pool.shutdown(wait=False)
        logger.info("MCP session host %s stopped", self.host_id)

    # --- one call -------------------------------------------------------------------

    async def execute(self, call: McpCall) -> None:
        server = call.server
        if server is None or not server.enabled:
            message = f"The MCP server {call.server_name} is no longer available."
            await self.db(
                hosted.call_finish, call, self.host_id, error_result("MCP_SERVER_GONE", message)
            )
            return
        session = f"{self.host_id}:{call.pk}"[:64]
        notes = progress.reporter(
            conversation_id=call.conversation_id, tool_call_id=call.tool_call_id, db=self.db
        )
        hooks = client.Hooks(
            elicit=functools.partial(self.elicit, call, session),
            elicitation_complete=functools.partial(self.complete, call, session),
            progress=notes,
        )
        endpoint = client.Endpoint(server.name, server.url, server.request_headers())
        # A call is handed over to be made in 2025-11-25 (its server speaks only that, or
        # speaks both and its tool asks over a back-channel): say so, don't negotiate —
        # automatic mode would pick 2026-07-28 again and the tool's question fail again.
        legacy = call.revision == client.LEGACY_REVISION
        outage = ""
        try:
            result = await client.tool_call_async(
                endpoint,
                call.tool,
                call.arguments,
                hooks,
                seconds=call.budget_left,
                shared=self.http,
                mode=client.LEGACY if legacy else client.AUTO,
            )
            payload = call_result(call.server_name, call.tool, result)
        except client.McpHostError as exc:
            outage = exc.code if exc.code in OUTAGES else ""
            payload = await self.db(self.failure, call, exc)
        except asyncio.CancelledError:  # the host is stopping: the call can't go on
            notes.close()
            with contextlib.suppress(Exception):
                await asyncio.shield(self.db(hosted.call_interrupt, call, self.host_id))
            raise
        notes.close()  # a note held back is older than the result
        await asyncio.shield(
            self.db(hosted.call_finish, call, self.host_id, payload, outage=outage)
        )

    @staticmethod
    def failure(call: McpCall, exc: client.McpHostError) -> dict[str, Any]:
        if exc.code == client.MCP_URL_ELICITATION_REQUIRED:
            return url_elicitation_required(
                call.server_name,
                call.tool,
                exc,
                conversation_id=call.conversation_id,
                run_id=call.run_id,
                call_id=call.tool_call_id,
            )
        return error_result(exc.code, exc.message)

    async def elicit(
        self, call: McpCall, session: str, params: Any, budget: client.Budget
    ) -> types.ElicitResult | types.ErrorData:
        """A server's `elicitation/create`: a card; the budget pauses until it is settled."""
        services = self.services
        if services is None:
            return types.ErrorData(code=types.INVALID_PARAMS, message="Elicitation unsupported.")
        arguments = elicit.open_arguments(
            params,
            conversation_id=call.conversation_id,
            run_id=call.run_id,
            server_name=call.server_name,
            tool_name=call.tool,
            call_id=call.tool_call_id,
        )
        with budget.paused():
            try:
                row = await self.db(services.elicitation_open, **arguments, session_ref=session)
            except services.ElicitationRefused as exc:
                return types.ErrorData(code=types.INVALID_PARAMS, message=str(exc.message))
            future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            self.cards[row.pk] = future
            try:
                outcome = await future
            finally:
                self.cards.pop(row.pk, None)
        if outcome.action == "accept":
            return types.ElicitResult(action="accept", content=outcome.content, _meta=outcome.meta)
        return types.ElicitResult(action="decline" if outcome.action == "decline" else "cancel")

    async def complete(self, call: McpCall, session: str, elicitation_id: str) -> None:
        """URL mode: `notifications/elicitation/complete` closes only this session's card."""
        if self.services is None:
            return
        done = await self.db(
            self.services.elicitation_complete,
            conversation_id=call.conversation_id,
            remote_id=elicitation_id,
            session_ref=session,
        )
        if not done:
            logger.info("MCP server %s completed an unknown elicitation", call.server_name)


# --- the in-process host (make run, tests) ------------------------------------------------

_thread: threading.Thread | None = None
_thread_pid = 0
_thread_stop = threading.Event()
_lock = threading.Lock()


def host_mode() -> str:
    """ "process" (`manage.py mcp_session_host`, started by `serve`) or "thread"."""
    mode = getattr(settings, "MCP_SESSION_HOST", "")
    return mode or ("process" if settings.AGENT_RUNNER == "celery" else "thread")


def host_ensure() -> None:
    """Start this process's host thread if the host runs in-process and isn't running."""
    global _thread, _thread_pid
    if host_mode() != "thread":
        return
    with _lock:
        if _thread is not None and _thread.is_alive() and _thread_pid == os.getpid():
            return
        _thread_stop.clear()
        _thread = threading.Thread(target=_run_thread, name="mcp-session-host", daemon=True)
        _thread_pid = os.getpid()
        _thread.start()
    _await_lease()


def _await_lease(timeout: float = 10.0) -> None:
    """Block until the new host holds its lease (so a call handed over now is taken)."""
    deadline = time.monotonic() + timeout
    while not hosted.host_alive() and time.monotonic() < deadline:
        time.sleep(0.02)


def _run_thread() -> None:
    try:
        asyncio.run(SessionHost().serve(_thread_stop))
    except Exception:
        logger.exception("the MCP session host thread crashed")
    finally:
        connections.close_all()


def host_thread_stop(timeout: float = 10.0) -> None:
    """Stop the in-process host (tests; process exit): pending calls end as interrupted."""
    global _thread
    with _lock:
        thread, _thread = _thread, None
    if thread is not None:
        _thread_stop.set()
        thread.join(timeout)
