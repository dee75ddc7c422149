"""`questionnaire_async` (spec 000): validate + normalize a questionnaire and end the turn.

The protocol core does the work; success ends the run awaiting the user's answer, and a
failure goes back to the model so it can fix its arguments and call again.
"""

from __future__ import annotations

from questionnaires.protocol import questionnaire_async
from questionnaires.protocol.jsontypes import JsonValue

from .base import OPTION_SCHEMA, Tool, ToolContext

PARAMETERS: dict[str, JsonValue] = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "description": "Optional questionnaire title."},
        "questions": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string", "description": "Optional; q1, q2… when missing."},
                    "type": {
                        "type": "string",
                        "enum": [
                            "single_choice",
                            "multi_choice",
                            "multiple_choice",
                            "free_text",
                            "text",
                        ],
                    },
                    "text": {"type": "string", "description": "The question."},
                    "options": {"type": "array", "items": OPTION_SCHEMA},
                    "default": {
                        "description": "Single choice / free text: a string; multi choice: "
                        "a list of option values."
                    },
                    "allow_other": {"type": "boolean"},
                },
                "required": ["type", "text"],
            },
        },
    },
    "required": ["questions"],
}

DESCRIPTION = (
    "Ask the user a structured questionnaire. The questions are validated and shown as a "
    "form; your turn ends and the user's answers arrive as the next user message "
    "(<questionnaire-response>). If the result has success=false, fix the listed errors "
    "and call again."
)


def execute(arguments: object, context: ToolContext) -> dict[str, JsonValue]:
    return questionnaire_async(arguments, lang=context.lang)


TOOL = Tool(
    name="questionnaire_async",
    description=DESCRIPTION,
    parameters=PARAMETERS,
    execute=execute,
    # Pure validation: running the same call again gives the same result.
    idempotent=True,
)
