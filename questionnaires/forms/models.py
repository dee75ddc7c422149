"""Deferred interactive forms (spec 003)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, TypedDict, cast

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from chat.core.models import Conversation, Message, Run
from questionnaires.protocol.jsontypes import JsonValue

# Its registry name (questionnaires.registry): `Wait.kind`, its cards' analytics kind.
KIND_NAME = "form"

TOOL_NAME = "interactive_form_question"  # the spec-003 tool whose calls open these forms

# What a tool returns to the model (JSON).
ToolResult = dict[str, JsonValue]


class FormOption(TypedDict):
    label: str
    value: str


class FormQuestion(TypedDict):
    """One normalized question of a form (questionnaires.protocol.normalize_interactive_form)."""

    id: str
    question: str
    input_type: Literal["choice", "text"]
    options: list[FormOption]
    multi_select: bool
    multiline: bool
    required: bool
    placeholder: str
    default: str | list[str] | None


def form_questions(render_payload: Mapping[str, object]) -> list[FormQuestion]:
    """The questions of a render payload this app wrote (normalized when the form opened)."""
    questions = render_payload.get("questions")
    return cast(list[FormQuestion], questions) if isinstance(questions, list) else []


class FormStatus(models.TextChoices):
    PENDING = "pending", _("Pending")
    ANSWERED = "answered", _("Answered")
    CANCELLED = "cancelled", _("Cancelled")


class InteractiveForm(models.Model):
    """A deferred `interactive_form_question` (spec 003) waiting for the user."""

    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="interactive_forms"
    )
    run = models.ForeignKey(Run, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # The assistant message carrying the tool call; tool_use_id is the tool call's id.
    message = models.ForeignKey(
        Message, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    tool_use_id = models.CharField(max_length=200)
    ask_id = models.CharField(max_length=64, unique=True)
    render_payload = models.JSONField(default=dict)
    status = models.CharField(max_length=10, choices=FormStatus.choices, default=FormStatus.PENDING)
    answer = models.JSONField(null=True, blank=True)
    answer_message = models.OneToOneField(
        Message, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    answered_at = models.DateTimeField(null=True, blank=True)
    # "Change answer" once the run finished (issue 27): the answer's version (a conditional
    # UPDATE on it makes each change exactly once) and the earlier answers, oldest first:
    # [{"version", "answer", "message_id"}].
    version = models.PositiveIntegerField(default=1)
    earlier = models.JSONField(default=list, blank=True)

    class Meta:
        verbose_name = _("deferred form")
        verbose_name_plural = _("deferred forms")
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
