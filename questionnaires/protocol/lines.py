"""What one line of a message is to the scanner: the CommonMark block starts it needs.

A line is blank, prose text, an ATX heading, indented code, a fence line, or a break (a
thematic break, or a setext underline after paragraph text).  Blank lines, headings,
fences and breaks end a paragraph; indented code can't interrupt one.  A blockquote
marker with nothing after it ends a paragraph like a blank line.  Indentation is
counted in columns (``fences.columns``).
"""

from __future__ import annotations

import re

from .fences import Fence, fence_at

BLANK, TEXT, HEADING, CODE, FENCE, BREAK = range(6)

CONTAINER_RE = re.compile(r"(?:[ \t]*(?:>|[-+*][ \t]|[0-9]{1,9}[.)][ \t]))+[ \t]*")
_BREAK_RE = re.compile(r"([-*_])[ \t]*(?:\1[ \t]*){2,}")
_UNDERLINE_RE = re.compile(r"(?:=+|-+)[ \t]*")
# First characters of a line that may end a paragraph: a line starting with any other
# character is prose text to `classify` (the scanner skips the call for those).
BLOCK_START = _BLOCK_START = frozenset(" \t\n`~#>-+*_=0123456789")
_MARKERS = frozenset("-+*0123456789")  # list markers: they end one as a container fence
_RULE_CHARS_RE = re.compile(r"[-*_= \t]*$")


def classify(line: str, in_para: bool, in_container: bool = False) -> tuple[int, Fence | None]:
    """The kind of ``line`` (no line ending) and the fence it opens, if any.  ``in_para``:
    it follows paragraph text, ``in_container``: of a list item or a quote."""
    body = line.lstrip(" \t")
    if not body.strip(" \t") or (body[0] == ">" and not body.lstrip(" \t>")):
        return BLANK, None
    indent = line[: len(line) - len(body)]
    cols = len(indent.expandtabs(4)) if "\t" in indent else len(indent)  # fences.columns
    first = body[0]
    if first in "`~":
        fence = fence_at(body, "top" if cols <= 3 else "loose")
        # A fence indented four columns continues a paragraph (it is text), except in
        # a list item's paragraph, where it may be the item's own fence: read as code,
        # the safe side.
        if fence is not None and (cols <= 3 or in_container):
            return FENCE, fence
    if cols >= 4:
        return (TEXT, None) if in_para else (CODE, None)
    if first in ">-+*0123456789" and ("```" in body or "~~~" in body):
        m = CONTAINER_RE.match(line)
        if m is not None:
            fence = fence_at(line[m.end() :], "container", line[: m.end()])
            if fence is not None:
                return FENCE, fence
    if first == "#":
        hashes = len(body) - len(body.lstrip("#"))
        if hashes <= 6 and body[hashes : hashes + 1] in ("", " ", "\t"):
            return HEADING, None
    if first in "-*_=" and (
        _BREAK_RE.fullmatch(body) or (in_para and _UNDERLINE_RE.fullmatch(body))
    ):
        return BREAK, None
    return TEXT, None


def may_end_paragraph(text: str, pos: int, eol: int) -> bool:
    """Cheap pre-check: most prose lines can't be a blank, fence, heading or break line."""
    first = text[pos]
    if first not in _BLOCK_START:
        return False
    if first in "-*_=" and _RULE_CHARS_RE.match(text, pos, eol):
        return True  # perhaps a thematic break or a setext underline
    if first in _MARKERS:
        return text.find("```", pos, eol) >= 0 or text.find("~~~", pos, eol) >= 0
    return first not in "_="
