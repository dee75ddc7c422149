"""The interop suite (issue 33): software nobody here wrote, used unedited, against a real
server of the app (own SQLite file, ASGI lifespan on)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.liveserver import LiveServer

SUPPORT = Path(__file__).resolve().parent.parent / "support"
HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test here is `interop`: they start their own servers on SQLite files, so CI
    runs them once (pass 1), not again on PostgreSQL."""
    for item in items:
        if HERE in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.interop)


@pytest.fixture(scope="session")
def interop_server(tmp_path_factory) -> Iterator[LiveServer]:
    with LiveServer(
        tmp_path_factory.mktemp("interop"), settings_module="tests.support.settings_fast"
    ) as server:
        yield server


def node_tools(folder: str) -> Path:
    """`tests/support/<folder>` with its npm packages, or the test skips with the reason
    (`make interop-latest` points INTEROP_NODE_ROOT at copies with the newest releases)."""
    path = Path(os.environ.get("INTEROP_NODE_ROOT") or SUPPORT) / folder
    if shutil.which("node") is None:
        pytest.skip("needs node (Node.js) for the npm-published clients")
    if not (path / "node_modules" / ".installed").exists():
        pytest.skip(f"needs `make test` to install tests/support/{folder}'s npm packages")
    return path
