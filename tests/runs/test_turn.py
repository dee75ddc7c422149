"""The Django side of a turn: persistence, events, context, runs, stop/retry."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from chat.agent.context import context_messages
from chat.agent.events import ToolCall
from chat.agent.llm.scripted import Script, Step, Turn
from chat.core.models import Event, Message, Role, Run, RunStatus, StopReason
from chat.core.services import conversation_create, message_create
from chat.runs import turn as turn_module
from chat.usecases import message_post_user
from tests.support.loop import GOOD_ARGS, INVALID, VALID

pytestmark = pytest.mark.django_db


@pytest.fixture
def scripted(user):
    return conversation_create(owner=user, title="Tour", agent="scripted")


@pytest.fixture
def script(monkeypatch):
    """Replace the tour with the given steps: `script(step1_turns, step2_turns, …)`."""

    def install(*steps, max_iterations=None):
        built = Script(steps=tuple(Step(tuple(t), max_iterations) for t in steps))
        monkeypatch.setattr(turn_module, "script_load", lambda name, lang="en": built)

    return install


def tool_turn(text, arguments):
    return Turn(text, (ToolCall("", "questionnaire_async", json.dumps(arguments)),))


def events(conversation, name):
    return [e.data for e in Event.objects.filter(conversation=conversation, name=name)]


def last_run(conversation):
    return conversation.runs.order_by("-id").first()


def test_reply_streams_and_persists(scripted, script):
    script([Turn("Hello from the script, streamed in pieces.")])
    message_post_user(conversation=scripted, content="hi")
    run = last_run(scripted)
    assert (run.status, run.stop_reason, run.iterations) == ("finished", "completed", 1)
    reply = scripted.messages.get(role=Role.ASSISTANT)
    assert reply.content == "Hello from the script, streamed in pieces."
    assert reply.run_id == run.pk and reply.metadata["kind"] == "reply"
    deltas = events(scripted, "text_delta")
    assert deltas and all(d["run_id"] == run.pk and d["iteration"] == 1 for d in deltas)
    assert "".join(d["text"] for d in deltas) == reply.content
    names = list(Event.objects.filter(conversation=scripted).values_list("name", flat=True))
    assert names.index("run_started") < names.index("text_delta") < names.index("run_finished")


def test_questionnaire_async_persists_openai_shape(scripted, script):
    script([tool_turn("Let me ask.", GOOD_ARGS)])
    message_post_user(conversation=scripted, content="hi")
    run = last_run(scripted)
    assert run.stop_reason == StopReason.AWAITING_USER_INPUT
    assistant, tool = scripted.messages.filter(role__in=["assistant", "tool"]).order_by("seq")
    (call,) = assistant.tool_calls
    assert call["type"] == "function" and call["function"]["name"] == "questionnaire_async"
    assert call["id"] == f"call_r{run.pk}_1_1"
    assert json.loads(call["function"]["arguments"]) == GOOD_ARGS
    assert tool.tool_call_id == call["id"] and tool.seq == assistant.seq + 1
    result = json.loads(tool.content)
    assert result["success"] is True and result["questions"][0]["options"][0]["value"] == "x"
    assert events(scripted, "tool_call")[0]["tool_call_id"] == call["id"]
    (done,) = events(scripted, "tool_result")
    assert done["success"] is True and done["result"] == result


def test_self_check_repair_hides_the_invalid_reply(scripted, script):
    script([Turn(INVALID), Turn(VALID)])
    message_post_user(conversation=scripted, content="hi")
    run = last_run(scripted)
    assert (run.stop_reason, run.iterations) == ("awaiting_user_input", 2)
    rows = list(scripted.messages.order_by("seq").values_list("role", "hidden", "content"))
    assert rows[1] == ("assistant", True, INVALID)
    assert rows[2][0:2] == ("user", True) and rows[2][2].startswith("[self-check]")
    assert rows[3] == ("assistant", False, VALID)
    visible = [m.content for m in scripted.messages.filter(hidden=False, role="assistant")]
    assert visible == [VALID]
    # The model context keeps the diagnostic, so a later run knows what happened.
    context = context_messages(conversation=scripted)
    assert [m["role"] for m in context] == ["system", "user", "assistant", "user", "assistant"]
    # Hidden messages never emit message_done (no tab fetches them).
    assert len(events(scripted, "message_done")) == 2


def test_llm_error_fails_the_run_and_retry_reruns_the_same_message(scripted, script, client_in):
    script([Turn(error=("llm_http_error", "The model endpoint answered HTTP 500"))])
    message_post_user(conversation=scripted, content="please answer")
    run = last_run(scripted)
    assert (run.status, run.stop_reason) == (RunStatus.FAILED, StopReason.ERROR)
    assert "HTTP 500" in run.error
    (error,) = events(scripted, "error")
    assert error == {"run_id": run.pk, "code": "llm_http_error", "message": run.error}
    page = client_in.get(f"/conversations/{scripted.pk}/run").content.decode()
    assert "HTTP 500" in page and f"/runs/{run.pk}/retry" in page
    script([Turn("Recovered.")])
    response = client_in.post(
        f"/conversations/{scripted.pk}/runs/{run.pk}/retry", HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    retry = last_run(scripted)
    assert retry.pk != run.pk and retry.trigger_message_id == run.trigger_message_id
    assert retry.stop_reason == StopReason.COMPLETED
    assert scripted.messages.filter(role="user").count() == 1  # nothing re-sent or lost
    again = client_in.post(
        f"/conversations/{scripted.pk}/runs/{run.pk}/retry", HTTP_HX_REQUEST="true"
    )
    assert 'data-error-code="run_not_retryable"' in again.content.decode()


def test_retry_after_stop_replaces_the_stopped_turn(scripted, script, client_in):
    """Bug 7: the stopped turn's messages leave the chat (every page on a
    `messages_superseded` event) and the model's context; the
    retry's reply is the only one."""
    script([Turn("Partial answer.")])
    message_post_user(conversation=scripted, content="please answer")
    run = last_run(scripted)
    Run.objects.filter(pk=run.pk).update(status=RunStatus.CANCELLED, stop_reason="cancelled")
    stopped = scripted.messages.get(role="assistant")
    script([Turn("Full answer.")])
    response = client_in.post(
        f"/conversations/{scripted.pk}/runs/{run.pk}/retry", HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    # every open page, the retrying one too, learns it from the stream (issue 32, defect
    # 13: an out-of-band delete here found no target once the stream had removed it)
    assert "hx-swap-oob" not in response.content.decode()
    assert events(scripted, "messages_superseded") == [
        {"run_id": run.pk, "message_ids": [stopped.pk]}
    ]
    shown = [m.content for m in scripted.messages.filter(role="assistant", hidden=False)]
    assert shown == ["Full answer."]
    context = [m.get("content") for m in context_messages(conversation=scripted)]
    assert "Partial answer." not in context and "Full answer." in context


def test_tool_exception_is_a_failed_run_with_the_pair_stored(scripted, script, monkeypatch):
    from chat.agent.tools.base import Tool

    def boom(arguments, context):
        raise RuntimeError("normalizer exploded")

    tool = Tool("questionnaire_async", "d", {"type": "object"}, boom)
    monkeypatch.setattr(turn_module, "TOOLS", (tool,))
    script([tool_turn("", GOOD_ARGS)])
    message_post_user(conversation=scripted, content="hi")
    run = last_run(scripted)
    assert run.status == RunStatus.FAILED and "normalizer exploded" in run.error
    tool = scripted.messages.get(role="tool")
    assert json.loads(tool.content)["error_code"] == "TOOL_EXCEPTION"


def test_pause_then_continue(scripted, script):
    turns = [tool_turn("", {"questions": n}) for n in range(5)]
    script(turns, [Turn("Resumed and done.")], max_iterations=2)
    message_post_user(conversation=scripted, content="long task")
    run = last_run(scripted)
    assert (run.stop_reason, run.iterations) == (StopReason.MAX_ITERATIONS, 2)
    pause = scripted.messages.filter(role="assistant").order_by("-seq").first()
    assert pause.metadata["kind"] == "pause" and "limit of 2 steps" in pause.content
    message_post_user(
        conversation=scripted, content="<questionnaire-response>{}</questionnaire-response>"
    )
    assert last_run(scripted).stop_reason == StopReason.COMPLETED


def test_cancel_requested_while_streaming(scripted, monkeypatch):
    class Slow:
        def stream(self, messages, tools):
            yield "first "
            Run.objects.filter(conversation=scripted).update(cancel_requested=True)
            yield "second"
            raise AssertionError("the loop should have stopped")

    monkeypatch.setattr(turn_module, "CANCEL_POLL_SECONDS", 0)
    monkeypatch.setattr(turn_module, "ScriptedClient", lambda *a, **k: Slow())
    message_post_user(conversation=scripted, content="hi")
    run = last_run(scripted)
    assert (run.status, run.stop_reason) == (RunStatus.CANCELLED, StopReason.CANCELLED)
    # Issue 32, defect 7: the text the person saw streamed stays (ChatGPT keeps it), marked
    # stopped, read-only, and it is what the model reads next (DESIGN §4.14)
    kept = scripted.messages.get(role="assistant")
    streamed = "".join(e["text"] for e in events(scripted, "text_delta"))
    assert kept.content == streamed == "first second" and not kept.hidden and kept.readonly
    assert kept.metadata["kind"] == "stopped" and kept.run_id == run.pk
    model = context_messages(conversation=scripted)
    assert model[-1] == {"role": "assistant", "content": "first second"}
    page = Client()
    page.force_login(scripted.owner)
    html = page.get(f"/conversations/{scripted.pk}/").content.decode()
    assert "first" in html and "msg-stopped" in html


def test_cancel_view_and_queued_cancel(scripted, client_in):
    from chat.runs.runner import run_execute

    trigger = message_create(conversation=scripted, role=Role.USER, content="hi")
    run = Run.objects.create(conversation=scripted, trigger_message=trigger)
    page = client_in.get(f"/conversations/{scripted.pk}/run").content.decode()
    assert f"/runs/{run.pk}/cancel" in page
    response = client_in.post(
        f"/conversations/{scripted.pk}/runs/{run.pk}/cancel", HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200 and "Stopping" in response.content.decode()
    run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert (run.status, run.stop_reason) == (RunStatus.CANCELLED, StopReason.CANCELLED)
    refused = client_in.post(f"/conversations/{scripted.pk}/runs/{run.pk}/cancel")
    assert refused.status_code == 409
    assert (
        f"/runs/{run.pk}/retry"
        in client_in.get(f"/conversations/{scripted.pk}/run").content.decode()
    )


def test_run_views_are_private(scripted, other_user, client):
    client.force_login(other_user)
    assert client.get(f"/conversations/{scripted.pk}/run").status_code == 404
    assert client.post(f"/conversations/{scripted.pk}/runs/1/retry").status_code == 404


def test_context_drops_dangling_tool_calls_and_run_errors(scripted):
    message_create(conversation=scripted, role=Role.USER, content="hi")
    calls = [
        ToolCall("a", "questionnaire_async", "{}").to_openai(),
        ToolCall("b", "questionnaire_async", "{}").to_openai(),
    ]
    message_create(conversation=scripted, role=Role.ASSISTANT, content="", tool_calls=calls)
    message_create(conversation=scripted, role=Role.TOOL, content="{}", tool_call_id="a")
    message_create(conversation=scripted, role=Role.TOOL, content="{}", tool_call_id="zzz")
    message_create(
        conversation=scripted, role=Role.ASSISTANT, content="x", metadata={"kind": "run_error"}
    )
    context = context_messages(conversation=scripted)
    assert context[0]["role"] == "system" and "questionnaire" in context[0]["content"]
    assert [c["id"] for c in context[2]["tool_calls"]] == ["a"]
    assert context[3] == {"role": "tool", "tool_call_id": "a", "content": "{}"}
    assert len(context) == 4


def test_openai_without_configuration_fails_visibly(user, settings):
    settings.LLM_BASE_URL = settings.LLM_API_KEY = ""
    conversation = conversation_create(owner=user, agent="openai")
    message_post_user(conversation=conversation, content="hi")
    run = last_run(conversation)
    assert run.status == RunStatus.FAILED
    assert events(conversation, "error")[0]["code"] == "llm_not_configured"


def test_openai_turn_against_the_fake_server(user, settings):
    from tests.support.fake_openai import FakeOpenAI, Reply

    conversation = conversation_create(owner=user, agent="openai", language="zh-hans")
    with FakeOpenAI() as fake:
        settings.LLM_BASE_URL, settings.LLM_API_KEY, settings.LLM_MODEL = fake.base_url, "k", "m"
        fake.replies += [Reply(text=INVALID), Reply(text=VALID)]
        message_post_user(conversation=conversation, content="你好")
    assert last_run(conversation).stop_reason == StopReason.AWAITING_USER_INPUT
    first, second = fake.requests
    assert first["messages"][0]["role"] == "system"
    assert first["messages"][-1] == {"role": "user", "content": "你好"}
    assert second["messages"][-1]["content"].startswith("[自检]")
    assert "tools" in first and first["tools"][0]["function"]["name"] == "questionnaire_async"
    assert (
        Message.objects.filter(conversation=conversation, hidden=False, role="assistant")
        .get()
        .content
        == VALID
    )


def test_the_tour_end_to_end_through_services(scripted):
    stops = []
    for n in range(13):
        message_post_user(conversation=scripted, content=f"answer {n}")
        stops.append(last_run(scripted).stop_reason)
    assert stops == ["awaiting_user_input"] * 8 + [
        "max_iterations",
        "awaiting_user_input",  # keep a default, skip, decline (issue 27)
        "awaiting_user_input",  # change an answer; the budget repaired by self-check
        "completed",
        "completed",
    ]
    (ask,) = [m for m in scripted.messages.filter(role="assistant") if m.metadata.get("turn_id")]
    assert ask.metadata["ask_user_options"]["field"] == "tour_feedback"
    failed = scripted.messages.filter(hidden=True, role="assistant").order_by("seq")
    assert failed.count() == 2 and "multiple_choice" in failed[0].content
    assert "Too many questions" in failed[1].content  # over the step's budget of 2


def test_an_invalid_questionnaire_beside_a_form_is_repaired_before_the_form_opens(scripted, script):
    """Issue 25 item 1: the text of a step that ends the turn `deferred` is self-checked;
    the failed attempt opens no form and shows nothing."""
    from questionnaires.models import InteractiveForm

    form_args = {"questions": [{"id": "when", "question": "When?", "input_type": "text"}]}

    def form_turn(text):
        return Turn(text, (ToolCall("", "interactive_form_question", json.dumps(form_args)),))

    script([form_turn(INVALID), form_turn(VALID)])
    message_post_user(conversation=scripted, content="hi")
    run = last_run(scripted)
    assert (run.stop_reason, run.iterations) == ("deferred", 2)
    form = InteractiveForm.objects.get()  # one form: the repaired step's
    visible = scripted.messages.get(role="assistant", hidden=False)
    assert visible.content == VALID and form.message_id == visible.pk
    hidden = scripted.messages.get(role="assistant", hidden=True)
    assert hidden.content == INVALID and hidden.metadata["kind"] == "self_check_failed"
    assert [e["tool_call_id"] for e in events(scripted, "tool_call")] == [form.tool_use_id]


def test_a_script_set_on_a_running_tour_starts_at_its_own_first_step(user):
    """The admin recipe (issue 32, defect 11): `state = {"script": "forms"}` on a tour that
    already went some way plays the form at the next message, not a step counted from the
    conversation's start; its answer then ends that script."""
    from questionnaires.models import InteractiveForm

    conversation = conversation_create(owner=user, title="Tour", agent="scripted")
    for text in ("hello", "more", "and more"):
        message_post_user(conversation=conversation, content=text)
    assert not InteractiveForm.objects.filter(conversation=conversation).exists()
    conversation.refresh_from_db()
    conversation.state = {"script": "forms"}  # what the admin's edit stores
    conversation.save(update_fields=["state"])
    message_post_user(conversation=conversation, content="plan a trip")
    form = InteractiveForm.objects.get(conversation=conversation)
    assert form.status == "pending"
    message_post_user(
        conversation=conversation,
        content="",
        form_answer={
            "type": "interactive_form_question",
            "tool_use_id": form.tool_use_id,
            "status": "answered",
            "answers": {"destination": "Seaside"},
        },
    )
    last = conversation.messages.filter(role="assistant").order_by("seq").last()
    assert last is not None and "end of the deferred-form tour" in last.content
