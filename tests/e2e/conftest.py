"""Browser tests: a real uvicorn server (own SQLite file) driven by Playwright + Debian chromium.

Never downloads a browser: without /usr/bin/chromium these tests skip with the reason.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.liveserver import LiveServer

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
PASSWORD = "e2e-password-1"


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/e2e/" in str(item.fspath):
            item.add_marker(pytest.mark.e2e)


class _Starting(threading.Thread):
    """The browser tests' server, started in the background while the rest of the suite
    runs: its migrations and start-up (15–80 s on a busy two-core box) overlap with the
    unit tests instead of stalling the first browser test of each test process."""

    def __init__(self) -> None:
        super().__init__(name="e2e-server", daemon=True)
        self.tmp = Path(tempfile.mkdtemp(prefix="e2e-"))
        self.live: LiveServer | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            live = LiveServer(
                self.tmp,
                # ann and bob stand for every person of a worker's browser tests, whose
                # open questions add up across tests (a turn's queued asks stay open): the
                # per-person limit of open questions (20) refused an ask or an MCP question
                # in whichever test came after the twentieth. The limit has its own tests
                # (tests/mcphost/test_waits.py).
                env={"SSE_KEEPALIVE_SECONDS": "2", "WAITS_PER_USER": "10000"},
                settings_module="tests.support.settings_fast",
            )
            self.live = live
            live.migrate()
            live.shell(
                "from django.contrib.auth.models import User\n"
                f"for n in ('ann', 'bob'): User.objects.create_user(n, password='{PASSWORD}')"
            )
            live.start(migrate=False)
        except BaseException as exc:  # re-raised by the fixture, in the test that needs it
            self.error = exc

    def stop(self) -> None:
        self.join()
        if self.live is not None:
            self.live.stop()
            self.live = None
        shutil.rmtree(self.tmp, ignore_errors=True)


_starting: list[_Starting] = []


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start the server now if this process may run browser tests."""
    if any("/tests/e2e/" in str(item.path) for item in session.items) and Path(CHROMIUM).exists():
        _starting.append(_Starting())
        _starting[0].start()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """A process that started the server but got no browser test stops it too."""
    for starting in _starting:
        starting.stop()


@pytest.fixture(scope="session")
def server() -> Iterator[LiveServer]:
    """The app as `manage.py serve` runs it, on its own SQLite file, users ann and bob."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} not found: install Debian's chromium (apt-get install chromium)")
    if not _starting:  # collected some other way: start it now
        _starting.append(_Starting())
        _starting[0].start()
    starting = _starting[0]
    starting.join()
    try:
        if starting.error is not None:
            raise starting.error
        assert starting.live is not None
        yield starting.live
    finally:
        starting.stop()


@pytest.fixture(scope="session")
def browser(server):
    from playwright.sync_api import expect, sync_playwright

    # A busy CI machine (two cores, other jobs) may take seconds where a quiet one takes
    # milliseconds: every wait is generous. It only costs time when a test fails anyway.
    expect.set_options(timeout=20_000)

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def login(page, server: LiveServer, username: str = "ann") -> None:
    page.goto(server.url + "/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("#login-form button[type=submit]")
    page.wait_for_url(server.url + "/")


@pytest.fixture
def context(browser):
    ctx = browser.new_context(locale="en-US")
    yield ctx
    ctx.close()


@pytest.fixture
def page(context, server):
    page = context.new_page()
    page.set_default_timeout(30_000)
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.dialogs = dialogs  # type: ignore[attr-defined]
    # Nothing the pages do may trip the Content-Security-Policy (it would silently
    # disable htmx features in production).
    blocked: list[str] = []
    page.on(
        "console",
        lambda m: blocked.append(m.text) if "Content Security Policy" in m.text else None,
    )
    login(page, server)
    yield page
    assert blocked == [], blocked


def new_conversation(
    page, server: LiveServer, *, agent: str = "echo", title: str = "", script: str = ""
) -> int:
    """A conversation of `agent`, opened in `page`, with nothing sent yet.

    Posted like the home page's form does (without a message, a name stands in for it:
    the tour and the intake open by themselves, the others wait). `script` (a scripted
    walk-through of chat/agent/scripts) creates it server-side with that script, so the
    tour never opens first."""
    if script:
        cid = server.json(
            "from django.contrib.auth.models import User\n"
            "from chat.core.services import conversation_create\n"
            f"c = conversation_create(owner=User.objects.get(username='ann'), agent={agent!r},"
            f" title={title or 'Test chat'!r})\n"
            f"c.state = {{'script': {script!r}}}\nc.save()\nprint(c.pk)"
        )
        page.goto(f"{server.url}/conversations/{cid}/")
        return int(cid)
    token = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
    response = page.request.post(
        server.url + "/conversations/new",
        form={"agent": agent, "title": title or "Test chat", "csrfmiddlewaretoken": token},
        headers={"Referer": server.url + "/"},
    )
    assert response.ok, response.status
    page.goto(response.url)
    return int(page.url.rstrip("/").split("/")[-1])


def start_from_home(
    page, server: LiveServer, *, agent: str, text: str = "", intake: str = ""
) -> int:
    """The home page's composer: choose the assistant (and topic), type, send."""
    page.goto(server.url + "/")
    page.select_option("#id_agent", agent)
    if intake:
        page.select_option("#id_intake", intake)
    if text:
        page.fill("#id_content", text)
    page.click(".home-composer button[type=submit]")
    page.wait_for_url("**/conversations/*/")
    return int(page.url.rstrip("/").split("/")[-1])


def htmx_request(page, elt_id: str, trigger: str) -> None:
    """Trigger `trigger` on `#elt_id` and return once htmx has handled its response (swapped
    it, or decided not to): `htmx:afterRequest` comes after that decision. No sleep, so a
    slow machine only makes it wait longer."""
    page.evaluate(
        """([id, name]) => new Promise(done => {
          document.addEventListener("htmx:afterRequest", e => {
            if (e.detail.elt.id === id) done();
          });
          htmx.trigger("#" + id, name);
        })""",
        [elt_id, trigger],
    )


def wait_for_js(page, expression: str, arg=None, timeout_ms: float = 30_000) -> None:
    """Wait until `expression` (a JS expression or function source, given `arg`) is truthy
    in the page. Not `page.wait_for_function`: once its first check fails it polls with
    eval, which the pages' Content-Security-Policy forbids (a busy machine fails there)."""
    deadline = time.monotonic() + timeout_ms / 1000
    while not page.evaluate(expression, arg):
        if time.monotonic() > deadline:
            raise AssertionError(f"never true: {expression}")
        page.wait_for_timeout(50)


def wait_routed(page, held: list, what: str, timeout_ms: float = 30_000) -> None:
    """Wait until a `page.route` handler has caught a request into `held`. Route handlers
    run only while Playwright handles the page's events, so this waits in the page
    (`wait_for_timeout`), never in `time.sleep`, which would starve them."""
    deadline = time.monotonic() + timeout_ms / 1000
    while not held:
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        page.wait_for_timeout(30)
