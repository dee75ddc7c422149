"""Hostile input, round 4 (issue 34 items 1, 4 and 5): a lexer never runs a lexer named
in the text, non-finite JSON numbers are a 400, `format: email` is checked in linear time."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pygments.lexer import Lexer
from pygments.lexers import get_all_lexers

from bench.lexer_fuzz import NESTINGS
from chat.highlight import bounded_lexer, charged_costs, lexer_costs
from chat.lexers import ResolvesLexer, reached_lexers
from chat.rendering import markdown_to_html

# --- 1. highlighting never runs a lexer the text names -------------------------------------


class LexerRan(BaseException):
    """A lexer outside the ones a block is charged for was started (a BaseException, so
    no `except Exception` on the way can hide it)."""


@contextmanager
def lexers_started(
    monkeypatch: pytest.MonkeyPatch, allowed: Callable[[type[Lexer]], bool] = lambda _: True
) -> Iterator[list[type[Lexer]]]:
    """Every lexer class instantiated inside the block (by Pygments' lookups, `using`,
    a delegating lexer…); raises `LexerRan` at once for one ``allowed`` refuses, so the
    unfixed code fails without lexing a cubic lexer for seconds."""
    started: list[type[Lexer]] = []
    original = Lexer.__init__

    def spy(self: Lexer, **options: object) -> None:
        started.append(type(self))
        if not allowed(type(self)):
            raise LexerRan(type(self).__name__)
        original(self, **options)

    with monkeypatch.context() as patch:
        patch.setattr(Lexer, "__init__", spy)
        yield started


def _charged_for(lang: str) -> Callable[[type[Lexer]], bool]:
    """The lexer a fence in ``lang`` is highlighted with, and those it is charged for."""
    lexer = bounded_lexer(lang)
    assert lexer is not None, f"{lang} should be highlighted"
    charged = {type(lexer), *reached_lexers(type(lexer))}
    return lambda cls: cls in charged


def _postgres_block(size: int, language: str) -> str:
    opener = "CREATE FUNCTION f() RETURNS void AS $$\nx"
    closer = f"\n$$ LANGUAGE {language};\n"
    return opener + " " * (size - len(opener) - len(closer)) + closer


def test_a_postgresql_block_never_runs_the_language_its_body_names(monkeypatch):
    """Issue 34: 1,278 characters of ```postgresql with a `LANGUAGE systemd` body cost
    4.9 s of CPU (systemd's lexer is cubic on "x" and spaces)."""
    code = _postgres_block(1_278, "systemd")
    assert len(code) == 1_278
    with lexers_started(monkeypatch, _charged_for("postgresql")) as started:
        html = markdown_to_html(f"```postgresql\n{code}```\n")
    assert '<span class="k">CREATE</span>' in html  # still highlighted
    assert '<span class="s">x    ' in html  # the body is a string
    assert "SystemdLexer" not in {cls.__name__ for cls in started}


def test_postgres_still_highlights_its_own_dialects_in_a_body(monkeypatch):
    code = "CREATE FUNCTION f() RETURNS int AS $$ BEGIN RETURN 1; END $$ LANGUAGE plpgsql;\n"
    with lexers_started(monkeypatch, _charged_for("postgresql")) as started:
        html = markdown_to_html(f"```postgresql\n{code}```\n")
    assert '<span class="k">RETURN</span>' in html
    assert {cls.__name__ for cls in started} >= {"BoundedPlPgsqlLexer"}


def test_a_markdown_block_never_runs_the_language_of_a_nested_fence(monkeypatch):
    """Issue 34: a ````md block with a nested systemd fence, 10 s of CPU at 1,500
    characters."""
    code = "```systemd\nx" + " " * 1_480 + "\n```\n"
    with lexers_started(monkeypatch, _charged_for("md")) as started:
        html = markdown_to_html(f"````md\n{code}````\n")
    assert '<span class="sb">```systemd</span>' in html  # the fence is highlighted
    assert '<span class="s">x   ' in html  # its content is a string
    assert {cls.__name__ for cls in started} <= {"BoundedMarkdownLexer"}  # nothing nested


@pytest.mark.parametrize(
    "lang",
    ["postgresql", "psql", "plpgsql", "md", "tid", "arturo", "notmuch", "rst"]
    + ["http", "mime", "email", "wikitext"],
)
def test_a_lexer_that_looks_another_up_from_the_text_is_never_highlighted_with(lang):
    """Each lexer the issue names (and the others found in Pygments' source) is either
    plain code or a variant that names no lexer from the text."""
    lexer = bounded_lexer(lang)
    if lexer is not None:
        reached = reached_lexers(type(lexer))  # raises ResolvesLexer for a lookup
        assert {cls.__name__ for cls in reached} <= set(lexer_costs())


def test_the_static_reading_finds_lookups_and_fixed_inner_lexers():
    from pygments.lexers.html import HtmlLexer
    from pygments.lexers.markup import MarkdownLexer
    from pygments.lexers.sql import PostgresLexer
    from pygments.lexers.textfmts import NotmuchLexer

    for delegating in (PostgresLexer, MarkdownLexer, NotmuchLexer):
        with pytest.raises(ResolvesLexer):
            reached_lexers(delegating)
    html = {cls.__name__ for cls in reached_lexers(HtmlLexer)}
    assert {"JavascriptLexer", "CssLexer"} <= html
    # charged the sum of the curves: HTML's own and JavaScript's, CSS's
    costs = lexer_costs()
    charged = charged_costs(HtmlLexer)
    assert charged is not None
    assert charged[0] >= costs["HtmlLexer"][0] + costs["JavascriptLexer"][0] + costs["CssLexer"][0]


def test_an_override_does_not_hide_what_it_calls_of_its_base():
    """A subclass whose override calls `super()`, or a base's method by name, still runs
    the base's code: the reading follows both."""
    from pygments.lexers.markup import MarkdownLexer

    from chat.lexers import BOUNDED

    class Wrapped(BOUNDED["MarkdownLexer"]):  # type: ignore[misc,valid-type]
        def get_tokens_unprocessed(self, text, stack=("root",)):
            yield from super().get_tokens_unprocessed(text, stack)

        def _handle_codeblock(self, match):
            yield from MarkdownLexer._handle_codeblock(self, match)

    class Chained(BOUNDED["MarkdownLexer"]):  # type: ignore[misc,valid-type]
        def _handle_codeblock(self, match):
            yield from super(BOUNDED["MarkdownLexer"], self)._handle_codeblock(match)

    assert reached_lexers(BOUNDED["MarkdownLexer"]) == frozenset()
    for lexer in (Wrapped, Chained):
        with pytest.raises(ResolvesLexer):
            reached_lexers(lexer)


def test_python_sessions_and_tracebacks_run_the_bounded_python_lexer(monkeypatch):
    """pycon and pytb ran Pygments' original Python lexer (unbounded: its docstring rule
    scanned every blank line): they run the bounded one, and are charged for it."""
    text = (
        ">>> def f():\n...     return 1\n>>> f(\nTraceback (most recent call last):\n"
        '  File "<stdin>", line 1, in <module>\n    f(\nSyntaxError: bad\n'
    )
    for lang in ("pycon", "pytb"):
        with lexers_started(monkeypatch, _charged_for(lang)) as started:
            html = markdown_to_html(f"```{lang}\n{text}```\n")
        assert '<span class="n">f</span>' in html
        assert "PythonLexer" not in {cls.__name__ for cls in started}
        charged = charged_costs(type(bounded_lexer(lang)))
        assert charged is not None and charged[0] > lexer_costs()["BoundedPythonLexer"][0]


def _every_alias() -> list[str]:
    return sorted(
        {alias for _name, aliases, _files, _mimes in get_all_lexers() for alias in aliases}
    )


def test_no_highlighted_lexer_can_reach_an_unbounded_one():
    """The property over the whole table: every lexer class a fence may be highlighted
    with (`chat.highlight.lexer_for`'s: Pygments', or its variant) names no lookup, and
    every lexer it can run, however nested, has a measured curve."""
    from importlib import import_module

    from pygments.lexers._mapping import LEXERS

    from chat.lexers import BOUNDED

    costs = lexer_costs()
    highlighted = 0
    for name, (module, _title, aliases, *_rest) in LEXERS.items():
        lexer = BOUNDED.get(name) or getattr(import_module(module), name)
        if not aliases or charged_costs(lexer) is None:  # never a fence's, or plain
            continue
        highlighted += 1
        unmeasured = {cls.__name__ for cls in reached_lexers(lexer)} - set(costs)
        assert not unmeasured, f"{aliases[0]} can run {sorted(unmeasured)}"
    assert highlighted > 400  # most languages still are


_INNER_ALIASES = _every_alias()
_MIMETYPES = sorted({mime for *_rest, mimes in get_all_lexers() for mime in mimes})
_WRAPPERS = {
    **NESTINGS,
    "pycon": (">>> ", "\n... x\n"),
    "pytb": ('Traceback (most recent call last):\n  File "x", line 1\n    ', "\nValueError\n"),
}
_OUTER = sorted(
    alias
    for alias in [*_WRAPPERS, "html", "php", "erb", "rhtml", "jsp", "xml+django", "mako"]
    if bounded_lexer(alias) is not None
)


@settings(max_examples=150)
@given(
    outer=st.sampled_from(_OUTER),
    inner=st.sampled_from(_INNER_ALIASES),
    mime=st.sampled_from(_MIMETYPES),
    body=st.text(alphabet="x $;{}<>\n\"'#/*", max_size=40),
)
def test_lexing_starts_only_the_lexers_a_block_is_charged_for(outer, inner, mime, body):
    """At run time, for text that names any lexer in every way the outer lexer's syntax
    allows, the lexers started are the outer one and those `reached_lexers` found (the
    static reading misses nothing)."""
    opener, closer = _WRAPPERS.get(outer, ("<script>", "</script>"))
    text = opener.format(lang=inner, mime=mime) + body + closer.format(lang=inner, mime=mime)
    lexer = bounded_lexer(outer)
    assert lexer is not None
    charged = {type(lexer), *reached_lexers(type(lexer))}
    with (
        pytest.MonkeyPatch.context() as monkeypatch,
        lexers_started(monkeypatch, charged.__contains__),
    ):
        list(lexer.get_tokens(text))


# --- 4. non-finite JSON numbers are not JSON -----------------------------------------------

NON_FINITE = ["NaN", "-Infinity", "Infinity", "1e999", "-1e999"]


def _post_raw(client, api_token, path: str, body: str):
    return client.generic(
        "POST",
        path,
        body.encode(),
        content_type="application/json",
        headers={"Authorization": f"Bearer {api_token}"},
    )


def _tool_call_message(extra: str) -> str:
    return (
        '{"role": "assistant", "content": "Let me look.", "tool_calls": [{"id": "call_1", '
        '"type": "function", "function": {"name": "lookup", "arguments": "{}"}, ' + extra + "}]}"
    )


def _refuses_non_finite_numbers(client, api_token, user) -> None:
    from chat.core.models import Message
    from chat.core.services import conversation_create

    conversation = conversation_create(owner=user, agent="external")
    path = f"/api/v1/conversations/{conversation.pk}/messages"
    for number in NON_FINITE:
        for body in (
            _tool_call_message(f'"x_score": {number}'),  # the issue's: an unknown key
            _tool_call_message(f'"x": {{"deep": [1, {number}]}}'),
            '{"role": "user", "content": "hi", "unknown": ' + number + "}",
        ):
            response = _post_raw(client, api_token, path, body)
            assert response.status_code == 400, (body, response.content[:300])
            payload = response.json()
            assert payload["error"] == "invalid_json"
            assert "finite" in payload["message"]
    created = _post_raw(client, api_token, "/api/v1/conversations/", '{"title": "t", "x": NaN}')
    assert created.status_code == 400 and created.json()["error"] == "invalid_json"
    assert not Message.objects.filter(conversation=conversation).exists()


def _stores_known_tool_call_keys_only(client, api_token, user) -> None:
    from chat.core.models import Message
    from chat.core.services import conversation_create

    conversation = conversation_create(owner=user, agent="external")
    path = f"/api/v1/conversations/{conversation.pk}/messages"
    body = _tool_call_message('"x_score": 1e300, "x_note": {"a": [1, 2]}')
    body = body.replace('"arguments": "{}"', '"arguments": "{}", "x_inner": 1.5')
    response = _post_raw(client, api_token, path, body)
    assert response.status_code == 201, response.content[:300]
    stored = Message.objects.get(pk=response.json()["id"])
    expected = [
        {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
    ]
    assert stored.tool_calls == expected
    listed = client.get(path, headers={"Authorization": f"Bearer {api_token}"}).json()
    assert listed["messages"][-1]["tool_calls"] == expected


@pytest.mark.django_db
def test_non_finite_numbers_anywhere_in_a_body_are_invalid_json(client, api_token, user):
    """Issue 34: `NaN`, `-Infinity`, `1e999` in an unknown key of a tool call were a 500
    (PostgreSQL's jsonb and SQLite's JSON refuse them); now 400 `invalid_json` and
    nothing is stored, wherever in the body they are."""
    _refuses_non_finite_numbers(client, api_token, user)


@pytest.mark.django_db
def test_a_tool_call_is_stored_with_its_known_keys_only(client, api_token, user):
    _stores_known_tool_call_keys_only(client, api_token, user)


@pytest.mark.postgres
@pytest.mark.django_db
def test_non_finite_numbers_and_unknown_keys_on_postgresql(postgres_only, client, api_token, user):
    """The same on PostgreSQL, where the 500 came from jsonb refusing the value."""
    _refuses_non_finite_numbers(client, api_token, user)
    _stores_known_tool_call_keys_only(client, api_token, user)


def test_the_request_parser_is_strict_json():
    from chat.edge.http import NonFiniteNumber, parse_json

    assert parse_json('{"a": [1, 2.5, -0.0, 1e300, "NaN"]}') == {"a": [1, 2.5, -0.0, 1e300, "NaN"]}
    for number in NON_FINITE:
        with pytest.raises(NonFiniteNumber):
            parse_json(f'{{"a": {number}}}')


def test_the_storage_guard_refuses_non_finite_numbers_from_any_parser():
    """`text_problem` is the check every input path runs before storing (JSON bodies, form
    posts, MCP tool arguments, which the MCP SDK parses with pydantic: it reads `NaN`)."""
    from chat.core.identity import RunIdentity
    from chat.core.text import text_problem
    from chat.edge.mcp import tool_execute

    assert text_problem({"a": [1, 2.5, float("nan")]}) == ("invalid_json", "$.a[2]")
    assert text_problem({"a": {"b": float("-inf")}}) == ("invalid_json", "$.a.b")
    assert text_problem({"a": [1, 2.5, 1e300]}) is None
    # refused before the run is looked up or anything is written
    refused = tool_execute(RunIdentity(0, 0, 0), "ask_user_options", {"x": float("inf")})
    assert refused["success"] is False and refused["error_code"] == "invalid_json"


# --- 5. `format` checks run in linear time ------------------------------------------------


def _cpu_seconds(check: Callable[[], object]) -> float:
    import time

    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        check()
        best = min(best, time.process_time() - start)
    return best


@pytest.mark.parametrize(
    ("fmt", "crafted"),
    [
        ("email", lambda n: "a@" + "." * (n - 3) + "@"),  # every dot a place to backtrack to
        ("email", lambda n: "a@" + "b." * ((n - 3) // 2) + "@"),
        ("uri", lambda n: "a" + "+" * (n - 2) + " "),
        ("date-time", lambda n: "2024-01-01T00:00:00." + "0" * (n - 21) + "x"),
    ],
)
def test_a_format_check_stays_linear_on_a_crafted_value(monkeypatch, fmt, crafted):
    """Issue 34: `format: email` ran Python's `re` on what a person typed, ~0.7 s for a
    crafted value. The check runs in RE2 (`format_matches`), and four times the text
    costs about four times as much, not sixteen (CPU time, best of three, with slack
    for a busy machine: Python's `re` took 0.04 s → 0.7 s here)."""
    from questionnaires.protocol import elicitation_schema
    from questionnaires.protocol.elicitation_schema import MAX_TEXT, FieldSpec, validate_value

    spec = FieldSpec(name="f", kind="string", title="F", format=fmt)
    checked: list[str] = []
    real = elicitation_schema.format_matches

    def spy(name: str, value: str) -> bool:
        checked.append(name)
        return real(name, value)

    monkeypatch.setattr(elicitation_schema, "format_matches", spy)
    small, large = crafted(MAX_TEXT // 4), crafted(MAX_TEXT)
    assert len(large) <= MAX_TEXT
    assert validate_value(spec, large)[0].code == f"invalid_{fmt.replace('-', '')}"
    assert checked == [fmt]  # the RE2 check, not a Python pattern
    t_small = _cpu_seconds(lambda: validate_value(spec, small))
    t_large = _cpu_seconds(lambda: validate_value(spec, large))
    assert t_large < 8 * t_small + 0.02, (t_small, t_large)


def test_the_format_shapes_are_re2_patterns():
    import re2

    from questionnaires.protocol.elicitation_guards import FORMAT_PATTERNS, _compiled

    for pattern in FORMAT_PATTERNS.values():
        assert isinstance(_compiled(pattern), re2._Regexp)
