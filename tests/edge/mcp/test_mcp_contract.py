"""The app's own MCP server (`/mcp/`) as a contract, checked with the official Python and
TypeScript SDK clients: described input schemas, output schemas that the results match
(both SDKs validate `structuredContent` against `outputSchema`), refusals flagged
`isError`, the product's version, and a form result that says how to answer it."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

import anyio
import httpx
import pytest

from tests.edge.mcp.test_mcp_endpoint import FORM, SETUP, _session_calls

TS_CLIENT = "client.mjs"
GOOD_ASK = {
    "question": "How is the pain?",
    "field": "pain_level",
    "options": [{"label": "None", "value": "none"}, {"label": "Mild", "value": "mild"}],
}
BAD_ASK = {"question": "", "field": "x", "options": [{"label": "only"}]}
GOOD_QUESTIONNAIRE = {
    "title": "Quick",
    "questions": [{"type": "single_choice", "text": "Tea?", "options": ["Yes", "No"]}],
}
# A conversation, a running external run with its MCP token, and an API token (one shell).
SETUP_WITH_API_TOKEN = SETUP.replace(
    "print(json.dumps({{",
    "from chat.core.services import api_token_create\n"
    'print(json.dumps({{"api_token": api_token_create(user=user)[1], ',
)
BAD_FORM = {"questions": [{"question": "", "input_type": "choice"}]}


def schema_gaps(schema: Any, path: str = "$") -> list[str]:
    """Every property (at any depth) without a description or a type."""
    gaps: list[str] = []
    if not isinstance(schema, dict):
        return gaps
    for name, prop in (schema.get("properties") or {}).items():
        where = f"{path}.{name}"
        if not prop.get("description"):
            gaps.append(f"{where}: no description")
        if not any(k in prop for k in ("type", "anyOf", "oneOf", "enum", "const")):
            gaps.append(f"{where}: no type")
        gaps += schema_gaps(prop, where)
    if isinstance(schema.get("items"), dict):
        gaps += schema_gaps(schema["items"], path + "[]")
    for key in ("anyOf", "oneOf"):
        for i, branch in enumerate(schema.get(key) or []):
            gaps += schema_gaps(branch, f"{path}|{i}")
    return gaps


def test_every_tool_schema_is_described_and_typed():
    """What the model and every MCP client read: no property without a description or a
    type (the question `default` included), and a result schema for each tool."""
    from chat.agent.tools import TOOLS

    for tool in TOOLS:
        assert schema_gaps(tool.parameters) == [], tool.name
        assert tool.output_schema["type"] == "object", tool.name
        assert schema_gaps(tool.output_schema) == [], tool.name


@pytest.mark.django_db
def test_every_result_matches_its_tools_output_schema(conversation):
    """Successes and refusals alike, as the tools return them (no server needed)."""
    import jsonschema

    from chat.agent.tools import TOOLS_BY_NAME, ToolContext

    context = ToolContext(lang="en", extra={"conversation_id": conversation.pk})
    cases = [
        ("ask_user_options", GOOD_ASK, True),
        ("ask_user_options", BAD_ASK, False),
        ("questionnaire_async", GOOD_QUESTIONNAIRE, True),
        ("questionnaire_async", {"questions": []}, False),
        ("interactive_form_question", FORM, True),
        ("interactive_form_question", BAD_FORM, False),
    ]
    for name, arguments, success in cases:
        tool = TOOLS_BY_NAME[name]
        result = tool.execute(arguments, context)
        assert result["success"] is success, (name, result)
        jsonschema.validate(result, tool.output_schema)


@pytest.mark.e2e
def test_the_python_sdk_client_sees_the_contract(mcp_server):
    from chat.core.version import product_version

    ids = mcp_server.json(SETUP_WITH_API_TOKEN.format(user="mcp-contract-py"))
    calls = [
        ("ask_user_options", BAD_ASK),
        ("ask_user_options", GOOD_ASK),
        ("questionnaire_async", GOOD_QUESTIONNAIRE),
        ("no_such_tool", {}),
        ("interactive_form_question", FORM),
    ]
    init, tools, results = anyio.run(_session_calls, mcp_server.url + "/mcp/", ids["token"], calls)
    assert init.server_info.version == product_version() != ""
    for tool in tools.tools:
        assert schema_gaps(tool.input_schema) == [], tool.name
        assert tool.output_schema and schema_gaps(tool.output_schema) == [], tool.name
    refused, asked, questionnaire, unknown, form = results
    # a refused argument is an error result, with every problem in structuredContent
    assert refused.is_error is True
    assert refused.structured_content["error_code"] == "INVALID_ARGUMENT"
    assert len(refused.structured_content["errors"]) >= 2
    assert unknown.is_error is True and unknown.structured_content["error_code"] == "unknown_tool"
    # successes (the SDK validated them against each tool's outputSchema)
    assert asked.is_error is False and asked.structured_content["field"] == "pain_level"
    assert questionnaire.is_error is False and questionnaire.structured_content["should_end"]
    assert form.is_error is False
    _answer_the_form_through_the_api(mcp_server, ids, form.structured_content)


def _answer_the_form_through_the_api(server, ids: dict[str, Any], result: dict[str, Any]):
    """The deferred result names the call and the conversation: enough to answer."""
    assert result["conversation_id"] == ids["conversation"]
    token = ids["api_token"]
    api = httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {token}"})
    answer = {
        "type": "interactive_form_question",
        "tool_use_id": result["tool_use_id"],
        "answers": {"size": "L"},
    }
    response = api.post(
        f"/api/v1/conversations/{result['conversation_id']}/messages",
        json={"role": "user", "interactive_form_answer": answer},
    )
    assert response.status_code == 201, response.text
    messages = api.get(f"/api/v1/conversations/{ids['conversation']}/messages").json()
    tool = next(
        m
        for m in messages["messages"]
        if m["role"] == "tool" and m["tool_call_id"] == result["tool_use_id"]
    )
    assert json.loads(tool["content"])["answers"][0]["value"] == "L"


@pytest.mark.e2e
@pytest.mark.parametrize("major", ["v1", "v2"])
def test_the_typescript_sdk_client_sees_the_contract(mcp_server, major):
    """@modelcontextprotocol/sdk's Client (v1, 2025-11-25) and @modelcontextprotocol/client
    (v2, 2026-07-28) validate every successful structuredContent against the tool's
    outputSchema (Ajv) and throw when it doesn't match."""
    from chat.core.version import product_version
    from tests.support.mcp_servers import TS_SERVER, TS_SERVER_V2, ts_folder, ts_server_missing

    folder = TS_SERVER if major == "v1" else TS_SERVER_V2
    if (reason := ts_server_missing(folder)) is not None:
        pytest.skip(reason.replace("server", "client"))
    ids = mcp_server.json(SETUP_WITH_API_TOKEN.format(user=f"mcp-contract-ts-{major}"))
    calls = [
        ["ask_user_options", BAD_ASK],
        ["ask_user_options", GOOD_ASK],
        ["questionnaire_async", GOOD_QUESTIONNAIRE],
        ["interactive_form_question", FORM],
    ]
    done = subprocess.run(
        ["node", TS_CLIENT, mcp_server.url + "/mcp/", ids["token"], json.dumps(calls)],
        cwd=ts_folder(folder),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    if major == "v2":
        assert seen["protocolVersion"] == "2026-07-28"
    assert seen["serverVersion"] == {
        "name": "inline-questionnaire-chat",
        "version": product_version(),
    }
    for tool in seen["tools"]:
        assert schema_gaps(tool["inputSchema"]) == [], tool["name"]
        assert tool["outputSchema"]["type"] == "object", tool["name"]
    refused, asked, questionnaire, form = seen["results"]
    assert "thrown" not in refused and refused["isError"] is True
    assert refused["structuredContent"]["error_code"] == "INVALID_ARGUMENT"
    for result in (asked, questionnaire, form):
        assert "thrown" not in result, result  # it matched the outputSchema
        assert result["isError"] is False
    assert form["structuredContent"]["tool_use_id"].startswith("mcp_")
    _answer_the_form_through_the_api(mcp_server, ids, form["structuredContent"])


@pytest.mark.e2e
def test_the_mcp_inspector_cli_lists_the_tools_and_calls_one(mcp_server, tmp_path):
    """The MCP Inspector (@modelcontextprotocol/inspector, --cli): `tools/list --strict`
    finds no tool-schema portability problem, and `tools/call` gets a result matching
    the tool's outputSchema."""
    import jsonschema

    from chat.agent.tools import TOOLS_BY_NAME
    from tests.interop.conftest import node_tools

    inspector = node_tools("mcp_inspector")
    ids = mcp_server.json(SETUP.format(user="mcp-contract-inspector"))

    def inspect(*args: str) -> Any:
        done = subprocess.run(
            ["node", "node_modules/.bin/mcp-inspector", "--cli", mcp_server.url + "/mcp/"]
            + ["--transport", "http", "--header", f"Authorization: Bearer {ids['token']}", *args],
            cwd=inspector,
            env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)},  # its own catalog
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-2000:])
        return json.loads(done.stdout)

    listed = inspect("--method", "tools/list", "--strict")
    names = {tool["name"] for tool in listed["tools"]}
    assert {"ask_user_options", "questionnaire_async", "interactive_form_question"} <= names
    for tool in listed["tools"]:
        assert schema_gaps(tool["inputSchema"]) == [], tool["name"]
    called = inspect(
        "--method", "tools/call", "--tool-name", "questionnaire_async",
        "--tool-arg", "title=Quick",
        "--tool-arg", 'questions=[{"type": "single_choice", "text": "Tea?", "options": ["Yes", "No"]}]',
    )  # fmt: skip
    assert called.get("isError") is not True, called
    jsonschema.validate(
        called["structuredContent"], TOOLS_BY_NAME["questionnaire_async"].output_schema
    )
