"""The scanner knows code where CommonMark does: markdown-it-py (``js-default``) is the
reference (issue 25 item 8).

Messages are built line by line from fence lines (backticks and tildes, two to five,
indented by spaces or tabs, with info strings and trailing blanks), prose, blank lines,
breaks, indented lines and *probe* lines — a one-line XML questionnaire with a title of
its own.  A probe must become a questionnaire exactly when markdown-it does not put it
in code (a fence, an indented code block or a code span).
Blockquotes and list items are left out: inside them the scanner reads fences more
conservatively than CommonMark (README, "Fences").
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from questionnaires.protocol import parse_message

from .conftest import VALID_JSON

PROBE = f"<questionnaire>{VALID_JSON}</questionnaire>"
CODE_TOKENS = ("fence", "code_block", "code_inline")
_MD = MarkdownIt("js-default")

indents = st.sampled_from(["", " ", "  ", "   ", "    ", "\t", " \t", "     "])
fence_lines = st.builds(
    lambda indent, char, count, info, trail: indent + char * count + info + trail,
    indents,
    st.sampled_from(["`", "~"]),
    st.integers(min_value=2, max_value=5),
    st.sampled_from(["", "py", " questionnaire", "questionnaire", "a`b", "~x"]),
    st.sampled_from(["", " ", "\t", " x"]),
)
other_lines = st.sampled_from(
    ["text", "", "    indented", "\tindented", "# heading", "---", "***", "===", "`", "a ``"]
)
lines = st.lists(
    st.one_of(fence_lines, other_lines, indents.map(lambda i: i + "{probe}")), max_size=14
)


def _probe(number: int) -> str:
    return PROBE.replace("项目确认", f"P{number}")


def _in_code(text: str) -> str:
    """Everything markdown-it reads as code, joined."""
    parts = []
    for token in _MD.parse(text):
        if token.type in CODE_TOKENS:
            parts.append(token.content)
        parts.extend(c.content for c in token.children or () if c.type in CODE_TOKENS)
    return "\n".join(parts)


@settings(max_examples=600, deadline=None)
@given(rows=lines)
def test_probes_are_questionnaires_exactly_outside_code(rows: list[str]) -> None:
    rows = [row.replace("{probe}", _probe(n)) for n, row in enumerate(rows)]
    text = "Intro.\n" + "\n".join(rows) + "\n"
    code = _in_code(text)
    titles = {
        segment.title
        for segment in parse_message(text, message_id="m")
        if segment.kind == "questionnaire"
    }
    for number, row in enumerate(rows):
        if row.lstrip(" \t") == _probe(number):
            assert (f"P{number}" in titles) == (_probe(number) not in code), (text, number)
