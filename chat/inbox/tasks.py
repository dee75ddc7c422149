"""Celery beat's digest (settings.CELERY_BEAT_SCHEDULE "inbox-digest")."""

from __future__ import annotations

from celery import shared_task

from chat.inbox.notify import digest_send


@shared_task(name="chat.inbox_digest")
def inbox_digest() -> int:
    """One email per person who chose the digest and has something new waiting."""
    return digest_send()
