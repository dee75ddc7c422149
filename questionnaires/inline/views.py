"""Answering an inline questionnaire card: the submit view.

The rules live in ``questionnaires.inline.services.questionnaire_answer``; this module
adapts HTTP (htmx, plain form POST, JSON) to it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import TypedDict, cast

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.utils import translation
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from chat.core import selectors
from chat.core.errors import ChatError, NotFound
from chat.core.models import Conversation, Message
from chat.edge.answers import Notice, Rendered, answer_response, refused_page
from chat.edge.forms import MessageForm
from chat.edge.http import HtmxRequest, json_body, signed_in
from chat.edge.page import conversation_page, message_items_for
from questionnaires.inline.kind import KIND
from questionnaires.inline.presenter import (
    Draft,
    answers_from_form,
    other_typed_counts,
    skipped_from_form,
    touched_from_form,
    unsent_choice,
)
from questionnaires.inline.selectors import questionnaire_find, submission_latest
from questionnaires.inline.services import questionnaire_answer
from questionnaires.protocol import ProtocolError
from questionnaires.registry import Refused


@login_required
@require_POST
def questionnaire_submit_view(
    request: HtmxRequest, conversation_id: int, message_id: int
) -> HttpResponse:
    """POST a card's answers (htmx, plain form, or JSON ``{questionnaire_id, answers,
    other_text}``).  Another user's conversation or an unknown card is a 404."""
    conversation, message = _card_message(request, conversation_id, message_id)
    lang = translation.get_language() or "en"
    draft = Draft(
        questionnaire_id=request.POST.get("questionnaire_id", ""), answers={}, other_text={}
    )
    try:
        posted = _submitted(request, conversation, message, lang)
        draft = posted.draft()
        result = questionnaire_answer(
            conversation=conversation,
            message_id=message.pk,
            user=signed_in(request),
            lang=lang,
            **posted.answer(),
        )
    except ChatError as refused:
        return _refused(request, conversation, message, draft, refused)
    return answer_response(
        request,
        conversation=conversation,
        error=None,
        fragment=lambda: _done(conversation, message),
        anchor=f"msg-{result.user_message.pk}",
        json_api=True,
        created=lambda: {
            "message_id": result.user_message.pk,
            "seq": result.user_message.seq,
            "questionnaire_id": posted.questionnaire_id,
            "version": result.submission.version,
        },
    )


def _done(conversation: Conversation, message: Message) -> Rendered:
    """The answered card, locked (htmx)."""
    (card_item,) = message_items_for(conversation=conversation, messages=[message])
    return "questionnaires/submit_done.html", {"card_item": card_item}


def _wants_json(request: HtmxRequest) -> bool:
    return request.content_type == "application/json"


def _card_message(
    request: HtmxRequest, conversation_id: int, message_id: int
) -> tuple[Conversation, Message]:
    try:
        conversation = selectors.conversation_get_for_user(
            user=signed_in(request), conversation_id=conversation_id
        )
        message = selectors.message_get(conversation=conversation, message_id=message_id)
    except NotFound:
        raise Http404() from None
    return conversation, message


@dataclass(frozen=True)
class _Posted:
    questionnaire_id: str
    answers: dict[str, str | list[str]]
    other_text: dict[str, str]
    skipped: list[str] = field(default_factory=list)
    declined: bool = False
    version: int | None = None
    touched: list[str] = field(default_factory=list)

    def draft(self) -> Draft:
        """What the card shows again if the answer is refused."""
        return Draft(
            questionnaire_id=self.questionnaire_id,
            answers=self.answers,
            other_text=self.other_text,
            skipped=self.skipped,
            version=self.version,
            touched=self.touched,
        )

    def answer(self) -> _Answer:
        return {
            "questionnaire_id": self.questionnaire_id,
            "answers": self.answers,
            "other_text": self.other_text,
            "skipped": self.skipped,
            "declined": self.declined,
            "version": self.version,
            "touched": self.touched,
        }


class _Answer(TypedDict):
    """`questionnaire_answer`'s keywords from what was posted."""

    questionnaire_id: str
    answers: Mapping[str, str | Sequence[str]]
    other_text: Mapping[str, str]
    skipped: Sequence[str]
    declined: bool
    version: int | None
    touched: Sequence[str]


def _submitted(
    request: HtmxRequest, conversation: Conversation, message: Message, lang: str
) -> _Posted:
    """What was posted: the card, its answers, skipped questions, a decline, and the answer
    version a change replaces (issue 27)."""
    if _wants_json(request):
        return _submitted_json(json_body(request))
    questionnaire_id = request.POST.get("questionnaire_id", "")
    questionnaire = questionnaire_find(
        conversation_id=conversation.pk,
        message=message,
        questionnaire_id=questionnaire_id,
        lang=lang,
    )
    fields = dict(request.POST.lists())
    posted, posted_other = answers_from_form(questionnaire, fields)
    return _Posted(
        questionnaire_id=questionnaire_id,
        answers=other_typed_counts(questionnaire, posted, posted_other),
        other_text=posted_other,
        skipped=skipped_from_form(questionnaire, fields),
        declined=request.POST.get("action") == "decline",
        version=_version(request.POST.get("version")),
        touched=touched_from_form(questionnaire, fields),
    )


def _submitted_json(body: Mapping[str, object]) -> _Posted:
    answers, other = body.get("answers", {}), body.get("other_text") or {}
    if not isinstance(answers, dict) or not isinstance(other, dict):
        raise ChatError(
            "answer_invalid", _("“answers” and “other_text” must be objects."), status=400
        )
    if not all(_is_answer(v) for v in answers.values()) or not all(
        isinstance(v, str) for v in other.values()
    ):
        raise ChatError(
            "answer_invalid",
            _("Each answer must be a string or a list of strings, each other text a string."),
            status=400,
        )
    skipped, declined, version = body.get("skipped", []), body.get("declined", False), None
    if not isinstance(skipped, list) or not all(isinstance(q, str) for q in skipped):
        raise ChatError("answer_invalid", _("“skipped” must be a list of question ids."))
    touched = body.get("touched", [])
    if not isinstance(touched, list) or not all(isinstance(q, str) for q in touched):
        raise ChatError("answer_invalid", _("“touched” must be a list of question ids."))
    if not isinstance(declined, bool):
        raise ChatError("answer_invalid", _("“declined” must be true or false."))
    if body.get("version") is not None:
        version = _version(body.get("version"))
        if version is None:
            raise ChatError("answer_invalid", _("“version” must be a positive integer."))
    typed = cast(dict[str, str | list[str]], answers)  # checked just above
    return _Posted(
        questionnaire_id=str(body.get("questionnaire_id", "")),
        answers=typed,
        other_text=cast(dict[str, str], other),
        skipped=cast(list[str], skipped),
        declined=declined,
        version=version,
        touched=cast(list[str], touched),
    )


def _version(raw: object) -> int | None:
    """A posted answer version: a positive integer (at most 9 digits), else None."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw if 0 < raw < 10**9 else None
    if isinstance(raw, str) and raw.isascii() and raw.isdigit() and len(raw) <= 9:
        return int(raw) or None
    return None


def _is_answer(value: object) -> bool:
    return isinstance(value, str) or (
        isinstance(value, list) and all(isinstance(v, str) for v in value)
    )


def _refused(
    request: HtmxRequest,
    conversation: Conversation,
    message: Message,
    draft: Draft,
    refused: ChatError,
) -> HttpResponse:
    """JSON for API-ish requests; otherwise the card again, with the reason and the
    user's selections: just the message for htmx, the whole page without JavaScript.
    A card answered elsewhere (a stale tab) shows the accepted answer instead of the
    draft; static/js/chat.js then loads the messages this tab missed."""
    notice: Notice | None = None
    shown: Refused | None = None
    if refused.code in ("questionnaire_already_submitted", "questionnaire_version_stale"):
        if not _wants_json(request) and refused.status != 404:
            text = _elsewhere_text(conversation, message, draft, refused)
            notice = Notice(message_id=message.pk, code=refused.code, text=text)
    else:
        shown = Refused(
            kind=KIND.name,
            message_id=message.pk,
            value=replace(
                draft,
                code=refused.code,
                message=refused.message,
                errors=tuple(e for e in refused.errors if isinstance(e, ProtocolError)),
                still_interactive=refused.code == "answer_invalid",
            ),
        )

    def fragment() -> Rendered:
        (item,) = message_items_for(conversation=conversation, messages=[message], refused=shown)
        shown_notice = None if notice is None else asdict(notice)
        return "chat/conversation.html#message", {"item": item, "notice": shown_notice}

    def page() -> Rendered:
        template, context = refused_page(conversation, shown)()
        return template, {**context, "notice": None}

    return answer_response(
        request,
        conversation=conversation,
        error=refused,
        fragment=fragment,
        page=page,
        notice=notice,
        json_api=True,
    )


def _elsewhere_text(
    conversation: Conversation, message: Message, draft: Draft, refused: ChatError
) -> str:
    """A card answered (or changed) meanwhile in another tab: say so, and what this tab had
    chosen that was not sent, with the way to send it (issue 32)."""
    text = (
        refused.message
        if refused.code == "questionnaire_version_stale"
        else _(
            "This questionnaire was already answered, maybe in another tab. "
            "Here is the answer that counts."
        )
    )
    latest = submission_latest(
        conversation_id=conversation.pk, questionnaire_id=draft.questionnaire_id
    )
    if latest is None or not draft.answers:
        return text
    lang = translation.get_language() or "en"
    questionnaire = questionnaire_find(
        conversation_id=conversation.pk,
        message=message,
        questionnaire_id=draft.questionnaire_id,
        lang=lang,
    )
    yours = unsent_choice(questionnaire, draft, latest.payload, lang=lang)
    if not yours:
        return text
    if message.readonly:
        unsent = _("What you chose here was not sent: %(choice)s.")
    else:
        unsent = _(
            "What you chose here was not sent: %(choice)s. To send it instead, use Change answer."
        )
    # Translators: two sentences in a row (Chinese needs no space between them).
    return _("%(first)s %(second)s") % {"first": text, "second": unsent % {"choice": yours}}


@login_required
@require_GET
def questionnaire_change_view(
    request: HtmxRequest, conversation_id: int, message_id: int
) -> HttpResponse:
    """ "Change answer": the answered card reopened with its latest answer filled in (the
    message for htmx, the whole page without JavaScript).  It posts a change of that
    version to the answer URL.  Another user's conversation or an unknown card is a 404."""
    conversation, message = _card_message(request, conversation_id, message_id)
    questionnaire_id = request.GET.get("questionnaire_id", "")
    latest = submission_latest(conversation_id=conversation.pk, questionnaire_id=questionnaire_id)
    if latest is None or latest.message_id != message.pk or message.readonly:
        raise Http404(_("This questionnaire has no answer to change."))
    reopened = Refused(
        kind=KIND.name,
        message_id=message.pk,
        value=Draft(
            questionnaire_id=questionnaire_id,
            answers=latest.answers,
            other_text=latest.other_text,
            skipped=tuple(latest.skipped or ()),
            still_interactive=True,
            version=latest.version,
        ),
    )
    if request.htmx:
        (item,) = message_items_for(conversation=conversation, messages=[message], refused=reopened)
        return render(request, "chat/conversation.html#message", {"item": item})
    context = conversation_page(conversation=conversation, form=MessageForm(), refused=reopened)
    return render(request, "chat/conversation.html", context)
