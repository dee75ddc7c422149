"""Reads for the analytics pages and CSV exports (one query per list page, a fixed
number per definition's page, whatever the number of answers)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from django.db.models import F, FloatField, QuerySet
from django.db.models.functions import Cast, NullIf
from django.utils.translation import gettext as _

from questionnaires.analytics.charts import Chart, Row, Series, bar_chart
from questionnaires.analytics.models import (
    OUTCOME_COUNTERS,
    AnalyticsCursor,
    CardDefinition,
    DefinitionQuestion,
    Outcome,
)
from questionnaires.analytics.refresh import quantiles


def _rate(counter: str, of: str = "shown_count") -> object:
    return Cast(F(counter), FloatField()) / NullIf(Cast(F(of), FloatField()), 0.0)


def definitions_annotated(queryset: QuerySet[CardDefinition]) -> QuerySet[CardDefinition]:
    """Definitions with their rates (sortable in SQL)."""
    return queryset.annotate(
        answer_rate=_rate("answered_count"),
        skip_rate=_rate("skipped_count"),
        decline_rate=_rate("declined_count"),
        abandon_rate=_rate("abandoned_count"),
        expire_rate=_rate("expired_count"),
        repair_rate=_rate("repaired_count"),
    )


def percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "—"


def duration(seconds: float | None) -> str:
    """under 1 s, 12 s, 3 min 5 s, 2 h 3 min, 4 d 2 h."""
    if seconds is None:
        return "—"
    if seconds < 1:
        return _("under 1 s")
    s = round(seconds)
    if s < 60:
        return _("%(s)s s") % {"s": s}
    if s < 3600:
        return _("%(m)s min %(s)s s") % {"m": s // 60, "s": s % 60}
    if s < 86400:
        return _("%(h)s h %(m)s min") % {"h": s // 3600, "m": s % 3600 // 60}
    return _("%(d)s d %(h)s h") % {"d": s // 86400, "h": s % 86400 // 3600}


def outcome_labels() -> dict[str, str]:
    return {o.value: str(o.label) for o in Outcome}


@dataclass(frozen=True)
class OutcomeLine:
    outcome: str
    label: str
    count: int
    share: str


@dataclass(frozen=True)
class QuestionLine:
    position: int
    question_id: str
    text: str
    type: str
    responses: int
    skipped: int
    skip_rate: str
    other: int | None
    other_rate: str


@dataclass(frozen=True)
class Report:
    definition: CardDefinition
    outcomes: list[OutcomeLine]
    p25: str
    median: str
    p90: str
    repaired_share: str
    questions: list[QuestionLine]
    outcome_chart: Chart
    question_chart: Chart | None


def questions_of(definition: CardDefinition) -> list[QuestionLine]:
    lines: list[QuestionLine] = []
    for q in DefinitionQuestion.objects.filter(definition=definition).order_by("position"):
        lines.append(
            QuestionLine(
                position=q.position + 1,
                question_id=q.question_id,
                text=q.text,
                type=q.type,
                responses=q.responses,
                skipped=q.skipped,
                skip_rate=percent(q.skipped, q.responses),
                other=q.other if q.has_options else None,
                other_rate=percent(q.other, q.responses) if q.has_options else "—",
            )
        )
    return lines


def definition_report(definition: CardDefinition) -> Report:
    shown = definition.shown_count
    labels = outcome_labels()
    lines = [
        OutcomeLine(o, labels[o], getattr(definition, c), percent(getattr(definition, c), shown))
        for o, c in OUTCOME_COUNTERS.items()
    ]
    p25, median, p90 = quantiles(definition.pk, (0.25, 0.5, 0.9))
    questions = questions_of(definition)
    outcome_chart = bar_chart(
        _("Outcomes (share of cards shown)"),
        [Series("bar-share", _("Share of cards shown"))],
        [Row(line.label, [(line.count / shown if shown else 0.0, line.share)]) for line in lines],
    )
    question_chart = None
    if questions:
        question_chart = bar_chart(
            _("Per question (share of responses)"),
            [Series("bar-skipped", _("Skipped")), Series("bar-other", _("“Other” / free text"))],
            [
                Row(
                    f"{q.position}. {q.text}",
                    [
                        (q.skipped / q.responses if q.responses else 0.0, q.skip_rate),
                        (
                            (q.other or 0) / q.responses if q.responses else 0.0,
                            q.other_rate,
                        ),
                    ],
                )
                for q in questions
            ],
        )
    return Report(
        definition=definition,
        outcomes=lines,
        p25=duration(p25),
        median=duration(median),
        p90=duration(p90),
        repaired_share=percent(definition.repaired_count, shown),
        questions=questions,
        outcome_chart=outcome_chart,
        question_chart=question_chart,
    )


def last_refreshed() -> datetime | None:
    return (
        AnalyticsCursor.objects.filter(refreshed_at__isnull=False)
        .order_by("-refreshed_at")
        .values_list("refreshed_at", flat=True)
        .first()
    )


# --- CSV -------------------------------------------------------------------------------

DEFINITION_COLUMNS = [
    "id",
    "kind",
    "title",
    "source",
    "fingerprint",
    "questions",
    "shown",
    "open",
    "answered",
    "skipped",
    "declined",
    "abandoned",
    "expired",
    "answer_rate",
    "median_seconds_to_answer",
    "repaired",
    "repair_attempts",
    "first_shown",
    "last_shown",
]

QUESTION_COLUMNS = [
    "definition_id",
    "position",
    "question_id",
    "text",
    "type",
    "responses",
    "skipped",
    "skip_rate",
    "other",
    "other_rate",
]


def _ratio(part: int, whole: int) -> str:
    return f"{part / whole:.4f}" if whole else ""


def _when(value: datetime | None) -> str:
    return value.isoformat() if value else ""


def definitions_csv(queryset: QuerySet[CardDefinition]) -> Iterator[list[object]]:
    yield list(DEFINITION_COLUMNS)
    for d in queryset.iterator(chunk_size=500):
        yield [
            d.pk,
            d.kind,
            d.title,
            d.source,
            d.fingerprint,
            d.question_count,
            d.shown_count,
            d.open_count,
            d.answered_count,
            d.skipped_count,
            d.declined_count,
            d.abandoned_count,
            d.expired_count,
            _ratio(d.answered_count, d.shown_count),
            "" if d.median_seconds is None else f"{d.median_seconds:.1f}",
            d.repaired_count,
            d.repair_attempts,
            _when(d.first_shown),
            _when(d.last_shown),
        ]


def questions_csv(definition: CardDefinition) -> Iterator[list[object]]:
    yield list(QUESTION_COLUMNS)
    for q in DefinitionQuestion.objects.filter(definition=definition).order_by("position"):
        yield [
            definition.pk,
            q.position + 1,
            q.question_id,
            q.text,
            q.type,
            q.responses,
            q.skipped,
            _ratio(q.skipped, q.responses),
            q.other if q.has_options else "",
            _ratio(q.other, q.responses) if q.has_options else "",
        ]


def csv_safe(value: object) -> object:
    """A cell a spreadsheet won't run: text starting like a formula gets a leading '."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value
