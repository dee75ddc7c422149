"""Browser tests: a real uvicorn server (own SQLite file) driven by Playwright + Debian chromium.

Never downloads a browser: without /usr/bin/chromium these tests skip with the reason.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LiveServer:
    def __init__(self, url: str, env: dict[str, str]) -> None:
        self.url = url
        self.env = env

    def manage(self, *args: str) -> str:
        result = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            check=True,
        )
        return result.stdout

    def shell(self, code: str) -> str:
        return self.manage("shell", "-c", code)


@pytest.fixture(scope="session")
def server(tmp_path_factory) -> Iterator[LiveServer]:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} not found: install Debian's chromium (apt-get install chromium)")
    tmp = tmp_path_factory.mktemp("e2e")
    port = _free_port()
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "REDIS_URL", "LLM_BASE_URL")
    }
    env.update(
        DATABASE_URL=f"sqlite:///{tmp / 'e2e.sqlite3'}",
        DJANGO_SETTINGS_MODULE="chat.settings",
        AGENT_RUNNER="thread",
        DEBUG="0",
        SSE_KEEPALIVE_SECONDS="2",
        PYTHONUNBUFFERED="1",
    )
    server = LiveServer(f"http://127.0.0.1:{port}", env)
    server.manage("migrate", "--noinput")
    server.shell(
        "from django.contrib.auth.models import User\n"
        f"for n in ('ann', 'bob'): User.objects.create_user(n, password='{PASSWORD}')"
    )
    log = open(tmp / "server.log", "w")  # noqa: SIM115 - closed in teardown
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "chat.asgi:application", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 30
    while True:
        try:
            urllib.request.urlopen(server.url + "/accounts/login/", timeout=2)
            break
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                raise RuntimeError((tmp / "server.log").read_text()) from None
            time.sleep(0.2)
    yield server
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


@pytest.fixture(scope="session")
def browser(server):
    from playwright.sync_api import sync_playwright

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
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.dialogs = dialogs  # type: ignore[attr-defined]
    login(page, server)
    return page


def new_conversation(page, server: LiveServer, *, agent: str = "echo", title: str = "") -> int:
    page.goto(server.url + "/")
    page.fill("#id_title", title)
    page.select_option("#id_agent", agent)
    page.click(".new-conversation button[type=submit]")
    page.wait_for_url("**/conversations/*/")
    return int(page.url.rstrip("/").split("/")[-1])
