"""Answered inline questionnaire cards (spec 000)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from chat.core.models import Conversation, Message

# Its registry name (questionnaires.registry): `Wait.kind`, its cards' analytics kind.
KIND_NAME = "inline"


class Submission(models.Model):
    """One version of a card's answer: version 1 is the first answer, 2, 3… the person's
    changes ("Change answer", issue 27).  The unique (conversation, questionnaire id,
    version) constraint makes each version exactly once, however many tabs submit it."""

    class Status(models.TextChoices):
        SUBMITTED = "submitted", _("Submitted")
        DECLINED = "declined", _("Declined")

    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="submissions"
    )
    # The assistant message that carries the questionnaire (inline block or tool call).
    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="+")
    questionnaire_id = models.CharField(max_length=200)
    user_message = models.OneToOneField(
        Message, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Raw form answers {question_id: value | [values]} and {question_id: other text}.
    answers = models.JSONField(default=dict)
    other_text = models.JSONField(default=dict, blank=True)
    # Question ids the person skipped (their answers are empty, provenance "skipped").
    skipped = models.JSONField(default=list, blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.SUBMITTED)
    version = models.PositiveIntegerField(default=1)
    # The response payload that was posted as the next user message.
    payload = models.JSONField(default=dict)
    # The card as the person saw it when they answered (DESIGN §4.14): {"title",
    # "language", "questions": [{"id", "type", "text", "options": [{"value", "label"}],
    # "allow_other", "other_label", "widget"}]}.
    shown = models.JSONField(default=dict, blank=True)
    submitted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("questionnaire answer")
        verbose_name_plural = _("questionnaire answers")
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["conversation", "questionnaire_id", "version"],
                name="submission_once_per_version",
            )
        ]

    def __str__(self) -> str:
        return f"{self.questionnaire_id} v{self.version}"
