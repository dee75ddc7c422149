"""XML-style protocol tags: openers, closers, and whether an opener starts a block.

A tag in prose starts a block only where a block can begin (DESIGN §4.6, README
"Tags"): right after the opener comes, past spaces and tabs, a JSON body (``{`` or
``[`` or ``"``), the end of the line (a body on the lines below), or a closing tag (an empty
body).  Anywhere else — "wrap it in <questionnaire> and </questionnaire> tags" — the
tag is a word in a sentence and stays Markdown, so mentioning the tags never starts a
repair loop.

Every regular expression here is anchored at one ``<`` (or ``&lt;``) and stops at the
next ``<``, ``>`` or line end, so matching at every ``<`` of a message is linear.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Literal

from .fences import columns
from .limits import MAX_BODY_BYTES

_OPEN_RE = re.compile(r"<([A-Za-z][A-Za-z0-9_-]*)([^<>\n]*)>")
_ESC_OPEN_RE = re.compile(r"&lt;([A-Za-z][A-Za-z0-9_-]*)((?:[^<>&\n]|&(?!gt;))*)&gt;")
_CLOSE_RE = re.compile(r"</([A-Za-z][A-Za-z0-9_-]*)[ \t]*>")
_ESC_CLOSE_RE = re.compile(r"&lt;/([A-Za-z][A-Za-z0-9_-]*)[ \t]*&gt;")
_BODY_START_RE = re.compile(r'[ \t]*(?:([{\["])|(\n|\Z)|(</|&lt;/))')
_AFTER_JSON_RE = re.compile(r"[ \t]*(?:\n([ \t]*))?")
JSON_START_RE = re.compile(r"\s*[{]")
_DECODER = json.JSONDecoder(strict=False)

BodyStart = Literal["json", "below", "empty"]


@dataclass(frozen=True, slots=True)
class OpenTag:
    """``<name attributes>`` (``escaped``: written ``&lt;name&gt;``).  ``attributes``
    is the stripped text between the name and ``>``, without a self-closing slash."""

    name: str
    start: int
    end: int
    escaped: bool
    self_closing: bool
    attributes: str


@dataclass(frozen=True, slots=True)
class CloseTag:
    name: str
    start: int
    end: int


def match_open(text: str, pos: int, escaped: bool, names: frozenset[str]) -> OpenTag | None:
    """The opener of one of ``names`` at ``pos`` (tag names are case-insensitive)."""
    m = (_ESC_OPEN_RE if escaped else _OPEN_RE).match(text, pos)
    if m is None or m.group(1).lower() not in names:
        return None
    rest = m.group(2)
    inner = rest.strip(" \t")
    if rest[:1] not in ("", " ", "\t") and inner != "/":
        return None  # ``<questionnaire.x>``, ``<questionnaire/x>``: another word
    self_closing = inner.endswith("/")
    attributes = inner[:-1].rstrip(" \t") if self_closing else inner
    return OpenTag(m.group(1).lower(), pos, m.end(), escaped, self_closing, attributes)


def match_close(text: str, pos: int, escaped: bool, names: frozenset[str]) -> CloseTag | None:
    """The closing tag of one of ``names`` at ``pos``, written like the opener was."""
    m = (_ESC_CLOSE_RE if escaped else _CLOSE_RE).match(text, pos)
    if m is None or m.group(1).lower() not in names:
        return None
    return CloseTag(m.group(1).lower(), pos, m.end())


def body_start(text: str, tag: OpenTag) -> BodyStart | None:
    """How the body after ``tag`` begins, or None when the tag is a word in prose."""
    m = _BODY_START_RE.match(text, tag.end)
    if m is None:
        return None
    if m.group(1):
        return "json"
    if m.group(2) is not None:
        return "below"
    return "empty" if (m.group(3) == "&lt;/") == tag.escaped else None


def close_after_json(text: str, tag: OpenTag, names: frozenset[str]) -> CloseTag | None:
    """The closing tag right after a well-formed JSON body, if there is one.

    JSON strings are opaque: backticks, fence lines or ``</questionnaire>`` inside a
    string can't end the block or turn its end into code.  The decoder (C speed) reads at
    most ``MAX_BODY_BYTES`` characters: a longer body is over the cap anyway, and is then
    delimited like any other body (its first closing tag in prose).
    """
    m = _BODY_START_RE.match(text, tag.end)
    if m is None or not m.group(1):
        return None
    start = m.end() - 1
    try:
        _, length = _DECODER.raw_decode(text[start : start + MAX_BODY_BYTES])
    except (ValueError, RecursionError):
        return None
    # The closing tag on the same line or the next, never past a blank line or indented
    # as code: there the walk decides (a closing tag in code never closes).
    after = _AFTER_JSON_RE.match(text, start + length)
    if after is None or (after.group(1) is not None and columns(after.group(1)) > 3):
        return None
    return match_close(text, after.end(), tag.escaped, names)
