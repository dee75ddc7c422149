"""Questionnaire analytics at 1,000,000 answers (issue 26, item 5).

Builds 1,000,000 recorded cards (`CardInstance`: 80 % answered, the rest skipped,
declined, abandoned, expired or open) over 500 definitions of 5 questions each, with the
rollups that `questionnaires.analytics.refresh` keeps — with bulk inserts (`executemany`
on SQLite, `COPY` on PostgreSQL) — then times, through Django's test client as a
signed-in superuser:

- `analytics_list_ms`: the admin list page (50 definitions, sorted by answered share);
- `analytics_list_queries_ms`: that page's data alone (the count and 50 annotated rows):
  the rest of `analytics_list_ms` is Django admin rendering its table, whatever the data;
- `analytics_detail_ms`: the report page of the largest definition (200,000 cards:
  outcomes, median and quartiles read off the index, per-question table, two SVG charts);
- `analytics_csv_ms`: the CSV export of every definition;
- `analytics_refresh_ms_per_card`: the incremental refresh recording 1,000 new inline
  cards (half of them answered) on top of the million;
- `analytics_recheck_ms_per_open_card`: the next refresh looking at the 500 still open
  (index lookups only: none changed); `analytics_full_recheck_ms_per_open_card`: the
  hourly refresh that reads every open card whole (parsed) again;
- `analytics_group_by_ms` (reference, no target): what one list page would cost counting
  outcomes from the cards (`GROUP BY definition, outcome`) instead of the rollups.

Page times are wall-clock medians of 7 (after a warm call); this process's CPU for the
two pages is in their `what` (steady when other work loads the machine; on SQLite it
includes the database's work). Throwaway SQLite by default; `BENCH_ANALYTICS_DATABASE_URL=postgres://…/db` runs it on
that (empty, disposable) PostgreSQL database instead.
"""

from __future__ import annotations

import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

CARDS = 1_000_000
DEFINITIONS = 500
QUESTIONS = 5
BIG = 200_000  # cards of the largest definition (the detail page's)
NEW_CARDS = 1000
OFFSET = 10**9
RUNS = 7
OUTCOMES = (
    ("answered", 0.80),
    ("skipped", 0.05),
    ("declined", 0.03),
    ("abandoned", 0.09),
    ("expired", 0.03),
)
# (No card is left open: the refresh re-reads open cards from their source rows, and
# these have none.)
CARD = """A few questions.

```questionnaire
title: New card {n}
questions:
  - type: single_choice
    text: Where to?
    options:
      - Paris
      - Rome
    default: Paris
    allow_other: true
  - type: free_text
    text: Anything else?
    default: ""
```
"""


def _setup(url: str) -> None:
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chat.settings")
    os.environ.setdefault("AGENT_RUNNER", "inline")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def _sizes() -> list[int]:
    """Cards per definition: one of BIG, the rest spread unevenly (Zipf-like)."""
    weights = [1 / (n + 1) for n in range(DEFINITIONS - 1)]
    rest = CARDS - BIG
    sizes = [max(1, int(rest * w / sum(weights))) for w in weights]
    sizes[0] += rest - sum(sizes)
    return [BIG, *sizes]


def _build() -> int:
    """Bulk-insert the definitions, questions and cards; returns the big definition's id."""
    from django.db import connection, transaction

    from questionnaires.analytics.models import CardDefinition, DefinitionQuestion

    rng = random.Random(26)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    sizes = _sizes()
    definitions = CardDefinition.objects.bulk_create(
        CardDefinition(
            kind="inline",
            fingerprint=f"bench{n:06d}",
            title=f"Intake questionnaire {n}",
            question_count=QUESTIONS,
        )
        for n in range(DEFINITIONS)
    )
    DefinitionQuestion.objects.bulk_create(
        DefinitionQuestion(
            definition=d,
            position=q,
            question_id=f"q{q + 1}",
            text=f"Question {q + 1}",
            type="single_choice",
            has_options=True,
        )
        for d in definitions
        for q in range(QUESTIONS)
    )
    names = [name for name, _share in OUTCOMES]
    shares = [share for _name, share in OUTCOMES]
    rows: list[tuple[Any, ...]] = []
    card = 0
    for definition, size in zip(definitions, sizes, strict=True):
        counts = dict.fromkeys(names, 0)
        timed: list[float] = []
        first = last = None
        for outcome in rng.choices(names, shares, k=size):
            card += 1
            counts[outcome] += 1
            shown = start + timedelta(seconds=card * 20)
            first, last = first or shown, shown
            seconds = rng.lognormvariate(3.5, 1.0) if outcome == "answered" else None
            if seconds is not None:
                timed.append(seconds)
            settled = None if outcome == "open" else shown + timedelta(seconds=seconds or 600)
            rows.append(
                (
                    definition.pk,
                    "inline",
                    f"inline:{OFFSET + card}:{OFFSET + card}_q1",  # ids past the real ones
                    card,
                    OFFSET + card,
                    outcome,
                    shown,
                    settled,
                    seconds,
                    1 if card % 50 == 0 else 0,
                )
            )
        timed.sort()
        CardDefinition.objects.filter(pk=definition.pk).update(
            shown_count=size,
            first_shown=first,
            last_shown=last,
            median_seconds=statistics.median(timed) if timed else None,
            repaired_count=size // 50,
            repair_attempts=size // 50,
            **{f"{name}_count": n for name, n in counts.items()},
        )
        responses = counts["answered"] + counts["skipped"]
        DefinitionQuestion.objects.filter(definition=definition).update(
            responses=responses, skipped=responses // 10, other=responses // 20
        )
    columns = (
        "definition_id, kind, ref, conversation_id, message_id, outcome, shown_at, "
        "settled_at, seconds, repairs"
    )
    table = "questionnaires_cardinstance"
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            raw = cursor.cursor
            with raw.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        else:
            marks = ", ".join(["%s"] * 10)
            for n in range(0, len(rows), 50_000):
                cursor.executemany(
                    f"INSERT INTO {table} ({columns}) VALUES ({marks})",  # noqa: S608 (constants)
                    rows[n : n + 50_000],
                )
            cursor.execute("ANALYZE")
    if connection.vendor == "postgresql":  # autovacuum's steady state: index-only scans
        with connection.cursor() as cursor:
            cursor.execute(f"VACUUM ANALYZE {table}")
    return definitions[0].pk


CPU: dict[str, float] = {}  # this process's CPU per call (ms): steady when the machine is busy


def _time(func: Callable[[], object], name: str = "") -> float:
    """Median wall-clock ms of RUNS calls (after a warm one); the median CPU ms of this
    process goes to CPU[name]."""
    func()
    samples, cpu = [], []
    for _ in range(RUNS):
        began, began_cpu = time.perf_counter(), time.process_time()
        func()
        samples.append(time.perf_counter() - began)
        cpu.append(time.process_time() - began_cpu)
    CPU[name] = statistics.median(cpu) * 1000
    return statistics.median(samples) * 1000


def _new_cards() -> tuple[float, float, float]:
    """1,000 new inline cards (half answered) recorded by the refresh, then the open half
    read again by the next refresh: ms per card for each."""
    from django.contrib.auth.models import User

    from chat.core.models import Conversation, Message
    from questionnaires.analytics.refresh import FULL_RECHECK, analytics_refresh
    from questionnaires.inline.models import Submission

    owner = User.objects.create_user("bench-cards")
    past = datetime.now(tz=UTC) - timedelta(hours=1)
    conversations = Conversation.objects.bulk_create(
        Conversation(owner=owner, title=f"c{n}", agent="external") for n in range(NEW_CARDS)
    )
    messages = Message.objects.bulk_create(
        Message(conversation=c, seq=1, role="assistant", content=CARD.format(n=n % 20))
        for n, c in enumerate(conversations)
    )
    Message.objects.filter(pk__in=[m.pk for m in messages]).update(created_at=past)
    Submission.objects.bulk_create(
        Submission(
            conversation_id=m.conversation_id,
            message=m,
            questionnaire_id=f"{m.pk}_q1",
            answers={"q1": "Paris", "q2": ""},
        )
        for m in messages[::2]
    )
    began = time.perf_counter()
    result = analytics_refresh()
    elapsed = time.perf_counter() - began
    assert result.created == NEW_CARDS, result
    # The half left unanswered stay open: the next refresh looks at them (index lookups
    # only, nothing changed), and once an hour it reads them all whole again.
    began = time.perf_counter()
    again = analytics_refresh()
    recheck = time.perf_counter() - began
    assert (again.created, again.settled) == (0, 0), again
    began = time.perf_counter()
    analytics_refresh(now=datetime.now(tz=UTC) + FULL_RECHECK)
    full = time.perf_counter() - began
    per_open = 1000 / (NEW_CARDS // 2)
    return elapsed * 1000 / NEW_CARDS, recheck * per_open, full * per_open


def _bench() -> dict[str, dict[str, Any]]:
    from django.contrib.auth.models import User
    from django.db import connection
    from django.db.models import Count
    from django.test import Client

    from questionnaires.analytics.models import CardInstance

    began = time.perf_counter()
    big = _build()
    build_seconds = time.perf_counter() - began
    admin = User.objects.create_superuser("bench-admin", "b@example.org", "x")
    client = Client()
    client.force_login(admin)
    base = "/admin/questionnaires/carddefinition/"

    def get(url: str) -> Callable[[], object]:
        def fetch() -> object:
            response = client.get(url)
            assert response.status_code == 200, (url, response.status_code)
            return response.content

        return fetch

    def group_by() -> object:
        return list(
            CardInstance.objects.values("definition_id", "outcome")
            .annotate(n=Count("id"))
            .order_by()
        )

    def list_queries() -> object:
        from questionnaires.analytics.models import CardDefinition
        from questionnaires.analytics.selectors import definitions_annotated

        rows = definitions_annotated(CardDefinition.objects.all())
        return rows.count(), list(rows.order_by("-answer_rate", "-pk")[:50])

    list_ms = _time(get(f"{base}?o=-4"), "list")
    list_sql_ms = _time(list_queries, "queries")
    detail_ms = _time(get(f"{base}{big}/change/"), "detail")
    csv_ms = _time(get(f"{base}csv/"), "csv")
    group_ms = _time(group_by, "group")
    refresh_ms, recheck_ms, full_ms = _new_cards()
    where = "PostgreSQL" if connection.vendor == "postgresql" else "SQLite"
    what = f"1,000,000 cards, 500 definitions ({where}; built in {build_seconds:.0f} s)"
    return {
        "analytics_list_ms": {
            "value": round(list_ms, 1),
            "unit": "ms",
            "target": 200,
            "what": f"admin list page, {what}; CPU {CPU['list']:.0f} ms",
        },
        "analytics_list_queries_ms": {
            "value": round(list_sql_ms, 2),
            "unit": "ms",
            "target": 20,
            "what": "the list page's data: count + 50 definitions sorted by answered share",
        },
        "analytics_detail_ms": {
            "value": round(detail_ms, 1),
            "unit": "ms",
            "target": 200,
            "what": f"report page of a 200,000-card definition; CPU {CPU['detail']:.0f} ms",
        },
        "analytics_csv_ms": {
            "value": round(csv_ms, 1),
            "unit": "ms",
            "target": 500,
            "what": "CSV of every definition",
        },
        "analytics_refresh_ms_per_card": {
            "value": round(refresh_ms, 2),
            "unit": "ms",
            "target": 10,
            "what": "incremental refresh, 1,000 new cards",
        },
        "analytics_recheck_ms_per_open_card": {
            "value": round(recheck_ms, 2),
            "unit": "ms",
            "target": 5,
            "what": "the next refresh looking at the 500 cards still open (unchanged)",
        },
        "analytics_full_recheck_ms_per_open_card": {
            "value": round(full_ms, 2),
            "unit": "ms",
            "target": 5,
            "what": "the hourly refresh reading every open card whole again",
        },
        "analytics_group_by_ms": {
            "value": round(group_ms, 1),
            "unit": "ms",
            "target": None,
            "what": "the list's counts from the cards (no rollups)",
        },
    }


def run() -> dict[str, dict[str, Any]]:
    url = os.environ.get("BENCH_ANALYTICS_DATABASE_URL")
    if url:
        _setup(url)
        return _bench()
    with tempfile.TemporaryDirectory() as tmp:
        _setup(f"sqlite:///{Path(tmp) / 'bench.sqlite3'}")
        return _bench()


if __name__ == "__main__":
    for name, result in run().items():
        print(f"{name:<32} {result['value']!s:>10} {result['unit']}")
