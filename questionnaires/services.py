"""Writes: answering a questionnaire card.

``questionnaire_submit`` owns the rules (lock, latest-only, readonly, answered once,
answers valid, one Submission row).  What it needs from the chat layer — which message
is the latest, posting the next user message, the ``card_locked`` event, starting the
agent — comes in through a small ``SubmitPort`` the caller passes, because
``questionnaires`` never imports ``chat``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from django.apps import apps
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from questionnaires import selectors
from questionnaires.cards import MessageInput, message_questionnaires
from questionnaires.errors import SubmitRefused
from questionnaires.models import Submission
from questionnaires.protocol import AnswerInvalid, Questionnaire, build_response


class SubmitPort(Protocol):
    """The chat-layer operations a submit needs."""

    def latest_card_seq(self, *, conversation: Any) -> int | None:
        """Seq of the message whose cards may be answered (DESIGN §4.12), or None."""

    def answer_post(self, *, conversation: Any, content: str, display_content: str) -> Any:
        """Create the next user message (no agent run yet) and return it."""

    def card_locked(self, *, conversation: Any, message_id: int, questionnaire_id: str) -> None:
        """Tell every open tab the card is locked."""

    def run_start(self, *, conversation: Any, message: Any) -> None:
        """Start the agent turn the answer triggers (after the transaction commits)."""


@dataclass(frozen=True, slots=True)
class SubmitResult:
    submission: Submission
    card_message: Any
    user_message: Any


def not_found() -> SubmitRefused:
    return SubmitRefused(
        "questionnaire_not_found", _("This questionnaire was not found."), status=404
    )


def questionnaire_find(
    *, conversation_id: int, message: Any, questionnaire_id: str, lang: str
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
        tool_results=selectors.tool_results(conversation_id=conversation_id, call_ids=call_ids),
        readonly=message.readonly,
    )
    questionnaire = message_questionnaires(message_input, lang=lang).get(questionnaire_id)
    if questionnaire is None:
        raise not_found()
    return questionnaire


def questionnaire_submit(
    *,
    conversation: Any,
    message_id: int,
    questionnaire_id: str,
    answers: Mapping[str, Any],
    other_text: Mapping[str, str],
    user: Any,
    lang: str,
    port: SubmitPort,
) -> SubmitResult:
    """Answer a card: validate, record it once, post the answer as the next user message,
    lock the card everywhere, start the agent.  Raises :class:`SubmitRefused`.

    The conversation row is locked first, so concurrent submits run one after another;
    the unique (conversation, questionnaire_id) constraint backs that up.
    """
    conversation_model = apps.get_model("chat", "Conversation")
    message_model = apps.get_model("chat", "Message")
    with transaction.atomic():
        conversation_model.objects.select_for_update().only("id").get(pk=conversation.pk)
        message = message_model.objects.filter(
            conversation_id=conversation.pk, pk=message_id
        ).first()
        questionnaire = questionnaire_find(
            conversation_id=conversation.pk,
            message=message,
            questionnaire_id=questionnaire_id,
            lang=lang,
        )
        _check_state(
            conversation=conversation, message=message, questionnaire_id=questionnaire_id, port=port
        )
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
        user_message = port.answer_post(
            conversation=conversation, content=built.envelope, display_content=built.display
        )
        submission.user_message = user_message
        submission.save(update_fields=["user_message"])
        port.card_locked(
            conversation=conversation, message_id=message.pk, questionnaire_id=questionnaire_id
        )
    port.run_start(conversation=conversation, message=user_message)
    return SubmitResult(submission=submission, card_message=message, user_message=user_message)


def _already_submitted() -> SubmitRefused:
    return SubmitRefused(
        "questionnaire_already_submitted",
        _("This questionnaire has already been answered."),
        status=409,
    )


def _check_state(
    *, conversation: Any, message: Any, questionnaire_id: str, port: SubmitPort
) -> None:
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
    if port.latest_card_seq(conversation=conversation) != message.seq:
        raise SubmitRefused(
            "questionnaire_not_latest",
            _(
                "This questionnaire is no longer the latest one, so it can’t be answered. Answer the newest message instead."
            ),
            status=409,
        )
