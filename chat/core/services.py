"""Writes. Views, the API, admin actions and agents change state only through these."""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from chat.core.agents import agent_named
from chat.core.errors import ChatError
from chat.core.metadata import MessageMetadata
from chat.core.models import (
    ApiToken,
    Conversation,
    Event,
    Message,
    Role,
    Run,
    hash_token,
)
from chat.core.realtime import wake
from chat.core.runs import run_request
from chat.core.stream_events import EVENT_NAMES, EventName
from chat.core.waits import waits_close_answered
from questionnaires.protocol.jsontypes import JsonValue

# --- events ----------------------------------------------------------------------------


def event_emit(*, conversation_id: int, name: EventName, data: Mapping[str, object]) -> Event:
    """Persist a stream event and wake every listener once the transaction commits.

    Listeners read the events themselves (by id, from the database), so a wake-up that is
    lost or arrives out of order never loses an event. `name` is one of EVENT_NAMES (the
    list the page's JS follows): any other is a programming error, refused before a row.
    """
    if name not in EVENT_NAMES:
        raise ValueError(f"unknown stream event name {name!r} (chat.core.stream_events)")
    # No savepoint when nested: an event is part of its caller's transaction.
    with transaction.atomic(savepoint=False):
        # A conversation's events are written one transaction at a time (its row lock),
        # so ids are committed in order: a stream that has read id N can never later
        # miss an id below N that was still uncommitted.
        locked = Conversation.objects.select_for_update().filter(pk=conversation_id)
        list(locked.order_by().values_list("pk"))
        event = Event.objects.create(conversation_id=conversation_id, name=name, data=data)
    transaction.on_commit(lambda: wake(conversation_id, event.id))
    return event


PRUNE_BATCH = 5000


def event_prune_deltas(*, older_than: float) -> int:
    """Delete `text_delta` and `tool_progress` events older than `older_than` seconds;
    returns how many.

    The message those fragments built is stored, and a call's progress matters only while
    it runs, so only the typing animation of a replay is lost. Deleted in batches, so no
    statement holds its locks for long.
    """
    cutoff = timezone.now() - timedelta(seconds=older_than)
    old = Event.objects.filter(name__in=("text_delta", "tool_progress"), created_at__lt=cutoff)
    deleted = 0
    while True:
        ids = list(old.order_by("id").values_list("id", flat=True)[:PRUNE_BATCH])
        if not ids:
            return deleted
        deleted += Event.objects.filter(id__in=ids).delete()[0]


# --- conversations -----------------------------------------------------------------------


def conversation_create(
    *, owner: User, title: str = "", agent: str | None = None, language: str = "en"
) -> Conversation:
    agent = agent_named(agent or settings.CHAT_DEFAULT_AGENT).name  # 400 `agent_invalid`
    title = (title or "").strip()[:200]
    lang = "zh-hans" if language.lower().startswith("zh") else "en"
    return Conversation.objects.create(owner=owner, title=title, agent=agent, language=lang)


def conversation_rename(*, conversation: Conversation, title: str) -> Conversation:
    title = " ".join((title or "").split())[:200]
    if not title:
        raise ChatError("title_empty", _("Type a name first."))
    conversation.title = title
    conversation.save(update_fields=["title", "updated_at"])
    return conversation


def conversation_delete(*, conversation: Conversation) -> None:
    """Delete a conversation with its messages, runs, events and answers."""
    conversation.delete()


def conversation_name_from(*, conversation: Conversation, text: str) -> None:
    """Name an untitled conversation after its first typed message (first line, ~60 chars)."""
    if conversation.title:
        return
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    # Markdown markers make poor names: "**repeat** this" becomes "repeat this".
    line = " ".join(line.translate(str.maketrans("", "", "*_`~")).lstrip("#> ").split())
    if len(line) > 60:
        line = line[:59].rsplit(" ", 1)[0].rstrip(" ,.;:") + "…"
    if line:
        Conversation.objects.filter(pk=conversation.pk, title="").update(title=line)
        conversation.title = line


# --- messages ----------------------------------------------------------------------------


def message_create(
    *,
    conversation: Conversation,
    role: str,
    content: str = "",
    display_content: str = "",
    tool_calls: Sequence[Mapping[str, JsonValue]] | None = None,
    tool_call_id: str = "",
    readonly: bool = False,
    hidden: bool = False,
    metadata: MessageMetadata | None = None,
    run: Run | None = None,
) -> Message:
    """Append a message with the next sequence number and tell open tabs about it."""
    if role not in Role.values:
        raise ChatError("role_invalid", _("Unknown role “%(role)s”.") % {"role": role})
    for attempt in range(5):
        try:
            with transaction.atomic():
                # Lock the conversation row: seq assignment is serialized per conversation.
                locked = Conversation.objects.select_for_update().only("id").get(pk=conversation.pk)
                last = locked.messages.order_by("-seq").values_list("seq", flat=True).first()
                message = Message.objects.create(
                    conversation_id=conversation.pk,
                    seq=(last or 0) + 1,
                    role=role,
                    content=content,
                    display_content=display_content,
                    tool_calls=tool_calls or [],
                    tool_call_id=tool_call_id,
                    readonly=readonly,
                    hidden=hidden,
                    metadata=metadata or {},
                    run=run,
                )
                Conversation.objects.filter(pk=conversation.pk).update(updated_at=timezone.now())
                if not hidden:
                    event_emit(
                        conversation_id=conversation.pk,
                        name="message_done",
                        data={"message_id": message.pk, "seq": message.seq, "role": role},
                    )
                return message
        except IntegrityError:
            if attempt == 4:
                raise
    raise AssertionError("unreachable")


def message_content_replace(*, message: Message, content: str) -> Message:
    """An agent's own message brought up to date in place (the intake's summary after a
    slot edit): the same message, its new content stored, and open tabs told so
    (`message_done` for it again; each tab re-renders it because its card state changed)."""
    with transaction.atomic():
        Message.objects.filter(pk=message.pk).update(content=content)
        message.content = content
        event_emit(
            conversation_id=message.conversation_id,
            name="message_done",
            data={"message_id": message.pk, "seq": message.seq, "role": message.role},
        )
    return message


def message_check_size(content: str, *, limit: int | None = None) -> None:
    limit = limit or settings.CHAT_MAX_MESSAGE_CHARS
    if len(content) > limit:
        raise ChatError(
            "message_too_long",
            _("The message is %(n)s characters long; the limit is %(limit)s.")
            % {"n": len(content), "limit": limit},
            status=413,
        )


def answer_post(
    *,
    conversation: Conversation,
    content: str,
    display_content: str = "",
    metadata: MessageMetadata | None = None,
    lock_event: Mapping[str, object] | None = None,
) -> Message:
    """Where every way of answering ends: post the user message, lock the answered card in
    every open tab (`card_locked` with `lock_event`), and request the next agent turn.

    One transaction: the message, the lock and the run row commit together, so a process
    that dies afterwards can leave nothing half done (the run is started from its row).
    """
    message_check_size(content)
    # A person past their daily token budget: `run_request` (chat.core.runs.run_create)
    # refuses the turn, and the caller's transaction rolls back whatever it wrote.
    with transaction.atomic():
        message = message_create(
            conversation=conversation,
            role=Role.USER,
            content=content,
            display_content=display_content,
            metadata=metadata,
        )
        if lock_event is not None:
            event_emit(conversation_id=conversation.pk, name="card_locked", data=lock_event)
        # The person answered: the cards that waited for a new message are done.
        waits_close_answered(conversation=conversation, message=message)
        run_request(conversation=conversation, message=message)
    return message


# --- API tokens --------------------------------------------------------------------------


def api_token_create(*, user: User, name: str = "") -> tuple[ApiToken, str]:
    """Create a token; the raw value is returned once and only its hash is stored."""
    raw = "qc_" + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(user=user, name=name, key_hash=hash_token(raw), prefix=raw[:10])
    return token, raw


def api_token_touch(*, token: ApiToken) -> None:
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=timezone.now())
