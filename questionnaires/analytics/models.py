"""Analytics rows: card definitions (grouped by fingerprint), each card shown, rollups.

Counts are rollups kept by `questionnaires.analytics.refresh` in the same transaction
that records or settles a `CardInstance`, so a page reads one row per definition however
many answers there are. Instances hold plain ids, not foreign keys: a deleted
conversation leaves its counts in place.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from questionnaires import registry


class Outcome(models.TextChoices):
    """What became of a card shown. `open`: it can still be answered. `queued`: asked but
    not shown yet — an ask waiting behind an earlier question of its turn (the page shows
    a turn's questions one at a time); it counts nowhere until it is shown."""

    QUEUED = "queued", _("Not shown yet")
    OPEN = "open", _("Open")
    ANSWERED = "answered", _("Answered")
    SKIPPED = "skipped", _("Skipped")
    DECLINED = "declined", _("Declined")
    ABANDONED = "abandoned", _("Abandoned")
    EXPIRED = "expired", _("Expired")


# The counter column of each outcome on CardDefinition.
OUTCOME_COUNTERS: dict[str, str] = {
    o.value: f"{o.value}_count" for o in Outcome if o != Outcome.QUEUED
}


class CardDefinition(models.Model):
    """One questionnaire, ask, form or elicitation definition: every card shown with the
    same kind, title and fields (questionnaires.analytics.fingerprint) counts here."""

    # A registered kind's name (questionnaires.registry; not enumerated here: a new kind
    # needs no migration). A kind no longer registered keeps its counts.
    kind = models.CharField(_("kind"), max_length=12)
    fingerprint = models.CharField(_("fingerprint"), max_length=64, unique=True)
    title = models.CharField(_("title"), max_length=300, blank=True)
    # Where it comes from, when the kind says (an MCP server and tool, an ask's field).
    source = models.CharField(_("source"), max_length=300, blank=True)
    question_count = models.PositiveSmallIntegerField(_("questions"), default=0)
    first_shown = models.DateTimeField(_("first shown"), null=True, blank=True)
    last_shown = models.DateTimeField(_("last shown"), null=True, blank=True)
    shown_count = models.PositiveIntegerField(_("shown"), default=0)
    open_count = models.PositiveIntegerField(_("open"), default=0)
    answered_count = models.PositiveIntegerField(_("answered"), default=0)
    skipped_count = models.PositiveIntegerField(_("skipped"), default=0)
    declined_count = models.PositiveIntegerField(_("declined"), default=0)
    abandoned_count = models.PositiveIntegerField(_("abandoned"), default=0)
    expired_count = models.PositiveIntegerField(_("expired"), default=0)
    # Cards that self-check had to repair before they were shown, and the attempts spent.
    repaired_count = models.PositiveIntegerField(_("repaired"), default=0)
    repair_attempts = models.PositiveIntegerField(_("repair attempts"), default=0)
    median_seconds = models.FloatField(_("median time to answer"), null=True, blank=True)

    class Meta:
        ordering = ["-last_shown", "id"]
        verbose_name = _("questionnaire analytics")
        verbose_name_plural = _("questionnaire analytics")
        indexes = [models.Index(fields=["kind", "-last_shown"], name="carddef_kind_last")]

    def __str__(self) -> str:
        return self.title or self.fingerprint[:12]

    @property
    def kind_label(self) -> str:
        """Its kind's label (`Kind.label`), or its name once that kind is unregistered."""
        kind = registry.kind_of(self.kind)
        return str(kind.label) if kind is not None else self.kind


class DefinitionQuestion(models.Model):
    """One question of a definition and how people answered it (rollup)."""

    definition = models.ForeignKey(
        CardDefinition, on_delete=models.CASCADE, related_name="questions"
    )
    position = models.PositiveSmallIntegerField()
    question_id = models.CharField(max_length=200)
    text = models.TextField(blank=True)
    type = models.CharField(max_length=40, blank=True)
    # Whether it offers options: "Other"/free text is counted only for those.
    has_options = models.BooleanField(default=False)
    # Cards answered or skipped that carried the question; of those, left empty; given
    # "Other" / free text instead of an option.
    responses = models.PositiveIntegerField(default=0)
    skipped = models.PositiveIntegerField(default=0)
    other = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["definition", "position"]
        constraints = [
            models.UniqueConstraint(fields=["definition", "question_id"], name="defquestion_once")
        ]


class CardInstance(models.Model):
    """One card shown to a person and what became of it."""

    definition = models.ForeignKey(
        CardDefinition, on_delete=models.CASCADE, related_name="instances"
    )
    kind = models.CharField(max_length=12)  # as CardDefinition.kind
    # The card: "inline:<message id>:<questionnaire id>", "ask:<message id>",
    # "form:<form id>", "elicitation:<elicitation id>".
    ref = models.CharField(max_length=250, unique=True)
    conversation_id = models.BigIntegerField()
    message_id = models.BigIntegerField(null=True, blank=True)
    outcome = models.CharField(max_length=10, choices=Outcome.choices, default=Outcome.OPEN)
    shown_at = models.DateTimeField()
    settled_at = models.DateTimeField(null=True, blank=True)
    # Seconds from shown to answered (answered cards only).
    seconds = models.FloatField(null=True, blank=True)
    repairs = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["id"]
        indexes = [
            # The refresh walks the open cards only, in id order.
            models.Index(fields=["id"], condition=Q(outcome="open"), name="cardinst_open"),
            # Median and quartiles of a definition: an index range, no sort.
            models.Index(
                fields=["definition", "seconds"],
                condition=Q(seconds__isnull=False),
                name="cardinst_def_seconds",
            ),
        ]


class AnalyticsCursor(models.Model):
    """How far the refresh has read a source table (its last id, safely behind)."""

    source = models.CharField(max_length=40, unique=True)
    last_id = models.BigIntegerField(default=0)
    refreshed_at = models.DateTimeField(null=True, blank=True)
