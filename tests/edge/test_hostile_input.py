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


# --- issue 22: no request may cost seconds, no server may mislead a person ---------------

HUGE_ID = "99999999999999999999"  # past 2^63: SQLite can't even bind it

BAD_IDS = [
    # (what, how it's sent)
    ("superscript two", "²"),
    ("circled one", "①"),
    ("Arabic-Indic three", "٣"),  # int() would read it as 3
    ("past 2^63", HUGE_ID),
    ("negative", "-1"),
]


@pytest.mark.parametrize(("what", "value"), BAD_IDS, ids=[b[0] for b in BAD_IDS])
def test_one_integer_parser_for_every_id_and_cursor(
    client_in, api_token, conversation, what, value
):
    """Issue 22: `live=²` was a 500 on both databases; ids past 2^63 were on SQLite."""
    before = _snapshot()
    c = conversation.pk
    page_gets = [
        (f"/conversations/{c}/fragment", {"live": f"{value}:e"}, {}),
        (f"/conversations/{c}/fragment", {"after": value}, {}),
        (f"/conversations/{c}/events", {"last_event_id": value}, {}),
        (f"/conversations/{c}/events", {}, {"Last-Event-ID": value}),
    ]
    for path, params, headers in page_gets:
        response = client_in.get(path, params, headers=headers)
        assert response.status_code == 400, (path, params, headers, response.status_code)
        assert "whole number" in response.content.decode()
    api_gets = [
        (f"/api/v1/conversations/{c}/events", {"last_event_id": value}, {}),
        (f"/api/v1/conversations/{c}/events", {}, {"Last-Event-ID": value}),
    ]
    for path, params, headers in api_gets:
        auth = {"Authorization": f"Bearer {api_token}"}
        response = client_in.get(path, params, headers={**auth, **headers})
        assert response.status_code == 400 and response.json()["error"] == "invalid_id"
    assert _snapshot() == before


@pytest.mark.parametrize(
    "path",
    [
        f"/conversations/{HUGE_ID}/",
        f"/conversations/{HUGE_ID}/fragment",
        f"/conversations/1/runs/{HUGE_ID}/cancel",
        f"/conversations/1/elicitations/{HUGE_ID}",
        f"/api/v1/conversations/{HUGE_ID}/messages",
        f"/api/v1/kinds/skills/{HUGE_ID}",
    ],
)
def test_ids_past_what_the_database_holds_are_400_not_500(client_in, api_token, path):
    response = client_in.get(path, headers={"Authorization": f"Bearer {api_token}"})
    assert response.status_code == 400
    if "/api/" in path:
        assert response.json()["error"] == "invalid_id"


def test_a_code_block_costs_no_more_than_its_budget(client_in, conversation):
    """Issue 22: ```systemd with "x" and 2,000 spaces took 60 s of CPU to render."""
    import time

    from chat.core.services import message_create

    blocks = [
        "```systemd\nx" + " " * 2000 + "\n```",  # cubic in Pygments
        "```autoit\n" + " " * 5000 + "\n```",
        "```python\n" + " \n" * 5000 + "```",  # quadratic: past its budget, plain
    ]
    message_create(conversation=conversation, role="user", content="show me")
    for block in blocks:
        message_create(conversation=conversation, role="assistant", content="Code:\n\n" + block)
    start = time.process_time()
    page = client_in.get(f"/conversations/{conversation.pk}/")
    assert page.status_code == 200
    assert time.process_time() - start < 1.5  # three worst-case messages, well under 0.5 s each
    assert page.content.count(b'<pre class="highlight">') == 3  # shown, as plain code


def _elicit(conversation, **overrides):
    from tests.support.asking import open_elicitation

    return open_elicitation(conversation, **overrides)


def test_a_server_regex_runs_in_linear_time_and_never_on_a_page_view(
    client_in, conversation, monkeypatch
):
    """Issue 22: a `pattern` with an exponential default froze the server on every view."""
    import time

    from questionnaires.elicitations.services import ElicitationRefused
    from questionnaires.protocol import elicitation_schema

    evil = {"type": "string", "pattern": "^(a+)+$", "default": "a" * 5000 + "b"}
    start = time.process_time()
    with pytest.raises(ElicitationRefused):  # the default doesn't match: refused, visibly
        _elicit(conversation, requested_schema={"type": "object", "properties": {"x": evil}})
    backref = {"type": "string", "pattern": r"(a+)\1"}
    with pytest.raises(ElicitationRefused):  # RE2 can't run it: refused, visibly
        _elicit(conversation, requested_schema={"type": "object", "properties": {"x": backref}})
    assert time.process_time() - start < 0.5
    fine = {"type": "string", "pattern": "^(a+)+$", "default": "aaa"}
    _elicit(conversation, requested_schema={"type": "object", "properties": {"x": fine}})

    def no_regex(*args):
        raise AssertionError("a server's pattern ran on a page view")

    monkeypatch.setattr(elicitation_schema, "pattern_matches", no_regex)
    monkeypatch.setattr(elicitation_schema, "pattern_problem", no_regex)
    page = client_in.get(f"/conversations/{conversation.pk}/").content.decode()
    assert page.count("elic-note") >= 2 and 'value="aaa"' in page


def test_a_url_card_names_the_host_a_browser_opens(client_in, conversation):
    """Issue 22: `https://evil\\@good/` said "Open takes you to good"; a browser opens evil."""
    from questionnaires.elicitations.models import Elicitation
    from questionnaires.elicitations.services import ElicitationRefused

    hostile = [
        "https://evil\\@good/",
        "https://good.example@evil.example/",
        "https://good.example/\u202egnp.exe",
        "http://plain.example/",
    ]
    for url in hostile:
        with pytest.raises(ElicitationRefused):
            _elicit(conversation, mode="url", requested_schema=None, url=url, remote_id="r")
    _elicit(
        conversation, mode="url", requested_schema=None, url="HTTPS://Good.Example/x", remote_id="s"
    )
    page = client_in.get(f"/conversations/{conversation.pk}/").content.decode()
    assert page.count('value="accept"') == 1  # one Open button: the safe link's
    assert '<strong class="elic-host">good.example</strong>/x' in page
    assert "\u202e" not in page and "\\u202e" in page
    assert Elicitation.objects.filter(status="refused").count() == len(hostile)


@pytest.mark.parametrize(
    ("title", "message"),
    [
        ("Пароль", "Sign in"),
        ("パスワード", "Sign in"),
        ("pass\u200bword", "Sign in"),
        ("Passcode", "Sign in"),
        ("Value", "Enter your contraseña below"),
    ],
)
def test_a_secret_is_never_asked_however_it_is_spelled(conversation, title, message):
    from questionnaires.elicitations.services import ElicitationRefused

    schema = {"type": "object", "properties": {"v": {"type": "string", "title": title}}}
    with pytest.raises(ElicitationRefused) as refused:
        _elicit(conversation, requested_schema=schema, message=message)
    assert refused.value.code == "elicitation_secret_field"


@pytest.mark.django_db(transaction=True)  # the stream's access check runs on its own threads
def test_one_users_streams_leave_room_for_everyone_else(settings, api, conversation):
    """Issue 22: one user opened all 5,000 streams; everyone else got 503."""
    settings.SSE_MAX_STREAMS_PER_USER = 0
    response = api.get(f"/api/v1/conversations/{conversation.pk}/events")
    assert response.status_code == 429 and response["Retry-After"]
    assert response.json()["error"] == "too_many_streams"


def test_bad_tokens_never_lock_out_a_valid_token_from_the_same_address(
    client, api_token, conversation, settings
):
    """Issue 22: 30 bad tokens from an address (a NAT, the load balancer) made every valid
    token from it 429 on the API and /mcp/."""
    settings.BAD_TOKEN_LIMIT_PER_MINUTE = 3
    path = f"/api/v1/conversations/{conversation.pk}/messages"
    codes = [
        client.get(path, headers={"Authorization": f"Bearer bad-{n}"}).status_code for n in range(5)
    ]
    assert codes == [401, 401, 401, 429, 429]
    assert client.get(path, headers={"Authorization": f"Bearer {api_token}"}).status_code == 200
    assert (
        client.get("/api/v1/kinds/skills", headers={"Authorization": "Bearer x"}).status_code == 429
    )
    skills = client.get("/api/v1/kinds/skills", headers={"Authorization": f"Bearer {api_token}"})
    assert skills.status_code == 200


def test_mcp_server_credentials_are_encrypted_in_the_database(settings, tmp_path):
    """Issue 22: a database dump handed out every MCP server's headers and token."""
    from django.db import connection

    from chat.mcphost import sealed
    from chat.mcphost.models import McpServer

    settings.MCP_SECRETS_KEY, settings.MCP_SECRETS_KEY_FILE = "", str(tmp_path / "key")
    sealed.fernet(reload=True)
    try:
        server = McpServer.objects.create(
            name="s", url="https://x.example/", headers={"X-Api": "h-secret"}, bearer_token="t-1"
        )
        with connection.cursor() as cursor:
            cursor.execute("SELECT * FROM chat_mcpserver WHERE id = %s", [server.pk])
            row = " ".join(str(value) for value in cursor.fetchone())
        assert "h-secret" not in row and "t-1" not in row
        assert McpServer.objects.get(pk=server.pk).request_headers()["X-Api"] == "h-secret"
    finally:
        sealed._keys = None


def test_skill_storage_is_bounded_and_a_replaced_archive_deleted(
    client, api_token, settings, tmp_path, django_capture_on_commit_callbacks
):
    """Issue 22: every PUT left the previous archive (up to 10 MiB) on disk."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    from chat.skills.models import Skill

    settings.MEDIA_ROOT = tmp_path
    settings.SKILL_MAX_BYTES_PER_USER = 5000
    auth = {"Authorization": f"Bearer {api_token}"}
    archive = b"PK\x03\x04" + b"0" * 1000
    data = {"name": "s", "skill_md": "# S\n", "archive": SimpleUploadedFile("a.zip", archive)}
    with django_capture_on_commit_callbacks(execute=True):
        skill = client.post("/api/v1/kinds/skills/upload", data, headers=auth).json()
        for n in range(3):
            from django.test.client import BOUNDARY, MULTIPART_CONTENT, encode_multipart

            body = encode_multipart(BOUNDARY, {"archive": SimpleUploadedFile(f"{n}.zip", archive)})
            response = client.put(
                f"/api/v1/kinds/skills/{skill['id']}",
                body,
                content_type=MULTIPART_CONTENT,
                headers=auth,
            )
            assert response.status_code == 200
    assert len(list((tmp_path / "skills").iterdir())) == 1
    big = SimpleUploadedFile("big.zip", b"PK\x03\x04" + b"0" * 5000)
    refused = client.post(
        "/api/v1/kinds/skills/upload", {"name": "t", "skill_md": "x", "archive": big}, headers=auth
    )
    assert refused.status_code == 413 and refused.json()["error"] == "skill_storage_full"
    assert Skill.objects.count() == 1 and len(list((tmp_path / "skills").iterdir())) == 1


def test_a_server_with_3000_tools_adds_at_most_128_to_a_turn(monkeypatch):
    """Issue 22: 3,000 tools went to the model (12.8 MB) on every turn of every user."""
    from chat.agent.tools import TOOLS
    from chat.mcphost import tools
    from chat.mcphost.models import McpServer

    McpServer.objects.create(name="many", url="builtin:demo", agents=["openai"])
    entries = [{"name": f"t{n}", "description": "d", "inputSchema": {}} for n in range(3000)]
    monkeypatch.setattr(tools, "_listing", lambda server: entries)
    assert len(TOOLS) + len(tools.mcp_tools("openai").tools) == 128
