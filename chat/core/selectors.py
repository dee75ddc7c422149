"""Reads. Views, the API and agents read through these functions."""

from __future__ import annotations

import re
from collections.abc import Iterable

from django.conf import settings
from django.contrib.auth.models import User
from django.contrib.postgres.search import SearchQuery, SearchVector
from django.db import connection
from django.db.models import Exists, OuterRef, Q, QuerySet

from chat.core.errors import NotFound
from chat.core.identity import RunIdentity
from chat.core.models import Conversation, Message, QuestionBudget, Role, Run, RunStatus


def conversation_list_for_user(*, user: User) -> QuerySet[Conversation]:
    return Conversation.objects.filter(owner=user).order_by("-updated_at")


SEARCH_TERMS = 8


def conversation_search_for_user(*, user: User, query: str) -> QuerySet[Conversation]:
    """The user's conversations whose title or visible message text matches `query`,
    newest first (the sidebar's search; an empty query lists them all).

    On PostgreSQL message text is searched with full-text search (the `simple`
    configuration, each word as a prefix, so results follow typing; the chat/0011 GIN
    index serves it), titles by substring; elsewhere (SQLite) each word by substring."""
    found = conversation_list_for_user(user=user)
    query = " ".join(query.split())[:200]
    if not query:
        return found
    messages = Message.objects.filter(conversation=OuterRef("pk"), hidden=False).exclude(
        role=Role.TOOL
    )
    if connection.vendor == "postgresql":
        terms = re.findall(r"\w+", query)[:SEARCH_TERMS]
        if not terms:
            return found.filter(title__icontains=query)
        words = SearchQuery(" & ".join(f"{t}:*" for t in terms), config="simple", search_type="raw")
        vector = SearchVector("content", config="simple")
        matches = messages.annotate(words=vector).filter(words=words)
        return found.filter(Q(title__icontains=query) | Exists(matches))
    for word in query.split()[:SEARCH_TERMS]:  # every word, in any order
        found = found.filter(
            Q(title__icontains=word) | Exists(messages.filter(content__icontains=word))
        )
    return found


def conversation_get_for_user(*, user: User, conversation_id: int | str) -> Conversation:
    """The user's conversation; anyone else's (or a missing one) is a 404."""
    try:
        return Conversation.objects.get(pk=conversation_id, owner=user)
    except (Conversation.DoesNotExist, ValueError, TypeError):
        raise NotFound() from None


def message_list_visible(*, conversation: Conversation, after_seq: int = 0) -> QuerySet[Message]:
    """Messages the chat shows, in order (hidden diagnostics and tool results excluded)."""
    return conversation.messages.filter(seq__gt=after_seq, hidden=False).exclude(role=Role.TOOL)


def message_list_all(*, conversation: Conversation) -> QuerySet[Message]:
    return conversation.messages.order_by("seq")


def message_get(*, conversation: Conversation, message_id: int) -> Message:
    try:
        return conversation.messages.get(pk=message_id)
    except (Message.DoesNotExist, ValueError, TypeError):
        raise NotFound() from None


def message_latest_visible_assistant_seq(*, conversation: Conversation) -> int | None:
    """Seq of the assistant message whose cards may be answered, or None.

    DESIGN §4.12: the latest assistant message with visible content, provided no user
    message follows it. Tool results and hidden diagnostics don't count.
    """
    latest = (
        conversation.messages.filter(hidden=False, role__in=[Role.USER, Role.ASSISTANT])
        .exclude(role=Role.ASSISTANT, content="", tool_calls=[])
        .order_by("-seq")
        .values_list("seq", "role")
        .first()
    )
    if latest is None or latest[1] != Role.ASSISTANT:
        return None
    return latest[0]


def run_active(*, conversation: Conversation) -> Run | None:
    return (
        conversation.runs.filter(status__in=[RunStatus.QUEUED, RunStatus.RUNNING])
        .order_by("-id")
        .first()
    )


def run_latest(*, conversation: Conversation) -> Run | None:
    return conversation.runs.order_by("-id").first()


def run_identity_live(identity: RunIdentity) -> bool:
    """A run token is honoured only while its run is queued or running, in its user's
    conversation, and that user is active: it dies with its run and its user."""
    return Run.objects.filter(
        pk=identity.run_id,
        conversation_id=identity.conversation_id,
        conversation__owner_id=identity.user_id,
        conversation__owner__is_active=True,
        status__in=[RunStatus.QUEUED, RunStatus.RUNNING],
    ).exists()


def tool_results(*, conversation_id: int, call_ids: Iterable[str]) -> dict[str, str]:
    """tool call id -> content (JSON text) of the ``tool`` message answering it, the first
    one if several (one query for any number of calls)."""
    ids = [c for c in call_ids if c]
    if not ids:
        return {}
    rows = (
        Message.objects.filter(
            conversation_id=conversation_id, role=Role.TOOL, tool_call_id__in=ids
        )
        .order_by("seq")
        .values_list("tool_call_id", "content")
    )
    found: dict[str, str] = {}
    for call_id, content in rows:
        found.setdefault(call_id, content)
    return found


def question_budget_limits(*, agent: str) -> tuple[int | None, int | None, bool]:
    """An agent's question budget (issue 27): `(per turn, per conversation, one card)`,
    from its admin row, else the settings' defaults."""
    row = QuestionBudget.objects.filter(agent=agent).first()
    if row is not None:
        return row.per_turn, row.per_conversation, row.one_card
    return (
        settings.QUESTION_BUDGET_PER_TURN,
        settings.QUESTION_BUDGET_PER_CONVERSATION,
        settings.QUESTION_BUDGET_ONE_CARD,
    )
