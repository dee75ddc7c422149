"""The event stream across two worker processes (Redis channel layer) and disconnects.

Two uvicorn processes share one file SQLite database and Redis: a message posted to one
reaches a stream open on the other. Skips when REDIS_URL is unset, unless
REQUIRE_SERVICES=1 (CI's second pass), where a missing service fails the test.
"""

from __future__ import annotations

import asyncio
import json
import os

import httpx
import pytest

from tests.support.liveserver import LiveServer


def _redis_url() -> str:
    url = os.environ.get("REDIS_URL", "")
    if not url:
        if os.environ.get("REQUIRE_SERVICES") == "1":
            pytest.fail("REQUIRE_SERVICES=1 but REDIS_URL is not set")
        pytest.skip("REDIS_URL is not set: the two-worker stream test needs Redis")
    return url


@pytest.fixture
def two_workers(tmp_path):
    """Two server processes on one database and one Redis."""
    env = {"SSE_KEEPALIVE_SECONDS": "1"}
    first = LiveServer(tmp_path, redis_url=_redis_url(), env=env)
    first.migrate()
    token = first.json(
        "from django.contrib.auth.models import User\n"
        "from chat.core.services import api_token_create\n"
        "import json\n"
        "print(json.dumps(api_token_create(user=User.objects.create_user('w'))[1]))"
    )
    second = LiveServer(
        tmp_path,
        database_url=first.env["DATABASE_URL"],
        fresh_database=False,
        redis_url=first.env["REDIS_URL"],
        env=env,
    )
    try:
        first.start(migrate=False)
        second.start(migrate=False)
        yield [first.url, second.url], {"Authorization": f"Bearer {token}"}
    finally:
        second.stop()
        first.stop()


def _frames(lines):
    """Parse SSE lines into (id, event, data) frames."""
    frame: dict[str, str] = {}
    for line in lines:
        if not line:
            if "event" in frame:
                yield frame.get("id"), frame["event"], json.loads(frame["data"])
            frame = {}
        elif not line.startswith(":"):
            key, _, value = line.partition(": ")
            frame[key] = value


def test_post_on_one_worker_streams_on_the_other(two_workers):
    (url_a, url_b), headers = two_workers
    created = httpx.post(url_a + "/api/v1/conversations/", json={"agent": "echo"}, headers=headers)
    cid = created.json()["id"]
    seen: list[tuple[str | None, str, dict]] = []
    with httpx.stream(
        "GET", f"{url_b}/api/v1/conversations/{cid}/events", headers=headers, timeout=15
    ) as stream:
        lines = stream.iter_lines()
        assert next(lines).startswith("retry:")  # connected; now post on the other worker
        posted = httpx.post(
            f"{url_a}/api/v1/conversations/{cid}/messages",
            json={"role": "user", "content": "across workers"},
            headers=headers,
        )
        assert posted.status_code == 201
        for frame in _frames(lines):
            seen.append(frame)
            if frame[1] == "run_finished":
                break
    names = [name for _id, name, _data in seen]
    assert names[0] == "message_done" and "run_started" in names and names[-1] == "run_finished"
    assert names.count("message_done") == 2  # the user message and the echo reply
    ids = [int(i) for i, _n, _d in seen]
    assert ids == sorted(ids)
    # Reconnecting to worker A with Last-Event-ID replays exactly what came after it.
    with httpx.stream(
        "GET",
        f"{url_a}/api/v1/conversations/{cid}/events",
        headers={**headers, "Last-Event-ID": str(ids[1])},
        timeout=15,
    ) as stream:
        replay = []
        for frame in _frames(stream.iter_lines()):
            replay.append(int(frame[0]))
            if frame[1] == "run_finished":
                break
    assert replay == ids[2:]


@pytest.mark.django_db(transaction=True)
async def test_disconnect_ends_the_stream_promptly(user, settings):
    """The ASGI app stops the stream (and leaves the channel group) when the client goes."""
    from asgiref.sync import sync_to_async

    from chat.asgi import application
    from chat.core.services import api_token_create, conversation_create

    conversation = await sync_to_async(conversation_create)(owner=user, agent="echo")
    token = (await sync_to_async(api_token_create)(user=user))[1]
    inbox: asyncio.Queue = asyncio.Queue()
    sent: list[dict] = []
    await inbox.put({"type": "http.request", "body": b"", "more_body": False})

    async def receive():
        return await inbox.get()

    async def send(message):
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": f"/api/v1/conversations/{conversation.pk}/events",
        "raw_path": b"",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"authorization", f"Bearer {token}".encode()), (b"host", b"testserver")],
        "client": ("127.0.0.1", 1),
        "server": ("testserver", 80),
    }
    task = asyncio.ensure_future(application(scope, receive, send))
    for _ in range(100):
        if any(m.get("body", b"").startswith(b"retry:") for m in sent):
            break
        await asyncio.sleep(0.02)
    assert sent[0]["status"] == 200
    await inbox.put({"type": "http.disconnect"})
    # Ends on the disconnect, not at the next keep-alive (15 s away) — with room
    # for a busy machine.
    await asyncio.wait_for(task, timeout=10)
