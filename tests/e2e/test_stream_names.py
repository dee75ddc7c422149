"""The page follows the stream's events by the names the server renders into it
(`{% sse_event_names %}`, chat.core.stream_events): in a real browser, a turn's events
move the page's resume cursor up to the conversation's last event, so a reconnect resumes
after it. (The tuple against the emitters and the JS source: tests/edge/test_stream_events.py.)
"""

from __future__ import annotations

from playwright.sync_api import expect

from tests.e2e.conftest import new_conversation


def test_the_page_follows_every_event_by_the_rendered_names(page, server):
    cid = new_conversation(page, server, title="stream names")
    rendered = page.evaluate("JSON.parse(document.getElementById('sse-event-names').textContent)")
    names = server.json(
        "import json\nfrom chat.core.stream_events import EVENT_NAMES\n"
        "print(json.dumps(list(EVENT_NAMES)))"
    )
    assert rendered == names
    page.fill("#id_content", "hello names")
    page.keyboard.press("Enter")
    expect(page.locator("article.msg-assistant").last).to_contain_text("Echo: hello names")
    expect(page.locator("#run-live")).to_be_hidden()
    emitted = server.json(
        "import json\nfrom chat.core.models import Event\n"
        f"rows = Event.objects.filter(conversation_id={cid}).order_by('id')\n"
        "print(json.dumps([[e.id, e.name] for e in rows]))"
    )
    assert {"message_done", "run_started", "run_finished"} <= {name for _, name in emitted}
    last = max(pk for pk, _ in emitted)
    # The cursor only moves for names the page listens to: the run's last event included.
    page.wait_for_function("last => window.qcLastEventId === last", arg=last)
