"""Deferred interactive forms in the chat (spec 003): the follow-up message rules.

`questionnaires.forms.services` owns the form rows and the checks; this module adds what
needs the chat: the refusal of plain text while a form is pending, the answer's tool
result and readable user message, and the next run. Every entry point (page, htmx, JSON
API, MCP) goes through `interactive_form_answer`; plain text goes through
`chat.usecases.message_post_user`, which refuses it while a form is pending.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import cast

from django.utils import translation
from django.utils.translation import gettext as _

from chat.core.errors import ChatError
from chat.core.models import Conversation, Message, Role, RunStatus
from chat.core.services import message_create
from questionnaires.answering import answer_record
from questionnaires.forms.models import (
    KIND_NAME,
    TOOL_NAME,
    FormQuestion,
    FormStatus,
    InteractiveForm,
    form_questions,
)
from questionnaires.forms.selectors import form_for_ask
from questionnaires.forms.services import (
    CheckedAnswer,
    form_answer_entries,
    form_answer_replace,
    form_answer_summary,
    form_answers_valid,
    form_check_answer,
    form_link_answer_message,
    form_resolve,
    form_shown,
    form_tool_result,
    form_touched,
)
from questionnaires.protocol.jsontypes import JsonValue
from questionnaires.protocol.provenance import AMENDED
from questionnaires.registry import AnswerPost, Recorded, input_refuse_if_waiting

ACTIVE_RUN = (RunStatus.QUEUED, RunStatus.RUNNING, RunStatus.SUSPENDED)


def interactive_form_answer(*, conversation: Conversation, payload: object) -> Message:
    """Accept an answer (or a cancellation) of the pending form and resume the agent.

    The model receives the answer as the tool result of the form's tool call; people see
    a readable user message, which also starts the next run. Of two concurrent submits
    exactly one is accepted; the other gets `interactive_form_not_pending`.
    """
    checked = form_check_answer(
        conversation_id=conversation.pk, payload=payload, lang=conversation.language
    )
    answered = answer_record(conversation=conversation, kind=KIND_NAME, answer=checked)
    return cast(Message, answered.message)  # a form's answer always posts one


@dataclass(frozen=True)
class FormChange:
    """A change of answer `version` of an answered form (issue 27), checked: its new
    `answers` and the questions whose answer `changed`."""

    form: InteractiveForm
    version: int
    answers: dict[str, str | list[str]]
    before: Mapping[str, str | list[str]]
    changed: list[FormQuestion]
    touched: object


def answer_row(conversation: Conversation, answer: object) -> Recorded:
    """The kind's `record` on the one answer path (under the conversation's lock): the
    pending form's answer (its tool result and readable message) or a change of it."""
    if isinstance(answer, FormChange):
        return _change_row(conversation, answer)
    if not isinstance(answer, CheckedAnswer):
        raise TypeError(answer)
    if not form_resolve(checked=answer):
        raise ChatError(
            "interactive_form_not_pending",
            _("This form was already answered."),
            status=409,
        )
    _tool_result_store(conversation, answer)
    return Recorded(
        row=answer.form,
        post=_user_post(conversation, answer),
        link=_linker(answer.form),
        outcome="answered" if answer.status == "answered" else "cancelled",
        draft=answer.form.ask_id,
        answers_the_wait=True,
    )


def _linker(form: InteractiveForm) -> Callable[[Message], None]:
    def link(message: Message) -> None:
        form_link_answer_message(form=form, message_id=message.pk)

    return link


def _tool_result_store(conversation: Conversation, checked: CheckedAnswer) -> None:
    """Write the answer as THE tool result of the form's tool call.

    If the runtime stored the deferred result as a tool message, that message is replaced
    (one result per tool call, and no "waiting" text stays in the model's context).
    """
    content = json.dumps(form_tool_result(checked=checked), ensure_ascii=False)
    tool_use_id = checked.form.tool_use_id
    existing = conversation.messages.filter(role=Role.TOOL, tool_call_id=tool_use_id)
    if existing.exists():
        existing.update(content=content)
        return
    message_create(
        conversation=conversation,
        role=Role.TOOL,
        content=content,
        tool_call_id=tool_use_id,
        metadata={"interactive_form": checked.form.ask_id},
    )


def _user_post(conversation: Conversation, checked: CheckedAnswer) -> AnswerPost:
    with translation.override(conversation.language):
        summary = form_answer_summary(checked=checked)
    return AnswerPost(
        content=summary,
        metadata={
            "interactive_form_answer": {
                "type": "interactive_form_question",
                "ask_id": checked.form.ask_id,
                "tool_use_id": checked.form.tool_use_id,
                "status": checked.status,
            }
        },
        lock_event={"ask_id": checked.form.ask_id, "status": checked.status},
    )


def interactive_form_change(
    *, conversation: Conversation, ask_id: str, version: int, payload: Mapping[str, object]
) -> Message:
    """ "Change answer" on an answered form once its run has finished (issue 27).

    The tool call is over, so the change is a new user message: the form's envelope with
    the new answers (`provenance: amended` where they changed), `amends` (the earlier
    answer's message) and `version`. Exactly once per version (a conditional UPDATE): a
    change of a version changed meanwhile is 409 `questionnaire_version_stale`.
    """
    input_refuse_if_waiting(conversation=conversation)
    form = form_for_ask(conversation_id=conversation.pk, ask_id=ask_id)
    if form is None or form.status != FormStatus.ANSWERED:
        raise ChatError(
            "questionnaire_not_answered", _("This form has no answer to change."), status=409
        )
    if form.run is not None and form.run.status in ACTIVE_RUN:
        raise ChatError(
            "form_run_active",
            _("The assistant is still working on this form; change it when it is done."),
            status=409,
        )
    questions = form_questions(form.render_payload)
    answers = form_answers_valid(form, payload.get("answers", {}), lang=conversation.language)
    before: dict[str, str | list[str]] = (form.answer or {}).get("answers", {})
    changed = [q for q in questions if answers.get(q["id"]) != before.get(q["id"])]
    if not changed:
        raise ChatError(
            "answer_unchanged", _("Nothing changed: change at least one answer, or keep it.")
        )
    change = FormChange(
        form=form,
        version=version,
        answers=answers,
        before=before,
        changed=changed,
        touched=payload.get("touched", []),
    )
    answered = answer_record(conversation=conversation, kind=KIND_NAME, answer=change)
    return cast(Message, answered.message)  # a change always posts one


def _change_row(conversation: Conversation, change: FormChange) -> Recorded:
    form, version, answers = change.form, change.version, change.answers
    if not form_answer_replace(form=form, version=version, answers=answers):
        raise ChatError(
            "questionnaire_version_stale",
            _("This answer was changed meanwhile, maybe in another tab. Here is the latest one."),
            status=409,
        )
    questions = form_questions(form.render_payload)
    entries = form_answer_entries(questions, answers, form_touched(form, change.touched))
    ids = {q["id"] for q in change.changed}
    for entry in entries:
        if isinstance(entry, dict) and entry.get("id") in ids:
            entry["provenance"] = AMENDED
    envelope: dict[str, JsonValue] = {
        "type": TOOL_NAME,
        "ask_id": form.ask_id,
        "tool_use_id": form.tool_use_id,
        "status": FormStatus.ANSWERED,
        "answers": entries,
        "amends": form.answer_message_id,
        "version": version + 1,
    }
    return Recorded(
        row=form,
        post=AnswerPost(
            content=json.dumps(envelope, ensure_ascii=False, separators=(",", ":")),
            display=_changed_lines(conversation, change),
            lock_event={"ask_id": form.ask_id, "status": "answered", "version": version + 1},
        ),
        link=_linker(form),
    )


def _changed_lines(conversation: Conversation, change: FormChange) -> str:
    """What people read of a change: each changed question, now and before."""
    with translation.override(conversation.language):
        lines = [_("Changed my form answer:")]
        for question in change.changed:
            now = form_shown(question, change.answers.get(question["id"])) or _("(no answer)")
            was = form_shown(question, change.before.get(question["id"])) or _("(no answer)")
            lines.append(
                _("- %(question)s: %(now)s (was: %(was)s)")
                % {"question": question["question"], "now": now, "was": was}
            )
    return "\n".join(lines)
