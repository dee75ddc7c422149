"""Durable turns: a worker dying at any step of a turn, and the next attempt resuming it.

A "crash" is a BaseException raised as the sink receives the k-th loop event: nothing in
the runner catches it (like SIGKILL), the transaction in flight rolls back, and the run is
left `running`. Running the same queue message again (what the broker does when the
worker process died) must end in exactly the state an uninterrupted turn reaches.
"""

from __future__ import annotations

import json

import pytest

from chat.agent.events import ToolCall
from chat.agent.llm.base import Completion
from chat.agent.llm.scripted import Script, Step, Turn
from chat.agent.tools import TOOLS
from chat.agent.tools.base import Tool
from chat.core.services import conversation_create, message_create
from chat.models import Event, Role, Run, RunAttempt, RunStatus, StopReason
from chat.runs import runner as runner_module
from chat.runs import turn as turn_module
from chat.runs.agents import ECHO, echo_turn
from chat.runs.resume import DeltaMerger
from chat.runs.runner import run_execute
from tests.support.loop import BAD_ARGS, VALID

pytestmark = pytest.mark.django_db
TASK = "task-1"


class Crash(BaseException):
    """The worker process dies here (nothing below catches a BaseException)."""


@pytest.fixture(autouse=True)
def _every_delta_is_flushed(monkeypatch):
    monkeypatch.setattr(turn_module, "DELTA_FLUSH_SECONDS", 0)


@pytest.fixture
def script(monkeypatch):
    def install(*turns):
        built = Script(steps=(Step(tuple(turns)),), chunk_chars=8)
        monkeypatch.setattr(turn_module, "script_load", lambda name, lang="en": built)

    return install


@pytest.fixture
def crash(monkeypatch):
    """`crash(k)`: the k-th event the sink receives kills the worker (once);
    `crash("ToolResultEvent")`: the first event of that type does."""
    original = turn_module.RunSink.handle
    plan: dict = {"at": 0, "seen": 0}

    def handle(self, event):
        plan["seen"] += 1
        name = type(event).__name__
        if plan["at"] in (plan["seen"], name):
            plan["at"] = 0
            raise Crash(name)
        return original(self, event)

    monkeypatch.setattr(turn_module.RunSink, "handle", handle)

    def arm(at: int | str) -> dict:
        plan.update(at=at, seen=0)
        return plan

    return arm


def start(user, text="go"):
    conversation = conversation_create(owner=user, agent="scripted")
    trigger = message_create(conversation=conversation, role=Role.USER, content=text)
    return Run.objects.create(conversation=conversation, trigger_message=trigger)


def outcome(run: Run):
    """Everything the user and the model can see of a run, call ids normalized."""
    run.refresh_from_db()

    def norm(value):
        return json.loads(json.dumps(value).replace(f"call_r{run.pk}_", "call_"))

    messages = [
        norm([m.role, m.hidden, m.content, m.tool_call_id, m.tool_calls])
        for m in run.conversation.messages.order_by("seq")
    ]
    streamed: dict[int, str] = {}
    for data in Event.objects.filter(conversation=run.conversation, name="text_delta").values_list(
        "data", flat=True
    ):
        before = "" if data.get("replace") else streamed.get(data["iteration"], "")
        streamed[data["iteration"]] = before + data["text"]
    names = list(
        Event.objects.filter(conversation=run.conversation)
        .exclude(name="text_delta")
        .values_list("name", flat=True)
    )
    return {
        "messages": messages,
        "streamed": streamed,
        "events": names,
        "run": (run.status, run.stop_reason, run.iterations, run.error),
    }


TWO_STEPS = (
    Turn("Let me check that.", (ToolCall("", "questionnaire_async", json.dumps(BAD_ARGS)),)),
    Turn(VALID),
)


def _boom(arguments, context):
    raise RuntimeError("the tool broke")


BOOM = Tool("boom", "Breaks.", {"type": "object"}, _boom, idempotent=True)
FAILING = (
    Turn("Trying the tool.", (ToolCall("", "boom", "{}"), ToolCall("", "boom", "{}"))),
    Turn("never reached"),
)


@pytest.mark.parametrize(
    ("turns", "ends", "streamed"),
    [
        (TWO_STEPS, ("finished", "awaiting_user_input"), {1: "Let me check that.", 2: VALID}),
        # A tool failure ends the run with an error, however often it is resumed.
        (FAILING, ("failed", "error"), {1: "Trying the tool."}),
    ],
    ids=["tool-step-then-reply", "tool-failure"],
)
def test_a_crash_at_any_step_resumes_to_the_same_end(
    user, script, crash, monkeypatch, turns, ends, streamed
):
    monkeypatch.setattr(turn_module, "TOOLS", (*TOOLS, BOOM))
    script(*turns)
    reference = start(user)
    plan = crash(10_000)
    run_execute(run_id=reference.pk, task_id=TASK)
    expected = outcome(reference)
    steps = plan["seen"]
    assert expected["run"][:2] == ends
    assert expected["streamed"] == streamed
    assert steps > 6
    for k in range(1, steps + 1):
        run = start(user)
        crash(k)
        with pytest.raises(Crash):
            run_execute(run_id=run.pk, task_id=TASK)
        assert Run.objects.get(pk=run.pk).status == RunStatus.RUNNING
        run_execute(run_id=run.pk, task_id=TASK)  # the broker redelivers the message
        got = outcome(run)
        for key, value in expected.items():
            assert got[key] == value, f"crash at event {k}: {key}"
        attempts = list(run.attempt_log.values_list("number", "outcome"))
        assert attempts == [(1, RunAttempt.Outcome.LOST), (2, ends[0])]


def test_the_streamed_text_continues_instead_of_repeating(user, script, crash):
    script(Turn("One two three four five six seven eight nine ten."))
    run = start(user)
    crash(5)  # IterationStarted, then three deltas are out: the fourth one dies
    with pytest.raises(Crash):
        run_execute(run_id=run.pk, task_id=TASK)
    before = list(Event.objects.filter(name="text_delta").values_list("data__text", flat=True))
    assert "".join(before) == "One two three four five six "[:24]
    run_execute(run_id=run.pk, task_id=TASK)
    deltas = list(Event.objects.filter(name="text_delta").values_list("data", flat=True))
    assert not any(d.get("replace") for d in deltas)
    assert "".join(d["text"] for d in deltas) == "One two three four five six seven eight nine ten."
    run_started = Event.objects.filter(name="run_started").count()
    assert run_started == 1  # a resumed turn is not a new one


def test_a_different_second_answer_replaces_the_streamed_text(user, crash, monkeypatch):
    answers = iter(["The first attempt says this.", "Another text entirely."])

    class Client:
        def stream(self, messages, tools):
            text = next(answers)
            for n in range(0, len(text), 6):
                yield text[n : n + 6]
            yield Completion(text)

    monkeypatch.setattr(turn_module, "ScriptedClient", lambda *a, **k: Client())
    run = start(user)
    crash(4)
    with pytest.raises(Crash):
        run_execute(run_id=run.pk, task_id=TASK)
    run_execute(run_id=run.pk, task_id=TASK)
    assert outcome(run)["streamed"] == {1: "Another text entirely."}
    assert Event.objects.filter(name="text_delta", data__replace=True).count() == 1
    assert run.conversation.messages.filter(role="assistant").get().content == (
        "Another text entirely."
    )


@pytest.fixture
def side_effect(monkeypatch):
    """A tool with an outside effect (not idempotent), e.g. an MCP server's tool."""
    calls = []

    def execute(arguments, context):
        calls.append(context.call_id)
        return {"success": True, "done": len(calls)}

    tool = Tool("send_email", "Sends an email.", {"type": "object"}, execute)
    monkeypatch.setattr(turn_module, "TOOLS", (*TOOLS, tool))
    return calls


def test_a_tool_with_its_result_is_not_run_again(user, script, crash, side_effect):
    script(Turn("", (ToolCall("", "send_email", "{}"),)), Turn("Sent."))
    run = start(user)
    crash("AssistantMessage")  # the result is journaled, the step not yet stored
    with pytest.raises(Crash, match="AssistantMessage"):
        run_execute(run_id=run.pk, task_id=TASK)
    run_execute(run_id=run.pk, task_id=TASK)
    assert side_effect == [f"call_r{run.pk}_1_1"]
    run.refresh_from_db()
    assert (run.status, run.stop_reason) == (RunStatus.FINISHED, StopReason.COMPLETED)
    (tool,) = run.conversation.messages.filter(role="tool")
    assert json.loads(tool.content) == {"success": True, "done": 1}
    assert Event.objects.filter(name="tool_call").count() == 1
    assert Event.objects.filter(name="tool_result").count() == 1


def test_a_started_tool_whose_effect_is_unknown_fails_visibly(user, script, crash, side_effect):
    script(Turn("", (ToolCall("", "send_email", "{}"),)), Turn("Sent."))
    run = start(user)
    crash("ToolResultEvent")  # the tool ran; its result died with the worker
    with pytest.raises(Crash, match="ToolResultEvent"):
        run_execute(run_id=run.pk, task_id=TASK)
    run_execute(run_id=run.pk, task_id=TASK)
    assert len(side_effect) == 1  # never twice
    run.refresh_from_db()
    assert (run.status, run.stop_reason) == (RunStatus.FAILED, StopReason.ERROR)
    assert "send_email" in run.error and "unknown" in run.error
    (error,) = Event.objects.filter(name="error").values_list("data", flat=True)
    assert error["code"] == "tool_effect_unknown"
    tool = run.conversation.messages.get(role="tool")
    assert json.loads(tool.content)["error_code"] == "TOOL_EFFECT_UNKNOWN"


def test_an_idempotent_tool_whose_result_was_lost_runs_again(user, script, crash, monkeypatch):
    runs = []
    original = TOOLS[0]

    def execute(arguments, context):
        runs.append(context.call_id)
        return original.execute(arguments, context)

    tool = Tool(original.name, "", original.parameters, execute, idempotent=True)
    monkeypatch.setattr(turn_module, "TOOLS", (tool,))
    script(*TWO_STEPS)
    run = start(user)
    crash("ToolResultEvent")  # the tool ran; its result died with the worker
    with pytest.raises(Crash, match="ToolResultEvent"):
        run_execute(run_id=run.pk, task_id=TASK)
    run_execute(run_id=run.pk, task_id=TASK)
    assert len(runs) == 2 and len(set(runs)) == 1  # the same call, run again
    run.refresh_from_db()
    assert run.stop_reason == StopReason.AWAITING_USER_INPUT


def test_an_instant_turn_is_all_or_nothing(user, monkeypatch):
    def dies_after_posting(run):
        echo_turn(run)
        raise Crash()

    conversation = conversation_create(owner=user, agent="echo")
    trigger = message_create(conversation=conversation, role=Role.USER, content="hi")
    run = Run.objects.create(conversation=conversation, trigger_message=trigger)
    # echo (instant: one transaction) with a turn that dies after posting its reply
    monkeypatch.setattr(runner_module, "run_agent", lambda run: (ECHO, dies_after_posting))
    with pytest.raises(Crash):
        run_execute(run_id=run.pk, task_id=TASK)
    assert not conversation.messages.filter(role="assistant").exists()  # rolled back
    monkeypatch.undo()
    run_execute(run_id=run.pk, task_id=TASK)
    assert list(
        conversation.messages.filter(role="assistant").values_list("content", flat=True)
    ) == ["Echo: hi"]


def test_attempts_are_bounded(user, script, crash, settings):
    settings.AGENT_MAX_ATTEMPTS = 2
    script(*TWO_STEPS)
    run = start(user)
    for _ in range(2):
        crash(2)
        with pytest.raises(Crash):
            run_execute(run_id=run.pk, task_id=TASK)
    run_execute(run_id=run.pk, task_id=TASK)
    run.refresh_from_db()
    assert (run.status, run.attempts) == (RunStatus.FAILED, 3)
    assert run.error == "worker_lost: the process running this turn stopped 2 times."
    names = list(Event.objects.filter(conversation=run.conversation).values_list("name", flat=True))
    assert names[-2:] == ["error", "run_finished"]
    outcomes = list(run.attempt_log.values_list("outcome", flat=True))
    assert outcomes == ["lost", "lost", "failed"]


def test_a_worker_that_was_taken_over_stores_nothing_more(user, monkeypatch):
    from chat.runs.heartbeat import run_claim

    class Client:
        def stream(self, messages, tools):
            yield "The old worker wakes up "
            # Meanwhile its run was given to another worker (the broker redelivered).
            run_claim(run_id=run.pk, task_id=TASK, worker="other:2")
            yield "and keeps going."
            yield Completion("The old worker wakes up and keeps going.")

    monkeypatch.setattr(turn_module, "CANCEL_POLL_SECONDS", 0)
    monkeypatch.setattr(turn_module, "ScriptedClient", lambda *a, **k: Client())
    run = start(user)
    run_execute(run_id=run.pk, task_id=TASK)
    run.refresh_from_db()
    assert (run.status, run.attempts, run.worker) == (RunStatus.RUNNING, 2, "other:2")
    assert not run.conversation.messages.filter(role="assistant").exists()
    assert not Event.objects.filter(name="run_finished").exists()


def test_a_finished_run_is_never_run_again(user, script):
    script(Turn("Done."))
    run = start(user)
    run_execute(run_id=run.pk, task_id=TASK)
    run_execute(run_id=run.pk, task_id=TASK)  # a late duplicate of the message
    assert Run.objects.get(pk=run.pk).attempts == 1
    assert run.conversation.messages.filter(role="assistant").count() == 1


@pytest.mark.parametrize(
    ("streamed", "pieces", "sent"),
    [
        ("Hello wor", ["Hel", "lo w", "orld"], [("", False), ("", False), ("ld", False)]),
        ("Hello", ["Help"], [("Help", True)]),
        ("", ["a", "b"], [("a", False), ("b", False)]),
    ],
)
def test_delta_merger(streamed, pieces, sent):
    merger = DeltaMerger(1, streamed)
    assert [merger.feed(1, piece) for piece in pieces] == sent
    assert merger.feed(2, "next") == ("next", False)


def test_delta_merger_a_shorter_answer_replaces():
    merger = DeltaMerger(3, "Hello world")
    assert merger.feed(3, "Hello") == ("", False)
    assert merger.close() == ("Hello", True)
    assert merger.close() is None
