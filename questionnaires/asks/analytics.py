"""The ask kind's analytics (questionnaires.analytics.outcomes): one card per
`ask_user_options` message.

| answered | skipped | declined | expired | abandoned |
| --- | --- | --- | --- | --- |
| a `StructuredAnswer` (click or typed) | the answer's source is `user_skipped` | — | wait expired | its wait ended without an answer (an answer to the ask before it in its turn leaves it open) |

An ask behind an earlier question of its turn is `queued`, not shown: the page shows a
turn's asks one at a time, so it counts nowhere until the ones before it are settled, and
is shown from that moment.
"""  # noqa: E501

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import cast

from chat.core.models import Message, Role
from questionnaires.analytics.fingerprint import DefinitionSpec, QuestionSpec
from questionnaires.analytics.models import Outcome
from questionnaires.analytics.outcomes import (
    ANSWERED,
    OTHER,
    SKIPPED,
    Observation,
    Row,
    Source,
    repairs_of,
    settle_unanswered,
    wait_outcome,
    waits_of,
)
from questionnaires.asks.models import KIND_NAME, StructuredAnswer


def _spec(payload: Mapping[str, object], question: str) -> DefinitionSpec:
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
    return DefinitionSpec(kind=KIND_NAME, title=question, questions=(spec_q,), source=field_name)


def _settle(obs: Observation, answer: Mapping[str, object] | None) -> bool:
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


def _shown_after(asks: Sequence[Row]) -> dict[int, datetime | None]:
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
    waits = waits_of(f"{KIND_NAME}:{pk}" for pk in ids)

    def settled(pk: int) -> datetime | None:
        if pk in answered:
            return answered[pk]
        ended = wait_outcome(waits.get(f"{KIND_NAME}:{pk}"))
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


def _claims(metadata: Mapping[str, object]) -> bool:
    return isinstance(metadata.get("ask_user_options"), Mapping)


def messages_observe(rows: Sequence[Row]) -> list[Observation]:
    """The asks among these assistant messages (all `ask_user_options` ones), settled."""
    cards: list[tuple[Row, Observation]] = []
    for m in rows:
        pk, conversation_id = cast(int, m["id"]), cast(int, m["conversation_id"])
        ask = cast(
            Mapping[str, object], cast(Mapping[str, object], m["metadata"])["ask_user_options"]
        )
        question = str(ask.get("question") or m["content"] or "")
        shown_at = cast(datetime, m["created_at"])
        obs = Observation(
            f"{KIND_NAME}:{pk}", KIND_NAME, conversation_id, pk, _spec(ask, question), shown_at
        )
        cards.append((m, obs))
    if not cards:
        return []
    ids = {obs.message_id for _m, obs in cards}
    answers = {
        a["ask_message_id"]: a
        for a in StructuredAnswer.objects.filter(ask_message_id__in=ids)
        .order_by("-id")  # the first answer counts (later ones are changes, issue 27)
        .values("ask_message_id", "source", "created_at")
    }
    waits = waits_of({obs.ref for _m, obs in cards})
    repairs = repairs_of([m for m, _o in cards])
    shown_after = _shown_after([m for m, _o in cards])
    observations: list[Observation] = []
    for m, obs in cards:
        pk = cast(int, m["id"])
        obs.repairs = repairs.get(pk, 0)
        observations.append(obs)
        earlier = shown_after.get(pk)
        if earlier is None and pk not in answers:
            obs.outcome = Outcome.QUEUED  # behind an earlier question of its turn
            continue
        if earlier is not None:
            obs.shown_at = max(obs.shown_at, earlier)
        if not _settle(obs, answers.get(pk)):
            settle_unanswered(obs, waits.get(obs.ref), m["next_user_at"], open_while_waiting=True)
    return observations


SOURCE = Source(messages=messages_observe, claims=_claims)
