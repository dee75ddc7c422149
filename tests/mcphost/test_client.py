"""The SDK client against real MCP servers: listing, calls, failures, timeouts."""

from __future__ import annotations

import asyncio

import mcp_types as types
import pytest

from chat.mcphost import client
from chat.mcphost.client import Budget, Endpoint, Hooks, McpHostError
from tests.support.mcp_servers import dying_server, free_port

# Traced bytes per pending 2025-11-25 call: ~130 KB measured (bench/bench_hostmem.py); a
# regression such as a TLS context or an HTTP client per call (~900 KB) must fail.
PENDING_CALL_KB_BOUND = 300


def test_lists_the_tools_and_negotiates_the_revision(server_url, modern_url):
    tools, revision = client.tools_list(Endpoint("t", server_url))
    assert {"add", "book", "login", "slow", "fail", "die"} <= {tool.name for tool in tools}
    assert revision == "2025-11-25"  # it names no 2026 revision: the handshake
    assert client.tools_list(Endpoint("m", modern_url))[1] == "2026-07-28"


def test_a_2026_round_returns_the_input_it_needs_and_the_answer_finishes_it(modern_url):
    endpoint = Endpoint("m", modern_url)
    first = client.call_round(endpoint, "book", {}, seconds=10)
    assert first.result is None and first.input is not None
    ((key, request),) = first.input.input_requests.items()
    assert request.params.message == "How many of you?"
    answer = {key: types.ElicitResult(action="accept", content={"size": 2, "seating": "indoor"})}
    done = client.call_round(
        endpoint, "book", {}, seconds=10, responses=answer,
        request_state=first.input.request_state,
    )  # fmt: skip
    assert done.result is not None and done.result.content[0].text == "booked 2 indoor"


def test_a_2025_server_is_not_called_by_a_round(server_url):
    """A 2025-11-25 server's calls belong to the session host: a round only says so."""
    answer = client.call_round(Endpoint("t", server_url), "add", {"a": 1, "b": 2}, seconds=10)
    assert (answer.revision, answer.result, answer.input) == ("2025-11-25", None, None)


def test_the_client_introduces_itself_as_this_product():
    assert client.CLIENT_INFO.name == "inline-questionnaire-chat"
    assert client.CLIENT_INFO.version and client.CLIENT_INFO.version != "0"


def test_calls_a_tool(server_url):
    result = client.tool_call(Endpoint("t", server_url), "add", {"a": 2, "b": 3})
    assert not result.is_error and result.content[0].text == "5"


def test_a_raising_tool_is_an_error_result(server_url):
    result = client.tool_call(Endpoint("t", server_url), "fail", {})
    assert result.is_error and "the tool broke" in result.content[0].text


def test_a_server_that_is_down_is_unavailable():
    with pytest.raises(McpHostError) as info:
        client.tool_call(Endpoint("down", f"http://127.0.0.1:{free_port()}/mcp"), "add", {})
    assert info.value.code == client.MCP_UNAVAILABLE


def test_a_slow_server_times_out(server_url, settings):
    settings.MCP_TOOL_TIMEOUT = 1.5
    with pytest.raises(McpHostError) as info:
        client.tool_call(Endpoint("t", server_url), "slow", {"seconds": 10})
    assert info.value.code == client.MCP_TIMEOUT


def test_a_server_that_dies_mid_call_fails_the_call_not_the_caller(settings):
    settings.MCP_TOOL_TIMEOUT = 10
    with dying_server() as (url, _process), pytest.raises(McpHostError) as info:
        client.tool_call(Endpoint("dying", url), "die", {})
    assert info.value.code in {client.MCP_UNAVAILABLE, client.MCP_TIMEOUT}


def test_the_budget_stops_while_a_person_answers(server_url, settings):
    """The person takes longer than the whole tool timeout: the call still succeeds."""
    settings.MCP_TOOL_TIMEOUT = 1.5

    async def elicit(params, budget: Budget):
        assert isinstance(params, types.ElicitRequestFormParams)
        assert set(params.requested_schema["properties"]) == {"size", "seating"}
        with budget.paused():
            await asyncio.sleep(3.5)  # more than twice the whole budget
        return types.ElicitResult(action="accept", content={"size": 3, "seating": "outdoor"})

    result = client.tool_call(Endpoint("t", server_url), "book", {}, Hooks(elicit=elicit))
    assert result.content[0].text == "booked 3 outdoor"


def test_url_mode_and_its_completion_notification(server_url):
    completed: list[str] = []

    async def elicit(params, budget):
        assert isinstance(params, types.ElicitRequestURLParams)
        assert (params.url, params.elicitation_id) == ("https://example.test/sign-in", "el-42")
        return types.ElicitResult(action="accept")

    async def complete(elicitation_id: str) -> None:
        completed.append(elicitation_id)

    hooks = Hooks(elicit=elicit, elicitation_complete=complete)
    result = client.tool_call(Endpoint("t", server_url), "login", {}, hooks)
    assert result.content[0].text == "login: accept"
    assert completed == ["el-42"]


def test_without_hooks_the_server_is_told_elicitation_is_unsupported(server_url):
    with pytest.raises(McpHostError) as info:
        client.tool_call(Endpoint("t", server_url), "book", {})
    assert info.value.code == client.MCP_PROTOCOL_ERROR
    assert "Elicitation not supported" in info.value.message


def test_headers_are_not_in_the_endpoint_repr():
    assert "s3cret" not in repr(Endpoint("t", "http://x", {"X-Key": "s3cret"}))


async def test_runs_from_async_code_too(server_url):
    """The inline runner may be called from a coroutine: no 'loop already running'."""
    result = client.tool_call(Endpoint("t", server_url), "add", {"a": 1, "b": 1})
    assert result.content[0].text == "2"


async def test_the_session_hosts_calls_share_one_connection_pool_per_server(server_url):
    """One HTTP client per server for the host's calls; each call keeps its own MCP
    session (a URL card's completion notice still reaches only its own call)."""
    shared = client.HttpClients()
    completed: list[str] = []

    async def elicit(params, budget):
        return types.ElicitResult(action="accept")

    async def complete(elicitation_id: str) -> None:
        completed.append(elicitation_id)

    hooks = Hooks(elicit=elicit, elicitation_complete=complete)
    endpoint = Endpoint("t", server_url, {"X-Key": "k"})
    results = await asyncio.gather(
        client.tool_call_async(endpoint, "login", {}, hooks, shared=shared),
        client.tool_call_async(endpoint, "add", {"a": 1, "b": 2}, shared=shared),
    )
    assert [r.content[0].text for r in results] == ["login: accept", "3"]
    assert completed == ["el-42"]
    http = shared.client(endpoint)
    assert http is shared.client(Endpoint("t", server_url, {"X-Key": "k"}))
    assert http is not shared.client(Endpoint("t", server_url, {"X-Key": "other"}))
    assert http.headers["X-Key"] == "k"
    await shared.aclose()
    assert http.is_closed


def test_a_pending_call_holds_little_memory(settings):
    """Issue 21: a 2025-11-25 call waiting for a person is a coroutine of modest size
    (bench/bench_hostmem.py measures it: see docs/benchmarks.md). A generous bound over a
    handful of pending calls, the server in a process of its own."""
    import gc
    import tracemalloc

    calls = 6
    settings.MCP_CONNECT_TIMEOUT = 60

    async def main(url: str) -> float:
        shared = client.HttpClients()
        endpoint = Endpoint("t", url)
        asked: list[asyncio.Future[None]] = []
        all_asked = asyncio.Event()

        async def elicit(params, budget):
            with budget.paused():
                future = asyncio.get_running_loop().create_future()
                asked.append(future)
                if len(asked) == len(tasks):
                    all_asked.set()
                await future
            return types.ElicitResult(action="decline")

        hooks = Hooks(elicit=elicit)

        def call() -> asyncio.Task[types.CallToolResult]:
            return asyncio.create_task(
                client.tool_call_async(endpoint, "book", {}, hooks, shared=shared)
            )

        tasks = [call()]
        await asyncio.wait_for(all_asked.wait(), 60)  # warm-up
        asked.pop().set_result(None)
        await tasks.pop()
        all_asked.clear()
        gc.collect()
        tracemalloc.start(1)
        try:
            before = tracemalloc.get_traced_memory()[0]
            tasks = [call() for _ in range(calls)]
            await asyncio.wait_for(all_asked.wait(), 60)
            await asyncio.sleep(0.2)
            gc.collect()
            held = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        for future in asked:
            future.set_result(None)
        results = await asyncio.gather(*tasks)
        assert {r.content[0].text for r in results} == {"not booked: decline"}
        await shared.aclose()
        return held / calls / 1024

    with dying_server() as (url, _process):
        kb = asyncio.run(main(url))
    assert kb < PENDING_CALL_KB_BOUND, f"{kb:.0f} KB per pending call"
