"""Writes: answering an inline questionnaire card (spec 000).

``questionnaire_answer`` owns the rules (lock, latest-only, readonly, answered once,
answers valid, one Submission row) and ends, like every kind, in the core's
``answer_post`` (the user message, the lock in every tab, the next run).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from chat.core import selectors as core_selectors
from chat.core.errors import SubmitRefused
from chat.core.models import Conversation, Message
from chat.core.services import answer_post
from questionnaires.drafts import draft_clear
from questionnaires.guards import input_refuse_if_pending
from questionnaires.inline import selectors
from questionnaires.inline.models import Submission
from questionnaires.inline.presenter import MessageInput, message_questionnaires
from questionnaires.protocol import AnswerInvalid, Questionnaire, build_response


@dataclass(frozen=True, slots=True)
class SubmitResult:
    submission: Submission
    card_message: Message
    user_message: Message


def not_found() -> SubmitRefused:
    return SubmitRefused(
        "questionnaire_not_found", _("This questionnaire was not found."), status=404
    )


def questionnaire_find(
    *, conversation_id: int, message: Message | None, questionnaire_id: str, lang: str
) -> Questionnaire:
    """The questionnaire ``questionnaire_id`` of an assistant message, or 404."""
    if message is None or message.role != "assistant" or message.hidden:
        raise not_found()
    call_ids = [c.get("id", "") for c in message.tool_calls or () if isinstance(c, Mapping)]
    message_input = MessageInput(
        id=message.pk,
        role=message.role,
        content=message.content,
        display_content=message.display_content,
        tool_calls=message.tool_calls or (),
        tool_results=core_selectors.tool_results(
            conversation_id=conversation_id, call_ids=call_ids
        ),
        readonly=message.readonly,
    )
    questionnaire = message_questionnaires(message_input, lang=lang).get(questionnaire_id)
    if questionnaire is None:
        raise not_found()
    return questionnaire


def questionnaire_answer(
    *,
    conversation: Conversation,
    message_id: int,
    questionnaire_id: str,
    answers: Mapping[str, Any],
    other_text: Mapping[str, str],
    user: Any,
    lang: str,
) -> SubmitResult:
    """Answer a card: validate, record it once, post the answer as the next user message,
    lock the card everywhere, start the agent.  Raises :class:`SubmitRefused`.

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
            raise SubmitRefused(
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
                    submitted_by=user if getattr(user, "is_authenticated", False) else None,
                )
        except IntegrityError:
            raise _already_submitted() from None
        input_refuse_if_pending(conversation=conversation)
        user_message = answer_post(
            conversation=conversation,
            content=built.envelope,
            display_content=built.display,
            lock_event={"message_id": message.pk, "questionnaire_id": questionnaire_id},
        )
        submission.user_message = user_message
        submission.save(update_fields=["user_message"])
        draft_clear(conversation=conversation, card=f"q:{questionnaire_id}")
    return SubmitResult(submission=submission, card_message=message, user_message=user_message)


def _already_submitted() -> SubmitRefused:
    return SubmitRefused(
        "questionnaire_already_submitted",
        _("This questionnaire has already been answered."),
        status=409,
    )


def _check_state(*, conversation: Conversation, message: Message, questionnaire_id: str) -> None:
    if message.readonly:
        raise SubmitRefused(
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
        raise SubmitRefused(
            "questionnaire_not_latest",
            _(
                "This questionnaire is no longer the latest one, so it can’t be answered. Answer the newest message instead."
            ),
            status=409,
        )
