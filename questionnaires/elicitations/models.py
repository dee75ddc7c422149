"""MCP elicitations: an external MCP server asks the person for input during a tool call."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from chat.core.models import Conversation, Message, Run

# Its registry name (questionnaires.registry): `Wait.kind`, its cards' analytics kind.
KIND_NAME = "elicitation"


class ElicitationMode(models.TextChoices):
    FORM = "form", _("Form")
    URL = "url", _("Link")


class ElicitationStatus(models.TextChoices):
    PENDING = "pending", _("Pending")
    ACCEPTED = "accepted", _("Accepted")
    DECLINED = "declined", _("Declined")
    CANCELLED = "cancelled", _("Cancelled")
    EXPIRED = "expired", _("Expired")
    COMPLETED = "completed", _("Completed")  # URL mode: the server said it is done
    REFUSED = "refused", _("Refused")  # never answerable: unsupported or secret fields
    ABANDONED = "abandoned", _("Abandoned")  # the MCP call died while it waited


class Elicitation(models.Model):
    """One `elicitation/create` request and its one answer.

    The answer is recorded by a conditional UPDATE (`… WHERE status = 'pending'`): of any
    number of tabs submitting at once, exactly one wins.
    """

    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="elicitations"
    )
    run = models.ForeignKey(Run, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # The assistant message the card is attached to (one per elicitation).
    message = models.OneToOneField(Message, on_delete=models.CASCADE, related_name="+")
    server_name = models.CharField(max_length=200)
    tool_name = models.CharField(max_length=200, blank=True)
    tool_call_id = models.CharField(max_length=200, blank=True)
    mode = models.CharField(max_length=4, choices=ElicitationMode.choices)
    prompt = models.TextField(blank=True)
    requested_schema = models.JSONField(null=True, blank=True)
    url = models.TextField(blank=True)
    remote_id = models.CharField(max_length=200, blank=True, db_index=True)
    # 2026-07-28: the key of the server's input request this card answers.
    input_key = models.CharField(max_length=200, blank=True)
    # The MCP session (2025-11-25) that asked: a completion notice closes only cards of
    # the server and session that opened them.
    session_ref = models.CharField(max_length=64, blank=True)
    status = models.CharField(
        max_length=10, choices=ElicitationStatus.choices, default=ElicitationStatus.PENDING
    )
    content = models.JSONField(null=True, blank=True)
    answered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    answered_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)
    # Why it is refused or abandoned: a stable code and the human reason.
    refused_code = models.CharField(max_length=64, blank=True)
    refused_reason = models.TextField(blank=True)

    class Meta:
        verbose_name = _("MCP question")
        verbose_name_plural = _("MCP questions")
        app_label = "questionnaires"
        ordering = ["id"]
        indexes = [models.Index(fields=["conversation", "status"], name="elicitation_conv_status")]

    def __str__(self) -> str:
        return f"{self.server_name} {self.mode} ({self.status})"

    @property
    def action(self) -> str:
        """The MCP action this state answers: accept, decline or cancel."""
        if self.status in (ElicitationStatus.ACCEPTED, ElicitationStatus.COMPLETED):
            return "accept"
        return "decline" if self.status == ElicitationStatus.DECLINED else "cancel"
