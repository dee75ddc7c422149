"""The MCP endpoint, driven by the official SDK client against a real uvicorn server."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

pytestmark = pytest.mark.e2e

SETUP = """
import json
from django.contrib.auth.models import User
from chat.core.models import Run
from chat.core.services import conversation_create
from chat.core.identity import run_environment
user, _ = User.objects.get_or_create(username="{user}")
c = conversation_create(owner=user, title="MCP", agent="external")
run = Run.objects.create(conversation=c, status="running", worker="external")
env = run_environment(conversation_id=c.pk, run_id=run.pk, user_id=user.pk)
print(json.dumps({{"conversation": c.pk, "run": run.pk, "token": env["MCP_RUN_TOKEN"]}}))
"""

FORM = {
    "questions": [
        {
            "id": "size",
            "title": "Which size?",
            "type": "dropdown",
            "options": ["S", "M", "L"],
            "required": True,
        },
        {"id": "note", "question": "Notes", "input_type": "textarea"},
    ]
}


def _setup(server, user: str = "mcp-user") -> dict[str, Any]:
    return server.json(SETUP.format(user=user))


async def _session_calls(url: str, token: str, calls: list[tuple[str, dict[str, Any]]]):
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        init = await session.initialize()
        tools = await session.list_tools()
        results = [await session.call_tool(name, args) for name, args in calls]
        return init, tools, results


def _payload(result) -> dict[str, Any]:
    if result.structured_content:
        data = result.structured_content
        return data.get("result", data) if set(data) == {"result"} else data
    return json.loads(result.content[0].text)


def test_form_over_mcp_end_to_end(mcp_server):
    ids = _setup(mcp_server)
    url = mcp_server.url + "/mcp/"
    bad = {"questions": [{"question": "", "input_type": "choice"}]}
    init, tools, results = anyio.run(
        _session_calls,
        url,
        ids["token"],
        [("interactive_form_question", bad), ("interactive_form_question", FORM)],
    )
    assert init.server_info.name == "inline-questionnaire-chat"
    assert {"interactive_form_question", "questionnaire_async"} <= {t.name for t in tools.tools}
    invalid, ok = (_payload(r) for r in results)
    assert invalid["success"] is False
    assert {e["path"] for e in invalid["errors"]} == {
        "questions[1].question",
        "questions[1].options",
    }
    assert ok["__deferred_user_input__"] is True and ok["status"] == "waiting_for_user_response"
    # the deferred result ended the external run (spec 003), and its token with it
    run = mcp_server.json(
        f"from chat.models import Run; import json; r = Run.objects.get(pk={ids['run']}); "
        "print(json.dumps([r.status, r.stop_reason]))"
    )
    assert run == ["finished", "tool_deferred"]
    again = httpx.post(
        url,
        json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
        headers={"Authorization": f"Bearer {ids['token']}"},
    )
    assert again.status_code == 401

    # the form is in the conversation, rendered from its payload; answer it over the API
    state = mcp_server.json(
        f"""
import json
from chat.core.models import Message
from questionnaires.models import InteractiveForm
f = InteractiveForm.objects.get(conversation_id={ids["conversation"]})
m = Message.objects.get(pk=f.message_id)
print(json.dumps({{"ask_id": f.ask_id, "tool_use_id": f.tool_use_id, "run": f.run_id,
  "payload": m.metadata["render_payloads"][f.tool_use_id], "count": InteractiveForm.objects.count()}}))
"""
    )
    assert state["ask_id"] == ok["ask_id"] and state["run"] == ids["run"]
    assert state["payload"]["questions"][0]["options"][1] == {"label": "M", "value": "M"}
    api_token = (
        mcp_server.shell(
            "from django.core.management import call_command; call_command('create_api_token', 'mcp-user')"
        )
        .strip()
        .split()[-1]
    )
    api = httpx.Client(base_url=mcp_server.url, headers={"Authorization": f"Bearer {api_token}"})
    answer = {
        "type": "interactive_form_question",
        "tool_use_id": state["tool_use_id"],
        "answers": {"size": "M"},
    }
    response = api.post(
        f"/api/v1/conversations/{ids['conversation']}/messages",
        json={"role": "user", "interactive_form_answer": answer},
    )
    assert response.status_code == 201, response.text
    messages = api.get(f"/api/v1/conversations/{ids['conversation']}/messages").json()["messages"]
    tool = next(
        m for m in messages if m["role"] == "tool" and m["tool_call_id"] == state["tool_use_id"]
    )
    assert json.loads(tool["content"])["answers"][0]["value"] == "M"


def test_questionnaire_async_over_mcp(mcp_server):
    ids = _setup(mcp_server, "mcp-q")
    args = {
        "title": "Quick",
        "questions": [{"type": "single_choice", "text": "Tea?", "options": ["Yes", "No"]}],
    }
    _init, _tools, (result,) = anyio.run(
        _session_calls, mcp_server.url + "/mcp/", ids["token"], [("questionnaire_async", args)]
    )
    assert _payload(result)["success"] is True
    kinds = mcp_server.json(
        f"from chat.models import Message; import json; print(json.dumps([m.role for m in Message.objects.filter(conversation_id={ids['conversation']})]))"
    )
    assert kinds == ["assistant", "tool"]


@pytest.mark.parametrize(
    "token",
    ["", "nonsense", "mcprun.eyJ0YW1wZXJlZCI6MX0:abc:def", "qc_api_token_is_not_a_run_token"],
)
def test_bad_tokens_get_401(mcp_server, token):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    response = httpx.post(
        mcp_server.url + "/mcp/",
        json=body,
        headers={**headers, "Accept": "application/json, text/event-stream"},
    )
    assert response.status_code == 401
    assert response.json()["error"] == "unauthorized"


def test_expired_token_gets_401(mcp_server):
    ids = _setup(mcp_server, "mcp-old")
    # sign a token "in the past" by shifting the signer's clock
    token = mcp_server.json(
        f"""
import json, time
from unittest import mock
from chat.core.identity import mcp_token_issue
with mock.patch("time.time", return_value=time.time() - 7 * 24 * 3600):
    t = mcp_token_issue(conversation_id={ids["conversation"]}, run_id={ids["run"]}, user_id=1)
print(json.dumps(t))
"""
    )
    response = httpx.post(
        mcp_server.url + "/mcp/", json={}, headers={"Authorization": f"Bearer {token}"}
    )
    assert response.status_code == 401


def test_external_runtime_opens_a_run_and_raises_a_form(mcp_server):
    api_token = (
        mcp_server.shell(
            "from django.contrib.auth.models import User; User.objects.get_or_create(username='ext');"
            "from django.core.management import call_command; call_command('create_api_token', 'ext')"
        )
        .strip()
        .split()[-1]
    )
    api = httpx.Client(base_url=mcp_server.url, headers={"Authorization": f"Bearer {api_token}"})
    conversation = api.post("/api/v1/conversations/", json={"agent": "external"}).json()
    opened = api.post(f"/api/v1/conversations/{conversation['id']}/runs").json()
    assert opened["mcp_url"].endswith("/mcp/")
    assert set(opened["env"]) == {
        "MCP_RUN_TOKEN",
        "SKILL_IDENTITY_TOKEN",
        "WEGENT_SKILL_IDENTITY_TOKEN",
    }
    # while the run lives, its skill token publishes skills, and nothing else
    skill = {"Authorization": f"Bearer {opened['env']['WEGENT_SKILL_IDENTITY_TOKEN']}"}
    assert httpx.get(mcp_server.url + "/api/v1/kinds/skills", headers=skill).status_code == 200
    refused = httpx.get(
        mcp_server.url + f"/api/v1/conversations/{conversation['id']}/messages", headers=skill
    )
    assert refused.status_code == 401 and refused.json()["error"] == "skill_token_not_allowed"
    _init, _tools, (result,) = anyio.run(
        _session_calls,
        opened["mcp_url"],
        opened["env"]["MCP_RUN_TOKEN"],
        [("interactive_form_question", FORM)],
    )
    assert _payload(result)["__deferred_user_input__"] is True
    response = api.post(
        f"/api/v1/conversations/{conversation['id']}/messages",
        json={"role": "user", "content": "hi"},
    )
    assert response.status_code == 409 and response.json()["error"] == "pending_interactive_form"
    # the deferred form ended the run: its skill token died with it
    assert httpx.get(mcp_server.url + "/api/v1/kinds/skills", headers=skill).status_code == 401


def test_ask_user_options_over_mcp(mcp_server):
    """The MCP tools are the agent's registry: same schema, same result, same storage."""
    ids = _setup(mcp_server, "mcp-ask")
    good = {
        "question": "How is the pain?",
        "field": "pain_level",
        "options": [{"label": "None", "value": "none"}, {"label": "Mild", "value": "mild"}],
        "allow_free_text": True,
    }
    bad = {"question": "", "field": "x", "options": [{"label": "only"}]}
    _init, tools, (ok, refused) = anyio.run(
        _session_calls,
        mcp_server.url + "/mcp/",
        ids["token"],
        [("ask_user_options", good), ("ask_user_options", bad)],
    )
    listed = {t.name: t for t in tools.tools}
    assert {"ask_user_options", "questionnaire_async", "interactive_form_question"} <= set(listed)
    assert "field" in listed["ask_user_options"].input_schema["properties"]
    assert _payload(ok)["success"] is True and _payload(ok)["field"] == "pain_level"
    body = _payload(refused)
    assert body["success"] is False and body["error_code"] == "INVALID_ARGUMENT"
    assert len(body["errors"]) >= 2  # every problem at once
    stored = mcp_server.json(
        "from chat.models import Message; import json; print(json.dumps([[m.role,"
        " bool(m.metadata.get('ask_user_options'))] for m in Message.objects.filter("
        f"conversation_id={ids['conversation']}).order_by('seq')]))"
    )
    # each call: the tool block and its result; the good one also shows the ask
    assert stored == [
        ["assistant", False],
        ["tool", False],
        ["assistant", True],
        ["assistant", False],
        ["tool", False],
    ]


def test_the_deferred_mcp_proxy_forwards_the_form_and_nothing_else(mcp_server):
    """Spec 003's Claude Code path: a stdio MCP server (run as Claude Code would) that
    offers only interactive_form_question and forwards the raw arguments to /mcp/."""
    import os
    import sys

    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    ids = _setup(mcp_server, "mcp-proxy")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "chat.deferred_mcp_proxy"],
        env={
            **os.environ,
            "MCP_URL": mcp_server.url + "/mcp/",
            "MCP_RUN_TOKEN": ids["token"],
        },
    )

    async def use_it():
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            other = await session.call_tool("questionnaire_async", {})
            result = await session.call_tool("interactive_form_question", FORM)
            return tools, other, result

    tools, other, result = anyio.run(use_it)
    assert [t.name for t in tools.tools] == ["interactive_form_question"]
    assert tools.tools[0].input_schema["properties"]["questions"]
    assert other.is_error and "offers interactive_form_question only" in other.content[0].text
    assert not result.is_error, result.content[0].text
    assert _payload(result)["status"] == "waiting_for_user_response"
    run = mcp_server.json(
        f"from chat.models import Run; import json; r = Run.objects.get(pk={ids['run']}); "
        "print(json.dumps([r.status, r.stop_reason]))"
    )
    assert run == ["finished", "tool_deferred"]


def test_bad_tokens_never_lock_out_a_valid_run_token(mcp_server):
    """Issue 22: 30 bad tokens from an address made every valid token from it 429 on /mcp/
    (behind a NAT or the load balancer, everyone). Last in this file: it spends the
    address's allowance of bad tokens for a minute."""
    ids = _setup(mcp_server, "mcp-nat")
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    accept = {"Accept": "application/json, text/event-stream"}

    def post(token: str) -> httpx.Response:
        headers = {**accept, "Authorization": f"Bearer {token}"}
        return httpx.post(mcp_server.url + "/mcp/", json=body, headers=headers)

    statuses = {post(f"bad-{n}").status_code for n in range(31)}
    assert statuses == {401, 429}
    assert post("bad-again").json()["error"] == "too_many_attempts"
    valid = post(ids["token"])
    assert valid.status_code not in (401, 429), valid.text
