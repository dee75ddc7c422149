"""The pure agent loop driven by a scripted client: every stop reason and repair path."""

from __future__ import annotations

import json

from chat.agent.events import (
    AssistantMessage,
    IterationStarted,
    RunStopped,
    SelfCheckFailed,
    Stop,
    TextDelta,
    ToolCallEvent,
    ToolResultEvent,
)
from chat.agent.llm.scripted import Turn
from chat.agent.loop import LoopConfig
from chat.agent.notices import LOOP_QUESTION_ID
from chat.agent.tools.base import DEFERRED_FLAG, Tool, ToolContext
from questionnaires.protocol import parse_message, self_check
from tests.support.loop import BAD_ARGS, GOOD_ARGS, INVALID, USER, VALID, call, drive, of  # noqa: F401


def test_plain_reply_completes_and_streams():
    events, _ = drive([Turn("Hello there, friend.")])
    assert events[-1].stop_reason == Stop.COMPLETED
    assert "".join(e.text for e in of(events, TextDelta)) == "Hello there, friend."
    assert [m.content for m in of(events, AssistantMessage)] == ["Hello there, friend."]
    assert of(events, IterationStarted) == [IterationStarted(1)]


def test_empty_reply_completes_without_a_message():
    events, _ = drive([Turn("")])
    assert events[-1].stop_reason == Stop.COMPLETED
    assert not of(events, AssistantMessage)


def test_inline_questionnaire_awaits_user_input():
    events, _ = drive([Turn(VALID)])
    assert events[-1].stop_reason == Stop.AWAITING_USER_INPUT


def test_questionnaire_async_success_ends_turn():
    events, _ = drive([Turn("Asking.", (call("questionnaire_async", GOOD_ARGS),)), Turn("never")])
    assert events[-1].stop_reason == Stop.AWAITING_USER_INPUT
    (message,) = of(events, AssistantMessage)
    assert message.tool_calls[0].id == "call_1_1"
    result = message.tool_results[0].result
    assert result["success"] is True and result["questions"][0]["id"] == "q1"
    assert [type(e) for e in events if isinstance(e, ToolCallEvent | ToolResultEvent)] == [
        ToolCallEvent,
        ToolResultEvent,
    ]


def test_questionnaire_async_failure_goes_back_to_the_model():
    turns = [
        Turn("", (call("questionnaire_async", BAD_ARGS),)),
        Turn("", (call("questionnaire_async", GOOD_ARGS),)),
    ]
    events, client = drive(turns)
    assert events[-1].stop_reason == Stop.AWAITING_USER_INPUT
    first = of(events, ToolResultEvent)[0].result
    assert first["success"] is False and first["errors"][0]["code"].startswith(
        "questionnaire.start."
    )
    tool_message = client.seen[1][-1]
    assert tool_message["role"] == "tool" and tool_message["tool_call_id"] == "call_1_1"
    assert json.loads(tool_message["content"])["error_code"] == "INVALID_ARGUMENT"
    assert client.seen[1][-2]["tool_calls"][0]["function"]["name"] == "questionnaire_async"


def test_deferred_tool_result_ends_the_run_deferred():
    form = Tool("form", "d", {"type": "object"}, lambda a, c: {DEFERRED_FLAG: True, "ok": 1})
    events, _ = drive([Turn("", (call("form", {}),)), Turn("never")], tools=(form,))
    assert events[-1].stop_reason == Stop.DEFERRED


def test_max_iterations_pauses_with_the_spec_questionnaire():
    turns = [Turn("", (call("questionnaire_async", {"questions": n}),)) for n in range(5)]
    events, client = drive(turns, config=LoopConfig(lang="zh-hans", max_iterations=3))
    assert events[-1].stop_reason == Stop.MAX_ITERATIONS
    assert client.calls == 3
    pause = of(events, AssistantMessage)[-1]
    assert pause.kind == "pause"
    assert pause.content.startswith("已达到本轮最大循环次数（3），任务已暂停。")
    assert self_check(pause.content).passed
    (segment,) = [s for s in parse_message(pause.content, message_id="m") if s.kind != "markdown"]
    assert segment.kind == "questionnaire"
    question = segment.questionnaire.questions[0]
    assert [o.value for o in question.options] == ["继续"]


def test_max_iterations_english():
    turns = [Turn("", (call("questionnaire_async", {"questions": n}),)) for n in range(3)]
    events, _ = drive(turns, config=LoopConfig(max_iterations=2))
    pause = of(events, AssistantMessage)[-1].content
    assert "limit of 2 steps" in pause and "- Continue" in pause and self_check(pause).passed
    assert "iteration" not in pause  # no machinery words for people (issue 32)


def test_repeated_identical_tool_calls_end_with_loop_recovery():
    same = Turn("", (call("questionnaire_async", BAD_ARGS),))
    events, client = drive([same] * 6, config=LoopConfig(loop_repeat_limit=3))
    assert events[-1].stop_reason == Stop.LOOP_DETECTED
    assert client.calls == 3
    notice = of(events, AssistantMessage)[-1]
    assert notice.kind == "loop"
    assert "<questionnaire>" in notice.content and self_check(notice.content).passed
    (segment,) = [s for s in parse_message(notice.content, message_id="m") if s.kind != "markdown"]
    assert segment.questionnaire.questions[0].id == LOOP_QUESTION_ID
    assert segment.questionnaire.questions[0].type == "free_text"


def test_different_tool_calls_are_not_a_loop():
    turns = [Turn("", (call("questionnaire_async", {"questions": n}),)) for n in range(4)]
    events, _ = drive(turns + [Turn("done")])
    assert events[-1].stop_reason == Stop.COMPLETED


def test_self_check_repair_succeeds_on_attempt_two():
    events, client = drive([Turn(INVALID), Turn(VALID)])
    assert events[-1].stop_reason == Stop.AWAITING_USER_INPUT
    (failed,) = of(events, SelfCheckFailed)
    assert failed.reply == INVALID and failed.attempt == 1 and failed.issues
    assert "[self-check]" in failed.diagnostic
    assert [m.content for m in of(events, AssistantMessage)] == [VALID]
    # The model saw its invalid reply and the diagnostic (as a user turn) before repairing.
    assert client.seen[1][-2:] == [
        {"role": "assistant", "content": INVALID},
        {"role": "user", "content": failed.diagnostic},
    ]


def test_self_check_requires_the_failed_name_again():
    events, _ = drive([Turn(INVALID), Turn("Never mind, no questions."), Turn(VALID)])
    assert len(of(events, SelfCheckFailed)) == 2
    assert events[-1].stop_reason == Stop.AWAITING_USER_INPUT


def test_self_check_gives_up_after_three_attempts():
    events, client = drive([Turn(INVALID)] * 4)
    assert client.calls == 3
    assert [f.attempt for f in of(events, SelfCheckFailed)] == [1, 2]
    (shown,) = of(events, AssistantMessage)
    assert shown.kind == "self_check_gave_up" and shown.content == INVALID
    assert events[-1].stop_reason == Stop.COMPLETED


def test_self_check_diagnostic_in_chinese():
    events, _ = drive([Turn(INVALID), Turn(VALID)], config=LoopConfig(lang="zh-hans"))
    assert of(events, SelfCheckFailed)[0].diagnostic.startswith("[自检]")


def test_tool_exception_stops_with_error_and_keeps_the_pair():
    def boom(arguments, context: ToolContext):
        raise RuntimeError("disk on fire")

    tool = Tool("boom", "d", {"type": "object"}, boom)
    turns = [Turn("", (call("boom", {}), call("boom", {"x": 1})))]
    events, _ = drive(turns, tools=(tool,))
    stop = events[-1]
    assert stop.stop_reason == Stop.ERROR and stop.error_code == "tool_failed"
    assert "disk on fire" in stop.error_message
    (message,) = of(events, AssistantMessage)
    codes = [r.result["error_code"] for r in message.tool_results]
    assert codes == ["TOOL_EXCEPTION", "NOT_EXECUTED"]


def test_malformed_tool_arguments_stop_with_error():
    events, _ = drive([Turn("", (call("questionnaire_async", '{"questions": [}'),))])
    assert events[-1].stop_reason == Stop.ERROR
    assert events[-1].error_code == "tool_arguments_invalid"
    assert of(events, AssistantMessage)[0].tool_results[0].result["error_code"] == "INVALID_JSON"


def test_unknown_tool_is_reported_to_the_model():
    events, client = drive([Turn("", (call("nope", {}),)), Turn("ok")])
    assert events[-1].stop_reason == Stop.COMPLETED
    assert "UNKNOWN_TOOL" in client.seen[1][-1]["content"]


def test_llm_error_stops_with_its_code():
    events, _ = drive([Turn(error=("llm_http_error", "HTTP 500"))])
    assert events[-1] == RunStopped(Stop.ERROR, "llm_http_error", "HTTP 500")


def test_cancellation_before_and_during_streaming():
    events, client = drive([Turn("never")], cancelled=lambda: True)
    assert events == [RunStopped(Stop.CANCELLED)] and client.calls == 0
    checks = iter([False, False, True])
    events, _ = drive([Turn("a long reply that streams")], cancelled=lambda: next(checks, True))
    assert events[-1].stop_reason == Stop.CANCELLED
    # Issue 32, defect 7: what was streamed before Stop stays, as a "stopped" message
    streamed = "".join(e.text for e in of(events, TextDelta))
    (kept,) = of(events, AssistantMessage)
    assert streamed and kept.content == streamed and kept.kind == "stopped"
    assert kept.stop == RunStopped(Stop.CANCELLED) and streamed != "a long reply that streams"


def test_a_reply_that_ends_with_a_tool_call_is_self_checked_too():
    """Spec 000 checks the latest non-empty reply, also when a tool call ends the turn."""
    asking = call("questionnaire_async", GOOD_ARGS)
    events, client = drive([Turn(INVALID, (asking,)), Turn(VALID, (asking,))])
    assert events[-1].stop_reason == Stop.AWAITING_USER_INPUT
    (failed,) = of(events, SelfCheckFailed)
    assert failed.reply == INVALID and failed.attempt == 1
    # nothing of the failed step is shown; the repaired step is, once
    (shown,) = of(events, AssistantMessage)
    assert shown.content == VALID and shown.tool_calls
    assert client.seen[1][-1] == {"role": "user", "content": failed.diagnostic}
    assert client.seen[1][-2]["role"] == "tool"


def _counting(name: str, result: dict) -> tuple[Tool, list[dict]]:
    runs: list[dict] = []

    def execute(arguments, context: ToolContext):
        runs.append(arguments)
        return result

    return Tool(name, "d", {"type": "object"}, execute), runs


def test_text_next_to_a_deferred_form_is_checked_before_the_form_opens():
    """Issue 25 item 1: an invalid questionnaire beside interactive_form_question used to
    end the turn `deferred` unchecked."""
    form, runs = _counting("form", {DEFERRED_FLAG: True, "success": True})
    turns = [Turn(INVALID, (call("form", {"n": 1}),)), Turn(VALID, (call("form", {"n": 2}),))]
    events, client = drive(turns, tools=(form,))
    assert events[-1].stop_reason == Stop.DEFERRED
    (failed,) = of(events, SelfCheckFailed)
    assert failed.reply == INVALID
    assert runs == [{"n": 2}]  # the failed step's form never opened
    (shown,) = of(events, AssistantMessage)
    assert shown.content == VALID and shown.kind == "reply"
    # every call of the failed step was answered "not run" in the model's context
    not_run = client.seen[1][-2]
    assert not_run["role"] == "tool" and "NOT_EXECUTED" in not_run["content"]


def test_tool_step_text_before_an_empty_final_reply_is_checked():
    """Issue 25 item 1: the text of a step that the turn goes on after is seen too."""
    search, runs = _counting("search", {"success": True, "hits": []})
    turns = [
        Turn(INVALID, (call("search", {"q": 1}),)),
        Turn(VALID, (call("search", {"q": 2}),)),
        Turn(""),
    ]
    events, _ = drive(turns, tools=(search,))
    assert events[-1].stop_reason == Stop.COMPLETED
    assert [f.reply for f in of(events, SelfCheckFailed)] == [INVALID]
    assert runs == [{"q": 2}]
    assert [m.content for m in of(events, AssistantMessage)] == [VALID]


def test_a_passed_check_clears_the_names_a_repair_had_to_keep():
    search, _ = _counting("search", {"success": True})
    turns = [
        Turn(INVALID, (call("search", {"q": 1}),)),
        Turn(VALID, (call("search", {"q": 2}),)),
        Turn("Thanks, that is all for now."),
    ]
    events, _ = drive(turns, tools=(search,))
    assert len(of(events, SelfCheckFailed)) == 1
    assert of(events, AssistantMessage)[-1].content == "Thanks, that is all for now."


def test_a_tool_step_shown_after_the_last_attempt_runs_its_tools():
    search, runs = _counting("search", {"success": True})
    turns = [Turn(INVALID, (call("search", {"q": n}),)) for n in range(3)] + [Turn("")]
    events, client = drive(turns, tools=(search,))
    assert client.calls == 4
    assert [f.attempt for f in of(events, SelfCheckFailed)] == [1, 2]
    (shown,) = of(events, AssistantMessage)
    assert shown.kind == "self_check_gave_up" and shown.tool_results
    assert runs == [{"q": 2}]
    assert events[-1].stop_reason == Stop.COMPLETED
