"""The stream views' own ASGI entry re-applies part of MIDDLEWARE: the two can't drift.

`chat.edge.stream_asgi` names what it does with each middleware of the stack (borrowed,
reproduced, not needed); these tests hold that list to `settings.MIDDLEWARE`, so adding a
middleware there fails here until somebody decides whether an event stream needs it.
(What the borrowed ones do to a real stream response: tests/edge/test_sse_opens.py.)
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from pathlib import Path

from django.conf import settings
from django.utils.module_loading import import_string

from chat.edge import stream_asgi


def undecided(middleware: Sequence[str]) -> list[str]:
    """What the stack and the stream entry disagree on: middleware it doesn't name, names
    that aren't in the stack, a name given two treatments, borrowed ones out of order."""
    decided = [*stream_asgi.BORROWED, *stream_asgi.REPRODUCED, *stream_asgi.NOT_NEEDED]
    problems = [f"undecided: {m}" for m in middleware if m not in decided]
    problems += [f"not in MIDDLEWARE: {m}" for m in decided if m not in middleware]
    problems += [f"decided twice: {m}" for m in set(decided) if decided.count(m) > 1]
    borrowed = [m for m in middleware if m in stream_asgi.BORROWED]
    if borrowed != [m for m in stream_asgi.BORROWED if m in middleware]:
        problems.append(f"borrowed out of the stack's order: {stream_asgi.BORROWED}")
    return problems


def test_every_middleware_of_the_stack_is_decided_on():
    assert undecided(settings.MIDDLEWARE) == []


def test_a_middleware_added_to_the_stack_is_caught():
    assert undecided([*settings.MIDDLEWARE, "chat.edge.http.NewMiddleware"]) == [
        "undecided: chat.edge.http.NewMiddleware"
    ]


def test_a_middleware_removed_from_the_stack_is_caught():
    removed = [m for m in settings.MIDDLEWARE if m != stream_asgi.X_FRAME]
    assert undecided(removed) == [f"not in MIDDLEWARE: {stream_asgi.X_FRAME}"]


def test_reordering_the_borrowed_ones_is_caught():
    stack = list(settings.MIDDLEWARE)
    i, j = stack.index(stream_asgi.SECURITY), stack.index(stream_asgi.SESSION)
    stack[i], stack[j] = stack[j], stack[i]
    assert undecided(stack) == [f"borrowed out of the stack's order: {stream_asgi.BORROWED}"]


def test_every_name_is_a_middleware_class_and_every_reason_is_said():
    for path in [*stream_asgi.BORROWED, *stream_asgi.REPRODUCED, *stream_asgi.NOT_NEEDED]:
        assert isinstance(import_string(path), type), path
    for reason in [*stream_asgi.REPRODUCED.values(), *stream_asgi.NOT_NEEDED.values()]:
        assert len(reason.split()) >= 3, reason


def test_the_entry_runs_middleware_only_by_the_names_it_declares():
    """No middleware class imported or built by hand beside the declared list: the
    module's only way to a middleware is `_borrowed(<a BORROWED name>)`."""
    tree = ast.parse(Path(stream_asgi.__file__).read_text(encoding="utf-8"))
    imported = [
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    ]
    assert not [name for name in imported if name.endswith("Middleware")]
    used = {
        node.args[0].id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "_borrowed"
        and isinstance(node.args[0], ast.Name)
    }
    assert {getattr(stream_asgi, name) for name in used} == set(stream_asgi.BORROWED)
