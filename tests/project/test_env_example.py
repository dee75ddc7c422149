"""`.env.example` names every environment variable the settings read (issue 35.4: 17
were read but undocumented), so a deployer finds each one in a single place."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Read through helpers (`env_bool("X")`) or `os.environ.get("X")` / `os.environ["X"]`.
READERS = {"get", "env_bool", "env_list", "_optional_int", "getenv"}


def _read_by_settings() -> set[str]:
    tree = ast.parse((ROOT / "chat" / "settings.py").read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args:
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            first = node.args[0]
            if called in READERS and isinstance(first, ast.Constant):
                names.add(str(first.value))
        subscript = isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant)
        if subscript and "environ" in ast.unparse(node.value):  # type: ignore[attr-defined]
            names.add(str(node.slice.value))  # type: ignore[attr-defined]
    return {n for n in names if re.fullmatch(r"[A-Z][A-Z0-9_]+", n)}


def _documented() -> set[str]:
    text = (ROOT / ".env.example").read_text(encoding="utf-8")
    return set(re.findall(r"^#? ?([A-Z][A-Z0-9_]+)=", text, re.M))


def test_every_variable_the_settings_read_is_in_env_example():
    read = _read_by_settings()
    assert len(read) > 60  # the reading itself works
    assert sorted(read - _documented()) == []
