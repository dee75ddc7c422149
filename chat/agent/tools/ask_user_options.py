"""`ask_user_options` (spec 004): ask the user for one slot as a structured widget.

Any agent can collect information the way the built-in intake agent does: buttons for
2–5 options, a dropdown for more, a slider (`scale`), yes/no (`boolean`) or a text box
(`free_text_only`), with an optional knowledge `reference` shown as "Why we ask".

`execute` checks the payload and the reference together (`questionnaires.asks.ask_requests`)
and returns either every problem (code, path, message) so the model can call again —
nothing is shown — or the normalized ask with `should_end: true`, which ends the run
`awaiting_user_input`. The ask itself is created by the `persisted` hook through
`questionnaires.asks.services.ask_create` once the assistant message carrying the call is
stored, so the widget follows the text that introduced it and is the latest,
answerable message (it is persisted as an assistant message and emits the
`ask_user_options` / `knowledge_reference` events). The user's click, typed answer or
skip becomes the next user message and starts the next run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from questionnaires.asks.ask_requests import ask_request_check
from questionnaires.asks.services import ask_create
from questionnaires.protocol.ask_payload import AskInvalid
from questionnaires.protocol.jsontypes import JsonValue

from .base import StoredCall, Tool, ToolContext, result_schema

NAME = "ask_user_options"

_REFERENCE: dict[str, JsonValue] = {
    "type": "object",
    "description": "Optional knowledge source behind the question, shown as “Why we ask”.",
    "properties": {
        "title": {"type": "string", "description": "The source's title."},
        "snippet": {"type": "string", "description": "The passage that motivates the question."},
        "source": {"type": "string", "description": "Who publishes it, e.g. a guideline."},
        "url": {"type": "string", "description": "An http(s) address."},
    },
    "required": ["title", "snippet"],
}

PARAMETERS: dict[str, JsonValue] = {
    "type": "object",
    "properties": {
        "type": {
            "type": "string",
            "enum": ["options", "scale", "boolean", "free_text_only"],
            "description": "The widget; default options.",
        },
        "question": {"type": "string", "description": "The question the user sees."},
        "field": {
            "type": "string",
            "description": "The state slot the answer fills, e.g. pain_level.",
        },
        "options": {
            "type": "array",
            "description": "type options: at least two; 2–5 show as buttons, 6+ as a dropdown.",
            "items": {
                "type": "object",
                "properties": {
                    "label": {"type": "string", "description": "What the person sees."},
                    "value": {
                        "type": ["string", "number"],
                        "description": "What the answer records in the slot.",
                    },
                    "icon": {"type": "string", "description": "Optional emoji."},
                },
                "required": ["label", "value"],
            },
        },
        "allow_free_text": {
            "type": "boolean",
            "description": "Also offer a text box for an answer of the user's own.",
        },
        "free_text_placeholder": {
            "type": "string",
            "description": "With allow_free_text: the empty text box's hint.",
        },
        "min": {"type": "number", "description": "type scale: lowest value (default 1)."},
        "max": {"type": "number", "description": "type scale: highest value (default 10)."},
        "step": {"type": "number", "description": "type scale: default 1."},
        "min_label": {"type": "string", "description": "type scale: label of the low end."},
        "max_label": {"type": "string", "description": "type scale: label of the high end."},
        "true_label": {"type": "string", "description": "type boolean: default Yes."},
        "false_label": {"type": "string", "description": "type boolean: default No."},
        "reference": _REFERENCE,
    },
    "required": ["question", "field"],
}

RESULT = result_schema(
    {
        "should_end": {
            "type": "boolean",
            "description": "true: end the turn; the answer arrives as the next user message.",
        },
        "field": {"type": "string", "description": "The slot the answer fills."},
        "ask": {"type": "object", "description": "The question as shown, normalized."},
        "reference": {
            "type": ["object", "null"],
            "description": "The knowledge reference as shown, if any.",
        },
    },
    "The question is shown (awaiting_user_input), or every problem with the arguments.",
)

DESCRIPTION = (
    "Ask the user for one piece of information (a slot) as clickable options, a scale "
    "slider, yes/no buttons or a text box; the user can always skip. Your turn ends and the "
    "answer arrives as the next user message with a <structured_answer> JSON (field, value, "
    "display_text, source). Ask 1–2 questions per turn. If the result has success=false, "
    "nothing was shown: fix every listed error and call again."
)

PROMPT: dict[str, str] = {
    "en": """\
## The ask_user_options tool

To collect one piece of information (a slot) call `ask_user_options` instead of asking
in prose: `{"question", "field", "options": [{"label", "value", "icon"?}],
"allow_free_text"?, "free_text_placeholder"?}`. `field` names the slot the answer fills.
2–5 options show as buttons, 6 or more as a dropdown. Other shapes: `"type": "scale"`
with `min`, `max`, `step`?, `min_label`?, `max_label`? (a slider); `"type": "boolean"`
with `true_label`?, `false_label`? (yes/no); `"type": "free_text_only"` (a text box).
An optional `reference` `{title, snippet, source?, url?}` shows the knowledge behind the
question. Ask one or two questions per turn. A successful call ends your turn; the
answer arrives as the next user message: a readable line, then
<structured_answer>{"type": "structured_answer", "field", "value", "display_text",
"source", "turn_id"}</structured_answer>. `source` is `user_option_click`,
`user_free_text` (the typed text is in `raw_text`) or `user_skipped` (value null; don't
insist). If the result has success=false, nothing was shown: fix every listed error and
call it again.
""",
    "zh-hans": """\
## ask_user_options 工具

需要收集某一项信息（槽位）时，请调用 `ask_user_options`，而不是用文字提问：
`{"question", "field", "options": [{"label", "value", "icon"?}], "allow_free_text"?,
"free_text_placeholder"?}`。`field` 是答案写入的槽位名。2~5 个选项显示为按钮，6 个及以上
显示为下拉选择。其他类型：`"type": "scale"`，带 `min`、`max`、可选的 `step`、`min_label`、
`max_label`（滑块）；`"type": "boolean"`，可选 `true_label`、`false_label`（是/否按钮）；
`"type": "free_text_only"`（输入框）。可选的 `reference` `{title, snippet, source?, url?}`
会展示提问依据的知识来源。每轮只问 1~2 个问题。调用成功后本轮结束；用户的回答会作为下一条
user 消息到达：先是一行可读文字，然后是
<structured_answer>{"type": "structured_answer", "field", "value", "display_text",
"source", "turn_id"}</structured_answer>。`source` 为 `user_option_click`、
`user_free_text`（原文在 `raw_text` 中）或 `user_skipped`（value 为 null，不要反复追问）。
如果返回 success=false，说明没有向用户展示任何内容：请修正列出的每个错误后重新调用。
""",
}


def prompt(lang: str) -> str:
    """The system-prompt section for this tool (Chinese for any `zh*` language)."""
    return PROMPT["zh-hans" if lang.lower().startswith("zh") else "en"]


def _split(arguments: Any) -> tuple[Any, Any]:
    """(payload, reference): the tool's arguments are the payload plus `reference`."""
    if not isinstance(arguments, dict):
        return arguments, None
    payload = {k: v for k, v in arguments.items() if k != "reference"}
    return payload, arguments.get("reference")


def execute(arguments: object, context: ToolContext) -> dict[str, JsonValue]:
    from django.utils import translation  # Django: imported when used
    from django.utils.translation import gettext as _

    payload, reference = _split(arguments)
    with translation.override(context.lang):
        try:
            request = ask_request_check(payload, reference, lang=context.lang)
        except AskInvalid as invalid:
            return {
                "success": False,
                "status": "error",
                "error_code": "INVALID_ARGUMENT",
                "validation_passed": False,
                "message": _(
                    "Nothing was shown to the user. Fix every listed problem and call "
                    "ask_user_options again."
                ),
                "errors": [e.to_dict() for e in invalid.errors],
            }
        message = _("The question is shown to the user; their answer arrives as the next message.")
    return {
        "success": True,
        "status": "awaiting_user_input",
        "validation_passed": True,
        "should_end": True,
        "field": request.ask["field"],
        "ask": cast(Mapping[str, JsonValue], request.ask),  # a validated JSON payload
        "reference": request.reference,
        "message": message,
    }


def persisted(stored: StoredCall) -> None:
    """Create the ask of a successful call, after the assistant message that made it.

    Every ask of one assistant message shares its turn id, so sibling asks (1–2 per
    turn) stay answerable together.
    """
    result = stored.result
    if result.get("success") is not True or not isinstance(result.get("ask"), dict):
        return
    ask_create(
        conversation=stored.message.conversation,
        payload=result["ask"],
        reference=result.get("reference"),
        run=stored.run,
        turn_id=f"turn_m{stored.message.pk}",
    )


TOOL = Tool(
    name=NAME,
    description=DESCRIPTION,
    parameters=PARAMETERS,
    execute=execute,
    output_schema=RESULT,
    persisted=persisted,
    # `execute` only validates; the ask is created by `persisted`, in the transaction
    # that stores the message, so it can't happen twice.
    idempotent=True,
)
