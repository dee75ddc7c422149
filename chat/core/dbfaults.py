"""Surviving a dropped database connection (PostgreSQL restarted, a backend terminated,
a pooled connection gone stale).

A dead connection is not a bug in the request or the turn that happened to hold it, so
nobody should see it: a read is simply done again on a fresh connection; a page request
whose view failed on one is run once more (its transaction was rolled back with the
connection, so nothing it wrote is half there); an agent turn is handed to a new attempt,
which resumes from its last persisted step (chat.runs.resume). Anything else that goes
wrong keeps failing the way it did.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar

from django.db import (
    DatabaseError,
    InterfaceError,
    OperationalError,
    connection,
    connections,
    transaction,
)
from django.http import HttpRequest, HttpResponseBase

logger = logging.getLogger(__name__)
T = TypeVar("T")


# PostgreSQL's own "the server is going away" codes (admin shutdown, crash shutdown,
# cannot connect now); class 08 is "connection exception".
SERVER_GONE = frozenset({"57P01", "57P02", "57P03"})


def connection_lost(exc: BaseException) -> bool:
    """Was `exc` (or what caused it) raised because the database connection died, not
    because of the query?

    PostgreSQL says so in the error itself: a server-side error carries its SQLSTATE
    (class 08, or a shutdown code); psycopg's client-side errors (the socket closed, the
    connection is closed) carry none — a query's own error (a lock timeout, a
    serialization failure) always has one. By then Django may already have swapped in a
    fresh connection, so asking the connection is only the fallback for other databases:
    one closed under us, or no longer answering."""
    seen: BaseException | None = exc
    while seen is not None and not isinstance(seen, (OperationalError, InterfaceError)):
        seen = seen.__cause__ or seen.__context__
    if seen is None:
        return False
    cause = seen.__cause__
    if cause is not None and type(cause).__module__.startswith("psycopg"):
        state = getattr(cause, "sqlstate", None)
        return state is None or state.startswith("08") or state in SERVER_GONE
    return connection_broken()


def connection_broken() -> bool:
    """Is a database connection of this thread closed under it, or no longer answering?
    (Ask after a database error, outside any transaction block.)"""
    return any(
        conn.connection is None or not conn.is_usable()
        for conn in connections.all(initialized_only=True)
        if not conn.in_atomic_block
    )


def connections_reset() -> None:
    """Close this thread's connections (outside transaction blocks, which their owner
    ends); the next query opens, or takes from the pool, a fresh one."""
    for conn in connections.all(initialized_only=True):
        if conn.in_atomic_block:
            continue
        try:
            conn.close()
        except DatabaseError:
            logger.debug("closing a broken connection failed", exc_info=True)


def retry_on_connection_loss(
    function: Callable[[], T], *, tries: int = 4, pause: float = 0.25, what: str = ""
) -> T:
    """Call `function`; if the connection died under it, reconnect and call it again (up
    to `tries` calls in all, pausing a little longer each time: a restarting server).

    Only for work that is safe to repeat: reads, or writes made in one transaction that
    died with the connection (and conditional updates that can't apply twice)."""
    for attempt in range(1, tries + 1):
        try:
            return function()
        except (OperationalError, InterfaceError) as exc:
            if attempt == tries or not connection_lost(exc):
                raise
            logger.warning("database connection lost (%s); trying again: %s", what, exc)
            connections_reset()
            time.sleep(pause * attempt)
    raise AssertionError("unreachable")


READS = ("SELECT", "SAVEPOINT", "RELEASE", "ROLLBACK", "SET", "SHOW", "BEGIN", "START")


class CommitWatch:
    """Notes whether a request committed any write (a statement outside a transaction
    block, or a block that committed with writes in it)."""

    def __init__(self) -> None:
        self.committed = False

    def _mark(self) -> None:
        self.committed = True

    def __call__(self, execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        result = execute(sql, params, many, context)
        if not sql.lstrip().upper().startswith(READS):
            conn = context["connection"]
            if conn.in_atomic_block:
                transaction.on_commit(self._mark, using=conn.alias)
            else:
                self._mark()
        return result


class ConnectionLossRetryMiddleware:
    """Run a page or API view again when the database connection died under it, if
    nothing it did was committed: its work died with the connection, so running it again
    is exactly what the person would have done by hand. A view that had committed a write
    is not repeated (that would store it twice); the error stands. Async views are left
    alone (none of ours writes)."""

    retries = 2

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        watch = request._commit_watch = CommitWatch()  # type: ignore[attr-defined]
        with connection.execute_wrapper(watch):
            return self.get_response(request)

    def process_exception(
        self, request: HttpRequest, exception: Exception
    ) -> HttpResponseBase | None:
        match = getattr(request, "resolver_match", None)
        watch: CommitWatch | None = getattr(request, "_commit_watch", None)
        if (
            match is None
            or watch is None
            or watch.committed
            or asyncio.iscoroutinefunction(match.func)
            or not connection_lost(exception)
        ):
            return None
        for attempt in range(1, self.retries + 1):
            logger.warning("database connection lost during %s; running it again", request.path)
            connections_reset()
            time.sleep(0.1 * attempt)
            try:
                response: HttpResponseBase = match.func(request, *match.args, **match.kwargs)
                return response
            except (OperationalError, InterfaceError) as exc:
                if attempt == self.retries or watch.committed or not connection_lost(exc):
                    raise
        return None
