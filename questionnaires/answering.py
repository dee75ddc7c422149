"""The one answer path: every kind's answer is recorded here (issue 35).

`answer_record` owns the skeleton the kinds used to write each for themselves: lock the
conversation (concurrent answers run one after another), let the kind check and write its
row in a savepoint (`Answering.record` in the registry: its 400s and 409s, a unique
constraint turned into the kind's 409 by `Answering.conflict`), refuse while another card
holds the conversation, post the answer (`answer_post`: the user message, the lock in every
tab, the next run), store that message on the row, count the answer and clear the card's
draft. All in one transaction: a refusal anywhere leaves nothing stored.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import IntegrityError, transaction

from chat.core.models import Conversation, Message
from chat.core.services import answer_post
from chat.obs import metrics
from questionnaires.drafts import draft_clear
from questionnaires.registry import Recorded, answering_of, input_refuse_if_waiting, kind_named


@dataclass(frozen=True)
class Answered:
    """A recorded answer: what the kind wrote and the user message posted (None when the
    kind's answer posts none)."""

    recorded: Recorded
    message: Message | None


def answer_record(*, conversation: Conversation, kind: str, answer: object) -> Answered:
    """Record `answer` (the kind's own request value) to a card of `kind`. Raises the
    kind's `ChatError`s, or `InputRefused` while another card holds the conversation."""
    answering = answering_of(kind)
    with transaction.atomic():
        Conversation.objects.select_for_update().only("id").get(pk=conversation.pk)
        try:
            with transaction.atomic():
                recorded = answering.record(conversation, answer)
        except IntegrityError:
            if answering.conflict is None:
                raise
            raise answering.conflict(conversation, answer) from None
        if not recorded.answers_the_wait:
            input_refuse_if_waiting(conversation=conversation)
        message = _posted(conversation, recorded)
        _counted(kind, recorded.outcome)
        if recorded.draft:
            prefix = kind_named(kind).draft_prefix
            draft_clear(conversation=conversation, card=f"{prefix}:{recorded.draft}")
    return Answered(recorded=recorded, message=message)


def _posted(conversation: Conversation, recorded: Recorded) -> Message | None:
    if recorded.post is None:
        return None
    post = recorded.post
    message = answer_post(
        conversation=conversation,
        content=post.content,
        display_content=post.display,
        metadata=post.metadata,
        lock_event=post.lock_event,
    )
    if recorded.link is not None:
        recorded.link(message)
    return message


def _counted(kind: str, outcome: str) -> None:
    if outcome:
        metrics.on_commit(lambda: metrics.ANSWERS.labels(kind, outcome).inc())
