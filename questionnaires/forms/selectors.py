"""Reads for deferred interactive forms (spec 003): the pending form, the forms of tool
calls, and what a pending form means for the rest of the conversation."""

from __future__ import annotations

from django.utils.translation import gettext as _

from chat.core.errors import ChatError
from chat.core.models import Conversation
from questionnaires.forms.models import FormStatus, InteractiveForm, form_questions
from questionnaires.registry import Whereabouts


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
    ).select_related("run")
    return {form.tool_use_id: form for form in rows}


def form_for_ask(*, conversation_id: int, ask_id: str) -> InteractiveForm | None:
    return (
        InteractiveForm.objects.filter(conversation_id=conversation_id, ask_id=ask_id)
        .select_related("run")
        .first()
    )


def form_waiting(conversation: Conversation) -> ChatError | None:
    """While a form waits, other input is refused (409 `pending_interactive_form`): submit
    the form, or cancel it (and send the text typed)."""
    form = form_pending(conversation_id=conversation.pk)
    if form is None:
        return None
    return ChatError(
        "pending_interactive_form",
        _("A form is waiting for your answer. Submit the form, or cancel it and send this text."),
        status=409,
        details={"tool_use_id": form.tool_use_id, "ask_id": form.ask_id},
    )


def form_open_for_drafts(conversation: Conversation, ask_id: str) -> bool:
    """Whether `ask_id` names this conversation's pending form (the registry's draft check)."""
    return InteractiveForm.objects.filter(
        conversation=conversation, ask_id=ask_id, status=FormStatus.PENDING
    ).exists()


def questions_asked(conversation: Conversation) -> int:
    """Questions of every form the agent showed: its part of the question budget."""
    payloads = InteractiveForm.objects.filter(conversation_id=conversation.pk).values_list(
        "render_payload", flat=True
    )
    return sum(len(form_questions(p or {})) for p in payloads)


def form_locate(conversation: Conversation, ref: str) -> Whereabouts | None:
    """Where the form behind the wait `ref` ("form:<pk>") is, while it is pending."""
    prefix, _sep, pk = ref.partition(":")
    if prefix != "form" or not pk.isdigit():
        return None
    form = InteractiveForm.objects.filter(
        pk=int(pk), conversation_id=conversation.pk, status=FormStatus.PENDING
    ).first()
    if form is None or form.message_id is None:
        return None
    questions = form_questions(form.render_payload)
    title = (
        questions[0]["question"] if len(questions) == 1 else _("A few questions from the assistant")
    )
    return Whereabouts(message_id=form.message_id, anchor=f"form-{form.ask_id}", title=title)
