"""The inbox's records: answer links (signed, single use) and where the person's tabs are."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from chat.core.models import Wait


class AnswerLink(models.Model):
    """A link to one waiting card, for its owner, sent in a notification.

    The URL carries a signed token naming this row and its nonce (chat.inbox.links): the
    signature stops tampering (another card, another person), the row makes it single use
    (`used_at`), and it dies with its wait (a wait that is no longer open refuses it)."""

    class Channel(models.TextChoices):
        EMAIL = "email", _("Email")
        DIGEST = "digest", _("Digest email")
        BROWSER = "browser", _("Browser notification")

    wait = models.ForeignKey(Wait, on_delete=models.CASCADE, related_name="+")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    nonce = models.CharField(max_length=32, unique=True)
    channel = models.CharField(max_length=10, choices=Channel.choices)
    created_at = models.DateTimeField(auto_now_add=True)
    used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = _("answer link")
        verbose_name_plural = _("answer links")

    def __str__(self) -> str:
        return f"{self.channel} link to {self.wait_id}"


class Presence(models.Model):
    """When a tab of the person last said it was open (`conversation_id` 0: any page of the
    app; else that conversation's page). Tabs say so on each inbox poll (chat.inbox.presence)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    conversation_id = models.PositiveBigIntegerField()
    seen_at = models.DateTimeField()

    class Meta:
        verbose_name = _("open tab")
        verbose_name_plural = _("open tabs")
        constraints = [
            models.UniqueConstraint(fields=["user", "conversation_id"], name="presence_unique")
        ]

    def __str__(self) -> str:
        return f"{self.user_id} on {self.conversation_id or 'the app'}"
