"""What waits for a person, across their conversations (reads only).

One row per open wait for a person (`Wait`, chat.core.waits), described by its kind's
registry hooks: `locate` (where the card is, its question, who asks) and `pending` (the
one-click choices of a short question). A wait whose card can't be found any more still
shows (with its kind's name and a link to the conversation), so the count and the list
always agree.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.db.models import Count, Max, QuerySet
from django.urls import reverse
from django.utils import timezone

from chat.core.models import MCP_CALL_WAIT, Conversation, Wait, WaitStatus
from questionnaires.registry import Choice, Kind, kind_named, kinds

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class InboxItem:
    """One question waiting for the person."""

    ref: str  # the wait's ref: the item's identity in forms and links
    kind: str
    kind_label: str
    conversation_id: int
    conversation_title: str
    agent: str  # the conversation's agent (a registered agent's name)
    asker: str  # who asks when not the agent: an MCP server's name
    title: str  # the question as shown
    since: datetime
    deadline: datetime
    url: str  # the deep link: the conversation page, at the card
    anchor: str
    choices: tuple[Choice, ...]  # one-click answers (none while queued)
    queued: bool = False  # behind an earlier question of its turn

    @property
    def asked_just_now(self) -> bool:
        return timezone.now() - self.since < timedelta(minutes=1)

    @property
    def shown(self) -> str:
        """A fingerprint of the choices as shown: an in-place answer names the choice it
        clicked by position, and is refused if the choices changed since (409)."""
        return choices_fingerprint(self.choices)


def choices_fingerprint(choices: Sequence[Choice]) -> str:
    raw = json.dumps([[c.label, c.payload] for c in choices], sort_keys=True, default=str)
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


def waits_for_person(*, user: User) -> QuerySet[Wait]:
    """The open waits for `user`: their own conversations only (a wait's owner is its
    conversation's owner; both are checked)."""
    return Wait.objects.filter(
        owner_id=user.pk, conversation__owner_id=user.pk, status=WaitStatus.OPEN
    ).exclude(kind=MCP_CALL_WAIT)


def inbox_count(*, user: User) -> int:
    return waits_for_person(user=user).count()


def inbox_items(
    *, user: User, conversation_id: int | None = None, kind: str = ""
) -> list[InboxItem]:
    """Every question waiting for `user`, newest first; optionally of one conversation or
    one kind."""
    waits = waits_for_person(user=user).select_related("conversation")
    if conversation_id is not None:
        waits = waits.filter(conversation_id=conversation_id)
    if kind:
        waits = waits.filter(kind=kind)
    return [_item(w) for w in waits.order_by("-created_at", "-id")]


def inbox_item(*, user: User, ref: str) -> InboxItem | None:
    """The waiting question `ref` of `user`, or None (not theirs, not waiting)."""
    wait = waits_for_person(user=user).select_related("conversation").filter(ref=ref).first()
    return _item(wait) if wait is not None else None


def inbox_item_of_wait(*, wait: Wait) -> InboxItem:
    return _item(wait)


def _kind(name: str) -> Kind | None:
    try:
        return kind_named(name)
    except KeyError:
        return None


def _item(wait: Wait) -> InboxItem:
    conversation: Conversation = wait.conversation
    kind = _kind(wait.kind)
    where = None
    pending = None
    if kind is not None:
        try:
            where = kind.locate(conversation, wait.ref) if kind.locate else None
            pending = kind.pending(conversation, wait.ref) if kind.pending else None
        except Exception:  # one broken card must not take the inbox down with it
            logger.exception("inbox: %s could not be described", wait.ref)
    label = str(kind.label) if kind is not None else wait.kind
    queued = where is not None and where.queued
    url = reverse("chat:conversation", args=[conversation.pk])
    anchor = where.anchor if where is not None else ""
    return InboxItem(
        ref=wait.ref,
        kind=wait.kind,
        kind_label=label,
        conversation_id=conversation.pk,
        conversation_title=str(conversation),
        agent=conversation.agent,
        asker=where.asker if where is not None else "",
        title=(where.title if where is not None else "")
        or (pending.message if pending else "")
        or label,
        since=wait.created_at,
        deadline=wait.deadline,
        url=f"{url}#{anchor}" if anchor else url,
        anchor=anchor,
        choices=pending.choices if pending and kind and kind.resolve and not queued else (),
        queued=queued,
    )


@dataclass(frozen=True)
class FilterOption:
    value: str
    label: str


def inbox_filters(*, user: User) -> tuple[list[FilterOption], list[FilterOption]]:
    """The conversations with a waiting question, and every kind (the filters' options)."""
    rows = (
        waits_for_person(user=user)
        .values_list("conversation_id", "conversation__title")
        .distinct()
        .order_by("conversation_id")
    )
    conversations = [
        FilterOption(str(pk), title or str(Conversation(pk=pk, title=title))) for pk, title in rows
    ]
    kind_options = [FilterOption(k.name, str(k.label)) for k in kinds()]
    return conversations, kind_options


@dataclass(frozen=True)
class Badge:
    """The shell's count: how many questions wait, and the newest wait's id (a tab's cursor
    for "opened since")."""

    count: int
    cursor: int

    @property
    def poll_seconds(self) -> int:
        return int(settings.INBOX_POLL_SECONDS)


def inbox_badge(*, user: User) -> Badge:
    found = waits_for_person(user=user).aggregate(count=Count("id"), cursor=Max("id"))
    return Badge(found["count"] or 0, found["cursor"] or 0)


def inbox_opened_after(*, user: User, after: int) -> list[tuple[Wait, InboxItem]]:
    """The waiting questions opened after the wait id `after`, oldest first."""
    waits = waits_for_person(user=user).filter(id__gt=after).select_related("conversation")
    return [(w, _item(w)) for w in waits.order_by("id")[:10]]
