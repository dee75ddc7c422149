"""The elicitation kind's analytics (questionnaires.analytics.outcomes): one card per
`Elicitation` row (its own table and cursor); its card messages are its own (no other
kind reads them).

| answered | skipped | declined | expired | abandoned |
| --- | --- | --- | --- | --- |
| `accepted` / `completed` | `cancelled` by the person | `declined` | `expired` | `abandoned`, or cancelled by Stop / the server |
"""  # noqa: E501

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import cast

from questionnaires.analytics.fingerprint import DefinitionSpec, QuestionSpec
from questionnaires.analytics.models import Outcome
from questionnaires.analytics.outcomes import (
    ANSWERED,
    SKIPPED,
    Batch,
    Observation,
    Source,
    empty,
)
from questionnaires.elicitations.models import KIND_NAME, Elicitation, ElicitationStatus


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
        kind=KIND_NAME,
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
            q.id: SKIPPED if empty(content.get(q.id)) else ANSWERED for q in obs.spec.questions
        }


def elicitations_observe(rows: Sequence[Elicitation]) -> list[Observation]:
    observations: list[Observation] = []
    for row in rows:
        if row.status == ElicitationStatus.REFUSED:
            continue  # never answerable: not a card shown to answer
        obs = Observation(
            f"{KIND_NAME}:{row.pk}",
            KIND_NAME,
            row.conversation_id,
            row.message_id,
            _elicitation_spec(row),
            row.created_at,
        )
        _settle_elicitation(obs, row)
        observations.append(obs)
    return observations


def elicitations_after(after: int, limit: int) -> Batch:
    rows = list(Elicitation.objects.filter(id__gt=after).order_by("id")[:limit])
    return Batch(elicitations_observe(rows), [(r.pk, r.created_at) for r in rows])


def elicitations_by_id(ids: Collection[int]) -> list[Observation]:
    return elicitations_observe(list(Elicitation.objects.filter(id__in=list(ids))))


def elicitations_pending(ids: Collection[int]) -> set[int]:
    pending = Elicitation.objects.filter(id__in=list(ids), status=ElicitationStatus.PENDING)
    return set(pending.values_list("id", flat=True))


def _claims(metadata: Mapping[str, object]) -> bool:
    return metadata.get("kind") == KIND_NAME  # its card message: counted from its row


SOURCE = Source(
    claims=_claims,
    after=elicitations_after,
    by_id=elicitations_by_id,
    pending=elicitations_pending,
)
