"""Hostile and careless input on every path: never a 5xx, always a stable 4xx code where
a JSON client is talking, and nothing stored changes (runs on SQLite and PostgreSQL)."""

from __future__ import annotations

import json

import pytest

from chat.core.models import Conversation, Event, Message, Run
from questionnaires.models import InteractiveForm, StructuredAnswer, Submission
from tests.support.asking import SPEC_PAYLOAD, TRIP

pytestmark = pytest.mark.django_db

DEEP = "[" * 5000 + "]" * 5000
DEEP_OBJECT = '{"a":' * 3000 + "1" + "}" * 3000


def _snapshot() -> tuple[int, ...]:
    return tuple(
        model.objects.count()
        for model in (
            Conversation,
            Message,
            Run,
            Event,
            Submission,
            StructuredAnswer,
            InteractiveForm,
        )
    )


def _raw_post(client, path, body: bytes, content_type: str, headers=None):
    return client.generic("POST", path, body, content_type=content_type, headers=headers or {})


API_CASES = [
    # (name, path template, raw body, content type, expected status, expected code)
    ("deep array", "messages", DEEP.encode(), "application/json", 400, None),
    ("deep object", "messages", DEEP_OBJECT.encode(), "application/json", 400, None),
    (
        "nested 40 levels",
        "messages",
        json.dumps(
            {
                "role": "user",
                "content": "x",
                "extra": [
                    [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]
                ],
            }
        ).encode(),
        "application/json",
        400,
        "json_too_deep",
    ),
    (
        "lone surrogate",
        "messages",
        b'{"role": "user", "content": "a\\ud800b"}',
        "application/json",
        400,
        "text_invalid",
    ),
    (
        "NUL in content",
        "messages",
        b'{"role": "user", "content": "a\\u0000b"}',
        "application/json",
        400,
        "text_invalid",
    ),
    (
        "NUL in a key",
        "messages",
        b'{"role": "user", "content": "x", "a\\u0000": 1}',
        "application/json",
        400,
        "text_invalid",
    ),
    (
        "not UTF-8",
        "messages",
        b'{"role": "user", "content": "\xff\xfe"}',
        "application/json",
        400,
        "invalid_json",
    ),
    (
        "tool_call_id too long",
        "messages",
        json.dumps({"role": "tool", "content": "x", "tool_call_id": "t" * 300}).encode(),
        "application/json",
        400,
        "invalid_field",
    ),
    (
        "3 MB body",
        "messages",
        b'{"role": "user", "content": "' + b"x" * 3_000_000 + b'"}',
        "application/json",
        413,
        "request_too_large",
    ),
    (
        "multipart without boundary",
        "messages",
        b"--x\r\n",
        "multipart/form-data",
        400,
        "invalid_body",
    ),
    (
        "asks: deep payload",
        "asks",
        json.dumps(
            {
                "payload": {
                    "q": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]
                }
            }
        ).encode(),
        "application/json",
        400,
        "json_too_deep",
    ),
    (
        "answers: NUL text",
        "answers",
        b'{"type": "structured_answer", "field": "f", "turn_id": "t", "raw_text": "\\u0000"}',
        "application/json",
        400,
        "text_invalid",
    ),
]


@pytest.mark.parametrize(
    ("name", "target", "body", "content_type", "status", "code"),
    API_CASES,
    ids=[c[0] for c in API_CASES],
)
def test_api_refuses_hostile_bodies_with_json(
    client, api_token, user, name, target, body, content_type, status, code
):
    from chat.core.services import conversation_create

    conversation = conversation_create(owner=user, agent="external")
    before = _snapshot()
    response = _raw_post(
        client,
        f"/api/v1/conversations/{conversation.pk}/{target}",
        body,
        content_type,
        headers={"Authorization": f"Bearer {api_token}"},
    )
    assert response.status_code == status, response.content[:300]
    payload = response.json()
    assert set(payload) >= {"error", "message"}
    if code:
        assert payload["error"] == code
    assert _snapshot() == before


def test_api_conversation_title_with_nul_is_refused(api):
    before = _snapshot()
    response = api.post("/api/v1/conversations/", {"title": "a\u0000b"})
    assert response.status_code == 400 and response.json()["error"] == "text_invalid"
    assert _snapshot() == before


@pytest.fixture
def card(conversation):
    from chat.core.services import message_create

    message_create(conversation=conversation, role="user", content="Plan my trip")
    return message_create(conversation=conversation, role="assistant", content=TRIP)


PAGE_POSTS = [
    ("composer", "conversations/{c}/messages", {"content": "hi\x00there"}),
    (
        "card other text",
        "conversations/{c}/messages/{m}/answer",
        {"questionnaire_id": "{m}_q1", "q1": "__questionnaire_other__", "other-q1": "\x00"},
    ),
    ("form answer", "conversations/{c}/forms/answer", {"answer-x": "\x00"}),
    ("slot edit", "conversations/{c}/state/knee_side", {"value": "\x00"}),
    ("new conversation title", "conversations/new", {"title": "\x00", "agent": "echo"}),
    ("playground", "questionnaires/playground/", {"content": "```questionnaire\n\x00"}),
]


@pytest.mark.parametrize(("name", "path", "data"), PAGE_POSTS, ids=[p[0] for p in PAGE_POSTS])
def test_pages_refuse_nul_bytes_and_store_nothing(client_in, conversation, card, name, path, data):
    url = "/" + path.format(c=conversation.pk, m=card.pk)
    fields = {
        k.format(m=card.pk): v.format(m=card.pk) if "{m}" in v else v for k, v in data.items()
    }
    before = _snapshot()
    response = client_in.post(url, fields)
    assert response.status_code == 400
    assert _snapshot() == before


def test_page_post_too_large_is_413(client_in, conversation, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    before = _snapshot()
    response = client_in.post(f"/conversations/{conversation.pk}/messages", {"content": "x" * 5000})
    assert response.status_code == 413
    assert _snapshot() == before


def test_a_broken_tool_result_never_breaks_the_page(client_in, admin_client, conversation):
    """A stored tool result nested 5,000 levels deep used to 500 every load, forever."""
    from chat.core.services import message_create

    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "questionnaire_async", "arguments": "{}"},
    }
    message_create(conversation=conversation, role="user", content="hi")
    message_create(conversation=conversation, role="assistant", content="Before", tool_calls=[call])
    message_create(conversation=conversation, role="tool", content=DEEP, tool_call_id="c1")
    message_create(conversation=conversation, role="assistant", content="After **still here**")
    page = client_in.get(f"/conversations/{conversation.pk}/")
    assert page.status_code == 200
    assert b"<strong>still here</strong>" in page.content
    fragment = client_in.get(
        f"/conversations/{conversation.pk}/fragment?after=0", headers={"HX-Request": "true"}
    )
    assert fragment.status_code == 200
    assert (
        admin_client.get(f"/admin/chat/conversation/{conversation.pk}/change/").status_code == 200
    )


def test_a_part_that_fails_to_render_shows_as_its_error_card(client_in, conversation, monkeypatch):
    from chat.core.services import message_create
    from questionnaires.inline import render

    message_create(conversation=conversation, role="user", content="hi")
    message_create(conversation=conversation, role="assistant", content=TRIP)

    def broken(*args, **kwargs):
        raise RecursionError("boom")

    monkeypatch.setattr(render, "_card_html", broken)
    page = client_in.get(f"/conversations/{conversation.pk}/")
    assert page.status_code == 200
    body = page.content.decode()
    assert "qrender-error" in body and "Trip plan" in body  # the raw text is kept
    assert "Thanks!" in body  # the Markdown after the card still renders


def test_ask_answer_with_nul_free_text_over_the_page(client_in, user):
    from chat.core.services import conversation_create
    from questionnaires.asks.services import ask_create

    conversation = conversation_create(owner=user, agent="external")
    ask = ask_create(conversation=conversation, payload=SPEC_PAYLOAD, turn_id="t1")
    before = _snapshot()
    response = client_in.post(
        f"/conversations/{conversation.pk}/asks/{ask.pk}/answer",
        {"action": "free_text", "text": "left\x00"},
    )
    assert response.status_code == 400
    assert _snapshot() == before


def test_mcp_tool_arguments_that_cant_be_stored_are_refused(conversation):
    from chat.core.identity import RunIdentity
    from chat.edge.mcp import tool_execute

    run = Run.objects.create(conversation=conversation, status="running")
    identity = RunIdentity(conversation.pk, run.pk, conversation.owner_id)
    before = _snapshot()
    bad = {"questions": [{"type": "free_text", "text": "a\u0000b"}]}
    result = tool_execute(identity, "questionnaire_async", bad)
    assert result["success"] is False and result["error_code"] == "text_invalid"
    huge = {"questions": [{"type": "free_text", "text": "x" * 300_000}]}
    assert (
        tool_execute(identity, "questionnaire_async", huge)["error_code"] == "arguments_too_large"
    )
    assert _snapshot() == before
