"""The toy kind's registry entry, model side and presenter (one module: it is small).

Built like the real kinds: its card opens a wait (so the limits count it), the person's
answer closes it, the reaper expires it and Stop ends it (each locks the card in open
tabs), and its analytics count it (tests/support/toy_kind/analytics.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction

from chat.core.errors import ChatError
from chat.core.metadata import metadata_of
from chat.core.models import Conversation, Message, Role, Run, Wait, WaitStatus
from chat.core.services import answer_post, event_emit, message_create
from questionnaires.drafts import draft_clear
from questionnaires.registry import Drafts, Kind, RunEffect, wait_open

NAME = "toy"


@dataclass(frozen=True)
class ToyCard:
    conversation_id: int
    message_id: int
    question: str
    answer: str
    open: bool
    typed: str = ""
    ended: str = ""  # "expired" or "stopped": its wait ended without an answer

    @property
    def dom_id(self) -> str:
        return f"toy-{self.message_id}"

    @property
    def draft_key(self) -> str:
        return f"{NAME}:{self.message_id}"

    @property
    def live_state(self) -> str:
        return "t" if self.open else ""

    @property
    def answer_key(self) -> str:
        return ""


def wait_ref(message_id: int) -> str:
    return f"{NAME}:{message_id}"


def toy_ask(*, conversation: Conversation, question: str, run: Run | None = None) -> Message:
    """A toy card, and its wait (through the registry: refused past the limits)."""
    with transaction.atomic():
        message = message_create(
            conversation=conversation,
            role=Role.ASSISTANT,
            content=question,
            metadata={"kind": NAME},
            run=run,
        )
        wait_open(
            kind=NAME,
            conversation=conversation,
            ref=wait_ref(message.pk),
            seconds=settings.WAIT_TIMEOUT,
            run=run,
        )
    return message


# How a wait that ended without an answer shows on the card.
ENDED = {WaitStatus.EXPIRED: "expired", WaitStatus.CANCELLED: "stopped"}


def _ended(message_ids: Sequence[int]) -> dict[int, str]:
    """message id -> "expired" / "stopped", for toy cards whose wait ended unanswered."""
    rows = Wait.objects.filter(ref__in=[wait_ref(pk) for pk in message_ids])
    return {
        int(ref.split(":")[1]): ENDED[WaitStatus(status)]
        for ref, status in rows.values_list("ref", "status")
        if status in ENDED
    }


def _toy(message: Message) -> bool:
    return metadata_of(message).get("kind") == NAME


def _answers(conversation: Conversation) -> list[Message]:
    return list(conversation.messages.filter(role=Role.USER, metadata__kind=NAME).order_by("seq"))


def _answer_of(ask: Message, answers: Sequence[Message]) -> Message | None:
    return next((a for a in answers if a.seq > ask.seq), None)


def toy_cards_for(
    *, conversation: Conversation, messages: Sequence[Message], drafts: Drafts
) -> dict[int, list[ToyCard]]:
    answers = _answers(conversation)
    ended = _ended([m.pk for m in messages])
    cards: dict[int, list[ToyCard]] = {}
    for message in messages:
        if message.role != Role.ASSISTANT or not _toy(message):
            continue
        answer = _answer_of(message, answers)
        typed = (drafts.get(f"{NAME}:{message.pk}") or {}).get("text") or [""]
        card = ToyCard(
            conversation.pk,
            message.pk,
            message.content,
            answer.content if answer else "",
            open=answer is None and message.pk not in ended,
            typed=typed[-1],
            ended="" if answer else ended.get(message.pk, ""),
        )
        cards[message.pk] = [card]
    return cards


def toy_pending(conversation: Conversation) -> Message | None:
    answers = _answers(conversation)
    asks = list(
        conversation.messages.filter(role=Role.ASSISTANT, metadata__kind=NAME).order_by("seq")
    )
    ended = _ended([m.pk for m in asks])
    return next((m for m in asks if _answer_of(m, answers) is None and m.pk not in ended), None)


def toy_waiting(conversation: Conversation) -> ChatError | None:
    if toy_pending(conversation) is None:
        return None
    return ChatError("pending_toy", "A toy card waits for your answer.", status=409)


def toy_draft_open(conversation: Conversation, ident: str) -> bool:
    pending = toy_pending(conversation)
    return pending is not None and str(pending.pk) == ident


def toy_answer(*, conversation: Conversation, message_id: int, text: str) -> Message:
    with transaction.atomic():
        Conversation.objects.select_for_update().only("id").get(pk=conversation.pk)
        pending = toy_pending(conversation)
        if pending is None or pending.pk != message_id:
            raise ChatError("toy_not_pending", "This toy card can't be answered.", status=409)
        message = answer_post(
            conversation=conversation,
            content=text,
            metadata={"kind": NAME},
            lock_event={"kind": NAME, "message_id": message_id},
        )
        draft_clear(conversation=conversation, card=f"{NAME}:{message_id}")
    return message


def _lock(conversation_id: int, message_id: int, reason: str) -> None:
    data = {"kind": NAME, "message_id": message_id, "reason": reason}
    event_emit(conversation_id=conversation_id, name="card_locked", data=data)


def toy_expire(wait: Wait) -> None:
    """Kind.on_expire: the reaper found its wait overdue; open tabs lock the card."""
    _lock(wait.conversation_id, int(wait.ref.split(":")[1]), "expired")


def toy_stop(run: Run) -> None:
    """Kind.on_stop: Stop ends the run's toy cards; open tabs lock them."""
    waiting = Wait.objects.filter(run_id=run.pk, kind=NAME, status=WaitStatus.OPEN)
    for conversation_id, ref in waiting.values_list("conversation_id", "ref"):
        _lock(conversation_id, int(ref.split(":")[1]), "stopped")


KIND = Kind(
    name=NAME,
    label="Toy",
    card_template="toy/card.html",
    present=toy_cards_for,
    draft_prefix=NAME,
    draft_open=toy_draft_open,
    waiting=toy_waiting,
    run_effect=RunEffect.ENDS_TURN,
    model_sees=False,
    urls="tests.support.toy_kind.urls",
    static=("toy/toy.js",),
    answered_by_message=True,  # its answer is the next user message (answer_post)
    on_expire=toy_expire,
    on_stop=toy_stop,
    analytics="tests.support.toy_kind.analytics",
)
