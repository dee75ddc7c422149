"""Fixtures: a real MCP server (module-scoped) and the fake elicitation services."""

from __future__ import annotations

import pytest

from tests.support.fake_elicitations import elicitations  # noqa: F401 (a fixture)
from tests.support.mcp_servers import make_server, serve


@pytest.fixture(scope="module")
def server_url():
    with serve(make_server()) as url:
        yield url
