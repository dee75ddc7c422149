"""`questionnaire_async` (spec 000): validate + normalize a questionnaire and end the turn.

The protocol core does the work; success ends the run awaiting the user's answer, and a
failure goes back to the model so it can fix its arguments and call again.
"""

from __future__ import annotations

from questionnaires.protocol import questionnaire_async
from questionnaires.protocol.jsontypes import JsonValue

from .base import DEFAULT_SCHEMA, OPTION_SCHEMA, Tool, ToolContext, result_schema

PARAMETERS: dict[str, JsonValue] = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "description": "Optional questionnaire title."},
        "questions": {
            "type": "array",
            "description": "The questions, in order (at least one).",
            "minItems": 1,
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string", "description": "Optional; q1, q2… when missing."},
                    "type": {
                        "type": "string",
                        "description": "single_choice (radio buttons), multi_choice / "
                        "multiple_choice (checkboxes), free_text / text (a text box).",
                        "enum": [
                            "single_choice",
                            "multi_choice",
                            "multiple_choice",
                            "free_text",
                            "text",
                        ],
                    },
                    "text": {"type": "string", "description": "The question."},
                    "options": {
                        "type": "array",
                        "description": "Choice questions: the options (at least two).",
                        "items": OPTION_SCHEMA,
                    },
                    "default": {
                        **DEFAULT_SCHEMA,
                        "description": "Single choice / free text: a string; multi choice: "
                        "a list of option values.",
                    },
                    "allow_other": {
                        "type": "boolean",
                        "description": "Choice questions: also offer “Other” with a text box.",
                    },
                },
                "required": ["type", "text"],
            },
        },
    },
    "required": ["questions"],
}

RESULT = result_schema(
    {
        "title": {"type": "string", "description": "The questionnaire's title."},
        "question_count": {"type": "integer", "description": "How many questions."},
        "questions": {
            "type": "array",
            "description": "The questions as shown, normalized.",
            "items": {
                "type": "object",
                "description": "A question.",
                "properties": {
                    "id": {"type": "string", "description": "Its id (q1, q2… when missing)."},
                    "type": {
                        "type": "string",
                        "description": "single_choice, multi_choice or free_text.",
                    },
                    "text": {"type": "string", "description": "The question."},
                    "options": {
                        "type": "array",
                        "description": "The options, each {value, label}.",
                        "items": {
                            "type": "object",
                            "description": "An option.",
                            "properties": {
                                "value": {"type": "string", "description": "Recorded."},
                                "label": {"type": "string", "description": "Shown."},
                            },
                        },
                    },
                    "default": {
                        "type": ["string", "array", "null"],
                        "items": {"type": "string"},
                        "description": "The preselected value (a list for multi_choice).",
                    },
                    "allow_other": {"type": "boolean", "description": "“Other” is offered."},
                },
            },
        },
        "should_end": {
            "type": "boolean",
            "description": "true: end the turn; the answers arrive as the next user message.",
        },
        "notes": {
            "type": "array",
            "description": "What was normalized (e.g. an alias read as a field).",
            "items": {"type": "object", "description": "A note."},
        },
    },
    "The questionnaire as shown, or every problem with the arguments.",
)

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
    output_schema=RESULT,
    # Pure validation: running the same call again gives the same result.
    idempotent=True,
)
