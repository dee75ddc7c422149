"""Deferred interactive forms (spec 003): open a form for a tool call, find the pending
one, check an answer, resolve it exactly once.

This module owns `InteractiveForm` rows and never imports `chat`: the chat layer
(`questionnaires.forms.answers`) creates the messages and starts runs around these calls.

Where the render payload lives: the form row keeps it, and it is written onto the tool
block — `message.metadata["render_payloads"][tool_use_id]` of the assistant message
that carries the tool call. The tool (`interactive_form_question`) only checks
(`form_check`: nothing is written, so running it again is harmless); the form is created
by its `persisted` hook (`form_create`), in the transaction that stores that message with
the call's result — the one way a tool's effect attaches to its message.
"""

from __future__ import annotations

import secrets
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import cast

from django.conf import settings
from django.db import transaction
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from chat.core.errors import FormError
from chat.core.models import Conversation, Message, Run
from chat.core.waits import wait_limit_problem
from questionnaires.forms.models import (
    KIND_NAME,
    TOOL_NAME,
    FormQuestion,
    FormStatus,
    InteractiveForm,
    ToolResult,
    form_questions,
)
from questionnaires.forms.selectors import form_pending
from questionnaires.protocol import normalize_interactive_form, validate_form_answers
from questionnaires.protocol.jsontypes import Json, JsonObject, JsonValue
from questionnaires.protocol.provenance import CHOSEN, DEFAULT, FREE_TEXT
from questionnaires.registry import wait_open

DEFERRED_FLAG = "__deferred_user_input__"
ANSWER_STATUSES = (FormStatus.ANSWERED, FormStatus.CANCELLED)
MAX_ANSWER_MESSAGE = 10_000


@dataclass(frozen=True)
class CheckedAnswer:
    form: InteractiveForm
    status: str
    answers: dict[str, str | list[str]]
    message: str
    # Question ids the person interacted with: never "kept the default" (DESIGN §4.14).
    touched: frozenset[str] = frozenset()


# --- opening a form (the tool) -----------------------------------------------------------


def _tool_error(code: str, message: str, **extra: JsonValue) -> ToolResult:
    return {"success": False, "status": "error", "error_code": code, "message": message, **extra}


def form_check(
    *,
    conversation_id: int,
    run_id: int | None,
    arguments: object,
    lang: str = "en",
    shown_in_step: bool = False,
) -> ToolResult:
    """Run the `interactive_form_question` tool: the result the model sees; nothing is
    written (`form_create` does that once the call is stored).

    Invalid arguments return every problem (`INVALID_ARGUMENT`) and never render; a
    second form in the same run (`shown_in_step`: an earlier call of this step already
    deferred), a form while another is pending, or one past a waiting limit, is refused.
    """
    with translation.override(lang):
        normalized = normalize_interactive_form(arguments, lang=lang)
        if not normalized.ok:
            message = _("The form was not shown. Fix every listed problem and call again.")
            return _tool_error("INVALID_ARGUMENT", message, errors=normalized.errors)
        refusal = _open_refusal(
            conversation_id=conversation_id, run_id=run_id, shown_in_step=shown_in_step
        )
        if refusal is not None:
            return refusal
        conversation = Conversation.objects.get(pk=conversation_id)
        run = Run.objects.filter(pk=run_id).first() if run_id is not None else None
        limited = wait_limit_problem(conversation=conversation, run=run)
        if limited is not None:
            return _tool_error(limited.code, limited.message)
    return {
        DEFERRED_FLAG: True,
        "success": True,
        "status": "waiting_for_user_response",
        "ask_id": "ask_" + secrets.token_hex(8),
    }


def form_create(
    *,
    conversation_id: int,
    run_id: int | None,
    message_id: int,
    tool_use_id: str,
    ask_id: str,
    arguments: object,
    lang: str = "en",
) -> InteractiveForm | None:
    """The stored call's form: its row, its render payload on the message that carries
    the call, and its wait. Once per call (a second time returns the first); None when
    the arguments don't normalize (they did when the call was checked)."""
    opened = _opened_by_call(run_id=run_id, tool_use_id=tool_use_id)
    if opened is not None:
        return opened
    normalized = normalize_interactive_form(arguments, lang=lang)
    if not normalized.ok:
        return None
    payload: JsonObject = {
        "type": TOOL_NAME,
        "ask_id": ask_id,
        "task_id": conversation_id,
        "subtask_id": run_id,
        "questions": cast(list[Json], normalized.questions),
    }
    run = Run.objects.filter(pk=run_id).first() if run_id is not None else None
    with transaction.atomic():
        form = InteractiveForm.objects.create(
            conversation_id=conversation_id,
            run_id=run_id,
            message_id=message_id,
            tool_use_id=tool_use_id,
            ask_id=ask_id,
            render_payload=payload,
        )
        _write_payload(message_id, tool_use_id, payload)
        wait_open(
            conversation=Conversation.objects.get(pk=conversation_id),
            kind=KIND_NAME,
            ref=f"form:{form.pk}",
            seconds=settings.WAIT_TIMEOUT,
            run=run,
            tool_call_id=tool_use_id,
            check_limits=False,  # checked with the call
        )
    return form


def form_open(
    *,
    conversation_id: int,
    run_id: int | None,
    message_id: int,
    tool_use_id: str,
    arguments: object,
    lang: str = "en",
) -> ToolResult:
    """Check and create at once, for a call whose message is already stored."""
    result = form_check(
        conversation_id=conversation_id, run_id=run_id, arguments=arguments, lang=lang
    )
    if result.get(DEFERRED_FLAG) is True:
        form_create(
            conversation_id=conversation_id,
            run_id=run_id,
            message_id=message_id,
            tool_use_id=tool_use_id,
            ask_id=str(result["ask_id"]),
            arguments=arguments,
            lang=lang,
        )
    return result


def _opened_by_call(*, run_id: int | None, tool_use_id: str) -> InteractiveForm | None:
    if run_id is None or not tool_use_id:
        return None
    return InteractiveForm.objects.filter(run_id=run_id, tool_use_id=tool_use_id).first()


def _open_refusal(
    *, conversation_id: int, run_id: int | None, shown_in_step: bool = False
) -> ToolResult | None:
    shown = run_id is not None and InteractiveForm.objects.filter(run_id=run_id).exists()
    if shown or shown_in_step:
        return _tool_error(
            "interactive_form_already_shown",
            _(
                "A form was already shown in this run; only one interactive form per run is "
                "allowed. End your turn and wait for the user's answer."
            ),
        )
    if form_pending(conversation_id=conversation_id) is not None:
        return _tool_error(
            "pending_interactive_form",
            _("Another form is already waiting for the user; wait for the answer."),
        )
    return None


def _write_payload(message_id: int, tool_use_id: str, payload: JsonObject) -> None:
    message = Message.objects.select_for_update().get(pk=message_id)
    metadata = dict(message.metadata or {})
    payloads = dict(metadata.get("render_payloads") or {})
    payloads[tool_use_id] = payload
    metadata["render_payloads"] = payloads
    Message.objects.filter(pk=message_id).update(metadata=metadata)


# --- answering ---------------------------------------------------------------------------


def form_check_answer(*, conversation_id: int, payload: object, lang: str = "en") -> CheckedAnswer:
    """Validate a follow-up answer payload against the pending form; raise `FormError`.

    Order: the payload's shape and `type` (`invalid_interactive_form_answer`), a pending
    form exists (`interactive_form_not_pending`), `tool_use_id` present and matching
    (`interactive_form_tool_required`, `interactive_form_tool_mismatch`), then the
    answers against the questions (`interactive_form_answer_invalid`, per-field messages).
    """
    if not isinstance(payload, dict) or payload.get("type") != TOOL_NAME:
        raise FormError(
            "invalid_interactive_form_answer",
            _("A form answer must be an object with type “interactive_form_question”."),
        )
    form = form_pending(conversation_id=conversation_id)
    if form is None:
        raise FormError(
            "interactive_form_not_pending",
            _("There is no form waiting for an answer in this conversation."),
            status=409,
        )
    tool_use_id = payload.get("tool_use_id")
    if not isinstance(tool_use_id, str) or not tool_use_id.strip():
        raise FormError(
            "interactive_form_tool_required",
            _("The answer must name the form's tool call (tool_use_id)."),
            details={"tool_use_id": form.tool_use_id},
        )
    if tool_use_id.strip() != form.tool_use_id:
        raise FormError(
            "interactive_form_tool_mismatch",
            _("This answer is for another form; only the latest form can be answered."),
            status=409,
            details={"tool_use_id": form.tool_use_id},
        )
    status, message = _status_and_message(payload)
    answers: dict[str, str | list[str]] = {}
    if status == FormStatus.ANSWERED:
        answers = form_answers_valid(form, payload.get("answers", {}), lang=lang)
    touched = form_touched(form, payload.get("touched", []))
    return CheckedAnswer(
        form=form, status=status, answers=answers, message=message, touched=touched
    )


def form_touched(form: InteractiveForm, touched: object) -> frozenset[str]:
    """The optional ``touched`` list of an answer: ids of the form's questions the person
    interacted with (a click on the preselected option is a choice, not a kept default)."""
    known = {q["id"] for q in form_questions(form.render_payload)}
    if not isinstance(touched, list) or not all(isinstance(t, str) and t in known for t in touched):
        raise FormError(
            "invalid_interactive_form_answer", _("“touched” must be a list of question ids.")
        )
    return frozenset(touched)


def form_answers_valid(
    form: InteractiveForm, answers: object, *, lang: str
) -> dict[str, str | list[str]]:
    """The form's answers, checked against its questions (a first answer or a change):
    `FormError` `interactive_form_answer_invalid` with every problem per field."""
    check = validate_form_answers(form.render_payload.get("questions", []), answers, lang=lang)
    if not check.ok:
        fields = {e["path"].removeprefix("answers."): e["message"] for e in check.errors}
        raise FormError(
            "interactive_form_answer_invalid",
            _("Some answers need attention."),
            details={"errors": check.errors, "fields": fields},
        )
    return check.answers


def _status_and_message(payload: Mapping[str, object]) -> tuple[str, str]:
    status = payload.get("status", FormStatus.ANSWERED)
    message = payload.get("message") or ""
    if status not in ANSWER_STATUSES:
        raise FormError(
            "invalid_interactive_form_answer",
            _("“status” must be “answered” or “cancelled”."),
        )
    if not isinstance(message, str) or len(message) > MAX_ANSWER_MESSAGE:
        raise FormError(
            "invalid_interactive_form_answer",
            _("“message” must be a string of at most %(limit)s characters.")
            % {"limit": MAX_ANSWER_MESSAGE},
        )
    return str(status), message


def form_resolve(*, checked: CheckedAnswer) -> bool:
    """Mark the form answered/cancelled; False when another request already did.

    A conditional UPDATE, so of two tabs submitting at once exactly one wins.
    """
    done = InteractiveForm.objects.filter(pk=checked.form.pk, status=FormStatus.PENDING).update(
        status=checked.status,
        answer={"answers": checked.answers, "message": checked.message},
        answered_at=timezone.now(),
    )
    return done == 1


def form_answer_replace(
    *, form: InteractiveForm, version: int, answers: Mapping[str, str | list[str]]
) -> bool:
    """Replace answer `version` of an answered form by `answers` (issue 27), keeping the
    earlier one; False when `version` is no longer the latest (a conditional UPDATE)."""
    earlier = [
        *(form.earlier or []),
        {"version": version, "answer": form.answer, "message_id": form.answer_message_id},
    ]
    done = InteractiveForm.objects.filter(
        pk=form.pk, status=FormStatus.ANSWERED, version=version
    ).update(
        version=version + 1,
        answer={"answers": dict(answers), "message": ""},
        earlier=earlier,
        answered_at=timezone.now(),
    )
    return done == 1


def form_link_answer_message(*, form: InteractiveForm, message_id: int) -> None:
    InteractiveForm.objects.filter(pk=form.pk).update(answer_message_id=message_id)


def form_tool_result(*, checked: CheckedAnswer) -> dict[str, JsonValue]:
    """What the model receives as the tool result of the form's tool call."""
    questions = form_questions(checked.form.render_payload)
    result: dict[str, JsonValue] = {
        "type": TOOL_NAME,
        "ask_id": checked.form.ask_id,
        "tool_use_id": checked.form.tool_use_id,
        "status": checked.status,
    }
    if checked.status == FormStatus.ANSWERED:
        result["answers"] = form_answer_entries(questions, checked.answers, checked.touched)
    if checked.message:
        result["message"] = checked.message
    return result


def form_answer_entries(
    questions: list[FormQuestion],
    answers: Mapping[str, str | list[str]],
    touched: Collection[str] = (),
) -> list[JsonValue]:
    """The answers as the model reads them, each with its `provenance` (issue 27)."""
    return [_answer_entry(q, answers.get(q["id"]), q["id"] in touched) for q in questions]


def _provenance(question: FormQuestion, value: str | list[str] | None, touched: bool) -> str:
    """`default` when the person never touched the question and its default was sent as it
    was (DESIGN §4.14); else `chosen` for a choice, `free_text` for typed text (the words of
    `protocol.provenance`)."""
    default = question.get("default")
    empty: str | list[str] = [] if question.get("multi_select") else ""
    untouched = (value if value is not None else empty) == (
        default if default is not None else empty
    ) and not touched
    if untouched:
        return DEFAULT
    return CHOSEN if question["input_type"] == "choice" else FREE_TEXT


def _answer_entry(
    question: FormQuestion, value: str | list[str] | None, touched: bool
) -> dict[str, JsonValue]:
    entry: dict[str, JsonValue] = {"id": question["id"], "question": question["question"]}
    labels = {o["value"]: o["label"] for o in question.get("options", [])}
    if question["input_type"] == "choice" and question.get("multi_select"):
        values = value if isinstance(value, list) else []
        entry["values"] = values
        entry["labels"] = [labels.get(v, v) for v in values]
    elif question["input_type"] == "choice":
        chosen = value if isinstance(value, str) else ""
        entry["value"] = chosen
        entry["label"] = labels.get(chosen, "")
    else:
        entry["value"] = value if isinstance(value, str) else ""
    entry["provenance"] = _provenance(question, value, touched)
    return entry


def form_shown(question: FormQuestion, value: str | list[str] | None) -> str:
    """An answer as people read it: the options' labels, or the text."""
    labels = {o["value"]: o["label"] for o in question.get("options", [])}
    if isinstance(value, list):
        return ", ".join(labels.get(v, v) for v in value)
    if question["input_type"] == "choice":
        return labels.get(value or "", "") or (value or "")
    return value or ""


def form_answer_summary(*, checked: CheckedAnswer) -> str:
    """The readable answer people see in the chat (one `question: answer` line each)."""
    if checked.status == FormStatus.CANCELLED:
        lines = [_("Form cancelled.")]
    else:
        lines = [_("Form answered:")]
        for question in form_questions(checked.form.render_payload):
            value = checked.answers.get(question["id"])
            text = form_shown(question, value)
            touched = question["id"] in checked.touched
            if text and _provenance(question, value, touched) == DEFAULT:
                text = _("%(answer)s (kept the default)") % {"answer": text}
            lines.append(f"- {question['question']}: {text or _('(no answer)')}")
    if checked.message:
        lines.append("")
        lines.append(checked.message)
    return "\n".join(lines)
