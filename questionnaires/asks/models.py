"""Answers to structured asks (spec 004)."""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from chat.core.models import Conversation, Message

# Its registry name (questionnaires.registry): `Wait.kind`, its cards' analytics kind.
KIND_NAME = "ask"


class StructuredAnswer(models.Model):
    """One answer to an `ask_user_options` request (spec 004), or a slot edit."""

    class Source(models.TextChoices):
        OPTION_CLICK = "user_option_click", _("Option click")
        FREE_TEXT = "user_free_text", _("Free text")
        SKIPPED = "user_skipped", _("Skipped")
        EDIT = "user_edit", _("Slot edit")

    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="structured_answers"
    )
    ask_message = models.ForeignKey(
        Message, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    user_message = models.OneToOneField(
        Message, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    turn_id = models.CharField(max_length=100)
    field = models.CharField(max_length=100)
    value = models.JSONField(null=True, blank=True)
    display_text = models.TextField(blank=True)
    raw_text = models.TextField(blank=True)
    source = models.CharField(max_length=20, choices=Source.choices)
    confidence = models.FloatField(default=1.0)
    # A change of an earlier answer to the same ask ("Change answer", issue 27). One-to-one:
    # each version is changed at most once, however many tabs send a change of it.
    amends = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="amended_by"
    )
    # The question as the person saw it when they answered (DESIGN §4.14): {"question",
    # "options": [{"value", "label"}], "widget" (the ask's, "panel" for a side-panel edit,
    # "not_shown" for a slot read from words typed for another question), "language"}.
    shown = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("structured answer")
        verbose_name_plural = _("structured answers")
        ordering = ["id"]
        constraints = [
            # An ask is answered once, however many tabs submit it (changes amend it).
            models.UniqueConstraint(
                fields=["ask_message", "field"],
                condition=Q(ask_message__isnull=False, amends__isnull=True),
                name="structured_answer_first_once_per_ask",
            )
        ]
