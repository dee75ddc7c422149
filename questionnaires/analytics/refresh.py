"""Keeping the analytics up to date: incremental, idempotent, and off the answer path.

`analytics_refresh` reads each source table past its cursor (new cards), re-reads the
cards still open (their outcome may have changed), and records both in one transaction
per batch: new `CardInstance` rows, settled ones, and the same changes added to the
rollup counters of their `CardDefinition` and `DefinitionQuestion` rows. The admin
pages read the rollups only.

Why a refresh rather than counters bumped where cards are shown and answered: the
outcomes are derived from rows the kinds already write (a submission, a wait's end, an
elicitation's status), several of them by other processes (the reaper's expiry, Stop,
the MCP session host); hooking analytics into every one of those writes would put a
dependency on analytics inside each kind and on the hot path of every answer, and a
missed hook would drift for ever. A refresh reads the source of truth, costs the answer
path nothing, and `--rebuild` recomputes everything exactly. It runs every
`ANALYTICS_REFRESH_SECONDS` from Celery beat, from `manage.py analytics_refresh`, and from
the admin page's *Refresh now*.

A cursor only moves past rows older than `LAG` (a row committed late, by a transaction
that took its id earlier, is still read); rows newer than that are read again next time
and skipped (an instance's `ref` is unique).
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import F, Value
from django.db.models.functions import Coalesce, Greatest, Least
from django.utils import timezone

from questionnaires.analytics import outcomes
from questionnaires.analytics.models import (
    OUTCOME_COUNTERS,
    AnalyticsCursor,
    CardDefinition,
    CardInstance,
    DefinitionQuestion,
    Outcome,
)
from questionnaires.analytics.outcomes import OTHER, SKIPPED, Observation

LAG = timedelta(seconds=30)
# Every open card is read again this often (else only those whose rows show a change).
FULL_RECHECK = timedelta(hours=1)
BATCH = 1000


@dataclass
class RefreshResult:
    created: int = 0
    settled: int = 0
    more: bool = False  # stopped at its budget with rows still to read

    def __iadd__(self, other: RefreshResult) -> RefreshResult:
        self.created += other.created
        self.settled += other.settled
        self.more = self.more or other.more
        return self


class _Deltas:
    """Counter changes per definition and per question, applied as one UPDATE each."""

    def __init__(self) -> None:
        self.definitions: dict[int, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        self.questions: dict[tuple[int, str], dict[str, int]] = defaultdict(
            lambda: defaultdict(int)
        )
        self.shown: dict[int, tuple[datetime, datetime]] = {}
        self.timed: set[int] = set()

    def settle(self, definition_id: int, obs: Observation) -> None:
        counts = self.definitions[definition_id]
        counts[OUTCOME_COUNTERS[obs.outcome]] += 1
        if obs.outcome == Outcome.ANSWERED:
            self.timed.add(definition_id)
        for qid, result in obs.questions.items():
            q = self.questions[(definition_id, qid[:200])]
            q["responses"] += 1
            q["skipped"] += result == SKIPPED
            q["other"] += result == OTHER

    def show(self, definition_id: int, obs: Observation) -> None:
        counts = self.definitions[definition_id]
        counts["shown_count"] += 1
        if obs.repairs:
            counts["repaired_count"] += 1
            counts["repair_attempts"] += obs.repairs
        first, last = self.shown.get(definition_id, (obs.shown_at, obs.shown_at))
        self.shown[definition_id] = (min(first, obs.shown_at), max(last, obs.shown_at))
        self.settle(definition_id, obs)

    def apply(self) -> None:
        for definition_id, counts in self.definitions.items():
            changes: dict[str, object] = {name: F(name) + n for name, n in counts.items() if n}
            if definition_id in self.shown:
                first, last = self.shown[definition_id]
                changes["first_shown"] = Least(
                    Coalesce(F("first_shown"), Value(first)), Value(first)
                )
                changes["last_shown"] = Greatest(
                    Coalesce(F("last_shown"), Value(last)), Value(last)
                )
            if changes:
                CardDefinition.objects.filter(pk=definition_id).update(**changes)
        for (definition_id, qid), counts in self.questions.items():
            DefinitionQuestion.objects.filter(definition_id=definition_id, question_id=qid).update(
                **{name: F(name) + n for name, n in counts.items() if n}
            )
        for definition_id in self.timed:
            CardDefinition.objects.filter(pk=definition_id).update(
                median_seconds=median_seconds(definition_id)
            )


def median_seconds(definition_id: int) -> float | None:
    """The median time to answer, read off the (definition, seconds) index."""
    return quantiles(definition_id, (0.5,))[0]


def quantiles(definition_id: int, points: Iterable[float]) -> list[float | None]:
    timed = CardInstance.objects.filter(definition_id=definition_id, seconds__isnull=False)
    count = timed.count()
    found: list[float | None] = []
    for p in points:
        if not count:
            found.append(None)
            continue
        # Linear between the two closest ranks (the median of an even count is the mean
        # of the middle two); one index range read, no sort.
        rank = (count - 1) * p
        low = int(rank)
        values = [
            float(v or 0.0)
            for v in timed.order_by("seconds").values_list("seconds", flat=True)[low : low + 2]
        ]
        upper = values[-1] if rank > low else values[0]
        found.append(values[0] + (upper - values[0]) * (rank - low))
    return found


def _definitions(observations: list[Observation]) -> dict[str, int]:
    """fingerprint -> definition id, creating the definitions (and their questions) that
    are new."""
    specs = {obs.spec.fingerprint(): obs.spec for obs in observations}
    known = dict(
        CardDefinition.objects.filter(fingerprint__in=list(specs)).values_list("fingerprint", "id")
    )
    for fingerprint, spec in specs.items():
        if fingerprint in known:
            continue
        definition, created = CardDefinition.objects.get_or_create(
            fingerprint=fingerprint,
            defaults={
                "kind": spec.kind,
                "title": (spec.title or spec.label)[:300],
                "source": spec.source[:300],
                "question_count": len(spec.questions),
            },
        )
        if created:
            # Ids cut to 200 characters could meet (a server's property names): first wins.
            DefinitionQuestion.objects.bulk_create(
                (
                    DefinitionQuestion(
                        definition=definition,
                        position=n,
                        question_id=q.id[:200],
                        text=q.text,
                        type=q.type[:40],
                        has_options=bool(q.options),
                    )
                    for n, q in enumerate(spec.questions)
                ),
                ignore_conflicts=True,
            )
        known[fingerprint] = definition.pk
    return known


def record(observations: list[Observation]) -> RefreshResult:
    """Record new cards and settle open ones, with their rollups (caller's transaction)."""
    result = RefreshResult()
    if not observations:
        return result
    definitions = _definitions(observations)
    existing = {
        ref: (pk, outcome)
        for pk, ref, outcome in CardInstance.objects.filter(
            ref__in=[o.ref for o in observations]
        ).values_list("pk", "ref", "outcome")
    }
    deltas = _Deltas()
    new: list[CardInstance] = []
    for obs in observations:
        definition_id = definitions[obs.spec.fingerprint()]
        if obs.ref not in existing:
            existing[obs.ref] = (0, obs.outcome)
            new.append(
                CardInstance(
                    definition_id=definition_id,
                    kind=obs.kind,
                    ref=obs.ref,
                    conversation_id=obs.conversation_id,
                    message_id=obs.message_id,
                    outcome=obs.outcome,
                    shown_at=obs.shown_at,
                    settled_at=obs.settled_at,
                    seconds=obs.seconds,
                    repairs=obs.repairs,
                )
            )
            if obs.outcome != Outcome.QUEUED:  # not shown yet: counted once it is
                deltas.show(definition_id, obs)
            continue
        pk, outcome = existing[obs.ref]
        if outcome == Outcome.QUEUED:
            if obs.outcome != Outcome.QUEUED and CardInstance.objects.filter(
                pk=pk, outcome=Outcome.QUEUED
            ).update(
                outcome=obs.outcome,
                shown_at=obs.shown_at,
                settled_at=obs.settled_at,
                seconds=obs.seconds,
            ):
                deltas.show(definition_id, obs)  # shown now (and maybe settled already)
                result.settled += obs.outcome != Outcome.OPEN
            continue
        if outcome != Outcome.OPEN or obs.outcome in (Outcome.OPEN, Outcome.QUEUED):
            continue  # a settled card stays as it was first recorded
        # Conditional: of two refreshes settling it at once, one counts it.
        if CardInstance.objects.filter(pk=pk, outcome=Outcome.OPEN).update(
            outcome=obs.outcome, settled_at=obs.settled_at, seconds=obs.seconds
        ):
            deltas.definitions[definition_id]["open_count"] -= 1
            deltas.settle(definition_id, obs)
            result.settled += 1
    CardInstance.objects.bulk_create(new, ignore_conflicts=True)
    result.created = len(new)
    deltas.apply()
    return result


def _gone(refs: set[str], now: datetime) -> RefreshResult:
    """Open cards whose rows are gone (the conversation was deleted): abandoned."""
    if not refs:
        return RefreshResult()
    # never shown: nothing counted them, so nothing is left to count
    CardInstance.objects.filter(ref__in=refs, outcome=Outcome.QUEUED).delete()
    gone = CardInstance.objects.filter(ref__in=refs, outcome=Outcome.OPEN)
    per_definition: dict[int, int] = defaultdict(int)
    for definition_id in gone.values_list("definition_id", flat=True):
        per_definition[definition_id] += 1
    settled = gone.update(outcome=Outcome.ABANDONED, settled_at=now)
    for definition_id, n in per_definition.items():
        CardDefinition.objects.filter(pk=definition_id).update(
            open_count=F("open_count") - n, abandoned_count=F("abandoned_count") + n
        )
    return RefreshResult(settled=settled)


def _cursor(source: str) -> AnalyticsCursor:
    cursor, _created = AnalyticsCursor.objects.get_or_create(source=source)
    return AnalyticsCursor.objects.select_for_update().get(pk=cursor.pk)


def sources_batch(*, limit: int = BATCH, now: datetime | None = None) -> tuple[RefreshResult, bool]:
    """One batch of every source past its cursor, in one transaction. Returns what it
    did and whether more is waiting (a source had a full batch and its cursor moved)."""
    now = now or timezone.now()
    result = RefreshResult()
    more = False
    with transaction.atomic():
        cursors = {source: _cursor(source) for source in outcomes.cursors()}
        for source, cursor in cursors.items():
            before = cursor.last_id
            batch = outcomes.source_after(source, cursor.last_id, limit=limit)
            result += record(batch.observations)
            for pk, created_at in batch.rows:
                if created_at > now - LAG:
                    break
                cursor.last_id = pk
            more = more or (len(batch.rows) == limit and cursor.last_id != before)
            cursor.refreshed_at = now
            cursor.save(update_fields=["last_id", "refreshed_at"])
    return result, more


def open_recheck(
    *, messages_after: int, full: bool, limit: int = BATCH, now: datetime | None = None
) -> RefreshResult:
    """Settle the open cards that may have changed since the message cursor stood at
    `messages_after` (all of them with `full`), in batches, oldest first."""
    now = now or timezone.now()
    result = RefreshResult()
    after = 0
    while True:
        with transaction.atomic():
            cards = list(
                CardInstance.objects.filter(
                    outcome__in=(Outcome.OPEN, Outcome.QUEUED), id__gt=after
                )
                .order_by("id")
                .values_list("id", "ref", "conversation_id")[:limit]
            )
            if not cards:
                return result
            after = cards[-1][0]
            pairs = [(ref, conversation) for _pk, ref, conversation in cards]
            refs = (
                {ref for ref, _c in pairs}
                if full
                else outcomes.refs_changed(pairs, messages_after=messages_after)
            )
            found = outcomes.refs_observe(refs)
            result += record(found)
            result += _gone(refs - {o.ref for o in found}, now)


def analytics_refresh(
    *, limit: int = BATCH, now: datetime | None = None, budget: float | None = None
) -> RefreshResult:
    """Bring the analytics up to date: every source past its cursor, then the open cards
    that may have changed (every open card, once an hour: `FULL_RECHECK`).

    With `budget` (seconds) it stops reading sources once that is spent (a request's
    *Refresh now* on a large backlog) and says `more`; the next refresh goes on."""
    now = now or timezone.now()
    ends = None if budget is None else time.monotonic() + budget
    messages_after = (
        AnalyticsCursor.objects.filter(source=outcomes.MESSAGES)
        .values_list("last_id", flat=True)
        .first()
        or 0
    )
    total = RefreshResult()
    while True:
        result, more = sources_batch(limit=limit, now=now)
        total += result
        if not more:
            break
        if ends is not None and time.monotonic() > ends:
            total.more = True
            return total
    with transaction.atomic():
        recheck = _cursor("recheck")
        full = recheck.refreshed_at is None or recheck.refreshed_at <= now - FULL_RECHECK
        if full:
            recheck.refreshed_at = now
            recheck.save(update_fields=["refreshed_at"])
    total += open_recheck(messages_after=messages_after, full=full, limit=limit, now=now)
    return total


def analytics_rebuild() -> RefreshResult:
    """Forget every instance and rollup and read everything again."""
    with transaction.atomic():
        CardInstance.objects.all().delete()
        DefinitionQuestion.objects.all().delete()
        CardDefinition.objects.all().delete()
        AnalyticsCursor.objects.all().delete()
    return analytics_refresh()
