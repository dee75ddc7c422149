"""`interactive_form_question` (spec 003): show the user a form and end the run deferred.

The server normalizes and validates the questions (`questionnaires.forms.services`),
writes the `render_payload` onto the tool block and returns the deferred result
(`__deferred_user_input__: true`); the loop then stops with `deferred`. The user's
answer comes back as this tool call's result on the next run. Invalid arguments return
every problem so the model can retry; a second form in the same run is refused.
"""

from __future__ import annotations

from questionnaires.forms.services import form_open
from questionnaires.protocol.jsontypes import JsonValue

from .base import OPTION_SCHEMA, Tool, ToolContext

PARAMETERS: dict[str, JsonValue] = {
    "type": "object",
    "properties": {
        "questions": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string", "description": "Unique; q1, q2… when missing."},
                    "question": {"type": "string", "description": "The question text."},
                    "input_type": {"type": "string", "enum": ["choice", "text"]},
                    "options": {"type": "array", "items": OPTION_SCHEMA},
                    "multi_select": {"type": "boolean"},
                    "required": {"type": "boolean"},
                    "default": {
                        "description": "An option value (a list of them for multi_select), "
                        "or the default text."
                    },
                    "placeholder": {"type": "string"},
                },
                "required": ["question", "input_type"],
            },
        }
    },
    "required": ["questions"],
}

DESCRIPTION = (
    "Show the user a form (choice and text questions) and stop; the user's answers arrive "
    "as this tool call's result when they submit (status answered or cancelled). Call it at "
    "most once per turn. If the result has success=false, fix the listed errors and call again."
)


def _id(value: object) -> int | None:
    """An id the Django adapter put into the tool context (ints, or absent)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def execute(arguments: object, context: ToolContext) -> dict[str, JsonValue]:

    return form_open(
        conversation_id=_id(context.extra.get("conversation_id")) or 0,
        run_id=_id(context.extra.get("run_id")),
        message_id=None,  # the loop stores the tool block afterwards; the payload attaches then
        tool_use_id=context.call_id,
        arguments=arguments,
        lang=context.lang,
    )


TOOL = Tool(
    name="interactive_form_question",
    description=DESCRIPTION,
    parameters=PARAMETERS,
    execute=execute,
    # form_open returns the form this run already opened for this call id.
    idempotent=True,
)
