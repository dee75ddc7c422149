"""What became of each card shown: the analytics' side of every kind, read from the rows
the kinds already keep.

Each registered kind that counts in analytics names its source (`Kind.analytics`, a module
of its own package with a `SOURCE`: a `Source` here), which reads its rows and settles its
cards; this module reads no kind. Every outcome is derived from the rows the kinds keep, so
it is never written on the hot path of answering and a rebuild recomputes it exactly (a
card's first answer is its outcome; a later "Change answer" version is a correction, not
another outcome). Each kind's module has its table of what counts as answered, skipped,
declined, expired and abandoned.

Two kinds of source:

- cards inside assistant messages (inline questionnaires, asks): every source with
  `messages` gets the rows of one walk over assistant messages (the cursor "message");
  a row goes to the first source that `claims` it, else to the source that claims none
  (the kind that renders message bodies);
- cards with a table of their own (deferred forms, elicitations): `after` walks that table
  past a cursor named after the kind, `by_id` reads rows again, `pending` says which rows
  may still change.

Per question (cards answered or skipped): an empty answer is a skip; "Other" text, a typed
answer to an ask with options, or a form choice outside its options is "other".
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import cast

from django.db.models import OuterRef, Subquery

from chat.core.models import Message, Role, Wait, WaitStatus
from questionnaires import registry
from questionnaires.analytics.fingerprint import DefinitionSpec
from questionnaires.analytics.models import Outcome

# Per question of a card answered or skipped.
ANSWERED, SKIPPED, OTHER = "answered", "skipped", "other"

# The cursor of the one walk over assistant messages (every message source reads it).
MESSAGES = "message"

Row = Mapping[str, object]


@dataclass
class Observation:
    """One card shown and what became of it so far."""

    ref: str
    kind: str
    conversation_id: int
    message_id: int | None
    spec: DefinitionSpec
    shown_at: datetime
    outcome: str = Outcome.OPEN
    settled_at: datetime | None = None
    # question id -> ANSWERED / SKIPPED / OTHER (cards answered or skipped only)
    questions: dict[str, str] = field(default_factory=dict)
    repairs: int = 0

    @property
    def seconds(self) -> float | None:
        if self.outcome != Outcome.ANSWERED or self.settled_at is None:
            return None
        return max(0.0, (self.settled_at - self.shown_at).total_seconds())


@dataclass(frozen=True)
class Batch:
    """Cards found among a source's rows `id > after` (at most `limit` rows read)."""

    observations: list[Observation]
    # (id, created_at) of every row read, in id order: the refresh moves its cursor.
    rows: list[tuple[int, datetime]]


@dataclass(frozen=True, kw_only=True)
class Source:
    """One kind's analytics (its `Kind.analytics` module's `SOURCE`). Refs are
    "<kind>:<row id>[:…]": the row is the message (message sources) or the kind's own row."""

    # Cards inside assistant messages: the cards of these rows (`MESSAGE_FIELDS` and
    # `next_user_at`), settled; `claims(metadata)`: the messages that are this kind's
    # (None: the ones no other source claims). A kind with a table of its own may claim
    # its card messages only to keep them from the others (no `messages`).
    messages: Callable[[Sequence[Row]], list[Observation]] | None = None
    claims: Callable[[Mapping[str, object]], bool] | None = None
    # Cards with a table of their own: new rows past the cursor, rows by id, and of some
    # ids the rows that are still there and may change.
    after: Callable[[int, int], Batch] | None = None
    by_id: Callable[[Collection[int]], list[Observation]] | None = None
    pending: Callable[[Collection[int]], set[int]] | None = None


def sources() -> dict[str, Source]:
    """Every registered kind's analytics source, by kind name, in registry order."""
    return {kind.name: cast(Source, source) for kind, source in registry.analytics_sources()}


def cursors() -> tuple[str, ...]:
    """The refresh's cursors: the walk over messages (when a source reads messages), then
    each kind with a table of its own."""
    found = sources()
    walk = (MESSAGES,) if any(s.messages is not None for s in found.values()) else ()
    return walk + tuple(name for name, s in found.items() if s.after is not None)


# --- what every kind's source shares -----------------------------------------------------


def empty(value: object) -> bool:
    return value is None or value == "" or value == [] or value == {}


def wait_outcome(wait: Mapping[str, object] | None) -> tuple[str, datetime | None] | None:
    """An unanswered card's end from its wait: expired, or abandoned when the wait ended
    otherwise (the person wrote something else, Stop, the run ended)."""
    if wait is None or wait["status"] == WaitStatus.OPEN:
        return None
    closed = cast(datetime | None, wait["closed_at"])
    if wait["status"] == WaitStatus.EXPIRED:
        return Outcome.EXPIRED, closed
    return Outcome.ABANDONED, closed


def waits_of(refs: Iterable[str]) -> dict[str, dict[str, object]]:
    rows = Wait.objects.filter(ref__in=list(refs)).values_list("ref", "status", "closed_at")
    return {ref: {"status": status, "closed_at": closed} for ref, status, closed in rows}


def settle_unanswered(
    obs: Observation,
    wait: Mapping[str, object] | None,
    next_user_at: object,
    *,
    open_while_waiting: bool = False,
) -> None:
    """A card with no answer row: its wait's end, else the conversation moving on (a later
    user message) — unless `open_while_waiting` and its wait is still there (an ask: the
    asks of a turn are asked one at a time, so the next one still waits while the one
    before it is answered, which is a later user message)."""
    ended = wait_outcome(wait)
    if ended is not None:
        obs.outcome, obs.settled_at = ended[0], ended[1] or obs.shown_at
    elif not (open_while_waiting and wait is not None) and isinstance(next_user_at, datetime):
        obs.outcome, obs.settled_at = Outcome.ABANDONED, next_user_at


def repairs_of(messages: Sequence[Row]) -> dict[int, int]:
    """message id -> self-check repairs spent on it: the run's failed self-checks stored
    after the run's previous shown assistant message and before this one (rows with
    "id", "run_id" and "seq")."""
    runs = {cast(int, m["run_id"]) for m in messages if m["run_id"] is not None}
    if not runs:
        return {}
    failed: dict[int, list[int]] = defaultdict(list)
    shown: dict[int, list[int]] = defaultdict(list)
    rows = Message.objects.filter(run_id__in=runs, role=Role.ASSISTANT).values_list(
        "run_id", "seq", "hidden", "metadata__kind"
    )
    for run_id, seq, hidden, kind in rows:
        if hidden and kind == "self_check_failed":
            failed[run_id].append(seq)
        elif not hidden:
            shown[run_id].append(seq)
    found: dict[int, int] = {}
    for m in messages:
        run, seq = m["run_id"], cast(int, m["seq"])
        if not isinstance(run, int):
            continue
        before = [s for s in shown[run] if s < seq]
        floor = max(before) if before else -1
        found[cast(int, m["id"])] = len([s for s in failed[run] if floor < s < seq])
    return found


def repairs_of_messages(ids: Iterable[int | None]) -> dict[int, int]:
    """`repairs_of` for the messages `ids` (a kind's own rows name their message)."""
    wanted = [pk for pk in ids if pk]
    return repairs_of(list(Message.objects.filter(id__in=wanted).values("id", "run_id", "seq")))


# --- the walk over assistant messages ---------------------------------------------------


def _next_user_message() -> Subquery:
    later = Message.objects.filter(
        conversation_id=OuterRef("conversation_id"),
        role=Role.USER,
        hidden=False,
        seq__gt=OuterRef("seq"),
    ).order_by("seq")
    return Subquery(later.values("created_at")[:1])


MESSAGE_FIELDS = (
    "id",
    "conversation_id",
    "run_id",
    "seq",
    "content",
    "tool_calls",
    "metadata",
    "readonly",
    "created_at",
    "next_user_at",
)


def messages_observe(rows: Sequence[Row]) -> list[Observation]:
    """The cards of these assistant messages, each row read by the source it belongs to."""
    readers = [s for s in sources().values() if s.messages is not None or s.claims is not None]
    claimed: dict[int, list[Row]] = defaultdict(list)
    rest = next((n for n, s in enumerate(readers) if s.claims is None and s.messages), None)
    for m in rows:
        if m["readonly"]:
            continue  # shown, never answerable
        metadata = cast(Mapping[str, object], m["metadata"] or {})
        owner = next(
            (n for n, s in enumerate(readers) if s.claims is not None and s.claims(metadata)),
            rest,
        )
        if owner is not None:
            claimed[owner].append(m)
    observations: list[Observation] = []
    for n, source in enumerate(readers):
        if claimed[n] and source.messages is not None:
            observations += source.messages(claimed[n])
    return observations


def messages_after(after: int, *, limit: int) -> Batch:
    rows = list(
        Message.objects.filter(id__gt=after, role=Role.ASSISTANT, hidden=False)
        .order_by("id")
        .annotate(next_user_at=_next_user_message())
        .values(*MESSAGE_FIELDS)[:limit]
    )
    return Batch(messages_observe(rows), [(r["id"], r["created_at"]) for r in rows])


def messages_by_id(ids: Iterable[int]) -> list[Observation]:
    rows = list(
        Message.objects.filter(id__in=list(ids))
        .annotate(next_user_at=_next_user_message())
        .values(*MESSAGE_FIELDS)
    )
    return messages_observe(rows)


# --- the refresh's entry points ------------------------------------------------------------


def source_after(cursor: str, after: int, *, limit: int) -> Batch:
    """New cards past `cursor` (the walk over messages, or a kind's own table)."""
    if cursor == MESSAGES:
        return messages_after(after, limit=limit)
    source = sources().get(cursor)
    if source is None or source.after is None:  # a kind no longer registered: nothing new
        return Batch([], [])
    return source.after(after, limit)


def _row_id(ref: str) -> tuple[str, int]:
    kind, _sep, rest = ref.partition(":")
    return kind, int(rest.split(":", 1)[0])


def _wait_ref(ref: str) -> str:
    kind, pk = _row_id(ref)
    return f"{kind}:{pk}"


def _by_kind(refs: Iterable[str]) -> dict[str, set[int]]:
    by_kind: dict[str, set[int]] = defaultdict(set)
    for ref in refs:
        kind, pk = _row_id(ref)
        by_kind[kind].add(pk)
    return by_kind


def refs_changed(cards: Sequence[tuple[str, int]], *, messages_after: int) -> set[str]:
    """Of these open cards (ref, conversation id), the ones whose outcome may have changed
    since the message cursor stood at `messages_after` — found with index lookups only,
    so only those are read whole (parsed) again. Everything that settles a card leaves a
    trace here: an answer, a skip or a form is posted as a message (`answer_post`); an
    expiry, Stop or a run's end closes its wait; a kind's own row leaves its pending
    state (`Source.pending`); a deleted conversation takes its rows with it."""
    if not cards:
        return set()
    conversations = {conversation for _ref, conversation in cards}
    active = set(
        Message.objects.filter(conversation_id__in=conversations, id__gt=messages_after)
        .values_list("conversation_id", flat=True)
        .distinct()
    )
    refs = [ref for ref, _conversation in cards]
    closed = set(
        Wait.objects.filter(ref__in={_wait_ref(r) for r in refs})
        .exclude(status=WaitStatus.OPEN)
        .values_list("ref", flat=True)
    )
    by_kind = _by_kind(refs)
    found = sources()
    in_messages = {
        pk for kind, ids in by_kind.items() if kind in found and found[kind].messages for pk in ids
    }
    still: dict[str, set[int]] = {}
    messages: set[int] = set()
    if in_messages:
        messages = set(Message.objects.filter(id__in=in_messages).values_list("id", flat=True))
    for kind, ids in by_kind.items():
        source = found.get(kind)
        if source is not None and source.messages is not None:
            still[kind] = messages & ids
        elif source is not None and source.pending is not None:
            still[kind] = source.pending(ids)
    changed: set[str] = set()
    for ref, conversation in cards:
        kind, pk = _row_id(ref)
        there = pk in still.get(kind, ())
        if not there or conversation in active or _wait_ref(ref) in closed:
            changed.add(ref)
    return changed


def refs_observe(refs: Iterable[str]) -> list[Observation]:
    """The cards `refs` names, as they stand now (the refresh's open cards); a ref of a
    kind no longer registered is not found (the refresh counts it abandoned)."""
    by_kind = _by_kind(refs)
    found = sources()
    messages = {
        pk for kind, ids in by_kind.items() if kind in found and found[kind].messages for pk in ids
    }
    observations: list[Observation] = messages_by_id(messages) if messages else []
    for kind, ids in by_kind.items():
        source = found.get(kind)
        if source is not None and source.messages is None and source.by_id is not None:
            observations += source.by_id(ids)
    return observations
