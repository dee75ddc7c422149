"""The JSON API as a contract: its OpenAPI 3.1 document, the docs page, and schemathesis
against the live app (a real uvicorn server on PostgreSQL) — no 5xx, every response as
documented (status, content type, body schema)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

import pytest

pytestmark = pytest.mark.django_db

# The operations DESIGN §6 names, each as the document must list it.
CONTRACT = {
    ("post", "/api/v1/conversations/"),
    ("get", "/api/v1/conversations/{conversation_id}/messages"),
    ("post", "/api/v1/conversations/{conversation_id}/messages"),
    ("get", "/api/v1/conversations/{conversation_id}/events"),
    ("post", "/api/v1/conversations/{conversation_id}/asks"),
    ("post", "/api/v1/conversations/{conversation_id}/answers"),
    ("post", "/api/v1/conversations/{conversation_id}/runs"),
    ("post", "/api/v1/conversations/{conversation_id}/runs/{run_id}/cancel"),
    ("get", "/api/v1/kinds/skills"),
    ("post", "/api/v1/kinds/skills/upload"),
    ("put", "/api/v1/kinds/skills/{skill_id}"),
}


def _document(client) -> dict[str, Any]:
    response = client.get("/api/v1/openapi.json")
    assert response.status_code == 200
    return response.json()


def test_the_openapi_document_describes_every_operation_and_refusal(client):
    document = _document(client)
    assert document["openapi"].startswith("3.1")
    assert document["info"]["version"] and document["info"]["version"] != "1.0.0"
    listed = {(method, path) for path, item in document["paths"].items() for method in item}
    assert listed == CONTRACT
    schemes = document["components"]["securitySchemes"]
    assert {s["scheme"] for s in schemes.values()} == {"bearer"}
    error = document["components"]["schemas"]["ErrorOut"]
    assert set(error["required"]) == {"error", "message"}
    for path, item in document["paths"].items():
        for method, operation in item.items():
            assert operation["security"], (method, path)
            responses = operation["responses"]
            for status in ("400", "401", "404", "405", "429"):
                refusal = responses[status]["content"]["application/json"]["schema"]
                assert refusal == {"$ref": "#/components/schemas/ErrorOut"}, (method, path)
    # the event stream is documented as what it is
    stream = document["paths"]["/api/v1/conversations/{conversation_id}/events"]["get"]
    assert set(stream["responses"]["200"]["content"]) == {"text/event-stream"}
    assert {p["name"] for p in stream["parameters"]} >= {"last_event_id", "Last-Event-ID"}
    # request bodies have schemas, with the stable names of the contract
    message = document["components"]["schemas"]["MessageIn"]
    assert set(message["properties"]) >= {
        "role",
        "content",
        "tool_calls",
        "tool_call_id",
        "readonly",
        "interactive_form_answer",
    }
    assert message["required"] == ["role"]
    upload = document["paths"]["/api/v1/kinds/skills/upload"]["post"]["requestBody"]
    assert set(upload["content"]) == {"multipart/form-data", "application/json"}


def test_the_docs_page_loads_only_this_apps_files(client):
    """Swagger UI from django-ninja's bundled static files: no CDN, no inline script,
    so it runs under the app's CSP (tests/e2e/test_api_docs.py sees it render)."""
    response = client.get("/api/v1/docs")
    assert response.status_code == 200
    html = response.content.decode()
    sources = re.findall(r'<(?:script|link|img)\b[^>]*(?:src|href)="([^"]+)"', html)
    assert sources and all(s.startswith("/static/") for s in sources), sources
    assert "/static/ninja/swagger-ui-bundle.js" in sources
    assert not re.search(r"<script(?![^>]*\bsrc=)(?![^>]*application/json)[^>]*>", html)
    csp = response["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "cdn" not in csp
    from django.contrib.staticfiles import finders

    assert finders.find("ninja/swagger-ui-bundle.js")
    assert client.get("/api/v1/openapi.json")["Content-Type"].startswith("application/json")


def test_the_docs_page_has_a_way_back_to_the_chat(client):
    html = client.get("/api/v1/docs").content.decode()
    back = re.search(r'<a class="docs-back" href="([^"]+)"[^>]*>([^<]+)</a>', html)
    assert back and back.group(1) == "/" and back.group(2) == "← Back to the chat"
    html = client.get("/api/v1/docs", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "← 返回聊天" in html and 'lang="zh-hans"' in html


# --- schemathesis against the live app (the PostgreSQL pass of CI) --------------------

SCHEMATHESIS_EXAMPLES = int(os.environ.get("SCHEMATHESIS_EXAMPLES", "25"))


def _postgres_or_skip() -> None:
    if not os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")):
        if os.environ.get("REQUIRE_SERVICES") == "1":
            pytest.fail("REQUIRE_SERVICES=1 but DATABASE_URL does not point at PostgreSQL")
        pytest.skip(
            "schemathesis runs against a live server on PostgreSQL (CI's second pass): "
            "DATABASE_URL does not point at PostgreSQL"
        )


@pytest.fixture
def live_api(tmp_path, transactional_db, django_user_model) -> Iterator[dict[str, Any]]:
    """A real server (uvicorn, `manage.py serve`) on this test's PostgreSQL database, a
    user with an API token and a conversation of theirs."""
    _postgres_or_skip()
    from django.db import connection

    from chat.core.services import api_token_create, conversation_create
    from tests.support.liveserver import LiveServer

    user = django_user_model.objects.create_user("schemathesis")
    token = api_token_create(user=user)[1]
    mine = conversation_create(owner=user, title="Contract", agent="external")
    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    url = f"postgres://{auth}@{db['HOST']}:{db['PORT'] or 5432}/{db['NAME']}"
    server = LiveServer(
        tmp_path,
        database_url=url,
        fresh_database=False,
        redis_url=os.environ.get("REDIS_URL"),
        settings_module="tests.support.settings_fast",
        env={"BAD_TOKEN_LIMIT_PER_MINUTE": "100000"},
    )
    server.start(migrate=False)
    try:
        yield {"url": server.url, "token": token, "conversation": mine.pk}
    finally:
        server.stop()


def _fuzz(strategy, check) -> None:
    """`check` on `SCHEMATHESIS_EXAMPLES` cases drawn from `strategy` (reproducibly)."""
    from hypothesis import HealthCheck, given, settings

    @given(case=strategy)
    @settings(
        max_examples=SCHEMATHESIS_EXAMPLES,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    def run(case) -> None:
        check(case)

    run()


@pytest.mark.postgres
def test_schemathesis_finds_no_5xx_and_no_undocumented_response(live_api):
    """Every operation but the never-ending event stream, with a bounded number of
    generated requests each — requests that fit the schema, the same aimed at a
    conversation the token's user owns (so bodies reach the services, not just a 404),
    and requests that break it (wrong types, missing fields, bad ids): never a 5xx, and
    every response's status, content type and body as the document says."""
    import schemathesis
    from hypothesis import strategies as st
    from schemathesis import GenerationMode
    from schemathesis.checks import not_a_server_error
    from schemathesis.specs.openapi.checks import (
        content_type_conformance,
        response_schema_conformance,
        status_code_conformance,
    )

    schema = schemathesis.openapi.from_url(live_api["url"] + "/api/v1/openapi.json")
    headers = {"Authorization": f"Bearer {live_api['token']}"}
    checks = [
        not_a_server_error,
        status_code_conformance,
        content_type_conformance,
        response_schema_conformance,
    ]
    failures: list[str] = []
    statuses: dict[str, set[int]] = {}
    for result in schema.get_all_operations():
        operation = result.ok()
        if operation.path.endswith("/events"):
            continue  # a stream that never ends; its refusals: tests/edge/test_sse*.py
        name = f"{operation.method.upper()} {operation.path}"
        statuses[name] = set()
        strategies = [
            operation.as_strategy(),
            operation.as_strategy(GenerationMode.NEGATIVE),
        ]
        if "{conversation_id}" in operation.path:
            owned = {"conversation_id": live_api["conversation"]}
            strategies.append(operation.as_strategy(path_parameters=owned))

        def check(case, name=name) -> None:
            response = case.call(headers=headers, timeout=30)
            statuses[name].add(response.status_code)
            try:
                case.validate_response(response, checks=checks, headers=headers)
            except Exception as failure:
                failures.append(f"{name}: {failure}")
                raise

        try:
            _fuzz(st.one_of(*strategies), check)
        except Exception as error:  # every operation's failures are reported below
            if not any(f.startswith(name + ":") for f in failures):
                failures.append(f"{name}: {error!r}")
    assert not failures, "\n\n".join(failures[:5])
    assert set(statuses) == {f"{m.upper()} {p}" for m, p in CONTRACT} - {
        "GET /api/v1/conversations/{conversation_id}/events"
    }
    # the generated requests reached the services: each operation succeeded at least once
    # or was refused by them (not only 404s)
    assert all(codes - {404} for codes in statuses.values()), statuses


# --- what the schemas refuse, and how (pass 1: the Django test client) ------------------

DEEP = "[" * 5000 + "]" * 5000
BAD_INPUTS = [
    # (name, method, path, body, content type, status, code)
    ("empty body: no role", "post", "messages", "", "application/json", 400, "invalid_json"),
    ("an array", "post", "messages", "[1]", "application/json", 400, "invalid_json"),
    ("not JSON", "post", "messages", "{role", "application/json", 400, "invalid_json"),
    ("deep JSON", "post", "messages", '{"role": ' + DEEP + "}", "application/json", 400, None),
    ("NUL", "post", "messages", '{"role":"user","content":"a\\u0000"}', "application/json", 400,
     "text_invalid"),
    ("a lone surrogate", "post", "messages", '{"role":"user","content":"\\ud800"}',
     "application/json", 400, "text_invalid"),
    ("role a number", "post", "messages", '{"role": 1}', "application/json", 400, "invalid_role"),
    ("readonly a string", "post", "messages", '{"role":"tool","readonly":"true"}',
     "application/json", 400, "invalid_field"),
    ("content a list", "post", "messages", '{"role":"assistant","content":["x"]}',
     "application/json", 400, "invalid_field"),
    ("tool_calls of strings", "post", "messages", '{"role":"assistant","tool_calls":["x"]}',
     "application/json", 400, "invalid_field"),
    ("form answer a string", "post", "messages", '{"role":"user","interactive_form_answer":"x"}',
     "application/json", 400, "invalid_field"),
    ("a form post", "post", "messages", "role=user&content=hi",
     "application/x-www-form-urlencoded", 400, "invalid_json"),
    ("agent unknown", "post", "conversations", '{"agent": "skynet"}', "application/json", 400,
     "agent_invalid"),
    ("title a number", "post", "conversations", '{"title": 5}', "application/json", 400,
     "invalid_field"),
    ("ask payload a list", "post", "asks", '{"payload": []}', "application/json", 400,
     "ask_invalid"),
    ("ask text a number", "post", "asks", '{"payload": {}, "text": 5}', "application/json", 400,
     "ask_text_invalid"),
    ("answer source unknown", "post", "answers", '{"field": "f", "source": "x"}',
     "application/json", 400, "answer_source_invalid"),
    ("answer without field", "post", "answers", "{}", "application/json", 400,
     "answer_field_required"),
    ("answer text a number", "post", "answers", '{"field": "f", "raw_text": 1}',
     "application/json", 400, "answer_text_invalid"),
    ("GET where only POST", "get", "conversations", None, None, 405, "method_not_allowed"),
    ("PATCH a message list", "patch", "messages", "{}", "application/json", 405,
     "method_not_allowed"),
]  # fmt: skip
TARGETS = {
    "messages": "/api/v1/conversations/{c}/messages",
    "conversations": "/api/v1/conversations/",
    "asks": "/api/v1/conversations/{c}/asks",
    "answers": "/api/v1/conversations/{c}/answers",
}


@pytest.mark.parametrize(
    ("name", "method", "target", "body", "content_type", "status", "code"),
    BAD_INPUTS,
    ids=[case[0] for case in BAD_INPUTS],
)
def test_every_bad_input_is_a_4xx_with_a_stable_code_and_stores_nothing(
    client, api_token, conversation, name, method, target, body, content_type, status, code
):
    from chat.core.models import Conversation, Message

    before = (Conversation.objects.count(), Message.objects.count())
    path = TARGETS[target].format(c=conversation.pk)
    kwargs = {"headers": {"Authorization": f"Bearer {api_token}"}}
    if body is not None:
        kwargs.update(data=body, content_type=content_type)
    response = getattr(client, method)(path, **kwargs)
    assert response.status_code == status, response.content[:300]
    payload = response.json()
    assert payload["message"] and set(payload) <= {"error", "message", "details"}
    if code:
        assert payload["error"] == code
    assert (Conversation.objects.count(), Message.objects.count()) == before


def test_a_refusal_lists_every_problem_in_the_callers_language(api, conversation):
    body = {"role": "assistant", "content": 5, "readonly": "no", "tool_call_id": "x" * 201}
    response = api.post(
        f"/api/v1/conversations/{conversation.pk}/messages", body, HTTP_ACCEPT_LANGUAGE="zh-hans"
    )
    assert response.status_code == 400
    errors = response.json()["details"]["errors"]
    assert {e["path"] for e in errors} == {"$.content", "$.readonly", "$.tool_call_id"}
    assert all(set(e) == {"code", "path", "message"} for e in errors)
    assert "字符串" in response.json()["message"]  # “content” must be a string, in Chinese


def test_a_multipart_body_where_json_is_expected_is_415(client, api_token, conversation):
    response = client.post(
        f"/api/v1/conversations/{conversation.pk}/messages",
        {"role": "user", "content": "hi"},
        headers={"Authorization": f"Bearer {api_token}"},
    )
    assert response.status_code == 415 and response.json()["error"] == "unsupported_media_type"


def test_nul_in_a_query_parameter_is_refused_not_sent_to_the_database(client, api_token):
    response = client.get(
        "/api/v1/kinds/skills", {"name": "a\x00b"}, headers={"Authorization": f"Bearer {api_token}"}
    )
    assert response.status_code == 400
    assert response.json()["error"] == "text_invalid"
    assert response.json()["details"]["path"] == "query.name"


def test_unknown_api_urls_and_methods_answer_in_the_error_shape(client, api_token):
    auth = {"Authorization": f"Bearer {api_token}"}
    missing = client.get("/api/v1/no-such-thing", headers=auth)
    assert missing.status_code == 404 and missing.json()["error"] == "not_found"
    refused = client.delete("/api/v1/conversations/", headers=auth)
    assert refused.status_code == 405 and refused.json()["error"] == "method_not_allowed"
    assert refused["Allow"] == "POST"
    # an empty body creates an untitled external conversation, as `{}` does
    created = client.post("/api/v1/conversations/", "", "application/json", headers=auth)
    assert created.status_code == 201


def test_the_api_event_stream_keeps_its_asgi_fast_path():
    """The API stream is a django-ninja operation now: `chat.asgi` still serves it
    without Django's request cycle (found by its URL name, like the page's)."""
    from chat.edge import stream_asgi

    for path in ("/api/v1/conversations/7/events", "/conversations/7/events"):
        found = stream_asgi.match({"type": "http", "method": "GET", "path": path})
        assert found is not None and found[2] == {"conversation_id": 7}, path
    assert stream_asgi.match({"type": "http", "method": "GET", "path": "/api/v1/x/events"}) is None


def test_a_message_listing_matches_its_documented_schema(api, conversation, client):
    """The listing is serialized without the schema (for speed): it must still match it,
    with every kind of segment and a tool-calling message in it."""
    import jsonschema

    from chat.core.services import message_create

    message_create(conversation=conversation, role="user", content="Hello **there**")
    message_create(
        conversation=conversation,
        role="assistant",
        content="Pick:\n```questionnaire\ntitle: T\nquestions:\n  - type: single_choice\n"
        "    text: Drink?\n    options: [Tea, Coffee]\n    default: Tea\n```\n```questionnaire\nnot: [valid\n```\n",
    )
    message_create(
        conversation=conversation,
        role="assistant",
        content="",
        tool_calls=[{"id": "c1", "type": "function", "function": {"name": "x", "arguments": "{}"}}],
    )
    message_create(conversation=conversation, role="tool", content="{}", tool_call_id="c1")
    listing = api.get(f"/api/v1/conversations/{conversation.pk}/messages").json()
    kinds = {s["kind"] for m in listing["messages"] for s in m["segments"]}
    assert kinds >= {"markdown", "questionnaire", "invalid"}
    document = _document(client)
    schema = {"$ref": "#/components/schemas/MessageList", "components": document["components"]}
    jsonschema.validate(listing, schema)


def test_another_users_conversation_is_404_on_every_operation(api, other_user):
    from chat.core.models import Message, Run
    from chat.core.services import conversation_create

    theirs = conversation_create(owner=other_user, agent="external")
    run = Run.objects.create(conversation=theirs, status="running", worker="external")
    base = f"/api/v1/conversations/{theirs.pk}"
    ask = {"payload": {"question": "Q?", "field": "f", "options": [{"label": "A", "value": "a"}]}}
    requests = [
        ("get", f"{base}/messages", None),
        ("post", f"{base}/messages", {"role": "assistant", "content": "x"}),
        ("post", f"{base}/asks", ask),
        ("post", f"{base}/answers", {"field": "f", "value": "a"}),
        ("post", f"{base}/runs", {}),
        ("post", f"{base}/runs/{run.pk}/cancel", {}),
    ]  # the event stream's: tests/edge/test_sse_opens.py (its reads are on other threads)
    for method, path, body in requests:
        response = api.get(path) if method == "get" else api.post(path, body)
        assert response.status_code == 404, (path, response.content[:200])
        assert response.json()["error"] == "not_found"
    assert not Message.objects.filter(conversation=theirs).exists()
    run.refresh_from_db()
    assert run.status == "running" and Run.objects.filter(conversation=theirs).count() == 1
