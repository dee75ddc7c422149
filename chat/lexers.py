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

from collections.abc import Mapping

from pygments.lexer import Lexer, RegexLexer
from pygments.lexers.c_cpp import CLexer, CppLexer
from pygments.lexers.c_like import ArduinoLexer, CudaLexer
from pygments.lexers.dotnet import CSharpLexer
from pygments.lexers.jvm import JavaLexer, ScalaLexer
from pygments.lexers.objective import ObjectiveCLexer, ObjectiveCppLexer
from pygments.lexers.python import PythonLexer

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


def _rewritten(states: TokenRules, fixes: dict[str, str]) -> TokenRules:
    """Token rules ``states`` with the regexes in ``fixes`` replaced; raises if one of
    them is not there."""
    unused = set(fixes)
    tokens: TokenRules = {}
    for state, rules in states.items():
        tokens[state] = []
        for rule in rules:
            if isinstance(rule, tuple) and isinstance(rule[0], str) and rule[0] in fixes:
                unused.discard(rule[0])
                rule = (fixes[rule[0]], *rule[1:])
            tokens[state].append(rule)
    if unused:
        raise LookupError(f"no rule {sorted(unused)[0]!r}")
    return tokens


def _bounded(base: type[RegexLexer], tokens: Mapping[str, object]) -> type[RegexLexer]:
    return type(
        f"Bounded{base.__name__}",
        (base,),
        {
            "__doc__": f"{base.__name__} with its backtracking rules bounded.",
            "__module__": __name__,
            "name": f"{base.name} (bounded)",
            "aliases": [],
            "filenames": [],
            "tokens": tokens,
        },
    )


_C_SHARP_TOKENS: dict[str, TokenRules] = {
    level: _rewritten(CSharpLexer.tokens[level], _csharp_fixes(ident))
    for level, ident in CSharpLexer.levels.items()
}


def _c_family(base: type[RegexLexer]) -> type[RegexLexer]:
    return _bounded(base, _rewritten(base.get_tokendefs(), _c_family_fixes(base)))


BOUNDED: dict[str, type[RegexLexer]] = {
    **{
        lexer.__name__: _c_family(lexer)
        for lexer in (CLexer, CppLexer, ObjectiveCLexer, ObjectiveCppLexer, ArduinoLexer, CudaLexer)
    },
    "CSharpLexer": _bounded(CSharpLexer, _C_SHARP_TOKENS),
    "PythonLexer": _bounded(PythonLexer, _rewritten(PythonLexer.get_tokendefs(), _PYTHON_FIXES)),
    "ScalaLexer": _bounded(ScalaLexer, _rewritten(ScalaLexer.get_tokendefs(), _SCALA_FIXES)),
    "JavaLexer": _bounded(JavaLexer, _rewritten(JavaLexer.get_tokendefs(), _JAVA_FIXES)),
}
"""Original lexer class name → its bounded subclass."""


def bounded_class(lexer: Lexer) -> Lexer:
    """The lexer to highlight with: ``lexer``'s bounded variant (same options) if there
    is one, else ``lexer`` itself."""
    bounded = BOUNDED.get(type(lexer).__name__)
    return lexer if bounded is None else bounded(**lexer.options)
