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

from django.db import DatabaseError, InterfaceError, OperationalError, connections
from django.http import HttpRequest, HttpResponseBase

logger = logging.getLogger(__name__)
T = TypeVar("T")


def connection_lost(exc: BaseException) -> bool:
    """Was `exc` raised because the database connection died (not because of the query)?

    Decided by asking the connection, not by parsing messages: after such an error a
    dead connection fails its own liveness check."""
    return isinstance(exc, (OperationalError, InterfaceError)) and connection_dead()


def connection_dead() -> bool:
    """Has a database connection this thread opened died (closed under it, or no longer
    answering)? Call it after something failed, outside any transaction block."""
    for connection in connections.all(initialized_only=True):
        if connection.connection is None or connection.in_atomic_block:
            continue  # not connected (the next query connects), or can't tell yet
        if not connection.is_usable():
            return True
    return False


def connections_reset() -> None:
    """Close this thread's connections (outside transaction blocks, which their owner
    ends); the next query opens, or takes from the pool, a fresh one."""
    for connection in connections.all(initialized_only=True):
        if connection.in_atomic_block:
            continue
        try:
            connection.close()
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


class ConnectionLossRetryMiddleware:
    """Run a page or API view once more when the database connection died under it.

    The view's work was in transactions that died with the connection, and every answer
    path is idempotent or refuses a second answer (409), so running it again is what the
    person would have done by hand. Async views are left alone (none of ours writes)."""

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> Any:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> Any:
        match = getattr(request, "resolver_match", None)
        if (
            match is None
            or getattr(request, "_connection_retried", False)
            or asyncio.iscoroutinefunction(match.func)
            or not connection_lost(exception)
        ):
            return None
        request._connection_retried = True  # type: ignore[attr-defined]
        logger.warning("database connection lost during %s; running it again", request.path)
        connections_reset()
        response: HttpResponseBase = match.func(request, *match.args, **match.kwargs)
        return response
