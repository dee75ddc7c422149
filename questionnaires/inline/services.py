"""Writes: answering an inline questionnaire card (spec 000).

``questionnaire_answer`` owns the rules (lock, latest-only, readonly, answered once,
answers valid, one Submission row) and ends, like every kind, in the core's
``answer_post`` (the user message, the lock in every tab, the next run).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from chat.core import selectors as core_selectors
from chat.core.errors import ChatError
from chat.core.models import Conversation, Message
from chat.core.services import answer_post
from chat.obs import metrics
from questionnaires.drafts import draft_clear
from questionnaires.inline import selectors
from questionnaires.inline.models import Submission
from questionnaires.inline.presenter import DRAFT_PREFIX
from questionnaires.inline.selectors import not_found, questionnaire_find
from questionnaires.protocol import AnswerInvalid, build_response
from questionnaires.registry import input_refuse_if_waiting


@dataclass(frozen=True, slots=True)
class SubmitResult:
    submission: Submission
    card_message: Message
    user_message: Message


def questionnaire_answer(
    *,
    conversation: Conversation,
    message_id: int,
    questionnaire_id: str,
    answers: Mapping[str, str | Sequence[str]],
    other_text: Mapping[str, str],
    user: User | None,
    lang: str,
) -> SubmitResult:
    """Answer a card: validate, record it once, post the answer as the next user message,
    lock the card everywhere, start the agent.  Raises :class:`ChatError`.

    The conversation row is locked first, so concurrent submits run one after another;
    the unique (conversation, questionnaire_id) constraint backs that up.
    """
    with transaction.atomic():
        Conversation.objects.select_for_update().only("id").get(pk=conversation.pk)
        message = Message.objects.filter(conversation_id=conversation.pk, pk=message_id).first()
        questionnaire = questionnaire_find(
            conversation_id=conversation.pk,
            message=message,
            questionnaire_id=questionnaire_id,
            lang=lang,
        )
        if message is None:  # questionnaire_find raised already; this tells the type checker
            raise not_found()
        _check_state(conversation=conversation, message=message, questionnaire_id=questionnaire_id)
        try:
            built = build_response(questionnaire, answers, other_text=other_text, lang=lang)
        except AnswerInvalid as exc:
            raise ChatError(
                "answer_invalid", _("Some answers need attention."), status=400, errors=exc.errors
            ) from None
        try:
            with transaction.atomic():
                submission = Submission.objects.create(
                    conversation_id=conversation.pk,
                    message=message,
                    questionnaire_id=questionnaire_id,
                    answers=dict(answers),
                    other_text=dict(other_text),
                    payload=built.payload,
                    submitted_by=user,
                )
        except IntegrityError:
            raise _already_submitted() from None
        input_refuse_if_waiting(conversation=conversation)
        user_message = answer_post(
            conversation=conversation,
            content=built.envelope,
            display_content=built.display,
            lock_event={"message_id": message.pk, "questionnaire_id": questionnaire_id},
        )
        submission.user_message = user_message
        submission.save(update_fields=["user_message"])
        metrics.on_commit(lambda: metrics.ANSWERS.labels("inline", "answered").inc())
        draft_clear(conversation=conversation, card=f"{DRAFT_PREFIX}:{questionnaire_id}")
    return SubmitResult(submission=submission, card_message=message, user_message=user_message)


def _already_submitted() -> ChatError:
    return ChatError(
        "questionnaire_already_submitted",
        _("This questionnaire has already been answered."),
        status=409,
    )


def _check_state(*, conversation: Conversation, message: Message, questionnaire_id: str) -> None:
    if message.readonly:
        raise ChatError(
            "message_readonly",
            _("This message is read-only, so its questionnaire can’t be answered."),
            status=409,
        )
    if selectors.submission_exists(
        conversation_id=conversation.pk, questionnaire_id=questionnaire_id
    ):
        raise _already_submitted()
    if (
        core_selectors.message_latest_visible_assistant_seq(conversation=conversation)
        != message.seq
    ):
        raise ChatError(
            "questionnaire_not_latest",
            _(
                "This questionnaire is no longer the latest one, so it can’t be answered. Answer the newest message instead."
            ),
            status=409,
        )
