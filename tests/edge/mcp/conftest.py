"""A real server (own SQLite file, ASGI lifespan on) for MCP client tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.liveserver import LiveServer


@pytest.fixture(scope="session")
def mcp_server(tmp_path_factory) -> Iterator[LiveServer]:
    with LiveServer(
        tmp_path_factory.mktemp("mcp"), settings_module="tests.support.settings_fast"
    ) as server:
        yield server
