"""`manage.py inbox_digest`: send the digest of waiting questions now (what Celery beat's
"inbox-digest" does every INBOX_DIGEST_SECONDS; run it from cron without Celery)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from chat.inbox.notify import digest_send


class Command(BaseCommand):
    help = "Email each person who chose the digest the questions waiting for them."

    def handle(self, *args: str, **options: Any) -> None:
        sent = digest_send()
        self.stdout.write(f"{sent} digest email(s) sent")
