"""Reads for inline cards: their answered submissions.

Each function is one query for a whole conversation (or page), so rendering a page
never queries per message. (Tool results of any way of asking: `chat.core.selectors`.)
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from questionnaires.inline.models import Submission
from questionnaires.inline.presenter import Answer


def answers_by_message(
    *, conversation_id: int, message_ids: Iterable[int] | None = None
) -> dict[int, dict[str, Answer]]:
    """message id -> {questionnaire id -> Answer} for the conversation's submissions."""
    rows = Submission.objects.filter(conversation_id=conversation_id)
    if message_ids is not None:
        rows = rows.filter(message_id__in=list(message_ids))
    found: dict[int, dict[str, Answer]] = defaultdict(dict)
    for pk, message_id, qid, answers, other_text in rows.values_list(
        "pk", "message_id", "questionnaire_id", "answers", "other_text"
    ):
        found[message_id][qid] = Answer(key=pk, answers=answers or {}, other_text=other_text or {})
    return dict(found)


def submission_exists(*, conversation_id: int, questionnaire_id: str) -> bool:
    return Submission.objects.filter(
        conversation_id=conversation_id, questionnaire_id=questionnaire_id
    ).exists()
