"""Reads for cards: answered submissions and ``questionnaire_async`` tool results.

Each function is one query for a whole conversation (or page), so rendering a page
never queries per message.  Chat models are reached through the app registry:
``questionnaires`` never imports ``chat``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from chat.core.models import Message
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


def tool_results(*, conversation_id: int, call_ids: Iterable[str]) -> dict[str, str]:
    """tool call id -> content of the ``tool`` message answering it (first one wins)."""
    ids = [c for c in call_ids if c]
    if not ids:
        return {}
    rows = (
        Message.objects.filter(conversation_id=conversation_id, role="tool", tool_call_id__in=ids)
        .order_by("seq")
        .values_list("tool_call_id", "content")
    )
    found: dict[str, str] = {}
    for call_id, content in rows:
        found.setdefault(call_id, content)
    return found


def submission_exists(*, conversation_id: int, questionnaire_id: str) -> bool:
    return Submission.objects.filter(
        conversation_id=conversation_id, questionnaire_id=questionnaire_id
    ).exists()
