"""The `ask_user_options` tool: every agent can ask a spec-004 structured question."""

from __future__ import annotations

import json

import pytest

from chat.agent.context import context_messages, system_prompt_for
from chat.agent.events import Stop, ToolResultEvent
from chat.agent.llm.scripted import Script, Step, Turn
from chat.agent.tools import TOOLS, TOOLS_BY_NAME, ask_user_options
from chat.agent.tools.base import ToolContext
from chat.core.models import Event, Role, StopReason
from chat.core.services import conversation_create
from chat.runs import turn as turn_module
from chat.usecases import message_post_user
from questionnaires.asks import selectors as ask_selectors
from questionnaires.asks.models import StructuredAnswer
from questionnaires.asks.services import ask_answer
from tests.support.asking import SPEC_PAYLOAD
from tests.support.loop import call, drive, of

TOOL = TOOLS_BY_NAME["ask_user_options"]
REFERENCE = {"title": "Knee guide", "snippet": "Pain level changes the advice.", "source": "KB"}
ARGS = {**SPEC_PAYLOAD, "reference": REFERENCE}
BAD_ARGS = {
    "question": "",
    "field": "pain_level",
    "options": [{"label": "Only one", "value": "one"}],
    "allow_free_text": "yes",
    "reference": {"title": "T", "url": "javascript:alert(1)"},
}
BAD_CODES = [
    "ask.question_required",
    "ask.allow_free_text_invalid",
    "ask.options_too_few",
    "reference.snippet_required",
    "reference.url_invalid",
]


def ask_turn(text: str, *arguments: object) -> Turn:
    return Turn(text, tuple(call("ask_user_options", a) for a in arguments))


# --- the tool alone and in the pure loop ------------------------------------------------


def test_listed_with_a_schema_and_taught_by_the_system_prompt():
    assert TOOL in TOOLS
    schema = TOOL.schema()["function"]
    assert schema["name"] == "ask_user_options"
    properties = schema["parameters"]["properties"]
    for key in ("question", "field", "options", "allow_free_text", "free_text_placeholder"):
        assert key in properties
    assert properties["type"]["enum"] == ["options", "scale", "boolean", "free_text_only"]
    assert set(properties["reference"]["required"]) == {"title", "snippet"}
    for lang in ("en", "zh-hans"):
        prompt = system_prompt_for(lang)
        assert "questionnaire_async" in prompt
        assert prompt.endswith(ask_user_options.prompt(lang)) and "ask_user_options" in prompt
        assert "<structured_answer>" in prompt
    assert "每轮只问" in system_prompt_for("zh-hans")


def test_valid_arguments_return_the_normalized_ask_and_end_the_turn():
    result = TOOL.execute(ARGS, ToolContext())
    assert result["success"] is True and result["should_end"] is True
    assert result["status"] == "awaiting_user_input"
    assert result["field"] == "pain_level"
    assert [o["value"] for o in result["ask"]["options"]] == ["none", "mild", "moderate", "severe"]
    assert result["reference"] == {**REFERENCE, "url": ""}
    events, client = drive([ask_turn("Let me ask.", ARGS)])
    assert events[-1].stop_reason == Stop.AWAITING_USER_INPUT and client.calls == 1


@pytest.mark.parametrize(
    "payload",
    [
        {"type": "scale", "question": "How bad, 0–10?", "field": "pain", "min": 0, "max": 10},
        {"type": "boolean", "question": "Swelling?", "field": "swelling", "true_label": "Yes"},
        {"type": "free_text_only", "question": "Anything else?", "field": "notes"},
    ],
)
def test_the_extended_types(payload):
    result = TOOL.execute(payload, ToolContext())
    assert result["success"] is True and result["ask"]["type"] == payload["type"]
    assert result["reference"] is None


def test_invalid_arguments_list_every_problem_so_the_model_can_retry():
    events, client = drive([ask_turn("First try.", BAD_ARGS), ask_turn("Fixed.", ARGS)])
    first, second = (e.result for e in of(events, ToolResultEvent))
    assert first["success"] is False and first["error_code"] == "INVALID_ARGUMENT"
    assert [e["code"] for e in first["errors"]] == BAD_CODES
    assert all(e["path"] and e["message"] for e in first["errors"])
    assert "ask_user_options" in first["message"]
    assert second["success"] is True
    assert events[-1].stop_reason == Stop.AWAITING_USER_INPUT and client.calls == 2
    # the model saw the errors before its second call
    tool_message = client.seen[1][-1]
    assert tool_message["role"] == "tool" and "ask.options_too_few" in tool_message["content"]


def test_errors_in_the_conversation_language():
    result = TOOL.execute({"field": "f", "options": []}, ToolContext(lang="zh-hans"))
    assert result["success"] is False
    assert result["errors"][0] == {
        "code": "ask.question_required",
        "path": "question",
        "message": "请提供 `question`（不超过 500 个字符的非空字符串）。",
        "details": {"limit": 500},
    }


@pytest.mark.parametrize("arguments", [[], "text", None, 3])
def test_non_object_arguments_are_an_error(arguments):
    result = TOOL.execute(arguments, ToolContext())
    assert result["success"] is False
    assert result["errors"][0]["code"] == "ask.payload_not_object"


# --- inside a real run: the ask is created, persisted and answerable --------------------


@pytest.fixture
def scripted(user):
    return conversation_create(owner=user, title="Asks", agent="scripted")


@pytest.fixture
def script(monkeypatch):
    def install(*steps):
        built = Script(steps=tuple(Step(tuple(t)) for t in steps))
        monkeypatch.setattr(turn_module, "script_load", lambda name, lang="en": built)

    return install


def names(conversation):
    return list(Event.objects.filter(conversation=conversation).values_list("name", flat=True))


def asks(conversation):
    return [m for m in conversation.messages.order_by("seq") if ask_selectors.is_ask(m)]


@pytest.mark.django_db
def test_a_run_creates_the_ask_after_the_message_that_asked(scripted, script, client_in):
    script([ask_turn("A quick question about your knee.", ARGS)])
    message_post_user(conversation=scripted, content="my knee feels weak")
    run = scripted.runs.get()
    assert (run.status, run.stop_reason) == ("finished", StopReason.AWAITING_USER_INPUT)
    user, assistant, tool, ask = scripted.messages.order_by("seq")
    assert (user.role, assistant.role, tool.role) == (Role.USER, Role.ASSISTANT, Role.TOOL)
    assert assistant.content == "A quick question about your knee."
    assert assistant.tool_calls[0]["function"]["name"] == "ask_user_options"
    assert json.loads(tool.content)["success"] is True
    assert ask.role == Role.ASSISTANT and ask.run_id == run.pk
    assert ask.content == SPEC_PAYLOAD["question"]
    assert ask.metadata["ask_user_options"]["field"] == "pain_level"
    assert ask.metadata["turn_id"] == f"turn_m{assistant.pk}"
    assert ask.metadata["knowledge_reference"]["title"] == "Knee guide"
    assert ask_selectors.ask_pending(conversation=scripted) == [ask]
    order = names(scripted)
    assert order.index("tool_result") < order.index("ask_user_options")
    assert order.index("ask_user_options") < order.index("knowledge_reference")
    assert order.index("knowledge_reference") < order.index("run_finished")
    (event,) = Event.objects.filter(conversation=scripted, name="ask_user_options")
    assert event.data["message_id"] == ask.pk and event.data["payload"]["field"] == "pain_level"
    scripted.refresh_from_db()
    assert scripted.state["missing_slots"] == ["pain_level"]
    # the page shows the intro text, then the widget (answerable)
    html = client_in.get(f"/conversations/{scripted.pk}/").content.decode()
    assert html.index("A quick question about your knee.") < html.index(f'id="ask-{ask.pk}"')
    assert 'data-widget="buttons"' in html and 'value="mild"' in html


@pytest.mark.django_db
def test_an_invalid_call_creates_no_ask(scripted, script):
    script([ask_turn("Let me ask.", BAD_ARGS), Turn("I'll ask in words then: how bad is it?")])
    message_post_user(conversation=scripted, content="hi")
    assert scripted.runs.get().stop_reason == StopReason.COMPLETED
    assert asks(scripted) == []
    assert "ask_user_options" not in names(scripted) and "error" not in names(scripted)
    tool = scripted.messages.get(role=Role.TOOL)
    assert [e["code"] for e in json.loads(tool.content)["errors"]] == BAD_CODES


@pytest.mark.django_db
def test_sibling_asks_share_the_turn_and_stay_answerable(scripted, script):
    other = {"type": "boolean", "question": "Any swelling?", "field": "swelling"}
    script([ask_turn("Two questions.", SPEC_PAYLOAD, other)])
    message_post_user(conversation=scripted, content="hi")
    first, second = asks(scripted)
    assert first.metadata["turn_id"] == second.metadata["turn_id"]
    assert ask_selectors.ask_pending(conversation=scripted) == [first, second]


@pytest.mark.django_db
def test_the_answer_reaches_the_model_readable_and_machine_readable(scripted, script):
    script([ask_turn("Let me ask.", ARGS)], [Turn("Thanks, noted.")])
    message_post_user(conversation=scripted, content="hi")
    (ask,) = asks(scripted)
    answer = {
        "type": "structured_answer",
        "field": "pain_level",
        "value": "mild",
        "source": "user_option_click",
        "turn_id": ask.metadata["turn_id"],
    }
    row, created = ask_answer(conversation=scripted, answer=answer)
    assert created and row.source == StructuredAnswer.Source.OPTION_CLICK
    runs = list(scripted.runs.order_by("id"))
    assert [r.stop_reason for r in runs] == ["awaiting_user_input", "completed"]
    assert runs[1].trigger_message_id == row.user_message_id
    context = context_messages(conversation=scripted)
    last_user = [m for m in context if m["role"] == "user"][-1]
    readable, tagged = last_user["content"].split("\n", 1)
    assert readable == "轻微疼痛"
    assert tagged.startswith("<structured_answer>") and tagged.endswith("</structured_answer>")
    envelope = json.loads(
        tagged.removeprefix("<structured_answer>")[: -len("</structured_answer>")]
    )
    assert envelope["field"] == "pain_level" and envelope["value"] == "mild"
    assert envelope["source"] == "user_option_click" and envelope["display_text"] == "轻微疼痛"
    # nothing was faked: the only user messages are the typed one and the answer
    users = scripted.messages.filter(role=Role.USER).order_by("seq")
    assert [u.pk for u in users][1:] == [row.user_message_id]


@pytest.mark.django_db
def test_a_skip_reaches_the_model_as_skipped(scripted, script):
    script([ask_turn("Let me ask.", SPEC_PAYLOAD)], [Turn("Fine, let's move on.")])
    message_post_user(conversation=scripted, content="hi")
    (ask,) = asks(scripted)
    answer = {"field": "pain_level", "source": "user_skipped", "turn_id": ask.metadata["turn_id"]}
    ask_answer(conversation=scripted, answer=answer)
    last_user = [m for m in context_messages(conversation=scripted) if m["role"] == "user"][-1]
    assert last_user["content"].startswith("Skipped: ")
    assert (
        '"source":"user_skipped"' in last_user["content"] and '"value":null' in last_user["content"]
    )
