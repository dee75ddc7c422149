"""Scanner invariants (hypothesis): a closing tag in code never closes a block, and line
endings never change what is found (issue 25 items 2 and 7)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from questionnaires.protocol import parse_message, self_check

from .conftest import VALID_JSON, VALID_YAML

CLOSER = "</questionnaire>"
# Fragments without backticks, tildes or indentation, so they can't change whether the
# wrapped closing tag below is code; openers of every kind, bodies, prose, line breaks.
PLAIN = [
    "<questionnaire>",
    "<questionnaire>\n",
    "<questionnaire>{",
    "<sage-questionnaire>",
    "&lt;questionnaire&gt;",
    VALID_JSON,
    '{"title": "T", ',
    "Intro text. ",
    "你好",
    "\n",
    "\n\n",
    "# ",
    "<questionnaire/>",
    "}",
]
# How a closing tag is put in code: code spans of one to three backticks, fences of
# backticks and tildes (longer ones too), an indented code block.
WRAPS = [
    "`{}`",
    "`` {} ``",
    "``` {} ```",
    "\n\n```\n{}\n```\n\n",
    "\n````md\n{}\n````\n",
    "\n~~~\n{}\n~~~\n",
    "\n\n    {}\n\n",
    "\n\n\t{}\n\n",
]
plain = st.lists(st.sampled_from(PLAIN), max_size=8).map("".join)


def _found(content: str) -> list[dict[str, Any]]:
    """What a message yields, line endings aside: kinds, names, ids, data, error codes."""
    result = []
    for segment in parse_message(content, message_id="m"):
        data = segment.to_dict()
        data.pop("raw")
        for error in data.get("errors", ()):
            error.pop("message")
        result.append(data)
    return result


@settings(max_examples=300, deadline=None)
@given(before=plain, middle=plain, after=plain, wrap=st.sampled_from(WRAPS))
def test_a_closing_tag_in_code_never_closes(
    before: str, middle: str, after: str, wrap: str
) -> None:
    content = before + middle + wrap.format(CLOSER) + after
    closer_end = len(before + middle) + wrap.format(CLOSER).index(CLOSER) + len(CLOSER)
    for segment in parse_message(content, message_id="m"):
        if segment.kind != "markdown":
            assert segment.end != closer_end, (content, segment)
    self_check(content)  # never raises, whatever was found


# Everything the round-trip property throws at the parser, without carriage returns.
FRAGMENTS = [
    "```questionnaire\n",
    "```\n",
    "\t```\n",
    "   ```\n",
    "~~~\n",
    "    ",
    "\t",
    "\n",
    "\n\n",
    "`",
    "> ",
    "- ",
    "# ",
    "<questionnaire>",
    "<questionnaire>\n",
    "</questionnaire>",
    "<questionnaire/>",
    '<questionnaire id="x">',
    "<questionnaire-response>",
    "</questionnaire-response>",
    "&lt;questionnaire&gt;",
    "{",
    "}",
    VALID_YAML,
    VALID_JSON,
    '{"title":"a\nb","questions":[{"type":"text","text":"x"}]}',
    "title: [\n",
    "Intro text. ",
    "你好？",
]
messages = st.lists(st.sampled_from(FRAGMENTS), max_size=30).map("".join)


@settings(max_examples=300, deadline=None)
@given(
    content=messages,
    ending=st.sampled_from(["\r\n", "\r"]),
    role=st.sampled_from(["assistant", "user"]),
)
def test_line_endings_never_change_what_is_found(content: str, ending: str, role: str) -> None:
    converted = content.replace("\n", ending)
    segments = parse_message(converted, message_id="m", role=role)
    assert "".join(s.raw for s in segments) == converted
    if role == "assistant":
        assert _found(converted) == _found(content)
        assert self_check(converted).passed == self_check(content).passed
    else:
        assert [s.kind for s in segments] == [
            s.kind for s in parse_message(content, message_id="m", role=role)
        ]
