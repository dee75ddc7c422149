"""Writes: answering an inline questionnaire card (spec 000).

``answer_row`` owns the kind's rules (latest-only, readonly, answered once, answers valid,
one Submission row); ``questionnaire_answer`` hands it to the one answer path
(``questionnaires.answering``: the lock, the post, the metric, the draft), like every kind.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from django.conf import settings
from django.contrib.auth.models import User
from django.utils.translation import gettext as _

from chat.core import selectors as core_selectors
from chat.core.errors import ChatError
from chat.core.models import Conversation, Message, Run
from questionnaires.answering import answer_record
from questionnaires.inline import selectors
from questionnaires.inline.models import KIND_NAME, Submission
from questionnaires.inline.selectors import not_found, questionnaire_find
from questionnaires.protocol import (
    AnswerInvalid,
    BuiltResponse,
    Questionnaire,
    build_decline,
    build_response,
)
from questionnaires.protocol.jsontypes import JsonValue
from questionnaires.protocol.response import other_label
from questionnaires.registry import AnswerPost, Recorded, wait_open


@dataclass(frozen=True, slots=True)
class SubmitResult:
    submission: Submission
    card_message: Message
    user_message: Message


@dataclass(frozen=True, slots=True)
class InlineAnswer:
    """One answer to an inline card, as `questionnaire_answer` takes it (the kind's own
    request value on the one answer path)."""

    message_id: int
    questionnaire_id: str
    answers: Mapping[str, str | Sequence[str]]
    other_text: Mapping[str, str]
    user: User | None
    lang: str
    skipped: Sequence[str] = ()
    declined: bool = False
    version: int | None = None
    touched: Sequence[str] = ()
    typed: Mapping[str, str] | None = None  # question id → words of a typed reply (issue 36)


def questionnaire_answer(
    *,
    conversation: Conversation,
    message_id: int,
    questionnaire_id: str,
    answers: Mapping[str, str | Sequence[str]],
    other_text: Mapping[str, str],
    user: User | None,
    lang: str,
    skipped: Sequence[str] = (),
    declined: bool = False,
    version: int | None = None,
    touched: Sequence[str] = (),
    typed: Mapping[str, str] | None = None,
) -> SubmitResult:
    """Answer a card: validate, record it once, post the answer as the next user message,
    lock the card everywhere, start the agent.  Raises :class:`ChatError`.

    ``skipped`` question ids are answered empty (``provenance: skipped``); ``declined``
    sends "I'd rather not answer" (``status: declined``) instead of answers.  ``version``
    is the answer version the person is changing ("Change answer", issue 27): None for a
    first answer.  ``touched`` lists the questions the person interacted with: those are
    never "kept the default" (DESIGN §4.14).  ``typed`` (question id → words) marks answers
    read from a typed chat reply (``free_text``, the words kept; issue 36).  Each version is recorded exactly once: a change of a version that is no
    longer the latest (another tab changed it first) is 409 ``questionnaire_version_stale``.

    The conversation row is locked first (`questionnaires.answering`), so concurrent
    submits run one after another; the unique (conversation, questionnaire_id, version)
    constraint backs that up.
    """
    answer = InlineAnswer(
        message_id=message_id,
        questionnaire_id=questionnaire_id,
        answers=answers,
        other_text=other_text,
        user=user,
        lang=lang,
        skipped=skipped,
        declined=declined,
        version=version,
        touched=touched,
        typed=typed,
    )
    answered = answer_record(conversation=conversation, kind=KIND_NAME, answer=answer)
    submission = cast(Submission, answered.recorded.row)
    user_message = cast(Message, answered.message)  # an inline answer always posts one
    return SubmitResult(
        submission=submission, card_message=submission.message, user_message=user_message
    )


def answer_row(conversation: Conversation, answer: object) -> Recorded:
    """The kind's `record` on the one answer path: check the card, write its Submission
    (under the conversation's lock, in a savepoint) and say what to post."""
    if not isinstance(answer, InlineAnswer):
        raise TypeError(answer)
    message = Message.objects.filter(conversation_id=conversation.pk, pk=answer.message_id).first()
    questionnaire = questionnaire_find(
        conversation_id=conversation.pk,
        message=message,
        questionnaire_id=answer.questionnaire_id,
        lang=answer.lang,
    )
    if message is None:  # questionnaire_find raised already; this tells the type checker
        raise not_found()
    previous = _previous(conversation, message, answer)
    built = _built(
        questionnaire,
        answers=answer.answers,
        other_text=answer.other_text,
        skipped=answer.skipped,
        declined=answer.declined,
        previous=previous,
        lang=answer.lang,
        touched=answer.touched,
        typed=answer.typed,
    )
    submission = _submission_create(conversation, message, answer, questionnaire, built, previous)

    def link(user_message: Message) -> None:
        submission.user_message = user_message
        submission.save(update_fields=["user_message"])

    lock = {"message_id": message.pk, "questionnaire_id": answer.questionnaire_id}
    return Recorded(
        row=submission,
        post=AnswerPost(
            content=built.envelope,
            display=built.display,
            lock_event={**lock, "version": submission.version},
        ),
        link=link,
        outcome="answered",
        draft=answer.questionnaire_id,
    )


def answer_conflict(conversation: Conversation, answer: object) -> Exception:
    """The unique (conversation, questionnaire_id, version) refused the row: another tab
    answered (or changed) this version first."""
    if not isinstance(answer, InlineAnswer):
        raise TypeError(answer)
    return _already_submitted() if answer.version is None else _stale()


def _previous(
    conversation: Conversation, message: Message, answer: InlineAnswer
) -> Submission | None:
    """The answer being changed (None for a first answer), after the card's 409s."""
    if answer.version is None:
        _check_state(
            conversation=conversation, message=message, questionnaire_id=answer.questionnaire_id
        )
        return None
    return _check_change(
        conversation=conversation,
        message=message,
        questionnaire_id=answer.questionnaire_id,
        version=answer.version,
    )


def _submission_create(
    conversation: Conversation,
    message: Message,
    answer: InlineAnswer,
    questionnaire: Questionnaire,
    built: BuiltResponse,
    previous: Submission | None,
) -> Submission:
    declined = answer.declined
    return Submission.objects.create(
        conversation_id=conversation.pk,
        message=message,
        questionnaire_id=answer.questionnaire_id,
        answers={} if declined else dict(answer.answers),
        other_text={} if declined else dict(answer.other_text),
        skipped=[] if declined else [q for q in answer.skipped if isinstance(q, str)],
        status=Submission.Status.DECLINED if declined else Submission.Status.SUBMITTED,
        version=1 if previous is None else previous.version + 1,
        payload=built.payload,
        shown=card_shown(questionnaire, lang=answer.lang),
        submitted_by=answer.user,
    )


# How each question type is shown on a card (templates/questionnaires/cards/questionnaire.html).
WIDGETS = {"single_choice": "radio", "multi_choice": "checkboxes", "free_text": "textarea"}


def card_shown(questionnaire: Questionnaire, *, lang: str) -> dict[str, JsonValue]:
    """The card as the person saw it when they answered (DESIGN §4.14): its title, each
    question's words, options and widget, and the page's language ("Other" in it)."""
    other = other_label(lang)
    questions: list[JsonValue] = [
        {
            "id": q.id,
            "type": q.type,
            "text": q.text,
            "options": [o.to_dict() for o in q.options],
            "allow_other": q.allow_other,
            "other_label": other if q.allow_other else "",
            "widget": WIDGETS.get(q.type, q.type),
        }
        for q in questionnaire.questions
    ]
    return {"title": questionnaire.title, "language": lang, "questions": questions}


def _built(
    questionnaire: Questionnaire,
    *,
    answers: Mapping[str, str | Sequence[str]],
    other_text: Mapping[str, str],
    skipped: Sequence[str],
    declined: bool,
    previous: Submission | None,
    lang: str,
    touched: Sequence[str] = (),
    typed: Mapping[str, str] | None = None,
) -> BuiltResponse:
    earlier = previous.payload if previous is not None else None
    amends = previous.user_message_id if previous is not None else None
    if declined:
        if previous is not None and previous.status == Submission.Status.DECLINED:
            raise ChatError(
                "answer_invalid", _("You already declined this questionnaire."), status=400
            )
        return build_decline(questionnaire, lang=lang, previous=earlier, amends=amends)
    try:
        return build_response(
            questionnaire,
            answers,
            other_text=other_text,
            lang=lang,
            skipped=skipped,
            previous=earlier,
            amends=amends,
            touched=touched,
            typed=typed,
        )
    except AnswerInvalid as exc:
        raise ChatError(
            "answer_invalid", _("Some answers need attention."), status=400, errors=exc.errors
        ) from None


def _stale() -> ChatError:
    return ChatError(
        "questionnaire_version_stale",
        _("This answer was changed meanwhile, maybe in another tab. Here is the latest one."),
        status=409,
    )


def _check_change(
    *, conversation: Conversation, message: Message, questionnaire_id: str, version: int
) -> Submission:
    """The answer being changed: it must exist and still be the latest version."""
    if message.readonly:
        raise ChatError(
            "message_readonly",
            _("This message is read-only, so its questionnaire can’t be answered."),
            status=409,
        )
    latest = selectors.submission_latest(
        conversation_id=conversation.pk, questionnaire_id=questionnaire_id
    )
    if latest is None:
        raise ChatError(
            "questionnaire_not_answered",
            _("This questionnaire has no answer to change yet."),
            status=409,
        )
    if latest.version != version:
        raise _stale()
    return latest


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
    if core_selectors.message_latest_visible_assistant_seq(
        conversation=conversation
    ) != message.seq and not _carried(conversation, message, questionnaire_id):
        raise ChatError(
            "questionnaire_not_latest",
            _(
                "This questionnaire is no longer the latest one, so it can’t be answered. Answer the newest message instead."
            ),
            status=409,
        )


def _carried(conversation: Conversation, message: Message, questionnaire_id: str) -> bool:
    """Still waiting after a digression (conversation repair, issue 36)."""
    carried = selectors.carried_message(conversation, questionnaire_id)
    return carried is not None and carried.pk == message.pk


def inline_turn_wait(run: Run, message: Message) -> None:
    """The turn ended on a questionnaire card (Kind.turn_wait): the person's answer starts
    the next. Recorded, never refused: the card is already written."""
    wait_open(
        conversation=run.conversation,
        kind=KIND_NAME,
        ref=f"{KIND_NAME}:{message.pk}",
        seconds=settings.WAIT_TIMEOUT,
        run=run,
        check_limits=False,
    )
