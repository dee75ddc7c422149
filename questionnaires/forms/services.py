"""Deferred interactive forms (spec 003): open a form for a tool call, find the pending
one, check an answer, resolve it exactly once.

This module owns `InteractiveForm` rows and never imports `chat`: the chat layer
(`questionnaires.forms.answers`) creates the messages and starts runs around these calls.

Where the render payload lives: the form row keeps it, and it is written onto the tool
block — `message.metadata["render_payloads"][tool_use_id]` of the assistant message
that carries the tool call. The agent loop runs the tool before it stores that message,
so whoever stores an assistant message with tool calls calls `form_attach_to_message`
(through `questionnaires.tool_calls.assistant_message_create`), which copies the payload
onto it.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from chat.core.errors import FormError
from chat.core.models import Conversation, Message, Run, WaitKind
from chat.core.waits import WaitLimited, wait_open
from questionnaires.forms.models import FormStatus, InteractiveForm
from questionnaires.protocol import normalize_interactive_form, validate_form_answers

TOOL_NAME = "interactive_form_question"
DEFERRED_FLAG = "__deferred_user_input__"
ANSWER_STATUSES = (FormStatus.ANSWERED, FormStatus.CANCELLED)
MAX_ANSWER_MESSAGE = 10_000


@dataclass(frozen=True)
class CheckedAnswer:
    form: InteractiveForm
    status: str
    answers: dict[str, Any]
    message: str


# --- opening a form (the tool) -----------------------------------------------------------


def _tool_error(code: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"success": False, "status": "error", "error_code": code, "message": message, **extra}


def form_open(
    *,
    conversation_id: int,
    run_id: int | None,
    message_id: int | None,
    tool_use_id: str,
    arguments: Any,
    lang: str = "en",
) -> dict[str, Any]:
    """Run the `interactive_form_question` tool: the result the model sees.

    Invalid arguments return every problem (`INVALID_ARGUMENT`) and never render; a
    second form in the same run, or a form while another is pending, is refused. On
    success the form row and the tool block's `render_payload` are written and the
    deferred result is returned (the UI schema is not sent back to the model).
    """
    with translation.override(lang):
        normalized = normalize_interactive_form(arguments, lang=lang)
        if not normalized.ok:
            message = _("The form was not shown. Fix every listed problem and call again.")
            return _tool_error("INVALID_ARGUMENT", message, errors=normalized.errors)
        opened = _opened_by_call(run_id=run_id, tool_use_id=tool_use_id)
        if opened is not None:  # the same call again (a resumed turn): the same form
            return _deferred(opened)
        refusal = _open_refusal(conversation_id=conversation_id, run_id=run_id)
        if refusal is not None:
            return refusal
        ask_id = "ask_" + secrets.token_hex(8)
        payload = {
            "type": TOOL_NAME,
            "ask_id": ask_id,
            "task_id": conversation_id,
            "subtask_id": run_id,
            "questions": normalized.questions,
        }
        try:
            with transaction.atomic():
                form = InteractiveForm.objects.create(
                    conversation_id=conversation_id,
                    run_id=run_id,
                    message_id=message_id,
                    tool_use_id=tool_use_id,
                    ask_id=ask_id,
                    render_payload=payload,
                )
                if message_id is not None:
                    _write_payload(message_id, tool_use_id, payload)
                wait_open(
                    conversation=Conversation.objects.get(pk=conversation_id),
                    kind=WaitKind.FORM,
                    ref=f"form:{form.pk}",
                    seconds=settings.WAIT_TIMEOUT,
                    run=Run.objects.filter(pk=run_id).first() if run_id is not None else None,
                    tool_call_id=tool_use_id,
                )
        except WaitLimited as limited:  # nothing was stored
            return _tool_error(limited.code, limited.message)
        except IntegrityError:  # a concurrent call won the race for this run/conversation
            return _open_refusal(conversation_id=conversation_id, run_id=run_id) or _tool_error(
                "pending_interactive_form", _("Another form is already waiting for the user.")
            )
    return _deferred(form)


def _deferred(form: InteractiveForm) -> dict[str, Any]:
    return {
        DEFERRED_FLAG: True,
        "success": True,
        "status": "waiting_for_user_response",
        "ask_id": form.ask_id,
    }


def _opened_by_call(*, run_id: int | None, tool_use_id: str) -> InteractiveForm | None:
    if run_id is None or not tool_use_id:
        return None
    return InteractiveForm.objects.filter(run_id=run_id, tool_use_id=tool_use_id).first()


def _open_refusal(*, conversation_id: int, run_id: int | None) -> dict[str, Any] | None:
    if run_id is not None and InteractiveForm.objects.filter(run_id=run_id).exists():
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


def _write_payload(message_id: int, tool_use_id: str, payload: dict[str, Any]) -> None:
    message = Message.objects.select_for_update().get(pk=message_id)
    metadata = dict(message.metadata or {})
    payloads = dict(metadata.get("render_payloads") or {})
    payloads[tool_use_id] = payload
    metadata["render_payloads"] = payloads
    Message.objects.filter(pk=message_id).update(metadata=metadata)


def form_attach_to_message(instance: Message) -> None:
    """Put the payload of a form opened by one of a new assistant message's tool calls
    onto that message (its tool block) and link the form."""
    if instance.role != "assistant" or not instance.tool_calls:
        return
    ids = [c.get("id") for c in instance.tool_calls if isinstance(c, dict) and c.get("id")]
    forms = InteractiveForm.objects.filter(
        conversation_id=instance.conversation_id, message__isnull=True, tool_use_id__in=ids
    )
    attached = False
    for form in forms:
        InteractiveForm.objects.filter(pk=form.pk).update(message_id=instance.pk)
        _write_payload(instance.pk, form.tool_use_id, form.render_payload)
        attached = True
    if attached:  # keep the saved instance in step with the row
        instance.metadata = Message.objects.get(pk=instance.pk).metadata


# --- reading -----------------------------------------------------------------------------


def form_pending(*, conversation_id: int) -> InteractiveForm | None:
    return InteractiveForm.objects.filter(
        conversation_id=conversation_id, status=FormStatus.PENDING
    ).first()


def form_for_tool_call(*, conversation_id: int, tool_use_id: str) -> InteractiveForm | None:
    if not tool_use_id:
        return None
    return (
        InteractiveForm.objects.select_related("message")
        .filter(conversation_id=conversation_id, tool_use_id=tool_use_id)
        .first()
    )


def forms_for_tool_calls(
    *, conversation_id: int, tool_use_ids: list[str]
) -> dict[str, InteractiveForm]:
    """The forms of these tool calls, by tool call id (one query; for rendering)."""
    if not tool_use_ids:
        return {}
    rows = InteractiveForm.objects.filter(
        conversation_id=conversation_id, tool_use_id__in=tool_use_ids
    )
    return {form.tool_use_id: form for form in rows}


# --- answering ---------------------------------------------------------------------------


def form_check_answer(*, conversation_id: int, payload: Any, lang: str = "en") -> CheckedAnswer:
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
    answers: dict[str, Any] = {}
    if status == FormStatus.ANSWERED:
        check = validate_form_answers(
            form.render_payload.get("questions", []), payload.get("answers", {}), lang=lang
        )
        if not check.ok:
            fields = {e["path"].removeprefix("answers."): e["message"] for e in check.errors}
            raise FormError(
                "interactive_form_answer_invalid",
                _("Some answers need attention."),
                details={"errors": check.errors, "fields": fields},
            )
        answers = check.answers
    return CheckedAnswer(form=form, status=status, answers=answers, message=message)


def _status_and_message(payload: dict[str, Any]) -> tuple[str, str]:
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


def form_link_answer_message(*, form: InteractiveForm, message_id: int) -> None:
    InteractiveForm.objects.filter(pk=form.pk).update(answer_message_id=message_id)


def form_tool_result(*, checked: CheckedAnswer) -> dict[str, Any]:
    """What the model receives as the tool result of the form's tool call."""
    questions = checked.form.render_payload.get("questions", [])
    result: dict[str, Any] = {
        "type": TOOL_NAME,
        "ask_id": checked.form.ask_id,
        "tool_use_id": checked.form.tool_use_id,
        "status": checked.status,
    }
    if checked.status == FormStatus.ANSWERED:
        result["answers"] = [_answer_entry(q, checked.answers.get(q["id"])) for q in questions]
    if checked.message:
        result["message"] = checked.message
    return result


def _answer_entry(question: dict[str, Any], value: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"id": question["id"], "question": question["question"]}
    labels = {o["value"]: o["label"] for o in question.get("options", [])}
    if question["input_type"] == "choice" and question.get("multi_select"):
        entry["values"] = list(value or [])
        entry["labels"] = [labels.get(v, v) for v in value or []]
    elif question["input_type"] == "choice":
        entry["value"] = value or ""
        entry["label"] = labels.get(value or "", "")
    else:
        entry["value"] = value or ""
    return entry


def form_answer_summary(*, checked: CheckedAnswer) -> str:
    """The readable answer people see in the chat (one `question: answer` line each)."""
    if checked.status == FormStatus.CANCELLED:
        lines = [_("Form cancelled.")]
    else:
        lines = [_("Form answered:")]
        for entry in form_tool_result(checked=checked).get("answers", []):
            shown = entry.get("labels") or entry.get("label") or entry.get("value") or ""
            text = ", ".join(shown) if isinstance(shown, list) else shown
            lines.append(f"- {entry['question']}: {text or _('(no answer)')}")
    if checked.message:
        lines.append("")
        lines.append(checked.message)
    return "\n".join(lines)
