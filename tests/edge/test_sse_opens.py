"""Opening streams through the ASGI app: access checks, overload shedding, no thread held."""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time

import pytest
from asgiref.sync import sync_to_async

from chat.core.models import ApiToken
from chat.core.services import api_token_create, event_emit
from chat.edge import fanout

pytestmark = pytest.mark.django_db(transaction=True)


class AsgiCall:
    """One request to an ASGI app, run in the background; collects what it sends."""

    def __init__(self, app, path: str, headers: dict[str, str] | None = None) -> None:
        self.sent: list[dict] = []
        self.inbox: asyncio.Queue = asyncio.Queue()
        self.inbox.put_nowait({"type": "http.request", "body": b"", "more_body": False})
        path, _, query = path.partition("?")
        raw_headers = [(b"host", b"testserver")]
        raw_headers += [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "GET",
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "query_string": query.encode(),
            "root_path": "",
            "headers": raw_headers,
            "client": ("127.0.0.1", 1),
            "server": ("testserver", 80),
        }
        self.task = asyncio.ensure_future(app(scope, self.inbox.get, self._send))

    async def _send(self, message: dict) -> None:
        self.sent.append(message)

    async def started(self, timeout: float = 5.0) -> int:
        """The status, once the response has started (and, if streaming, connected)."""
        for _ in range(int(timeout / 0.01)):
            if self.sent and (self.status != 200 or b"retry:" in self.body):
                return self.status
            await asyncio.sleep(0.01)
        raise AssertionError(f"no response: {self.sent}")

    @property
    def status(self) -> int:
        return self.sent[0]["status"]

    @property
    def headers(self) -> dict[str, str]:
        return {k.decode().lower(): v.decode() for k, v in self.sent[0]["headers"]}

    @property
    def body(self) -> bytes:
        return b"".join(m.get("body", b"") for m in self.sent[1:])

    async def disconnect(self) -> None:
        await self.inbox.put({"type": "http.disconnect"})
        await asyncio.wait_for(self.task, 5)


@pytest.fixture
def app():
    from chat.asgi import application

    return application


@pytest.fixture
async def token(user):
    return (await sync_to_async(api_token_create)(user=user))[1]


def _api(conversation_id: int) -> str:
    return f"/api/v1/conversations/{conversation_id}/events"


async def test_api_stream_opens_with_security_headers(app, conversation, token):
    event = await sync_to_async(event_emit)(
        conversation_id=conversation.pk, name="run_started", data={}
    )
    call = AsgiCall(app, _api(conversation.pk), {"Authorization": f"Bearer {token}"})
    assert await call.started() == 200
    headers = call.headers
    assert headers["content-type"].startswith("text/event-stream")
    assert headers["cache-control"] == "no-cache, no-transform"
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["x-frame-options"] == "DENY"
    retry = int(re.search(rb"retry: (\d+)", call.body).group(1))
    assert 1000 <= retry <= 3000  # SSE_RETRY_MS .. 3x, jittered
    for _ in range(100):
        if f"id: {event.id}".encode() in call.body:
            break
        await asyncio.sleep(0.01)
    assert f"id: {event.id}\nevent: run_started".encode() in call.body
    await call.disconnect()
    assert fanout._hub is not None and fanout._hub.open == 0


@pytest.mark.parametrize(
    ("header", "status", "code"),
    [
        (None, 401, "unauthorized"),
        ("Bearer qc_not-a-token", 401, "unauthorized"),
        ("Bearer mine-for-someone-else", 404, "not_found"),
    ],
)
async def test_api_stream_refusals_are_json(app, conversation, other_user, header, status, code):
    if header == "Bearer mine-for-someone-else":
        header = f"Bearer {(await sync_to_async(api_token_create)(user=other_user))[1]}"
    call = AsgiCall(app, _api(conversation.pk), {"Authorization": header} if header else {})
    assert await call.started() == status
    assert json.loads(call.body)["error"] == code
    await asyncio.wait_for(call.task, 5)
    assert fanout._hub is None or fanout._hub.open == 0


async def test_a_skill_token_is_refused_on_the_stream(app, conversation):
    from chat.core.identity import SKILL_PREFIX

    call = AsgiCall(app, _api(conversation.pk), {"Authorization": f"Bearer {SKILL_PREFIX}x.y"})
    assert await call.started() == 401
    assert json.loads(call.body)["error"] == "skill_token_not_allowed"


async def test_page_stream_needs_the_owners_session(app, async_client, conversation, other_user):
    path = f"/conversations/{conversation.pk}/events"
    call = AsgiCall(app, path)
    assert await call.started() == 401
    await async_client.aforce_login(other_user)
    cookie = f"sessionid={async_client.cookies['sessionid'].value}"
    call = AsgiCall(app, path, {"Cookie": cookie})
    assert await call.started() == 404
    assert "Cookie" in call.headers["vary"]


async def test_page_stream_opens_for_the_owner(app, async_client, user, conversation):
    await async_client.aforce_login(user)
    cookie = f"sessionid={async_client.cookies['sessionid'].value}"
    call = AsgiCall(app, f"/conversations/{conversation.pk}/events", {"Cookie": cookie})
    assert await call.started() == 200
    await call.disconnect()


async def test_over_capacity_gets_503_with_retry_after(app, conversation, token, settings):
    settings.SSE_MAX_STREAMS = 2
    auth = {"Authorization": f"Bearer {token}"}
    open_calls = [AsgiCall(app, _api(conversation.pk), auth) for _ in range(2)]
    for call in open_calls:
        assert await call.started() == 200
    refused = AsgiCall(app, _api(conversation.pk), auth)
    assert await refused.started() == 503
    assert 1 <= int(refused.headers["retry-after"]) <= 10
    body = json.loads(refused.body)
    assert body["error"] == "stream_overloaded" and body["message"]
    # The page's stream is shed the same way (EventSource retries on its own).
    page = AsgiCall(app, f"/conversations/{conversation.pk}/events")
    assert await page.started() == 503 and page.headers["retry-after"]
    # A slot frees when a stream ends.
    await open_calls[0].disconnect()
    again = AsgiCall(app, _api(conversation.pk), auth)
    assert await again.started() == 200
    await again.disconnect()
    await open_calls[1].disconnect()


async def test_one_user_cant_take_every_stream(
    app, async_client, conversation, token, other_user, settings
):
    """Issue 22: one user opened all 5,000 streams and everyone else got 503. Past
    SSE_MAX_STREAMS_PER_USER a user gets 429 `too_many_streams`; others still open."""
    settings.SSE_MAX_STREAMS_PER_USER = 2
    auth = {"Authorization": f"Bearer {token}"}
    mine = [AsgiCall(app, _api(conversation.pk), auth) for _ in range(2)]
    for call in mine:
        assert await call.started() == 200
    refused = AsgiCall(app, _api(conversation.pk), auth)
    assert await refused.started() == 429
    assert 1 <= int(refused.headers["retry-after"]) <= 10
    assert json.loads(refused.body)["error"] == "too_many_streams"
    # The same user's page stream counts too (text, with Retry-After).
    await async_client.aforce_login(conversation.owner)
    cookie = f"sessionid={async_client.cookies['sessionid'].value}"
    page = AsgiCall(app, f"/conversations/{conversation.pk}/events", {"Cookie": cookie})
    assert await page.started() == 429 and page.headers["retry-after"]
    # Someone else is not affected.
    theirs = await sync_to_async(_conversation_of)(other_user)
    other_token = (await sync_to_async(api_token_create)(user=other_user))[1]
    other = AsgiCall(app, _api(theirs), {"Authorization": f"Bearer {other_token}"})
    assert await other.started() == 200
    # A closed stream frees its user's slot.
    await mine[0].disconnect()
    again = AsgiCall(app, _api(conversation.pk), auth)
    assert await again.started() == 200
    for call in (mine[1], again, other):
        await call.disconnect()
    assert fanout._hub is not None and fanout._hub.by_user == {}


def _conversation_of(user) -> int:
    from chat.core.services import conversation_create

    return conversation_create(owner=user, agent="external").pk


async def test_an_id_past_64_bits_is_400_through_the_asgi_entry(app, token):
    call = AsgiCall(app, _api(2**64), {"Authorization": f"Bearer {token}"})
    assert await call.started() == 400
    assert json.loads(call.body)["error"] == "invalid_id"
    header = AsgiCall(app, _api(1), {"Authorization": f"Bearer {token}", "Last-Event-ID": "①"})
    assert await header.started() == 400
    assert json.loads(header.body)["error"] == "invalid_id"


async def test_over_capacity_through_djangos_stack(async_client, conversation, api_token, settings):
    settings.SSE_MAX_STREAMS = 0
    response = await async_client.get(
        _api(conversation.pk), headers={"Authorization": f"Bearer {api_token}"}
    )
    assert response.status_code == 503
    assert response["Retry-After"]
    assert response.json()["error"] == "stream_overloaded"


async def test_idle_streams_hold_no_thread(app, conversation, token, settings):
    settings.SSE_MAX_STREAMS_PER_USER = 100
    auth = {"Authorization": f"Bearer {token}"}
    warm = AsgiCall(app, _api(conversation.pk), auth)  # starts the fan-out's threads
    assert await warm.started() == 200
    before = threading.active_count()
    calls = [AsgiCall(app, _api(conversation.pk), auth) for _ in range(20)]
    for call in calls:
        assert await call.started() == 200
    await asyncio.sleep(0.3)  # let any per-request thread wind down
    assert threading.active_count() <= before + 1
    for call in [warm, *calls]:
        await call.disconnect()


async def test_idle_streams_hold_no_thread_under_djangos_handler(conversation, token):
    """Served by Django's own ASGI handler, a stream lets its request thread go."""
    from chat.asgi import django_application

    auth = {"Authorization": f"Bearer {token}"}
    warm = AsgiCall(django_application, _api(conversation.pk), auth)
    assert await warm.started() == 200
    await asyncio.sleep(0.3)
    before = threading.active_count()
    calls = [AsgiCall(django_application, _api(conversation.pk), auth) for _ in range(10)]
    for call in calls:
        assert await call.started() == 200
    await asyncio.sleep(0.5)
    assert threading.active_count() <= before + 2
    for call in [warm, *calls]:
        await call.disconnect()


async def test_token_use_is_recorded_at_most_once_a_minute(app, conversation, token):
    auth = {"Authorization": f"Bearer {token}"}
    first = AsgiCall(app, _api(conversation.pk), auth)
    assert await first.started() == 200
    stamp = await ApiToken.objects.values_list("last_used_at", flat=True).aget()
    assert stamp is not None
    second = AsgiCall(app, _api(conversation.pk), auth)
    assert await second.started() == 200
    assert await ApiToken.objects.values_list("last_used_at", flat=True).aget() == stamp
    await first.disconnect()
    await second.disconnect()


@pytest.fixture
def stream_queries(monkeypatch):
    """The SQL each database call of the fan-out runs (on its own threads)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    calls: list[list[str]] = []
    original = fanout._db_call

    def counting(function, kwargs):
        with CaptureQueriesContext(connection) as captured:
            try:
                return original(function, kwargs)
            finally:
                calls.append([q["sql"] for q in captured.captured_queries])

    monkeypatch.setattr(fanout, "_db_call", counting)
    return calls


async def test_an_api_stream_open_costs_two_queries(app, conversation, token, stream_queries):
    auth = {"Authorization": f"Bearer {token}"}
    first = AsgiCall(app, _api(conversation.pk), auth)  # also starts the conversation's feed
    assert await first.started() == 200
    stream_queries.clear()
    second = AsgiCall(app, _api(conversation.pk), auth)
    assert await second.started() == 200
    # token + user + ownership in one query, then the replay
    assert [len(call) for call in stream_queries] == [1, 1]
    await first.disconnect()
    await second.disconnect()


async def test_a_page_stream_open_costs_four_queries(
    app, async_client, user, conversation, stream_queries
):
    await async_client.aforce_login(user)
    cookie = {"Cookie": f"sessionid={async_client.cookies['sessionid'].value}"}
    first = AsgiCall(app, f"/conversations/{conversation.pk}/events", cookie)
    assert await first.started() == 200
    stream_queries.clear()
    second = AsgiCall(app, f"/conversations/{conversation.pk}/events", cookie)
    assert await second.started() == 200
    assert [len(call) for call in stream_queries] == [3, 1]  # session, user, ownership; replay
    await first.disconnect()
    await second.disconnect()


async def test_idle_streams_cost_one_query_per_tick_per_process(
    app, user, conversation, token, stream_queries, settings
):
    from chat.core.services import conversation_create

    settings.SSE_KEEPALIVE_SECONDS = 0.1
    other = await sync_to_async(conversation_create)(owner=user, agent="echo")
    auth = {"Authorization": f"Bearer {token}"}
    calls = [AsgiCall(app, _api(cid), auth) for cid in [conversation.pk, other.pk] * 10]
    for call in calls:
        assert await call.started() == 200
    stream_queries.clear()
    # Every stream sees three keep-alives (a busy machine makes that slower, never wrong).
    deadline = time.monotonic() + 20
    while not all(call.body.count(b": keep-alive") >= 3 for call in calls):
        assert time.monotonic() < deadline, "no three keep-alives on every stream"
        await asyncio.sleep(0.05)
    ticks = max(call.body.count(b": keep-alive") for call in calls)
    # Only the periodic check ran: one query a tick for both conversations' 20 idle
    # streams (a query per stream or per conversation would be 20 or 2 a tick).
    assert 1 <= len(stream_queries) <= ticks + 1
    assert all(len(call) == 1 for call in stream_queries)
    for call in calls:
        await call.disconnect()
