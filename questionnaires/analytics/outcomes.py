"""What became of each card shown: the one place that reads the kinds' rows for analytics.

Every outcome is derived from the rows the kinds already keep, so it is never written on
the hot path of answering and a rebuild recomputes it exactly (a card's first answer is its
outcome; a later "Change answer" version is a correction, not another outcome):

| kind | answered | skipped | declined | expired | abandoned |
| --- | --- | --- | --- | --- | --- |
| inline | its first `Submission` | — | its first `Submission` is `declined` ("I'd rather not answer") | its wait expired | its wait ended without a submission, or a later user message |
| ask | a `StructuredAnswer` (click or typed) | the answer's source is `user_skipped` | — | wait expired | its wait ended without an answer (an answer to the ask before it in its turn leaves it open) |
| form | `answered` | — | `cancelled` by the person | wait expired | its wait ended (Stop, run ended) |
| elicitation | `accepted` / `completed` | `cancelled` by the person | `declined` | `expired` | `abandoned`, or cancelled by Stop / the server |

An ask behind an earlier question of its turn is `queued`, not shown: the page shows a
turn's asks one at a time, so it counts nowhere until the ones before it are settled, and
is shown from that moment.

Per question (cards answered or skipped): an empty answer is a skip; "Other" text, a typed
answer to an ask with options, or a form choice outside its options is "other". A new
outcome (a declined inline card, a changed answer) is one more branch in its kind's
`_settle_*` function and, if new, one more `Outcome` value.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import cast

from django.db.models import OuterRef, Subquery

from chat.core import selectors as core_selectors
from chat.core.models import Message, Role, Wait, WaitStatus
from questionnaires.analytics.fingerprint import DefinitionSpec, QuestionSpec
from questionnaires.analytics.models import CardKindChoice, Outcome
from questionnaires.asks.models import StructuredAnswer
from questionnaires.elicitations.models import Elicitation, ElicitationStatus
from questionnaires.forms.models import FormStatus, InteractiveForm, form_questions
from questionnaires.inline.models import Submission
from questionnaires.inline.presenter import MessageInput, async_calls, message_questionnaires
from questionnaires.protocol import Questionnaire
from questionnaires.protocol.names import OTHER_VALUE

# Per question of a card answered or skipped.
ANSWERED, SKIPPED, OTHER = "answered", "skipped", "other"

# The refresh's sources and the model each one's cursor walks.
SOURCES = ("message", "form", "elicitation")


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


def _empty(value: object) -> bool:
    return value is None or value == "" or value == [] or value == {}


def _wait_outcome(wait: Mapping[str, object] | None) -> tuple[str, datetime | None] | None:
    """An unanswered card's end from its wait: expired, or abandoned when the wait ended
    otherwise (the person wrote something else, Stop, the run ended)."""
    if wait is None or wait["status"] == WaitStatus.OPEN:
        return None
    closed = cast(datetime | None, wait["closed_at"])
    if wait["status"] == WaitStatus.EXPIRED:
        return Outcome.EXPIRED, closed
    return Outcome.ABANDONED, closed


def _waits(refs: Iterable[str]) -> dict[str, dict[str, object]]:
    rows = Wait.objects.filter(ref__in=list(refs)).values_list("ref", "status", "closed_at")
    return {ref: {"status": status, "closed_at": closed} for ref, status, closed in rows}


# --- messages: inline questionnaires and asks -------------------------------------------


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


def _repairs(messages: Sequence[Mapping[str, object]]) -> dict[int, int]:
    """message id -> self-check repairs spent on it: the run's failed self-checks stored
    after the run's previous shown assistant message and before this one."""
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


def _inline_spec(questionnaire: Questionnaire) -> DefinitionSpec:
    questions = tuple(
        QuestionSpec(
            id=q.id,
            text=q.text,
            type=q.type,
            options=tuple((o.value, o.label) for o in q.options),
            free_text=q.allow_other,
        )
        for q in questionnaire.questions
    )
    return DefinitionSpec(
        kind=CardKindChoice.INLINE, title=questionnaire.title, questions=questions
    )


def _inline_questions(
    spec: DefinitionSpec, answers: Mapping[str, object], other: Mapping[str, object]
) -> dict[str, str]:
    result: dict[str, str] = {}
    for q in spec.questions:
        value = answers.get(q.id)
        chosen = value if isinstance(value, list) else [value]
        if q.options and (not _empty(other.get(q.id)) or OTHER_VALUE in chosen):
            result[q.id] = OTHER
        elif _empty(answers.get(q.id)) and _empty(other.get(q.id)):
            result[q.id] = SKIPPED
        else:
            result[q.id] = ANSWERED
    return result


def _ask_spec(payload: Mapping[str, object], question: str) -> DefinitionSpec:
    options = cast(Sequence[Mapping[str, object]], payload.get("options") or ())
    kind = str(payload.get("type") or "options")
    field_name = str(payload.get("field") or "")
    spec_q = QuestionSpec(
        id=field_name,
        text=question,
        type=kind,
        options=tuple((str(o.get("value")), str(o.get("label") or "")) for o in options),
        free_text=bool(payload.get("allow_free_text", kind == "options")),
    )
    return DefinitionSpec(
        kind=CardKindChoice.ASK, title=question, questions=(spec_q,), source=field_name
    )


def _settle_ask(obs: Observation, answer: Mapping[str, object] | None) -> bool:
    if answer is None:
        return False
    q = obs.spec.questions[0]
    obs.settled_at = cast(datetime, answer["created_at"])
    if answer["source"] == StructuredAnswer.Source.SKIPPED:
        obs.outcome, obs.questions = Outcome.SKIPPED, {q.id: SKIPPED}
        return True
    typed = answer["source"] == StructuredAnswer.Source.FREE_TEXT
    obs.outcome = Outcome.ANSWERED
    obs.questions = {q.id: OTHER if typed and q.options else ANSWERED}
    return True


def _settle_unanswered(
    obs: Observation, wait: Mapping[str, object] | None, next_user_at: object
) -> None:
    """A card with no answer row: its wait's end, else the conversation moving on (a later
    user message). Not for an ask whose wait is open: the asks of a turn are asked one at
    a time, so the next one still waits while the one before it is answered (which is a
    later user message); anything else that moves the conversation on closes its wait."""
    ended = _wait_outcome(wait)
    queued_ask = obs.kind == CardKindChoice.ASK and wait is not None
    if ended is not None:
        obs.outcome, obs.settled_at = ended[0], ended[1] or obs.shown_at
    elif not queued_ask and isinstance(next_user_at, datetime):
        obs.outcome, obs.settled_at = Outcome.ABANDONED, next_user_at


def _asks_shown_after(asks: Sequence[Mapping[str, object]]) -> dict[int, datetime | None]:
    """When each ask was shown: the page shows a turn's asks one at a time, each once the
    ones before it in its turn are settled (answered, or their wait over). By ask id: the
    moment the last of those was settled (its creation for the first of a turn), or None
    while one of them is still open — it is queued, not shown yet."""
    turns = {
        (m["conversation_id"], str(cast(Mapping[str, object], m["metadata"]).get("turn_id", "")))
        for m in asks
    }
    if not turns:
        return {}
    siblings = list(
        Message.objects.filter(
            conversation_id__in={c for c, _t in turns},
            role=Role.ASSISTANT,
            metadata__turn_id__in={t for _c, t in turns},
            metadata__has_key="ask_user_options",
        ).values_list("id", "conversation_id", "seq", "created_at", "metadata__turn_id")
    )
    ids = [pk for pk, *_rest in siblings]
    answered = dict(
        StructuredAnswer.objects.filter(ask_message_id__in=ids)
        .order_by("-id")  # the first answer counts
        .values_list("ask_message_id", "created_at")
    )
    waits = _waits(f"ask:{pk}" for pk in ids)

    def settled(pk: int) -> datetime | None:
        if pk in answered:
            return answered[pk]
        ended = _wait_outcome(waits.get(f"ask:{pk}"))
        return None if ended is None else ended[1]

    by_turn: dict[tuple[object, str], list[tuple[int, int, datetime]]] = defaultdict(list)
    for pk, conversation, seq, created, turn in siblings:
        by_turn[(conversation, str(turn))].append((seq, pk, created))
    result: dict[int, datetime | None] = {}
    for turn_asks in by_turn.values():
        turn_asks.sort()
        before: datetime | None = None
        for index, (_seq, pk, created) in enumerate(turn_asks):
            if index == 0:
                before = created
            result[pk] = before if before is None else max(before, created)
            done = settled(pk)
            before = None if before is None or done is None else max(before, done)
    return result


def messages_observe(rows: Sequence[Mapping[str, object]]) -> list[Observation]:
    """The cards (inline questionnaires, asks) of these assistant messages."""
    cards: list[tuple[Mapping[str, object], Observation]] = []
    for m in rows:
        if m["readonly"]:
            continue  # shown, never answerable
        pk, conversation_id = cast(int, m["id"]), cast(int, m["conversation_id"])
        metadata = cast(Mapping[str, object], m["metadata"] or {})
        shown_at = cast(datetime, m["created_at"])
        ask = metadata.get("ask_user_options")
        if isinstance(ask, Mapping):
            question = str(ask.get("question") or m["content"] or "")
            spec = _ask_spec(ask, question)
            obs = Observation(f"ask:{pk}", CardKindChoice.ASK, conversation_id, pk, spec, shown_at)
            cards.append((m, obs))
            continue
        if metadata.get("kind") == "elicitation":
            continue  # an elicitation's card message: counted from its row
        content = cast(str, m["content"] or "")
        tool_calls = cast(Sequence[Mapping[str, object]], m["tool_calls"] or ())
        if "questionnaire" not in content.lower() and not async_calls(tool_calls):
            continue  # no block and no questionnaire_async call: nothing to parse
        results = core_selectors.tool_results(
            conversation_id=conversation_id,
            call_ids=[str(c.get("id", "")) for c in tool_calls],
        )
        found = message_questionnaires(
            MessageInput(
                id=pk,
                role=Role.ASSISTANT,
                content=content,
                tool_calls=tool_calls,
                tool_results=results,
            )
        )
        for qid, questionnaire in found.items():
            spec = _inline_spec(questionnaire)
            ref = f"inline:{pk}:{qid}"
            cards.append(
                (m, Observation(ref, CardKindChoice.INLINE, conversation_id, pk, spec, shown_at))
            )
    if not cards:
        return []
    ids = {obs.message_id for _m, obs in cards}
    # A card's first answer is its outcome (a later "Change answer" version, issue 27, is
    # the person correcting it, not a second outcome): read versions newest first.
    submissions = {
        (s["message_id"], s["questionnaire_id"]): s
        for s in Submission.objects.filter(message_id__in=ids)
        .order_by("-version")
        .values("message_id", "questionnaire_id", "answers", "other_text", "status", "created_at")
    }
    answers = {
        a["ask_message_id"]: a
        for a in StructuredAnswer.objects.filter(ask_message_id__in=ids)
        .order_by("-id")  # the first answer counts (later ones are changes, issue 27)
        .values("ask_message_id", "source", "created_at")
    }
    waits = _waits({f"{o.kind}:{o.message_id}" for _m, o in cards})
    repairs = _repairs([m for m, _o in cards])
    asks = [m for m, o in cards if o.kind == CardKindChoice.ASK]
    shown_after = _asks_shown_after(asks)
    observations: list[Observation] = []
    for m, obs in cards:
        pk = cast(int, m["id"])
        obs.repairs = repairs.get(pk, 0)
        observations.append(obs)
        if obs.kind == CardKindChoice.ASK:
            earlier = shown_after.get(pk)
            if earlier is None and pk not in answers:
                obs.outcome = Outcome.QUEUED  # behind an earlier question of its turn
                continue
            if earlier is not None:
                obs.shown_at = max(obs.shown_at, earlier)
            if _settle_ask(obs, answers.get(pk)):
                continue
        else:
            qid = obs.ref.split(":", 2)[2]
            sub = submissions.get((pk, qid))
            if sub is not None and sub["status"] == Submission.Status.DECLINED:
                obs.outcome, obs.settled_at = Outcome.DECLINED, sub["created_at"]
                continue
            if sub is not None:
                obs.outcome, obs.settled_at = Outcome.ANSWERED, sub["created_at"]
                obs.questions = _inline_questions(
                    obs.spec,
                    cast(Mapping[str, object], sub["answers"] or {}),
                    cast(Mapping[str, object], sub["other_text"] or {}),
                )
                continue
        _settle_unanswered(obs, waits.get(f"{obs.kind}:{obs.message_id}"), m["next_user_at"])
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


# --- deferred forms ------------------------------------------------------------------------


def _form_spec(form: InteractiveForm) -> DefinitionSpec:
    questions = tuple(
        QuestionSpec(
            id=q["id"],
            text=q["question"],
            type=f"{q['input_type']}{'_multi' if q.get('multi_select') else ''}",
            options=tuple((o["value"], o["label"]) for o in q.get("options") or ()),
        )
        for q in form_questions(form.render_payload)
    )
    label = questions[0].text if questions else ""
    return DefinitionSpec(kind=CardKindChoice.FORM, title="", questions=questions, label=label)


def _form_questions(spec: DefinitionSpec, answers: Mapping[str, object]) -> dict[str, str]:
    result: dict[str, str] = {}
    for q in spec.questions:
        value = answers.get(q.id)
        values = value if isinstance(value, list) else [value]
        if _empty(value):
            result[q.id] = SKIPPED
        elif q.options and any(v not in {o[0] for o in q.options} for v in values):
            result[q.id] = OTHER
        else:
            result[q.id] = ANSWERED
    return result


def forms_observe(forms: Sequence[InteractiveForm]) -> list[Observation]:
    waits = _waits(f"form:{f.pk}" for f in forms)
    observations: list[Observation] = []
    for form in forms:
        spec = _form_spec(form)
        obs = Observation(
            f"form:{form.pk}",
            CardKindChoice.FORM,
            form.conversation_id,
            form.message_id,
            spec,
            form.created_at,
        )
        observations.append(obs)
        if form.status == FormStatus.ANSWERED:
            obs.outcome, obs.settled_at = Outcome.ANSWERED, form.answered_at or form.created_at
            answer = form.answer if isinstance(form.answer, Mapping) else {}
            given = answer.get("answers")
            obs.questions = _form_questions(spec, given if isinstance(given, Mapping) else {})
        elif form.status == FormStatus.CANCELLED:  # the person cancelled the form
            obs.outcome, obs.settled_at = Outcome.DECLINED, form.answered_at or form.created_at
        else:
            _settle_unanswered(obs, waits.get(obs.ref), None)
    repairs = _repairs(
        list(
            Message.objects.filter(id__in=[f.message_id for f in forms if f.message_id]).values(
                "id", "run_id", "seq"
            )
        )
    )
    for obs in observations:
        obs.repairs = repairs.get(obs.message_id or 0, 0)
    return observations


def forms_after(after: int, *, limit: int) -> Batch:
    forms = list(InteractiveForm.objects.filter(id__gt=after).order_by("id")[:limit])
    return Batch(forms_observe(forms), [(f.pk, f.created_at) for f in forms])


def forms_by_id(ids: Iterable[int]) -> list[Observation]:
    return forms_observe(list(InteractiveForm.objects.filter(id__in=list(ids))))


# --- MCP elicitations ------------------------------------------------------------------


def _mapping(value: object) -> Mapping[str, object]:
    return cast(Mapping[str, object], value) if isinstance(value, Mapping) else {}


def _list(value: object) -> list[object]:
    return list(value) if isinstance(value, list) else []


def _schema_questions(schema: object) -> tuple[QuestionSpec, ...]:
    """One question per property of an elicitation's form schema, with its choices."""
    questions: list[QuestionSpec] = []
    for name, raw in _mapping(_mapping(schema).get("properties")).items():
        prop = _mapping(raw)
        items = _mapping(prop.get("items"))
        names = _list(prop.get("enumNames"))
        options: list[tuple[str, str]] = []
        for n, value in enumerate(_list(prop.get("enum")) or _list(items.get("enum"))):
            options.append((str(value), str(names[n]) if n < len(names) else str(value)))
        for raw_choice in _list(prop.get("oneOf")) or _list(items.get("anyOf")):
            choice = _mapping(raw_choice)
            if choice:
                options.append((str(choice.get("const")), str(choice.get("title") or "")))
        questions.append(
            QuestionSpec(
                id=str(name),
                text=str(prop.get("title") or name),
                type=str(prop.get("type") or ""),
                options=tuple(options),
            )
        )
    return tuple(questions)


def _elicitation_spec(row: Elicitation) -> DefinitionSpec:
    return DefinitionSpec(
        kind=CardKindChoice.ELICITATION,
        title="",
        extra=(row.server_name, row.tool_name, row.mode),
        questions=_schema_questions(row.requested_schema),
        label=row.prompt[:300],
        source=f"{row.server_name} · {row.tool_name}" if row.tool_name else row.server_name,
    )


_ELICITATION_OUTCOMES = {
    ElicitationStatus.ACCEPTED: Outcome.ANSWERED,
    ElicitationStatus.COMPLETED: Outcome.ANSWERED,
    ElicitationStatus.DECLINED: Outcome.DECLINED,
    ElicitationStatus.EXPIRED: Outcome.EXPIRED,
    ElicitationStatus.ABANDONED: Outcome.ABANDONED,
}


def _settle_elicitation(obs: Observation, row: Elicitation) -> None:
    if row.status == ElicitationStatus.PENDING:
        return
    if row.status == ElicitationStatus.CANCELLED:
        # Cancel from the card is the person dismissing it; Stop or the server is not.
        by_person = row.answered_by_id is not None
        obs.outcome = Outcome.SKIPPED if by_person else Outcome.ABANDONED
    else:
        obs.outcome = _ELICITATION_OUTCOMES[ElicitationStatus(row.status)]
    obs.settled_at = row.answered_at or row.created_at
    if obs.outcome == Outcome.SKIPPED:
        obs.questions = {q.id: SKIPPED for q in obs.spec.questions}
    elif obs.outcome == Outcome.ANSWERED:
        content = row.content if isinstance(row.content, Mapping) else {}
        obs.questions = {
            q.id: SKIPPED if _empty(content.get(q.id)) else ANSWERED for q in obs.spec.questions
        }


def elicitations_observe(rows: Sequence[Elicitation]) -> list[Observation]:
    observations: list[Observation] = []
    for row in rows:
        if row.status == ElicitationStatus.REFUSED:
            continue  # never answerable: not a card shown to answer
        obs = Observation(
            f"elicitation:{row.pk}",
            CardKindChoice.ELICITATION,
            row.conversation_id,
            row.message_id,
            _elicitation_spec(row),
            row.created_at,
        )
        _settle_elicitation(obs, row)
        observations.append(obs)
    return observations


def elicitations_after(after: int, *, limit: int) -> Batch:
    rows = list(Elicitation.objects.filter(id__gt=after).order_by("id")[:limit])
    return Batch(elicitations_observe(rows), [(r.pk, r.created_at) for r in rows])


def elicitations_by_id(ids: Iterable[int]) -> list[Observation]:
    return elicitations_observe(list(Elicitation.objects.filter(id__in=list(ids))))


# --- the refresh's entry points ------------------------------------------------------------


def source_after(source: str, after: int, *, limit: int) -> Batch:
    """New cards among `source`'s rows past the cursor."""
    reader = {"message": messages_after, "form": forms_after, "elicitation": elicitations_after}
    return reader[source](after, limit=limit)


def _row_id(ref: str) -> tuple[str, int]:
    kind, _sep, rest = ref.partition(":")
    return kind, int(rest.split(":", 1)[0])


def _wait_ref(ref: str) -> str:
    kind, pk = _row_id(ref)
    return f"{kind}:{pk}"


def refs_changed(cards: Sequence[tuple[str, int]], *, messages_after: int) -> set[str]:
    """Of these open cards (ref, conversation id), the ones whose outcome may have changed
    since the message cursor stood at `messages_after` — found with index lookups only,
    so only those are read whole (parsed) again. Everything that settles a card leaves a
    trace here: an answer, a skip or a form is posted as a message (`answer_post`); an
    expiry, Stop or a run's end closes its wait; an elicitation's row leaves `pending`; a
    deleted conversation takes its rows with it."""
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
    by_kind: dict[str, set[int]] = defaultdict(set)
    for ref in refs:
        kind, pk = _row_id(ref)
        by_kind[kind].add(pk)
    still = set(
        Message.objects.filter(id__in=by_kind["inline"] | by_kind["ask"]).values_list(
            "id", flat=True
        )
    )
    pending_forms = set(
        InteractiveForm.objects.filter(
            id__in=by_kind["form"], status=FormStatus.PENDING
        ).values_list("id", flat=True)
    )
    pending_elicitations = set(
        Elicitation.objects.filter(
            id__in=by_kind["elicitation"], status=ElicitationStatus.PENDING
        ).values_list("id", flat=True)
    )
    pending = {"form": pending_forms, "elicitation": pending_elicitations}
    changed: set[str] = set()
    for ref, conversation in cards:
        kind, pk = _row_id(ref)
        there = pk in pending.get(kind, still)
        if not there or conversation in active or _wait_ref(ref) in closed:
            changed.add(ref)
    return changed


def refs_observe(refs: Iterable[str]) -> list[Observation]:
    """The cards `refs` names, as they stand now (the refresh's open cards)."""
    by_kind: dict[str, set[int]] = defaultdict(set)
    for ref in refs:
        kind, pk = _row_id(ref)
        by_kind[kind].add(pk)
    found: list[Observation] = []
    if by_kind["inline"] or by_kind["ask"]:
        found += messages_by_id(by_kind["inline"] | by_kind["ask"])
    if by_kind["form"]:
        found += forms_by_id(by_kind["form"])
    if by_kind["elicitation"]:
        found += elicitations_by_id(by_kind["elicitation"])
    return found
