"""The bundled demo server, in process (`builtin:demo`), speaks 2026-07-28: its
questions are input requests in its results, answered by re-issuing the call."""

from __future__ import annotations

import mcp_types as types

from chat.mcphost import client

DEMO = client.Endpoint("demo", "builtin:demo")
RESERVATION = {
    "date": "2026-05-01",
    "party_size": 2,
    "seating": "terrace",
    "dietary": ["vegan", "gluten-free"],
    "newsletter": True,
}


def _ask(tool: str, arguments: dict) -> tuple[str, types.InputRequiredResult]:
    first = client.call_round(DEMO, tool, arguments, seconds=10)
    assert first.revision == "2026-07-28" and first.input is not None
    ((key, _request),) = first.input.input_requests.items()
    return key, first.input


def test_reserve_table_asks_with_a_form():
    key, needed = _ask("reserve_table", {})
    params = needed.input_requests[key].params
    schema = params.requested_schema["properties"]
    assert schema["dietary"]["type"] == "array" and schema["newsletter"]["type"] == "boolean"
    assert schema["seating"]["enum"] == ["indoor", "terrace", "bar"]
    answer = {key: types.ElicitResult(action="accept", content=RESERVATION)}
    done = client.call_round(
        DEMO, "reserve_table", {}, seconds=10, responses=answer,
        request_state=needed.request_state,
    )  # fmt: skip
    assert "for 2 on 2026-05-01 (terrace)" in done.result.content[0].text


def test_verify_email_uses_url_mode():
    key, needed = _ask("verify_email", {"email": "a@example.test"})
    assert needed.input_requests[key].params.mode == "url"
    for action, text in (("accept", "is verified"), ("decline", "was not verified")):
        done = client.call_round(
            DEMO, "verify_email", {"email": "a@example.test"}, seconds=10,
            responses={key: types.ElicitResult(action=action)},
            request_state=needed.request_state,
        )  # fmt: skip
        assert text in done.result.content[0].text
