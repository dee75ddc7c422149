"""No app function is longer than 60 lines (issue 35: "the longest app function ≤ 60 lines").

A function that long does several things a reader must hold at once; it is split into
named steps instead. Every module of the app packages (`chat/`, `questionnaires/`; their
migrations are generated) is parsed and every function and method measured from its `def`
line to its last line, docstring and comments included. The failure lists each one.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APP_PACKAGES = ("chat", "questionnaires")
LIMIT = 60


def app_modules() -> list[Path]:
    return sorted(
        path
        for package in APP_PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if "migrations" not in path.relative_to(ROOT).parts
    )


def function_lengths(path: Path) -> dict[str, int]:
    """Each function of the module (`Class.method`, `outer.inner` when nested): its lines."""
    lengths: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = prefix + child.name
                end = child.end_lineno or child.lineno
                lengths[name] = end - child.lineno + 1
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)), "")
    return lengths


@functools.cache
def too_long() -> dict[str, int]:
    return {
        f"{path.relative_to(ROOT).as_posix()}::{name}": length
        for path in app_modules()
        for name, length in function_lengths(path).items()
        if length > LIMIT
    }


def test_no_app_function_is_longer_than_60_lines() -> None:
    found = too_long()
    listing = "\n".join(f"  {n} lines  {name}" for name, n in sorted(found.items()))
    assert not found, f"functions over {LIMIT} lines (split them into named steps):\n{listing}"


def test_the_measure_sees_methods_nested_functions_and_long_bodies(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(LIMIT))
    source = (
        f"def short():\n    return 1\n\n"
        f"class C:\n    async def long(self):\n{body.replace('    ', '        ')}\n\n"
        f"def outer():\n    def inner():\n{body.replace('    ', '        ')}\n    return inner\n"
    )
    module = tmp_path / "m.py"
    module.write_text(source)
    lengths = function_lengths(module)
    assert lengths["short"] == 2
    assert lengths["C.long"] == LIMIT + 1
    assert lengths["outer.inner"] == LIMIT + 1
    assert lengths["outer"] == LIMIT + 3
