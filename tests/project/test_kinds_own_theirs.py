"""Kinds own everything of theirs (issue 35): the rest of the product reaches a kind through
the registry (questionnaires.registry), not by importing it or naming it.

Read from the source with `ast` (every import, function-level ones included; migrations
left out, as they are history): at most five modules outside the kinds import one (the
agent's tools that show a kind's cards, the intake agent's use of the asks' definitions,
the app's models module that Django loads), none of the core, the runs or the MCP host
does, and no module outside the kinds compares anything with a kind's name.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from django.conf import settings

ROOT = Path(__file__).resolve().parents[2]
APPS = ("chat", "questionnaires")
MOST = 5
NEVER = ("chat.core", "chat.runs", "chat.mcphost", "questionnaires.registry")


def _kinds() -> tuple[str, ...]:
    """The registered kinds' packages (`questionnaires.asks`, …)."""
    return tuple(path.rsplit(".", 2)[0] for path in settings.QUESTIONNAIRE_KINDS)


def _kind_names() -> frozenset[str]:
    from questionnaires.registry import kinds

    return frozenset(kind.name for kind in kinds())


def _within(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def _modules() -> Iterator[tuple[str, ast.Module]]:
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            parts = path.relative_to(ROOT).with_suffix("").parts
            module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            yield module, ast.parse(path.read_text(), filename=str(path))


def _imported(tree: ast.Module) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


def _outside() -> Iterator[tuple[str, ast.Module]]:
    kinds = _kinds()
    return ((m, tree) for m, tree in _modules() if not _within(m, kinds))


def _importers() -> dict[str, set[str]]:
    """Modules outside the kinds -> the kinds each imports."""
    kinds = _kinds()
    found: dict[str, set[str]] = {}
    for module, tree in _outside():
        hit = {k for name in _imported(tree) for k in kinds if _within(name, (k,))}
        if hit:
            found[module] = hit
    return found


def test_at_most_five_modules_outside_the_kinds_import_one():
    importers = _importers()
    assert len(importers) <= MOST, sorted(importers)


def test_the_core_the_runs_and_the_mcp_host_import_no_kind():
    importers = _importers()
    assert not [m for m in importers if _within(m, NEVER)], importers


def _switches(tree: ast.Module, names: frozenset[str]) -> Iterator[int]:
    """Lines comparing a kind with a kind's name (`wait.kind == "ask"`, `metadata.get(
    "kind") in ("inline", "form")`, a `match` on a kind with a case of one; or passing one
    as a `kind…` argument): a kind's name beside an expression that names a kind. ("inline" is also a run mode: `mode ==
    "inline"` is no switch on a kind.)"""

    def about_kinds(node: ast.AST) -> bool:
        return "kind" in ast.dump(node).lower()

    def names_in(node: ast.AST) -> bool:
        if isinstance(node, ast.Constant):
            return node.value in names
        if isinstance(node, ast.Attribute):  # an enum of kinds: `WaitKind.ELICITATION`
            return node.attr.lower() in names and about_kinds(node.value)
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            return any(names_in(e) for e in node.elts)
        return False

    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = (node.left, *node.comparators)
            if any(names_in(s) for s in sides) and any(
                about_kinds(s) for s in sides if not names_in(s)
            ):
                yield node.lineno
        elif isinstance(node, ast.keyword) and node.arg and node.arg.startswith("kind"):
            if names_in(node.value):  # `filter(kind__in=(…))`, `wait_open(kind="inline")`
                yield node.value.lineno
        elif isinstance(node, ast.Match) and about_kinds(node.subject):
            for case in node.cases:
                if names_in(getattr(case.pattern, "value", None) or ast.Constant(None)):
                    yield case.pattern.lineno


def test_no_module_outside_the_kinds_switches_on_a_kind_name():
    names = _kind_names()
    found = {m: lines for m, tree in _outside() if (lines := list(_switches(tree, names)))}
    assert not found, found


def test_the_check_sees_a_switch_and_an_import():
    """The checks above bite: a planted switch and a planted import are found."""
    planted = ast.parse(
        "def f(wait):\n"
        "    from questionnaires.elicitations import services\n"
        "    if wait.mode == 'inline':\n"
        "        return None\n"
        "    return wait.kind == 'elicitation'\n"
    )
    assert list(_switches(planted, _kind_names())) == [5]
    assert any(_within(n, _kinds()) for n in _imported(planted))
