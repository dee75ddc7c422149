"""Fixtures: real MCP servers (module-scoped) speaking 2025-11-25 and 2026-07-28."""

from __future__ import annotations

import pytest

from bench.mcp_servers import make_modern_server, make_server, serve


@pytest.fixture(scope="module")
def server_url():
    with serve(make_server()) as url:
        yield url


@pytest.fixture(scope="module")
def modern_url():
    with serve(make_modern_server()) as url:
        yield url
