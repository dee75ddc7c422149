"""Submitted questionnaire answers and deferred interactive forms.

Models reference chat models by string only: `questionnaires` never imports `chat`.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _


class Submission(models.Model):
    """One answered questionnaire card. The unique constraint makes double submits no-ops."""

    conversation = models.ForeignKey(
        "chat.Conversation", on_delete=models.CASCADE, related_name="submissions"
    )
    # The assistant message that carries the questionnaire (inline block or tool call).
    message = models.ForeignKey("chat.Message", on_delete=models.CASCADE, related_name="+")
    questionnaire_id = models.CharField(max_length=200)
    user_message = models.OneToOneField(
        "chat.Message", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Raw form answers {question_id: value | [values]} and {question_id: other text}.
    answers = models.JSONField(default=dict)
    other_text = models.JSONField(default=dict, blank=True)
    # The response payload that was posted as the next user message.
    payload = models.JSONField(default=dict)
    submitted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["conversation", "questionnaire_id"], name="submission_once"
            )
        ]

    def __str__(self) -> str:
        return self.questionnaire_id


class FormStatus(models.TextChoices):
    PENDING = "pending", _("Pending")
    ANSWERED = "answered", _("Answered")
    CANCELLED = "cancelled", _("Cancelled")


class InteractiveForm(models.Model):
    """A deferred `interactive_form_question` (spec 003) waiting for the user."""

    conversation = models.ForeignKey(
        "chat.Conversation", on_delete=models.CASCADE, related_name="interactive_forms"
    )
    run = models.ForeignKey(
        "chat.Run", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The assistant message carrying the tool call; tool_use_id is the tool call's id.
    message = models.ForeignKey(
        "chat.Message", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    tool_use_id = models.CharField(max_length=200)
    ask_id = models.CharField(max_length=64, unique=True)
    render_payload = models.JSONField(default=dict)
    status = models.CharField(max_length=10, choices=FormStatus.choices, default=FormStatus.PENDING)
    answer = models.JSONField(null=True, blank=True)
    answer_message = models.OneToOneField(
        "chat.Message", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    answered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            # At most one pending form per conversation, one successful form per run.
            models.UniqueConstraint(
                fields=["conversation"],
                condition=Q(status="pending"),
                name="one_pending_form_per_conversation",
            ),
            models.UniqueConstraint(
                fields=["run"], condition=Q(run__isnull=False), name="one_form_per_run"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.ask_id} ({self.status})"
