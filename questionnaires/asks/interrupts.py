"""An ask as a machine client sees it (AG-UI interrupts, `chat.edge.agui`): the question,
a JSON Schema of the answer, and its answer from a JSON payload — through the same
`ask_answer` as a click in the page, so the record can't tell them apart but by source."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.utils.translation import gettext as _

from chat.core.errors import ChatError
from chat.core.metadata import metadata_of
from chat.core.models import Conversation, Message, Role
from questionnaires.asks import selectors, services
from questionnaires.asks.models import StructuredAnswer
from questionnaires.asks.presenter import ask_views
from questionnaires.protocol.ask_payload import MAX_TEXT, AskPayload
from questionnaires.protocol.jsontypes import JsonValue
from questionnaires.protocol.repair import match_reply
from questionnaires.registry import Choice, Pending, Whereabouts

Source = StructuredAnswer.Source


def _ask_of(conversation: Conversation, ref: str) -> tuple[Message, AskPayload] | None:
    prefix, _sep, pk = ref.partition(":")
    if prefix != "ask" or not pk.isdigit():
        return None
    message = conversation.messages.filter(pk=int(pk), role=Role.ASSISTANT).first()
    ask = metadata_of(message).get("ask_user_options") if message is not None else None
    if message is None or not isinstance(ask, dict):
        return None
    return message, ask  # stored by ask_create, validated


def response_schema(ask: AskPayload) -> dict[str, JsonValue]:
    """`{"value": …}` (an option's value, a number on the scale, yes/no) and, where the
    ask takes the person's own words, `{"text": …}`."""
    question = ask.get("question", "")
    kind = ask.get("type", "options")
    props: dict[str, JsonValue] = {}
    if kind == "boolean":  # with the card's own words for yes and no
        props["value"] = {
            "type": "boolean",
            "title": question,
            "oneOf": [
                {"const": o["value"], "title": o["label"]}
                | ({"examples": list(o["synonyms"])} if o.get("synonyms") else {})
                for o in ask.get("options", [])
                if isinstance(o.get("value"), bool)
            ],
        }
    elif kind == "scale":
        scale: dict[str, JsonValue] = {"type": "number", "title": question}
        for key, name in (("min", "minimum"), ("max", "maximum")):
            if key in ask:
                scale[name] = ask[key]  # type: ignore[literal-required]
        props["value"] = scale
    elif kind == "options":
        props["value"] = {
            "title": question,
            "oneOf": [
                {"const": o["value"], "title": o["label"]}
                | ({"examples": list(o["synonyms"])} if o.get("synonyms") else {})
                for o in ask.get("options", [])
            ],
        }
    if kind == "free_text_only" or ask.get("allow_free_text"):
        props["text"] = {
            "type": "string",
            "maxLength": MAX_TEXT,
            "title": question if kind == "free_text_only" else _("In your own words"),
        }
    return {
        "type": "object",
        "properties": props,
        "minProperties": 1,
        "maxProperties": 1,
        "additionalProperties": False,
    }


def ask_pending(conversation: Conversation, ref: str) -> Pending | None:
    found = _ask_of(conversation, ref)
    if found is None:
        return None
    message, ask = found
    call = metadata_of(message).get("tool_call_id", "")
    return Pending(
        message=ask.get("question", ""),
        response_schema=response_schema(ask),
        tool_call_id=call if isinstance(call, str) else "",
        choices=_choices(ask),
    )


# A short question: a yes/no, or options that show as buttons (more show as a dropdown).
SHORT_OPTIONS = 5


def _choices(ask: AskPayload) -> tuple[Choice, ...]:
    kind = ask.get("type", "options")
    if kind == "boolean":
        return (Choice(_("Yes"), {"value": True}), Choice(_("No"), {"value": False}))
    options = ask.get("options", [])
    if kind == "options" and 0 < len(options) <= SHORT_OPTIONS:
        return tuple(Choice(o["label"], {"value": o["value"]}) for o in options)
    return ()


def ask_locate(conversation: Conversation, ref: str) -> Whereabouts | None:
    found = _ask_of(conversation, ref)
    if found is None:
        return None
    message, ask = found
    view = ask_views(conversation=conversation, messages=[message]).get(message.pk)
    return Whereabouts(
        message_id=message.pk,
        anchor=f"ask-{message.pk}",
        title=ask.get("question", ""),
        queued=bool(view and view.queued),
    )


def ask_resolve(
    *, conversation: Conversation, ref: str, payload: object, user: User, lang: str
) -> None:
    found = _ask_of(conversation, ref)
    if found is None:
        raise ChatError("interrupt_unknown", _("No such question is waiting."), status=404)
    message, ask = found
    answer: dict[str, object] = {
        "type": "structured_answer",
        "field": ask["field"],
        "turn_id": str(metadata_of(message).get("turn_id", "")),
    }
    if payload is None:
        answer["source"] = Source.SKIPPED
    elif isinstance(payload, dict) and set(payload) == {"value"}:
        answer.update(source=Source.OPTION_CLICK, value=payload["value"])
    elif (
        isinstance(payload, dict)
        and set(payload) == {"value", "typed"}
        and isinstance(payload["typed"], str)
    ):  # read from the person's typed reply (conversation repair): free_text, words kept
        answer.update(source=Source.FREE_TEXT, value=payload["value"], raw_text=payload["typed"])
    elif (
        isinstance(payload, dict) and set(payload) == {"text"} and isinstance(payload["text"], str)
    ):
        answer.update(source=Source.FREE_TEXT, raw_text=payload["text"])
    else:
        raise ChatError(
            "interrupt_payload_invalid",
            _('The answer must be {"value": …} or {"text": …} (see responseSchema).'),
        )
    services.ask_answer(conversation=conversation, answer=answer, ask_message=message)


def ask_amend(
    *, conversation: Conversation, ref: str, words: str, typed: str, user: User, lang: str
) -> dict[str, JsonValue] | None:
    """ "actually, make it X" (conversation repair, issue 36): the answered ask `ref`
    changed to the option `words` name, through `ask_answer_change` (as "Change answer"
    on the card), the whole reply kept as its words. None when they name none."""
    found = _ask_of(conversation, ref)
    if found is None:
        return None
    message, ask = found
    latest = selectors.answer_for_ask(ask_message=message)
    read = match_reply(response_schema(ask), words)
    if latest is None or read is None or "value" not in read.payload:
        return None
    services.ask_answer_change(
        conversation=conversation,
        ask_message=message,
        version=latest.pk,
        source=Source.FREE_TEXT,
        value=read.payload["value"],
        text=typed,
    )
    return read.payload
