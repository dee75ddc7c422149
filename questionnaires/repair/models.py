"""What conversation repair did with a typed reply while a question waited (analytics and
the re-ask bound): one row per typed reply that met a waiting question."""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _

from chat.core.models import Conversation


class RepairOutcome(models.TextChoices):
    ANSWERED = "answered", _("Answered from the typed reply")
    PROPOSED = "proposed", _("Filled, waiting for a confirming click")
    CONFIRMED = "confirmed", _("Filled and confirmed")
    DIGRESSION = "digression", _("Not an answer: asked again")
    SKIPPED = "skipped", _("Skipped or declined in words")
    EXHAUSTED = "exhausted", _("Asked too often: left unanswered")
    AMENDED = "amended", _("Earlier answer changed in words")
    DISMISSED = "dismissed", _("Sent as a message instead")


class Repair(models.Model):
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="repairs")
    wait_ref = models.CharField(max_length=80, db_index=True)  # the waiting question's Wait.ref
    kind = models.CharField(max_length=20)  # its kind's name
    typed_text = models.TextField()  # exactly as the person typed it
    outcome = models.CharField(max_length=12, choices=RepairOutcome.choices)
    payload = models.JSONField(default=dict, blank=True)  # what was read (a proposal's answer)
    reprompts = models.PositiveSmallIntegerField(default=0)  # times asked again so far
    open = models.BooleanField(default=False)  # shown to the person now (proposal, re-ask)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("conversation repair")
        verbose_name_plural = _("conversation repairs")
        indexes = [models.Index(fields=["conversation", "open"])]

    def __str__(self) -> str:
        return f"{self.wait_ref}: {self.outcome}"
