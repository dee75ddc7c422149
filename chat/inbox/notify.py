"""Telling a person a question waits for them: an email right away, or a digest.

`wait_opened` runs after a wait for a person is committed (settings.WAIT_OPENED_HOOKS).
Nothing is sent unless the person chose it (`UserPreferences.notify`; off by default), has
an email address, and has no tab open on that conversation (a tab polls the inbox count
every INBOX_POLL_SECONDS and counts as open for INBOX_PRESENCE_SECONDS: see
chat.inbox.services.presence_on). Browser notifications are the open tabs' business
(static/js/inbox.js, from the same poll). Each email carries its own answer link
(chat.inbox.links).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime

from django.conf import settings
from django.contrib.auth.models import User
from django.core.mail import send_mail
from django.db.models import Max
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from chat.core.models import NotifyMode, UserPreferences, Wait, WaitStatus
from chat.core.preferences import notify_mode
from chat.inbox.links import answer_link_create
from chat.inbox.models import AnswerLink
from chat.inbox.selectors import InboxItem, inbox_item_of_wait, inbox_items, waits_for_person
from chat.inbox.services import presence_on

logger = logging.getLogger(__name__)


def wait_opened(*, wait_id: int) -> bool:
    """Email the person about the wait `wait_id` when they asked for it right away and no
    tab of theirs shows its conversation. True when an email went out."""
    wait = (
        Wait.objects.select_related("conversation", "owner")
        .filter(pk=wait_id, status=WaitStatus.OPEN)
        .first()
    )
    if wait is None or wait.conversation.owner_id != wait.owner_id:
        return False
    owner: User = wait.owner
    if notify_mode(user_id=owner.pk) != NotifyMode.IMMEDIATE or not owner.email:
        return False
    if presence_on(user_id=owner.pk, conversation_id=wait.conversation_id):
        return False  # they are looking at it
    item = inbox_item_of_wait(wait=wait)
    if item.queued:
        return False  # behind a question of its turn the person hears of already
    link = answer_link_create(wait=wait, channel=AnswerLink.Channel.EMAIL)
    with translation.override(wait.conversation.language or settings.LANGUAGE_CODE):
        subject = _("A question is waiting for you: %(title)s") % {"title": _short(item.title)}
        body = render_to_string(
            "chat/inbox/email_question.txt",
            {"item": item, "link": settings.SITE_URL + link, "user": owner, **_urls()},
        )
    send_mail(subject, body, None, [owner.email])
    return True


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _urls() -> dict[str, str]:
    return {
        "inbox_url": settings.SITE_URL + reverse("chat:inbox"),
        "settings_url": settings.SITE_URL + reverse("chat:notify_settings"),
    }


def digest_send(*, now: datetime | None = None) -> int:
    """One email to each person who chose the digest and has questions waiting, listing
    them all (each with its own answer link) — only when one of them opened since their
    last digest. Returns how many emails went out."""
    now = now or timezone.now()
    sent = 0
    people = UserPreferences.objects.filter(notify=NotifyMode.DIGEST).select_related("user")
    for prefs in people:
        user = prefs.user
        newest = waits_for_person(user=user).aggregate(newest=Max("created_at"))["newest"]
        if not user.email or newest is None:
            continue
        if prefs.digest_sent_at is not None and newest <= prefs.digest_sent_at:
            continue  # nothing new since the last one
        try:
            _digest_one(user, inbox_items(user=user))
        except Exception:  # one address that fails must not stop the others
            logger.exception("digest for user %s failed", user.pk)
            continue
        UserPreferences.objects.filter(pk=prefs.pk).update(digest_sent_at=now)
        sent += 1
    return sent


def _digest_one(user: User, items: Sequence[InboxItem]) -> None:
    waits = {w.ref: w for w in waits_for_person(user=user).filter(ref__in=[i.ref for i in items])}
    entries = [
        (
            item,
            settings.SITE_URL
            + answer_link_create(wait=waits[item.ref], channel=AnswerLink.Channel.DIGEST),
        )
        for item in items
        if item.ref in waits
    ]
    newest = waits_for_person(user=user).order_by("-created_at").select_related("conversation")
    first = newest.first()
    language = first.conversation.language if first is not None else settings.LANGUAGE_CODE
    with translation.override(language):
        subject = ngettext(
            "%(n)s question is waiting for you", "%(n)s questions are waiting for you", len(entries)
        ) % {"n": len(entries)}
        body = render_to_string(
            "chat/inbox/email_digest.txt", {"entries": entries, "user": user, **_urls()}
        )
    send_mail(subject, body, None, [user.email])
