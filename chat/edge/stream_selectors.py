"""Reads for event streams: who may open one, the replay, and the fan-out's reads.

Synchronous on purpose: `chat.edge.fanout` runs them on its own small pool of database
threads (never on a request's thread), which keeps its connections between calls.

The hot ones (an open's access check and replay, a feed's read) are single statements
on a plain cursor: measured on SQLite, compiling the ORM query took 5-20x longer than
running it, and a reconnect storm runs thousands of them. The statements are built from
the models' table and column names, so they follow the models; `tests/chat/test_sse_*.py`
checks them against the ORM's answers on SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
from datetime import UTC, timedelta
from functools import reduce
from operator import or_
from typing import Any, Literal, NamedTuple

from django.contrib.auth import get_user, get_user_model
from django.db import connection
from django.db.models import Q
from django.http import HttpRequest
from django.utils import timezone

from chat.core.models import ApiToken, Conversation, Event, hash_token

# A stream open refreshes its token's `last_used_at` at most this often: a reconnect storm
# must not turn into a storm of writes (every other API call still refreshes it).
TOKEN_TOUCH_INTERVAL = timedelta(seconds=60)
# Why a stream may not open: no (valid) credentials, or not the user's conversation. The
# views turn it into their own responses (these functions run off the request's thread).
Refusal = Literal["unauthorized", "not_found"]
# Conversations per catch-up query (SQLite limits the depth of an OR chain).
CATCH_UP_BATCH = 200


class EventRow(NamedTuple):
    """A persisted event as streams need it: the SSE id, name and JSON payload."""

    id: int
    name: str
    data: dict[str, Any]


def _statements() -> dict[str, str]:
    """The hot statements, with names quoted for the current database."""
    cached = _STATEMENTS.get(connection.vendor)
    if cached is not None:
        return cached
    q = connection.ops.quote_name
    user = get_user_model()
    event, conv, token = Event._meta, Conversation._meta, ApiToken._meta
    # Only names from the models are interpolated; every value is a query parameter.
    statements = {
        "events_after": (
            f"SELECT {q('id')}, {q('name')}, {q('data')} FROM {q(event.db_table)} "  # noqa: S608
            f"WHERE {q(event.get_field('conversation').column)} = %s AND {q('id')} > %s "
            f"ORDER BY {q('id')} LIMIT %s"
        ),
        "token_access": (
            f"SELECT t.{q('id')}, t.{q('last_used_at')}, u.{q(user._meta.pk.column)} "  # noqa: S608
            f"FROM {q(conv.db_table)} c "
            f"JOIN {q(user._meta.db_table)} u ON u.{q(user._meta.pk.column)} = "
            f"c.{q(conv.get_field('owner').column)} "
            f"JOIN {q(token.db_table)} t ON t.{q(token.get_field('user').column)} = "
            f"u.{q(user._meta.pk.column)} "
            f"WHERE c.{q('id')} = %s AND t.{q('key_hash')} = %s AND u.{q('is_active')} = %s"
        ),
        "owned": (
            f"SELECT 1 FROM {q(conv.db_table)} WHERE {q('id')} = %s "  # noqa: S608
            f"AND {q(conv.get_field('owner').column)} = %s"
        ),
    }
    _STATEMENTS[connection.vendor] = statements
    return statements


_STATEMENTS: dict[str, dict[str, str]] = {}


def _fetch(statement: str, params: list[Any]) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(_statements()[statement], params)
        rows: list[tuple[Any, ...]] = cursor.fetchall()
        return rows


def stream_access_for_token(*, raw: str | None, conversation_id: int) -> Refusal | int:
    """The user's id if the bearer token's (active) user owns the conversation, else why
    not.

    One query when access is granted; a refusal spends a second one to tell a bad token
    ("unauthorized") from somebody else's or a missing conversation ("not_found").
    """
    if not raw:
        return "unauthorized"
    key_hash = hash_token(raw)
    rows = _fetch("token_access", [conversation_id, key_hash, True])
    if not rows:
        if ApiToken.objects.filter(key_hash=key_hash, user__is_active=True).exists():
            return "not_found"
        return "unauthorized"
    token_id, last_used, user_id = rows[0]
    now = timezone.now()
    if isinstance(last_used, str):  # SQLite hands back text outside the ORM
        last_used = ApiToken._meta.get_field("last_used_at").to_python(last_used)
    if last_used is not None and timezone.is_naive(last_used):
        last_used = timezone.make_aware(last_used, UTC)
    if last_used is None or now - last_used > TOKEN_TOUCH_INTERVAL:
        ApiToken.objects.filter(pk=token_id).update(last_used_at=now)
    return int(user_id)


def stream_access_for_session(*, request: HttpRequest, conversation_id: int) -> Refusal | int:
    """The user's id if the session's user owns the conversation, else why not (session,
    user, ownership: three queries)."""
    user = get_user(request)
    if not user.is_authenticated:
        return "unauthorized"
    if not _fetch("owned", [conversation_id, user.pk]):
        return "not_found"
    return int(user.pk)


def event_rows_after(*, conversation_id: int, after_id: int, limit: int) -> list[EventRow]:
    """The conversation's events after `after_id`, oldest first, at most `limit`."""
    rows = _fetch("events_after", [conversation_id, after_id, limit])
    return [
        EventRow(event_id, name, json.loads(data) if isinstance(data, str | bytes) else data)
        for event_id, name, data in rows
    ]


def event_last_id(*, conversation_id: int) -> int:
    """The conversation's newest event id (0 when it has none): where a fan-out starts."""
    last = (
        Event.objects.filter(conversation_id=conversation_id)
        .order_by("-id")
        .values_list("id", flat=True)
        .first()
    )
    return last or 0


def conversations_with_events_after(*, cursors: dict[int, int]) -> set[int]:
    """Of `{conversation_id: event_id}`, the conversations that have a newer event.

    Each term is an index range scan on (conversation, id) that finds nothing when the
    fan-out is up to date, so the periodic check costs one cheap query per batch.
    """
    found: set[int] = set()
    items = list(cursors.items())
    for start in range(0, len(items), CATCH_UP_BATCH):
        batch = items[start : start + CATCH_UP_BATCH]
        where = reduce(or_, (Q(conversation_id=cid, id__gt=cursor) for cid, cursor in batch))
        rows = Event.objects.filter(where).order_by().values_list("conversation_id", flat=True)
        found.update(rows.distinct())
    return found
