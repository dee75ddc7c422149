"""Import rules of DESIGN §3, checked by walking the AST of every module."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROTOCOL_ALLOWED_THIRD_PARTY = {"yaml", "markdown_it"}


def _modules(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return names


def _stdlib() -> set[str]:
    import sys

    return set(sys.stdlib_module_names) | {"__future__"}


@pytest.mark.parametrize("path", _modules("questionnaires/protocol"), ids=str)
def test_protocol_is_pure(path: Path) -> None:
    allowed = _stdlib() | PROTOCOL_ALLOWED_THIRD_PARTY | {"questionnaires"}
    for name in _imports(path):
        top = name.split(".")[0]
        assert top in allowed, f"{path} imports {name}"
        if top == "questionnaires":
            assert name.startswith("questionnaires.protocol"), f"{path} imports {name}"


@pytest.mark.parametrize("path", _modules("questionnaires"), ids=str)
def test_questionnaires_never_imports_chat(path: Path) -> None:
    for name in _imports(path):
        assert name.split(".")[0] != "chat", f"{path} imports {name}"


def test_only_sse_module_writes_event_stream_bytes() -> None:
    offenders = []
    for package in ("chat", "questionnaires"):
        for path in _modules(package):
            if path.name == "sse.py":
                continue
            text = path.read_text(encoding="utf-8")
            if "text/event-stream" in text or "StreamingHttpResponse(" in text:
                offenders.append(str(path))
    assert offenders == []


RENDERING_MODULES = [
    "chat/rendering.py",
    "questionnaires/cards.py",
    "questionnaires/render.py",
]


@pytest.mark.parametrize("rel", RENDERING_MODULES)
def test_rendering_does_no_database_queries(rel: str) -> None:
    path = ROOT / rel
    if not path.exists():
        pytest.skip(f"{rel} not present")
    for name in _imports(path):
        assert not name.startswith("django.db"), f"{rel} imports {name}"
        assert not name.endswith(".models") and not name.endswith("selectors"), (
            f"{rel} imports {name}"
        )
