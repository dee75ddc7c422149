"""The inline kind's analytics (questionnaires.analytics.outcomes): the questionnaire cards
inside assistant messages (a block in the text, or a `questionnaire_async` call's result).

| answered | skipped | declined | expired | abandoned |
| --- | --- | --- | --- | --- |
| its first `Submission` | — | its first `Submission` is `declined` ("I'd rather not answer") | its wait expired | its wait ended without a submission, or a later user message |
"""  # noqa: E501

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import cast

from chat.core import selectors as core_selectors
from chat.core.models import Role
from questionnaires.analytics.fingerprint import DefinitionSpec, QuestionSpec
from questionnaires.analytics.models import Outcome
from questionnaires.analytics.outcomes import (
    ANSWERED,
    OTHER,
    SKIPPED,
    Observation,
    Row,
    Source,
    empty,
    repairs_of,
    settle_unanswered,
    waits_of,
)
from questionnaires.inline.models import KIND_NAME, Submission
from questionnaires.inline.presenter import MessageInput, async_calls, message_questionnaires
from questionnaires.protocol import Questionnaire
from questionnaires.protocol.names import OTHER_VALUE


def _spec(questionnaire: Questionnaire) -> DefinitionSpec:
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
    return DefinitionSpec(kind=KIND_NAME, title=questionnaire.title, questions=questions)


def _questions(
    spec: DefinitionSpec, answers: Mapping[str, object], other: Mapping[str, object]
) -> dict[str, str]:
    result: dict[str, str] = {}
    for q in spec.questions:
        value = answers.get(q.id)
        chosen = value if isinstance(value, list) else [value]
        if q.options and (not empty(other.get(q.id)) or OTHER_VALUE in chosen):
            result[q.id] = OTHER
        elif empty(answers.get(q.id)) and empty(other.get(q.id)):
            result[q.id] = SKIPPED
        else:
            result[q.id] = ANSWERED
    return result


def _cards(rows: Sequence[Row]) -> list[tuple[Row, Observation]]:
    cards: list[tuple[Row, Observation]] = []
    for m in rows:
        pk, conversation_id = cast(int, m["id"]), cast(int, m["conversation_id"])
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
            ref = f"{KIND_NAME}:{pk}:{qid}"
            shown_at = cast(datetime, m["created_at"])
            obs = Observation(ref, KIND_NAME, conversation_id, pk, _spec(questionnaire), shown_at)
            cards.append((m, obs))
    return cards


def messages_observe(rows: Sequence[Row]) -> list[Observation]:
    """The questionnaire cards of these assistant messages, settled."""
    cards = _cards(rows)
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
    waits = waits_of({f"{KIND_NAME}:{o.message_id}" for _m, o in cards})
    repairs = repairs_of([m for m, _o in cards])
    observations: list[Observation] = []
    for m, obs in cards:
        pk = cast(int, m["id"])
        obs.repairs = repairs.get(pk, 0)
        observations.append(obs)
        qid = obs.ref.split(":", 2)[2]
        sub = submissions.get((pk, qid))
        if sub is not None and sub["status"] == Submission.Status.DECLINED:
            obs.outcome, obs.settled_at = Outcome.DECLINED, sub["created_at"]
        elif sub is not None:
            obs.outcome, obs.settled_at = Outcome.ANSWERED, sub["created_at"]
            obs.questions = _questions(
                obs.spec,
                cast(Mapping[str, object], sub["answers"] or {}),
                cast(Mapping[str, object], sub["other_text"] or {}),
            )
        else:
            settle_unanswered(obs, waits.get(f"{KIND_NAME}:{pk}"), m["next_user_at"])
    return observations


# The messages no other kind claims (questionnaires live inside any assistant text).
SOURCE = Source(messages=messages_observe)
