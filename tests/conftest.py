from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

# Property tests must not depend on a quiet machine: no per-example deadline (hypothesis'
# default is 200 ms, which a loaded CI box overruns), no "too slow" health check.
hypothesis_settings.register_profile(
    "suite", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
hypothesis_settings.load_profile("suite")

# Tests never call a real LLM, whatever the environment says.
for _name in ("LLM_BASE_URL", "LLM_API_KEY", "LLM_MODEL"):
    os.environ.pop(_name, None)


@pytest.fixture(autouse=True)
def _inline_agent_runs(request):
    """Agent runs execute inside the request, so tests see their results at once.

    Browser tests talk to a separate server process and keep its settings.
    """
    if "e2e" in request.keywords:
        yield
        return
    settings = request.getfixturevalue("settings")
    settings.AGENT_RUNNER = "inline"
    yield


@pytest.fixture(autouse=True)
def _no_demo_mcp_server(request):
    """Tests start without MCP servers, whatever ran before.

    The data migration chat/0007 registers the bundled demo server, so it is in the test
    database at first, but every transactional test flushes the tables: left alone,
    whether a scripted turn offers `demo__*` tools would depend on test order. Tests that
    want it register it (`McpServer(name="demo", url="builtin:demo")`). Browser tests use
    the live server's own, fully migrated database.
    """
    if "e2e" in request.keywords:
        yield
        return
    names = set(request.fixturenames)
    if request.node.get_closest_marker("django_db") is None:
        wanted = [n for n in ("transactional_db", "db") if n in names]
        if not wanted:
            yield
            return
        request.getfixturevalue(wanted[0])
    from chat.mcphost.models import McpServer

    McpServer.objects.filter(name="demo", url="builtin:demo").delete()
    yield


@pytest.fixture(autouse=True)
def _no_session_host_between_tests():
    """A test that handed a call to the in-process MCP session host stops it before its
    database goes away (the next test that needs one starts its own)."""
    yield
    from chat.mcphost import host

    host.host_thread_stop()


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Each test starts with an empty cache (rendered messages, bad-token counters)."""
    from django.core.cache import cache

    cache.clear()
    yield


@pytest.fixture
def user(django_user_model):
    return django_user_model.objects.create_user(username="alice", password="pw-alice-123")


@pytest.fixture
def other_user(django_user_model):
    return django_user_model.objects.create_user(username="mallory", password="pw-mallory-123")


@pytest.fixture
def client_in(client, user):
    client.force_login(user)
    return client


@pytest.fixture
def conversation(user):
    from chat.core.services import conversation_create

    return conversation_create(owner=user, title="Test", agent="echo")


@pytest.fixture
def api_token(user):
    from chat.core.services import api_token_create

    return api_token_create(user=user)[1]


@pytest.fixture
def api(client, api_token):
    """A JSON client for /api/v1/ with the user's bearer token."""
    import json

    class Api:
        def __init__(self) -> None:
            self.headers = {"Authorization": f"Bearer {api_token}"}

        def get(self, path: str, **kw):
            return client.get(path, headers=self.headers, **kw)

        def post(self, path: str, body=None, **kw):
            return client.post(
                path,
                data=json.dumps(body or {}),
                content_type="application/json",
                headers=self.headers,
                **kw,
            )

    return Api()


@pytest.fixture(scope="session", autouse=True)
def _close_connection_pools(django_db_setup, django_db_blocker):
    """Close PostgreSQL sessions and pools before the test database is dropped."""
    yield
    from django.db import connections

    with django_db_blocker.unblock():
        for connection in connections.all():
            if connection.vendor == "postgresql":
                # Threads that ended mid-test (concurrency tests) may still hold a session.
                with connection.cursor() as cursor:
                    cursor.execute(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                        "WHERE datname = current_database() AND pid <> pg_backend_pid()"
                    )
            close_pool = getattr(connection, "close_pool", None)
            if close_pool is not None:
                close_pool()


# Modules whose tests start fleets of processes (Celery workers, several servers) and take
# 5–40 s each. They run first: pytest-xdist hands tests out in collection order, so they
# overlap with the thousands of short ones instead of leaving one process busy at the end
# while the other has nothing left (longest first keeps the processes' finish close).
SLOW_FIRST = (
    "tests/load/test_load.py",
    "tests/runs/test_celery_waits.py",
    "tests/runs/test_celery_worker.py",
    "tests/edge/test_sse_workers.py",
    "tests/edge/test_api_contract.py",
    "tests/core/test_secret_key.py",
    "tests/interop/test_tracing_otlp.py",
    "tests/test_migrations.py",
)
# The same among the browser tests, which run last: their longest (multi-step walks and
# tours, 20–50 s each on a busy box) first, so the last minute isn't one process finishing
# a walk while the others are idle.
E2E_SLOW_FIRST = (
    "tests/e2e/test_walk.py",
    "tests/e2e/test_tour.py",
    "tests/e2e/test_intake.py",
    "tests/e2e/test_stock_ts_mcp.py",
    "tests/e2e/test_live_truth.py",
)


def pytest_collection_modifyitems(items):
    """Slow modules first (`SLOW_FIRST`), whole modules kept together; browser tests run
    last: Playwright's sync API keeps an event loop running in the main thread for the
    rest of the session, which would break later asyncio tests."""

    def order(item: pytest.Item) -> tuple[bool, int]:
        path = str(item.path)
        browser = "/tests/e2e/" in path
        first = E2E_SLOW_FIRST if browser else SLOW_FIRST
        slow = [n for n, name in enumerate(first) if path.endswith(name)]
        return browser, slow[0] if slow else len(first)

    items.sort(key=order)


@pytest.fixture
def postgres_only():
    """Skip (fail under REQUIRE_SERVICES=1) unless the test database is PostgreSQL: real
    concurrent transactions and row locks, which SQLite serialises away."""
    from django.db import connection

    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        reason = "needs DATABASE_URL=postgres://… for real concurrent transactions"
        if os.environ.get("REQUIRE_SERVICES") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    assert connection.vendor == "postgresql"
