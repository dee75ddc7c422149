"""`interactive_form_question` (spec 003): show the user a form and end the run deferred.

`execute` normalizes and validates the questions (`questionnaires.forms.services`) and
returns the deferred result (`__deferred_user_input__: true`); the loop then stops with
`deferred`. The form itself — its row, the `render_payload` on the tool block, its wait —
is created by `persisted`, once the message carrying the call is stored. The user's
answer comes back as this tool call's result on the next run. Invalid arguments return
every problem so the model can retry; a second form in the same run is refused.
"""

from __future__ import annotations

from questionnaires.forms.services import form_check, form_create
from questionnaires.protocol.jsontypes import JsonValue

from .base import (
    DEFAULT_SCHEMA,
    OPTION_SCHEMA,
    StoredCall,
    Tool,
    ToolContext,
    is_deferred,
    result_schema,
)

PARAMETERS: dict[str, JsonValue] = {
    "type": "object",
    "properties": {
        "questions": {
            "type": "array",
            "description": "The form's questions, in order (at least one).",
            "minItems": 1,
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string", "description": "Unique; q1, q2… when missing."},
                    "question": {"type": "string", "description": "The question text."},
                    "input_type": {
                        "type": "string",
                        "enum": ["choice", "text"],
                        "description": "choice (options to pick) or text (a text box).",
                    },
                    "options": {
                        "type": "array",
                        "description": "input_type choice: the options.",
                        "items": OPTION_SCHEMA,
                    },
                    "multi_select": {
                        "type": "boolean",
                        "description": "input_type choice: several options may be picked.",
                    },
                    "required": {
                        "type": "boolean",
                        "description": "The form can't be submitted without an answer.",
                    },
                    "default": {
                        **DEFAULT_SCHEMA,
                        "description": "An option value (a list of them for multi_select), "
                        "or the default text.",
                    },
                    "placeholder": {
                        "type": "string",
                        "description": "input_type text: the empty text box's hint.",
                    },
                },
                "required": ["question", "input_type"],
            },
        }
    },
    "required": ["questions"],
}

RESULT = result_schema(
    {
        "__deferred_user_input__": {
            "type": "boolean",
            "description": "true: the form is shown and the run ends (spec 003); the "
            "answers arrive as this call's result in the conversation.",
        },
        "ask_id": {"type": "string", "description": "The form's id."},
        "tool_use_id": {
            "type": "string",
            "description": "The call's id. An external runtime answers the form through "
            "the API with it: POST /api/v1/conversations/{conversation_id}/messages "
            '{"role": "user", "interactive_form_answer": {"type": '
            '"interactive_form_question", "tool_use_id", "answers": {question id: value}}}.',
        },
        "conversation_id": {
            "type": "integer",
            "description": "The conversation the form is shown in (MCP calls).",
        },
    },
    "The form is shown (waiting_for_user_response), or every problem with the arguments.",
)

DESCRIPTION = (
    "Show the user a form (choice and text questions) and stop; the user's answers arrive "
    "as this tool call's result when they submit (status answered or cancelled). Call it at "
    "most once per turn. If the result has success=false, fix the listed errors and call again."
)


def _id(value: object) -> int | None:
    """An id the Django adapter put into the tool context (ints, or absent)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def execute(arguments: object, context: ToolContext) -> dict[str, JsonValue]:
    return form_check(
        conversation_id=_id(context.extra.get("conversation_id")) or 0,
        run_id=_id(context.extra.get("run_id")),
        arguments=arguments,
        lang=context.lang,
        shown_in_step=any(is_deferred(r) for r in context.earlier_results),
    )


def persisted(stored: StoredCall) -> None:
    """The call is stored with its message: a deferred call's form appears on it."""
    if not is_deferred(stored.result):
        return
    form_create(
        conversation_id=stored.message.conversation_id,
        run_id=stored.run.pk if stored.run is not None else None,
        message_id=stored.message.pk,
        tool_use_id=stored.call_id,
        ask_id=str(stored.result["ask_id"]),
        arguments=stored.arguments,
        lang=stored.lang,
    )


TOOL = Tool(
    name="interactive_form_question",
    description=DESCRIPTION,
    parameters=PARAMETERS,
    execute=execute,
    output_schema=RESULT,
    persisted=persisted,
    # `execute` only checks; the form is created by `persisted`, in the transaction that
    # stores the message, so it can't happen twice.
    idempotent=True,
)
