"""The soak's own logic (bench/soak.py, issue 38.5) without a server: the periodic fault
schedule, the RSS slope and its verdict, the fake model's script, the slow-model and
hung-MCP faults, the RSS sampler and `--busy`'s spinning core. The soak itself runs for
minutes (`make soak`); it is no test."""

from __future__ import annotations

import asyncio
import json
import os
import random
import time

import httpx
import pytest

from bench.faults import FAULT_SECONDS, _strike, parse, periodic
from bench.load import busy_core
from bench.soak import SOAK_KINDS, TOOL, HungMcp, ModelScript, SlowModel, sample_rss, slope
from tests.support import wait_for
from tests.support.fake_openai import FakeOpenAI


def test_a_fault_of_a_random_kind_strikes_every_period_and_none_at_the_very_end():
    faults = periodic(SOAK_KINDS, 3600.0, 30.0, random.Random(5))
    assert [f.at_offset for f in faults] == [30.0 * n for n in range(1, 120)]
    assert {f.kind for f in faults} == set(SOAK_KINDS)
    other = [f.kind for f in periodic(SOAK_KINDS, 3600.0, 30.0, random.Random(6))]
    assert other != [f.kind for f in faults]
    assert periodic((), 3600.0, 30.0, random.Random(5)) == []
    assert [f.at_offset for f in periodic(("pg",), 180.0, 20.0, random.Random(1))] == [
        20.0 * n for n in range(1, 9)
    ]


def test_the_soak_knows_the_peer_faults_and_the_load_test_does_not():
    assert parse("slow_model,hung_mcp", SOAK_KINDS) == ("slow_model", "hung_mcp")
    assert parse("all", SOAK_KINDS) == SOAK_KINDS
    with pytest.raises(ValueError, match="unknown fault"):
        parse("slow_model")


def test_a_peer_fault_without_its_peer_says_so():
    assert _strike("hung_mcp", None, None, {}) == "no peer for hung_mcp"  # type: ignore[arg-type]


def test_the_slope_is_exact_on_a_line_and_flat_on_noise_around_a_level():
    line = slope([(h / 10, 500 + 12 * h / 10) for h in range(20)])
    assert line["slope_mb_per_hour"] == 12.0 and line["stderr_mb_per_hour"] == 0.0
    assert line["flat"] is False
    rng = random.Random(3)
    noise = slope([(s / 720, 800 + rng.gauss(0, 5)) for s in range(720)])
    assert noise["flat"] is True
    assert abs(noise["slope_mb_per_hour"]) <= 2 * noise["stderr_mb_per_hour"]
    leak = slope([(s / 720, 800 + 3 * s / 720 + rng.gauss(0, 0.5)) for s in range(720)])
    assert leak["flat"] is False and 2 < leak["slope_mb_per_hour"] < 4
    assert slope([(0.0, 1.0), (1.0, 2.0)])["flat"] is None  # too few samples to say


def _tools() -> list[dict[str, object]]:
    return [{"type": "function", "function": {"name": TOOL, "parameters": {}}}]


def test_the_model_calls_the_tool_then_answers_with_its_result_and_counts_errors():
    script = ModelScript()
    asked = script({"messages": [{"role": "user", "content": "add 12 and 30"}], "tools": _tools()})
    (call_id, name, arguments), *_ = asked.tool_calls
    assert name == TOOL and json.loads(arguments) == {"a": 12, "b": 30}
    call = {"role": "assistant", "tool_calls": [{"id": call_id, "function": {"name": name, "arguments": arguments}}]}  # fmt: skip
    ok = script({"messages": [call, {"role": "tool", "content": "42"}], "tools": _tools()})
    assert ok.text == "The sum is 42." and script.tool_ok == 1
    failed = script(
        {"messages": [call, {"role": "tool", "content": "Error: did not answer in time"}]}
    )
    assert "failed" in failed.text and script.tool_errors == 1


def test_with_the_tool_left_out_the_model_answers_without_it_and_the_reason_is_kept():
    script = ModelScript()
    note = "MCP servers' tools are not available in this turn:\n- soak: did not answer"
    reply = script(
        {
            "messages": [
                {"role": "system", "content": note},
                {"role": "user", "content": "add 1 and 2"},
            ]
        }
    )
    assert not reply.tool_calls and reply.text
    assert script.no_tool == 1 and script.outages == [note[note.find("MCP server") :]]


def test_the_slow_model_fault_delays_the_fake_models_replies_while_it_lasts():
    script = ModelScript()
    with FakeOpenAI() as model:
        model.respond = script
        detail = SlowModel(model, delay=0.0).disrupt(FAULT_SECONDS)
        assert "late" in detail and model.slow_until > time.monotonic()
        body = {"messages": [{"role": "user", "content": "add 2 and 3"}], "tools": _tools()}
        response = httpx.post(model.base_url + "/chat/completions", json=body, timeout=30)
        assert response.status_code == 200 and TOOL in response.text
        assert model.slowed == 1
        model.slow_until = 0.0
        httpx.post(model.base_url + "/chat/completions", json=body, timeout=30)
        assert model.slowed == 1


async def test_the_hung_mcp_server_holds_requests_until_the_fault_ends():
    served: list[str] = []

    async def app(scope, receive, send):  # type: ignore[no-untyped-def]
        served.append(scope["path"])

    hung = HungMcp().wrap(app)
    await hung({"type": "http", "path": "/before"}, None, None)
    assert "silent" in hung.disrupt(3600)
    held = asyncio.ensure_future(hung({"type": "http", "path": "/during"}, None, None))
    await hung({"type": "lifespan", "path": ""}, None, None)  # not an HTTP request: passes
    await asyncio.sleep(0)
    assert served == ["/before", ""] and not held.done() and hung.held == 1
    hung.until = 0.0  # the fault ends
    await held
    assert served == ["/before", "", "/during"]


def test_the_sampler_sums_the_rss_of_a_process_tree_by_role():
    rss = sample_rss(os.getpid())
    assert rss["total"] > 0
    assert rss["total"] == pytest.approx(sum(v for k, v in rss.items() if k != "total"))


def test_busy_keeps_a_core_spinning_and_reports_its_share():
    with busy_core() as share:
        wait_for(lambda: share() > 0, "the spinner to get CPU time")
