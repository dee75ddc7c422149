"""Deferred interactive forms in the chat (spec 003): the follow-up message rules.

`questionnaires.forms.services` owns the form rows and the checks; this module adds what
needs the chat: the refusal of plain text while a form is pending, the answer's tool
result and readable user message, and the next run. Every entry point (page, htmx, JSON
API, MCP) goes through `interactive_form_answer`; plain text goes through
`chat.usecases.message_post_user`, which refuses it while a form is pending.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from django.db import transaction
from django.utils import translation
from django.utils.translation import gettext as _

from chat.core.errors import ChatError
from chat.core.models import Conversation, Message, Role, RunStatus
from chat.core.services import answer_post, message_create
from chat.obs import metrics
from questionnaires.drafts import draft_clear
from questionnaires.forms.models import TOOL_NAME, FormStatus, form_questions
from questionnaires.forms.presenter import DRAFT_PREFIX
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
from questionnaires.registry import input_refuse_if_waiting

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
    with transaction.atomic():
        if not form_resolve(checked=checked):
            raise ChatError(
                "interactive_form_not_pending",
                _("This form was already answered."),
                status=409,
            )
        _tool_result_store(conversation, checked)
        message = _user_message(conversation, checked)
        form_link_answer_message(form=checked.form, message_id=message.pk)
        outcome = "answered" if checked.status == "answered" else "cancelled"
        metrics.on_commit(lambda: metrics.ANSWERS.labels("form", outcome).inc())
        draft_clear(conversation=conversation, card=f"{DRAFT_PREFIX}:{checked.form.ask_id}")
    return message


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


def _user_message(conversation: Conversation, checked: CheckedAnswer) -> Message:
    with translation.override(conversation.language):
        summary = form_answer_summary(checked=checked)
    return answer_post(
        conversation=conversation,
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
    before = (form.answer or {}).get("answers", {})
    changed = [q for q in questions if answers.get(q["id"]) != before.get(q["id"])]
    if not changed:
        raise ChatError(
            "answer_unchanged", _("Nothing changed: change at least one answer, or keep it.")
        )
    with transaction.atomic():
        if not form_answer_replace(form=form, version=version, answers=answers):
            raise ChatError(
                "questionnaire_version_stale",
                _(
                    "This answer was changed meanwhile, maybe in another tab. Here is the latest one."
                ),
                status=409,
            )
        entries = form_answer_entries(
            questions, answers, form_touched(form, payload.get("touched", []))
        )
        ids = {q["id"] for q in changed}
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
        with translation.override(conversation.language):
            lines = [_("Changed my form answer:")]
            for question in changed:
                now = form_shown(question, answers.get(question["id"])) or _("(no answer)")
                was = form_shown(question, before.get(question["id"])) or _("(no answer)")
                lines.append(
                    _("- %(question)s: %(now)s (was: %(was)s)")
                    % {"question": question["question"], "now": now, "was": was}
                )
        message = answer_post(
            conversation=conversation,
            content=json.dumps(envelope, ensure_ascii=False, separators=(",", ":")),
            display_content="\n".join(lines),
            lock_event={"ask_id": form.ask_id, "status": "answered", "version": version + 1},
        )
        form_link_answer_message(form=form, message_id=message.pk)
    return message
