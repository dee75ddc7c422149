"""Signed, single-use, expiring answer links to one waiting card (notifications).

The URL's token is `django.core.signing` of {link row id, nonce} (salted for this use):
a changed token fails its signature (403 `answer_link_invalid`); the row belongs to one
wait and one person (someone else: 403 `answer_link_other_person`); the row is spent on
first use (410 `answer_link_used`); the link dies with its question (410
`answer_link_question_ended`) and after INBOX_LINK_MAX_AGE (410 `answer_link_expired`).
"""

from __future__ import annotations

import secrets

from django.conf import settings
from django.contrib.auth.models import User
from django.core import signing
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from chat.core.errors import ChatError
from chat.core.models import Wait, WaitStatus
from chat.inbox.models import AnswerLink
from chat.inbox.selectors import InboxItem, inbox_item_of_wait

SALT = "chat.inbox.answer-link"


class LinkRefused(ChatError):
    """An answer link that can't be used: a stable code, a human message, a status."""


def answer_link_create(*, wait: Wait, channel: str) -> str:
    """A new link to `wait`'s card for its owner: the URL path (no host)."""
    link = AnswerLink.objects.create(
        wait=wait, owner_id=wait.owner_id, nonce=secrets.token_hex(16), channel=channel
    )
    token = signing.dumps({"l": link.pk, "n": link.nonce}, salt=SALT)
    return reverse("chat:answer_link", args=[token])


def _row(token: str) -> AnswerLink:
    try:
        data = signing.loads(token, salt=SALT, max_age=settings.INBOX_LINK_MAX_AGE)
    except signing.SignatureExpired:
        raise LinkRefused("answer_link_expired", _("This link has expired."), status=410) from None
    except signing.BadSignature:
        raise LinkRefused(
            "answer_link_invalid",
            _("This link is not valid (it may have been cut or changed)."),
            status=403,
        ) from None
    pk, nonce = (data.get("l"), data.get("n")) if isinstance(data, dict) else (None, None)
    found = None
    if isinstance(pk, int) and isinstance(nonce, str):
        rows = AnswerLink.objects.select_related("wait__conversation")
        found = rows.filter(pk=pk, nonce=nonce).first()
    if found is None:
        raise LinkRefused("answer_link_unknown", _("This link no longer exists."), status=404)
    return found


def answer_link_use(*, token: str, user: User) -> InboxItem:
    """Spend the link `token` for `user` and return its waiting question (the caller goes
    to its card). Raises `LinkRefused`; nothing is spent then."""
    link = _row(token)
    if link.owner_id != user.pk:
        raise LinkRefused(
            "answer_link_other_person",
            _("This link was sent to someone else. Sign in as that person to use it."),
            status=403,
        )
    if link.used_at is not None:
        raise LinkRefused(
            "answer_link_used",
            _("This link was already used. Your waiting questions are in your inbox."),
            status=410,
        )
    wait = link.wait
    if wait.status != WaitStatus.OPEN or wait.deadline <= timezone.now():
        raise LinkRefused(
            "answer_link_question_ended",
            _("This question is no longer waiting for an answer."),
            status=410,
        )
    with transaction.atomic():
        spent = AnswerLink.objects.filter(pk=link.pk, used_at__isnull=True).update(
            used_at=timezone.now()
        )
    if not spent:  # another click got there first
        raise LinkRefused(
            "answer_link_used",
            _("This link was already used. Your waiting questions are in your inbox."),
            status=410,
        )
    return inbox_item_of_wait(wait=wait)
