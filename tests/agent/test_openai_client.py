"""The OpenAI-compatible backend against a local fake server that streams like the API."""

from __future__ import annotations

import json

import pytest

from chat.agent.events import RunStopped, Stop, TextDelta, ToolResultEvent
from chat.agent.llm.base import Completion, LLMError, Usage
from chat.agent.llm.openai_client import OpenAIClient
from chat.agent.loop import LoopConfig, run_loop
from chat.agent.tools import TOOLS
from tests.support.fake_openai import FakeOpenAI, Reply

MESSAGES = [{"role": "system", "content": "sys"}, {"role": "user", "content": "hello"}]
ARGS = json.dumps(
    {"title": "T", "questions": [{"type": "single_choice", "text": "继续吗？", "options": ["是"]}]},
    ensure_ascii=False,
)


@pytest.fixture
def fake():
    with FakeOpenAI() as server:
        yield server


def client(fake: FakeOpenAI, timeout: float = 5.0) -> OpenAIClient:
    return OpenAIClient(base_url=fake.base_url, api_key="sk-test", model="m-1", timeout=timeout)


def test_streams_text_fragments_then_the_completion(fake):
    fake.replies.append(Reply(text="Hello, this is streamed."))
    out = list(client(fake).stream(MESSAGES, []))
    fragments, completion = out[:-1], out[-1]
    assert len(fragments) > 2 and "".join(fragments) == "Hello, this is streamed."
    assert completion == Completion("Hello, this is streamed.", (), "stop", Usage(11, 5))
    request = fake.requests[0]
    assert request["stream_options"] == {"include_usage": True}
    assert request["model"] == "m-1" and request["stream"] is True
    assert request["messages"] == MESSAGES and "tools" not in request
    headers = {k.lower(): v for k, v in fake.headers[0].items()}
    assert headers["authorization"] == "Bearer sk-test"


def test_assembles_tool_call_fragments(fake):
    fake.replies.append(
        Reply(
            text="Let me ask.",
            tool_calls=[("call_a", "questionnaire_async", ARGS), ("call_b", "other", "{}")],
        )
    )
    completion = list(client(fake).stream(MESSAGES, [t.schema() for t in TOOLS]))[-1]
    assert isinstance(completion, Completion)
    assert completion.finish_reason == "tool_calls"
    first, second = completion.tool_calls
    assert (first.id, first.name, json.loads(first.arguments)) == (
        "call_a",
        "questionnaire_async",
        json.loads(ARGS),
    )
    assert (second.id, second.name, second.arguments) == ("call_b", "other", "{}")
    assert fake.requests[0]["tools"][0]["function"]["name"] == "questionnaire_async"


@pytest.mark.parametrize(
    ("status", "code"),
    [(500, "llm_http_error"), (429, "llm_rate_limited"), (401, "llm_http_error")],
)
def test_http_errors_become_llm_errors(fake, status, code):
    fake.replies.append(Reply(status=status))
    with pytest.raises(LLMError) as info:
        list(client(fake).stream(MESSAGES, []))
    assert info.value.code == code
    assert str(status) in info.value.message
    assert len(fake.requests) == 1  # no hidden retries


def test_a_429_that_says_when_to_come_back_is_waited_out_then_retried(fake):
    """Issue 33.6: before, the first 429 failed the turn whatever Retry-After said."""
    fake.replies += [
        Reply(status=429, headers={"Retry-After": "2"}),
        Reply(status=429, headers={"retry-after-ms": "1500"}),
        Reply(text="Finally."),
    ]
    slept: list[float] = []
    patient = OpenAIClient(
        base_url=fake.base_url, api_key="k", model="m", rate_limit_wait=10, sleep=slept.append
    )
    out = list(patient.stream(MESSAGES, []))
    assert out[-1].content == "Finally." and slept == [2.0, 1.5] and len(fake.requests) == 3


@pytest.mark.parametrize(
    "headers",
    [{}, {"Retry-After": "30"}, {"Retry-After": "soon"}, {"retry-after-ms": "-5"}],
    ids=["no header", "longer than allowed", "nonsense", "negative"],
)
def test_a_429_without_a_wait_that_fits_fails_at_once(fake, headers):
    fake.replies.append(Reply(status=429, headers=headers))
    slept: list[float] = []
    patient = OpenAIClient(
        base_url=fake.base_url, api_key="k", model="m", rate_limit_wait=10, sleep=slept.append
    )
    with pytest.raises(LLMError) as caught:
        list(patient.stream(MESSAGES, []))
    assert caught.value.code == "llm_rate_limited" and slept == [] and len(fake.requests) == 1


def test_retry_after_reads_seconds_milliseconds_and_http_dates():
    from datetime import UTC, datetime, timedelta
    from email.utils import format_datetime

    from chat.agent.llm.openai_client import retry_after

    later = format_datetime(datetime.now(UTC) + timedelta(seconds=90), usegmt=True)
    assert retry_after({"retry-after": "7"}) == 7.0
    assert retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert 80 < (retry_after({"retry-after": later}) or 0) <= 90
    assert retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert retry_after({}) is None and retry_after({"retry-after": "x"}) is None


def test_mid_stream_disconnect_is_an_error(fake):
    fake.replies.append(
        Reply(text="This reply is cut off somewhere in the middle.", disconnect_after=3)
    )
    received = []
    with pytest.raises(LLMError) as info:
        for item in client(fake).stream(MESSAGES, []):
            received.append(item)
    assert info.value.code == "llm_stream_broken"
    assert received  # what streamed before the cut was delivered


def test_timeout(fake):
    fake.replies.append(Reply(text="late", delay=1.0))
    with pytest.raises(LLMError) as info:
        list(client(fake, timeout=0.2).stream(MESSAGES, []))
    assert info.value.code == "llm_timeout"


def test_unreachable_endpoint():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dead = OpenAIClient(base_url=f"http://127.0.0.1:{port}/v1", api_key="k", model="m")
    with pytest.raises(LLMError) as info:
        list(dead.stream(MESSAGES, []))
    assert info.value.code == "llm_unreachable"


def test_missing_model_is_a_configuration_error():
    with pytest.raises(LLMError) as info:
        OpenAIClient(base_url="http://127.0.0.1:9/v1", api_key="k", model="")
    assert info.value.code == "llm_not_configured"


def test_loop_with_openai_backend_tool_call_then_awaiting(fake):
    fake.replies.append(Reply(text="Checking.", tool_calls=[("c1", "questionnaire_async", ARGS)]))
    events = list(run_loop(client=client(fake), tools=TOOLS, messages=MESSAGES))
    assert events[-1] == RunStopped(Stop.AWAITING_USER_INPUT)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Checking."
    (result,) = [e for e in events if isinstance(e, ToolResultEvent)]
    assert result.call.id == "c1" and result.result["success"] is True


def test_loop_with_malformed_tool_json_from_the_server(fake):
    fake.replies.append(Reply(tool_calls=[("c1", "questionnaire_async", '{"questions": [')]))
    events = list(run_loop(client=client(fake), tools=TOOLS, messages=MESSAGES))
    assert events[-1].stop_reason == Stop.ERROR
    assert events[-1].error_code == "tool_arguments_invalid"


def test_loop_repairs_with_second_request_containing_the_tool_error(fake):
    bad = json.dumps({"questions": []})
    fake.replies += [
        Reply(tool_calls=[("c1", "questionnaire_async", bad)]),
        Reply(text="Fixed.", tool_calls=[("c2", "questionnaire_async", ARGS)]),
    ]
    events = list(
        run_loop(client=client(fake), tools=TOOLS, messages=MESSAGES, config=LoopConfig(lang="en"))
    )
    assert events[-1].stop_reason == Stop.AWAITING_USER_INPUT
    second = fake.requests[1]["messages"]
    assert second[-2]["tool_calls"][0]["id"] == "c1"
    assert second[-1]["role"] == "tool" and second[-1]["tool_call_id"] == "c1"
    assert (
        json.loads(second[-1]["content"])["errors"][0]["code"]
        == "questionnaire.start.questions_empty"
    )


def test_usage_is_estimated_and_marked_so_when_the_endpoint_reports_none(fake):
    """An endpoint that refuses `stream_options` (LLM_STREAM_USAGE=0) or reports nothing:
    the tokens are estimated from the text, never invented as if reported."""
    fake.replies.append(Reply(text="An answer of some forty characters, yes.", usage=None))
    quiet = OpenAIClient(
        base_url=fake.base_url, api_key="k", model="m-1", timeout=5, stream_usage=False
    )
    completion = list(quiet.stream(MESSAGES, []))[-1]
    assert isinstance(completion, Completion) and completion.usage is not None
    assert completion.usage.estimated
    assert completion.usage.completion_tokens == 10  # 40 ASCII characters / 4
    assert completion.usage.prompt_tokens > 5
    assert "stream_options" not in fake.requests[0]
