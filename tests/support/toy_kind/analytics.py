"""The toy kind's analytics (Kind.analytics): one card per toy message, counted by the
shared refresh like any kind's (questionnaires.analytics.outcomes).

| answered | expired | abandoned |
| --- | --- | --- |
| the next toy answer | its wait expired | its wait ended otherwise (Stop), or a later message |
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import cast

from chat.core.models import Message, Role
from questionnaires.analytics.fingerprint import DefinitionSpec, QuestionSpec
from questionnaires.analytics.models import Outcome
from questionnaires.analytics.outcomes import (
    ANSWERED,
    Observation,
    Row,
    Source,
    settle_unanswered,
    waits_of,
)
from tests.support.toy_kind.kind import NAME, wait_ref


def _spec(question: str) -> DefinitionSpec:
    q = QuestionSpec(id="text", text=question, type="text", options=())
    return DefinitionSpec(kind=NAME, title=question, questions=(q,))


def messages_observe(rows: Sequence[Row]) -> list[Observation]:
    waits = waits_of(wait_ref(cast(int, m["id"])) for m in rows)
    answers = Message.objects.filter(
        conversation_id__in={m["conversation_id"] for m in rows},
        role=Role.USER,
        metadata__kind=NAME,
    ).values_list("conversation_id", "seq", "created_at")
    observations = []
    for m in rows:
        pk, conversation_id = cast(int, m["id"]), cast(int, m["conversation_id"])
        shown_at = cast(datetime, m["created_at"])
        spec = _spec(str(m["content"]))
        obs = Observation(wait_ref(pk), NAME, conversation_id, pk, spec, shown_at)
        answered = sorted(
            (seq, at) for c, seq, at in answers if c == conversation_id and seq > m["seq"]
        )
        if answered:
            obs.outcome, obs.settled_at = Outcome.ANSWERED, answered[0][1]
            obs.questions = {"text": ANSWERED}
        else:
            settle_unanswered(obs, waits.get(obs.ref), m["next_user_at"])
        observations.append(obs)
    return observations


def _claims(metadata: Mapping[str, object]) -> bool:
    return metadata.get("kind") == NAME


SOURCE = Source(messages=messages_observe, claims=_claims)
