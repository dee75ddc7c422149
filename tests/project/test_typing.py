"""Typed seams stay typed: `Any` in the app at most half of what it was (490 when counted
for issue 24), and none in the signature of a public service — the functions every layer
calls to change state. mypy (strict, every module) runs in `make lint`; this keeps the
escape hatch from creeping back."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("chat", "questionnaires")
BEFORE = 490  # `Any` names in chat/ and questionnaires/ before issue 24
CEILING = BEFORE // 2


def _modules() -> Iterator[Path]:
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" not in path.parts:
                yield path


def _is_any(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id == "Any") or (
        isinstance(node, ast.Attribute) and node.attr == "Any"
    )


def any_count() -> dict[str, int]:
    """`Any` names per module, imports left out (the measure of issue 24)."""
    counts = {}
    for path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        counts[str(path.relative_to(ROOT))] = sum(1 for n in ast.walk(tree) if _is_any(n))
    return counts


def test_any_is_at_most_half_of_what_it_was():
    counts = any_count()
    total = sum(counts.values())
    worst = sorted(counts.items(), key=lambda kv: -kv[1])[:5]
    assert total <= CEILING, f"{total} Any (at most {CEILING}); most in {worst}"


def _signature_nodes(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.AST]:
    arguments = function.args
    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
    every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
    for argument in every:
        if argument.annotation is not None:
            yield from ast.walk(argument.annotation)
    if function.returns is not None:
        yield from ast.walk(function.returns)


def _takes_any(function: ast.AST) -> bool:
    assert isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
    return any(_is_any(n) for n in _signature_nodes(function))


def test_no_public_service_takes_or_returns_any():
    found = []
    for path in _modules():
        if path.name != "services.py":
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            public = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            if public and not node.name.startswith("_") and _takes_any(node):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}")
    assert not found, found
