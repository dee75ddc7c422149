"""Bounded variants of common Pygments lexers whose rules backtrack badly on hostile text.

`bench.lexer_fuzz` found no bound, or a small one, for C, C++, C#, Java, Scala and
Python (issue 22). A few of their rules have quantifiers that can share the same
characters — C's function-definition rule ``ident([&*\\s])+`` followed by
``\\s*(comment\\s*)*`` splits a run of blank lines between the two in every possible way,
Scala's string ``"(\\\\\\\\|\\\\"|[^"])*"`` is exponential on backslashes — or scan the rest of
the text from every line start or every character (``^\\s*…#``, C#'s and Java's method
names over any number of lines, an unclosed ``//``/``/*`` comment looked for from each
``/``). Such a language was always (or past ~1,500-2,900 characters) shown as plain code.

Each bounded lexer here is a subclass of the original whose token rules are the
original's, except for a few regular expressions replaced by equivalents that can't
backtrack (possessive quantifiers ``*+``/``++``, Python 3.11), that stay on one line
(``[^\\S\\n]`` for ``\\s``), that start only at the start of a run (a lookbehind) or
that let a comment open at the end of the text run to it. Well-formed code gets the same
tokens (`tests/edge/test_bounded_lexers.py` compares the token streams on real code);
what differs is rare layout (a return type on the line before a method's name, an
attribute split over lines) and broken code. `bounded_class` is what `chat.highlight`
highlights a fence with and `bench.lexer_fuzz` measures; `lexer_costs.json` names these
classes (``BoundedCLexer``). A replaced rule that no longer exists in the original (a
Pygments upgrade) raises at import, so a change can't silently bring the old rule back.
"""

from __future__ import annotations

import contextlib
import dis
import functools
import importlib
import re
import types
from collections.abc import Callable, Iterator, Mapping

import pygments.lexer
from pygments.lexer import DelegatingLexer, Lexer, RegexLexer, bygroups, using
from pygments.lexers.c_cpp import CLexer, CppLexer
from pygments.lexers.c_like import ArduinoLexer, CudaLexer
from pygments.lexers.dotnet import CSharpLexer
from pygments.lexers.jvm import JavaLexer, ScalaLexer
from pygments.lexers.markup import MarkdownLexer
from pygments.lexers.objective import ObjectiveCLexer, ObjectiveCppLexer
from pygments.lexers.python import (
    PythonConsoleLexer,
    PythonLexer,
    PythonTracebackLexer,
    _PythonConsoleLexerBase,
)
from pygments.lexers.sql import PlPgsqlLexer, PostgresLexer
from pygments.lexers.textfmts import HttpLexer
from pygments.token import Other, String, Text, Whitespace, _TokenType

# C family (CLexer, CppLexer): the leading whitespace before a `#` directive stays on its
# line (blank lines are the `\n` rule's), and the function rules' parts can't share
# characters.
_C_WS1 = r"\s*(?:/[*].*?[*]/\s*)?"
_C_WS1_LINE = r"[^\S\n]*+(?:/[*].*?[*]/[^\S\n]*+)?+"
_C_COMMENTS = CLexer._possible_comments
_C_COMMENTS_POSSESSIVE = (
    rf"\s*+(?:(?:(?:{CLexer._comment_single})|(?:{CLexer._comment_multiline}))\s*+)*+"
)
_C_IDENT = CLexer._namespaced_ident
_C_IDENT_POSSESSIVE = _C_IDENT.replace(")+", ")++")


def _c_family_fixes(base: type[RegexLexer]) -> dict[str, str]:
    fixes = {
        # a line comment at the end of the text needs no line break (each `/` of a run
        # scanned the rest of the line for one)
        CLexer._comment_single: r"//(?:.|(?<=\\)\n)*+(?:\n|\Z)",
        r"//.*?\n": r"//.*+(?:\n|\Z)",  # in a macro
        r"/[*][\s\S]*?[*]/": r"/[*](?:[^*]|[*](?!/))*+(?:[*]/|\Z)",
        "^(" + _C_WS1 + r")(#if\s+0)": "^(" + _C_WS1_LINE + r")(#if\s+0)",
        "^(" + _C_WS1 + ")(#)": "^(" + _C_WS1_LINE + ")(#)",
    }
    functions = [  # the function definition and declaration rules
        rule[0]
        for rule in base.get_tokendefs()["root"]
        if isinstance(rule, tuple)
        and isinstance(rule[0], str)
        and rule[0].startswith("(" + _C_IDENT + r"(?:[&*\s])+)(" + _C_COMMENTS + ")")
    ]
    if len(functions) != 2:
        raise LookupError(f"{base.__name__}: {len(functions)} function rules")
    for old in functions:
        fixes[old] = (
            old.replace(_C_COMMENTS, _C_COMMENTS_POSSESSIVE)
            .replace(_C_IDENT, _C_IDENT_POSSESSIVE)
            .replace(r"(?:[&*\s])+)", r"(?:[&*\s])++)")
        )
    return fixes


# C#: a method's return type and name on one line (the original's `\s+` let the lazy
# repetition walk every following line from each line start), an attribute after
# indentation, not after blank lines, and on one line.
def _csharp_fixes(ident: str) -> dict[str, str]:
    return {
        r"^([ \t]*)((?:" + ident + r"(?:\[\])?\s+)+?)"
        r"(" + ident + ")"
        r"(\s*)(\()": r"^([ \t]*+)((?:" + ident + r"(?:\[\])?[^\S\n]++)+?)"
        r"(" + ident + ")"
        r"([^\S\n]*+)(\()",
        r"^(\s*)(\[.*?\])": r"^([^\S\n]*+)(\[[^\]\n]*+\])",
        # comments open at the end of the text run to it (each `/` of a run scanned the
        # rest of the text for the end of a comment)
        r"//.*?\n": r"//[^\n]*+(?:\n|\Z)",
        r"/[*].*?[*]/": r"/[*](?:[^*]|[*](?!/))*+(?:[*]/|\Z)",
        # a raw string's `$`s: from the first of a run only
        r'\$*"{3,}.*?"{3,}': r'(?<!\$)\$*+"{3,}.*?"{3,}',
    }


# Java: the same two kinds of rule (labels, `record` and method names).
_JAVA_FIXES = {
    r"(^\s*)((?:(?:public|private|protected|static|strictfp)(?:\s+))*)(record)\b": (
        r"(^[^\S\n]*+)((?:(?:public|private|protected|static|strictfp)(?:\s++))*+)(record)\b"
    ),
    r"((?:(?:[^\W\d]|\$)[\w.\[\]$<>?]*\s+)+?)"
    r"((?:[^\W\d]|\$)[\w$]*)"
    r"(\s*)(\()": r"((?:(?:[^\W\d]|\$)[\w.\[\]$<>?]*+[^\S\n]++){1,8}?)"
    r"((?:[^\W\d]|\$)[\w$]*+)"
    r"(\s*+)(\()",
    r"^(\s*)(default)(:)": r"^([^\S\n]*+)(default)(:)",
    r"(//.*?)(\n)": r"(//[^\n]*+)(\n|\Z)",
    r"/\*.*?\*/": r"/\*(?:[^*]|\*(?!/))*+(?:\*/|\Z)",
    r"^(\s*)((?:[^\W\d]|\$)[\w$]*)(:)": r"^([^\S\n]*+)((?:[^\W\d]|\$)[\w$]*+)(:)",
}


# Scala: a string's characters are taken once (`\\\\` or two `[^"]`: exponential on an
# unclosed string of backslashes).
_SCALA_FIXES = {
    # an operator followed by spaces, from the start of a run of operator characters only
    # (from each of them it scanned the rest of the run)
    rf"({ScalaLexer.opchar}{{2,}})(\s+)": (
        rf"(?<!{ScalaLexer.opchar})({ScalaLexer.opchar}{{2,}}+)(\s+)"
    ),
    r'"(\\\\|\\"|[^"])*"': r'"(\\\\|\\"|[^"])*+"',
    r'raw"(\\\\|\\"|[^"])*"': r'raw"(\\\\|\\"|[^"])*+"',
}

# Python: a docstring's indentation stays on its line (blank lines before it are the
# `\n` rule's).
_PYTHON_FIXES = {
    r'^(\s*)([rRuUbB]{,2})("""[\s\S]*?""")': r'^([^\S\n]*+)([rRuUbB]{,2})("""[\s\S]*?""")',
    r"^(\s*)([rRuUbB]{,2})('''[\s\S]*?''')": (r"^([^\S\n]*+)([rRuUbB]{,2})('''[\s\S]*?''')"),
}


# A lexer's token rules, state -> rules: Pygments' rule tuples (regex, token type, next
# state), `include(...)` and `default(...)` markers, whatever the lexer puts there.
TokenRules = dict[str, list[object]]


def _rewritten(
    states: TokenRules,
    fixes: Mapping[str, str],
    callbacks: Mapping[Callable[..., object], Callable[..., object]] | None = None,
) -> TokenRules:
    """Token rules ``states`` with the regexes in ``fixes`` and the callbacks in
    ``callbacks`` replaced; raises if one of them is not there."""
    callbacks = callbacks or {}
    unused: set[object] = {*fixes, *callbacks}
    tokens: TokenRules = {}
    for state, rules in states.items():
        tokens[state] = []
        for rule in rules:
            if isinstance(rule, tuple) and isinstance(rule[0], str) and rule[0] in fixes:
                unused.discard(rule[0])
                rule = (fixes[rule[0]], *rule[1:])
            if isinstance(rule, tuple) and len(rule) > 1 and rule[1] in callbacks:
                unused.discard(rule[1])
                rule = (rule[0], callbacks[rule[1]], *rule[2:])
            tokens[state].append(rule)
    if unused:
        raise LookupError(f"no rule {sorted(map(repr, unused))[0]}")
    return tokens


def _bounded(
    base: type[RegexLexer],
    tokens: Mapping[str, object] | None,
    what: str = "its backtracking rules bounded",
    **methods: object,
) -> type[RegexLexer]:
    namespace: dict[str, object] = {
        "__doc__": f"{base.__name__} with {what}.",
        "__module__": __name__,
        "name": f"{base.name} (bounded)",
        "aliases": [],
        "filenames": [],
        **methods,
    }
    if tokens is not None:
        namespace["tokens"] = tokens
    return type(f"Bounded{base.__name__}", (base,), namespace)


# Lexers that run another lexer named in the text (issue 34): a Markdown fence's
# language, PostgreSQL's `$$ … $$ LANGUAGE name`, an HTTP body's Content-Type. The
# lexer named could be any of Pygments' (`systemd`: cubic), so what is highlighted is a
# variant that names none: fenced code and an HTTP body are one string token (what
# Pygments does for a language it doesn't know), and PostgreSQL runs only its own
# dialects (`sql`, `plpgsql`) in a `$$` body; any other LANGUAGE is a string.
# `reached_lexers` checks that no highlighted lexer can still resolve one from the text.


def _markdown_codeblock(
    lexer: Lexer, match: re.Match[str]
) -> Iterator[tuple[int, _TokenType, str]]:
    """MarkdownLexer's fenced code block, its code one string (as for an unknown
    language)."""
    yield match.start("initial"), String.Backtick, match.group("initial")
    yield match.start("lang"), String.Backtick, match.group("lang")
    if match.group("afterlang") is not None:
        yield match.start("whitespace"), Whitespace, match.group("whitespace")
        yield match.start("extra"), Text, match.group("extra")
    yield match.start("newline"), Whitespace, match.group("newline")
    yield match.start("code"), String, match.group("code")
    yield match.start("terminator"), String.Backtick, match.group("terminator")


def _http_content(lexer: Lexer, match: re.Match[str]) -> Iterator[tuple[int, _TokenType, str]]:
    """HttpLexer's body, as text (its Content-Type could name any lexer)."""
    yield match.start(), Text, match.group()


def _postgres_dialect(lexer: Lexer, lang: str) -> Lexer | None:
    """The lexer of a `$$` body in LANGUAGE ``lang``: PostgreSQL's own SQL and PL/pgSQL
    (bounded), else None (the body is a string)."""
    dialect = {"sql": BoundedPostgresLexer, "plpgsql": BoundedPlPgsqlLexer}.get(lang.lower())
    return None if dialect is None else dialect(**lexer.options)


BoundedPostgresLexer = _bounded(
    PostgresLexer,
    None,
    "`$$` bodies in PostgreSQL's own dialects only",
    _get_lexer=_postgres_dialect,
)
BoundedPlPgsqlLexer = _bounded(
    PlPgsqlLexer,
    None,
    "`$$` bodies in PostgreSQL's own dialects only",
    _get_lexer=_postgres_dialect,
)
_MARKDOWN_TOKENS = _rewritten(
    MarkdownLexer.get_tokendefs(), {}, {MarkdownLexer._handle_codeblock: _markdown_codeblock}
)
_HTTP_TOKENS = _rewritten(
    HttpLexer.get_tokendefs(), {}, {HttpLexer.content_callback: _http_content}
)


_C_SHARP_TOKENS: dict[str, TokenRules] = {
    level: _rewritten(CSharpLexer.tokens[level], _csharp_fixes(ident))
    for level, ident in CSharpLexer.levels.items()
}


def _c_family(base: type[RegexLexer]) -> type[RegexLexer]:
    return _bounded(base, _rewritten(base.get_tokendefs(), _c_family_fixes(base)))


BoundedPythonLexer = _bounded(PythonLexer, _rewritten(PythonLexer.get_tokendefs(), _PYTHON_FIXES))


# Lexers that run an original whose bounded variant is above (a traceback's code lines, a
# console session's input are Python): the same lexer, running the variant.


def _callbacks_running(
    states: TokenRules, variants: Mapping[type[Lexer], type[Lexer]]
) -> dict[Callable[..., object], Callable[..., object]]:
    """The rules' `using(Original)` callbacks (alone or in `bygroups`) → the same with
    the original's variant."""

    def swapped(action: object) -> object:
        name = getattr(action, "__qualname__", "")
        cells = dict(
            zip(
                getattr(getattr(action, "__code__", None), "co_freevars", ()),
                (c.cell_contents for c in getattr(action, "__closure__", None) or ()),
                strict=True,
            )
        )
        if name == "using.<locals>.callback" and cells.get("_other") in variants:
            kwargs = dict(cells["kwargs"])
            if "stack" in cells["gt_kwargs"]:
                kwargs["state"] = cells["gt_kwargs"]["stack"]
            return using(variants[cells["_other"]], **kwargs)
        if name == "bygroups.<locals>.callback":
            args = [swapped(arg) for arg in cells["args"]]
            if args != list(cells["args"]):
                return bygroups(*args)
        return action

    found: dict[Callable[..., object], Callable[..., object]] = {}
    for rules in states.values():
        for rule in rules:
            if isinstance(rule, tuple) and len(rule) > 1 and callable(rule[1]):
                new = swapped(rule[1])
                if new is not rule[1] and callable(new):
                    found[rule[1]] = new
    if not found:
        raise LookupError("no rule runs one of " + ", ".join(v.__name__ for v in variants))
    return found


_PYTB_TOKENS = PythonTracebackLexer.get_tokendefs()
BoundedPythonTracebackLexer = _bounded(
    PythonTracebackLexer,
    _rewritten(
        _PYTB_TOKENS, {}, _callbacks_running(_PYTB_TOKENS, {PythonLexer: BoundedPythonLexer})
    ),
    "its code lines in the bounded Python lexer",
)


class _BoundedPythonConsoleCode(DelegatingLexer):  # type: ignore[misc]  # Pygments is untyped
    """A Python console session's input (PythonConsoleLexer's inner lexer), in the
    bounded Python lexer."""

    def __init__(self, **options: object) -> None:
        DelegatingLexer.__init__(
            self, BoundedPythonLexer, _PythonConsoleLexerBase, Other.Code, **options
        )


def _python_console(lexer: Lexer, **options: object) -> None:
    """PythonConsoleLexer's Python 3 lexers, bounded."""
    DelegatingLexer.__init__(
        lexer, BoundedPythonTracebackLexer, _BoundedPythonConsoleCode, Other.Traceback, **options
    )


BoundedPythonConsoleLexer = type(
    "BoundedPythonConsoleLexer",
    (PythonConsoleLexer,),
    {
        "__doc__": "PythonConsoleLexer with its Python and traceback lexers bounded.",
        "__module__": __name__,
        "name": f"{PythonConsoleLexer.name} (bounded)",
        "aliases": [],
        "filenames": [],
        "__init__": _python_console,
    },
)


LOOKUP_FREE: dict[str, type[RegexLexer]] = {
    "PostgresLexer": BoundedPostgresLexer,
    "PlPgsqlLexer": BoundedPlPgsqlLexer,
    "MarkdownLexer": _bounded(
        MarkdownLexer,
        _MARKDOWN_TOKENS,
        "fenced code as a string",
        _handle_codeblock=_markdown_codeblock,
    ),
    "HttpLexer": _bounded(
        HttpLexer, _HTTP_TOKENS, "the body as text", content_callback=_http_content
    ),
}
"""Lexers that run a lexer named in the text → a variant that doesn't (their other
rules are the original's, and so is their cost curve)."""

BOUNDED: dict[str, type[Lexer]] = {
    **{
        lexer.__name__: _c_family(lexer)
        for lexer in (CLexer, CppLexer, ObjectiveCLexer, ObjectiveCppLexer, ArduinoLexer, CudaLexer)
    },
    "CSharpLexer": _bounded(CSharpLexer, _C_SHARP_TOKENS),
    "PythonLexer": BoundedPythonLexer,
    "ScalaLexer": _bounded(ScalaLexer, _rewritten(ScalaLexer.get_tokendefs(), _SCALA_FIXES)),
    "JavaLexer": _bounded(JavaLexer, _rewritten(JavaLexer.get_tokendefs(), _JAVA_FIXES)),
    "PythonTracebackLexer": BoundedPythonTracebackLexer,
    "PythonConsoleLexer": BoundedPythonConsoleLexer,
    **LOOKUP_FREE,
}
"""Original lexer class name → its bounded subclass (backtracking rules rewritten, or
`LOOKUP_FREE`)."""


def bounded_class(lexer: Lexer) -> Lexer:
    """The lexer to highlight with: ``lexer``'s bounded variant (same options) if there
    is one, else ``lexer`` itself."""
    bounded = BOUNDED.get(type(lexer).__name__)
    return lexer if bounded is None else bounded(**lexer.options)


# --- what a lexer can run ------------------------------------------------------------------

_LOOKUPS = frozenset(
    {
        "get_lexer_by_name",
        "get_lexer_for_filename",
        "get_lexer_for_mimetype",
        "guess_lexer",
        "guess_lexer_for_filename",
        "find_lexer_class",
        "find_lexer_class_by_name",
        "find_lexer_class_for_filename",
        "load_lexer_from_file",
        "get_all_lexers",
        "LEXERS",
    }
)
"""Pygments' ways to find a lexer by a name, file name, MIME type or the text itself."""
_FRAMEWORK = frozenset(v for v in vars(pygments.lexer).values() if isinstance(v, type))
"""`Lexer`, `RegexLexer`, `DelegatingLexer`… and `this`: not lexers of a language."""
_NOT_LEXING = frozenset({"_tokens", "analyse_text"})


class ResolvesLexer(Exception):
    """A lexer can run a lexer it looks up from the text (its name, MIME type or a
    guess): no bound holds."""


def _lexers_in(owner: type[Lexer], roots: list[object]) -> set[type[Lexer]]:  # noqa: C901 - one walk over Python's kinds of object
    """The lexer classes that the functions, rules and values ``roots`` name (through
    closures, globals, imports and nested code); raises `ResolvesLexer` for a lookup."""
    found: set[type[Lexer]] = set()
    seen: set[int] = set()
    todo = list(roots)

    def code(c: types.CodeType, namespace: Mapping[str, object]) -> None:
        lookups = _LOOKUPS.intersection(c.co_names)
        if lookups:
            raise ResolvesLexer(f"{owner.__name__}: {c.co_qualname} calls {min(lookups)}")
        module = ""
        for op in dis.get_instructions(c):
            if op.opname in ("LOAD_GLOBAL", "LOAD_NAME") and op.argval in namespace:
                todo.append(namespace[op.argval])
            elif op.opname == "IMPORT_NAME":
                module = str(op.argval)
            elif op.opname == "IMPORT_FROM":
                todo.append(getattr(importlib.import_module(module), str(op.argval)))
        for const in c.co_consts:
            if isinstance(const, types.CodeType):
                code(const, namespace)

    while todo:
        item = todo.pop()
        if id(item) in seen or isinstance(item, (str, bytes, int, float, _TokenType)):
            continue
        seen.add(id(item))
        if isinstance(item, type):
            if item in owner.__mro__:  # `Base.method(self, …)`: the base's own code runs
                todo.extend(_own_attributes(item))
            elif issubclass(item, Lexer) and item not in _FRAMEWORK:
                found.add(item)
        elif isinstance(item, (staticmethod, classmethod, types.MethodType)):
            todo.append(item.__func__)
        elif isinstance(item, functools.partial):
            todo.extend([item.func, *item.args, *item.keywords.values()])
        elif isinstance(item, types.FunctionType):
            code(item.__code__, item.__globals__)
            cells = zip(item.__code__.co_freevars, item.__closure__ or (), strict=True)
            for name, cell in cells:
                if name != "__class__":  # `super()`'s: read with the attribute it overrides
                    with contextlib.suppress(ValueError):  # an empty cell
                        todo.append(cell.cell_contents)
            todo.extend(item.__defaults__ or ())
        elif isinstance(item, Mapping):
            todo.extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            todo.extend(item)
    return found


_RUNS: dict[type[Lexer], frozenset[type[Lexer]]] = {}
_REACHED: dict[type[Lexer], frozenset[type[Lexer]]] = {}


def _runs(lexer: type[Lexer]) -> frozenset[type[Lexer]]:
    """The lexer classes ``lexer``'s code, rules and attributes name (a method that calls
    `super()` and a base named in the code are read too; the bases themselves are not
    other lexers: they lex with ``lexer``)."""
    if lexer not in _RUNS:
        _RUNS[lexer] = _named_by(lexer)
    return _RUNS[lexer]


def _lexing(name: str) -> bool:
    return name not in _NOT_LEXING and (not name.startswith("__") or name == "__init__")


def _own_attributes(cls: type) -> list[object]:
    return [value for name, value in vars(cls).items() if _lexing(name)]


def _calls_super(value: object) -> bool:
    function = getattr(value, "__func__", value)
    code = getattr(function, "__code__", None)
    return code is not None and ("super" in code.co_names or "__class__" in code.co_freevars)


def _named_by(lexer: type[Lexer]) -> frozenset[type[Lexer]]:
    roots: list[object] = []
    for name in filter(_lexing, dir(lexer)):
        # the attribute lexing uses, and every one it overrides once one calls `super()`
        # (`super(Cls, self)` can skip any number of them)
        chain = [vars(cls)[name] for cls in lexer.__mro__ if name in vars(cls)]
        roots.extend(chain if chain and _calls_super(chain[0]) else chain[:1])
    if issubclass(lexer, RegexLexer):
        try:
            roots.append(lexer.get_tokendefs())
        except (AttributeError, TypeError):  # CSharpLexer's per-level tokens
            roots.extend(vars(cls).get("tokens") for cls in lexer.__mro__)
    return frozenset(_lexers_in(lexer, roots))


def reached_lexers(lexer: type[Lexer]) -> frozenset[type[Lexer]]:
    """Every other lexer class lexing with ``lexer`` can run, however deeply nested;
    raises `ResolvesLexer` when one of them looks a lexer up from the text.

    A static reading of the code (rules, callbacks, methods, the globals and imports
    they name), so it over-approximates: a lexer named but not run still counts."""
    if lexer in _REACHED:
        return _REACHED[lexer]
    reached: set[type[Lexer]] = set()
    todo = [lexer]
    while todo:
        for other in _runs(todo.pop()):
            if other is not lexer and other not in reached:
                reached.add(other)
                todo.append(other)
    _REACHED[lexer] = frozenset(reached)
    return _REACHED[lexer]
