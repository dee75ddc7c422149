"""Two text rules the scanner and the parser share: line endings and visible text.

**Line endings.** CommonMark (and markdown-it) treat LF, CRLF and a lone CR alike, so
the protocol does too: the scanner reads ``scan_text(content)``, where a CRLF becomes
space + LF and a lone CR becomes LF.  The mapping keeps every character at its index,
so the blocks' positions cut the *original* message, and the segments' raw texts still
concatenate back to it byte for byte.  Bodies are validated as ``parse_text(body)``
(every line ending LF), so what is found never depends on the line endings.

**Visible text** (the preface rule, spec 000: "问卷前必须有非空的普通说明文字"): ordinary
Markdown text counts when it has a character a reader sees — a letter, a digit, any
punctuation or symbol (CJK punctuation and emoji included).  Whitespace, control and
format characters (zero-width space, joiners, bidi marks, a BOM, variation selectors,
Hangul fillers, the blank Braille pattern) are not seen; nor is Markdown syntax that
shows no text: a line's heading, quote and list markers, and a line made only of
``-``, ``*``, ``_``, ``=`` or ``#`` (a rule, an underline or an empty heading).
"""

from __future__ import annotations

import re

# Default-ignorable and blank-rendering code points (Unicode DerivedCoreProperties
# Default_Ignorable_Code_Point, plus U+2800 BRAILLE PATTERN BLANK).
_INVISIBLE = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u2800\u3164\ufe00-\ufe0f\ufeff\uffa0\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e0fff"
)
_SEEN = rf"\s\x00-\x1f\x7f-\x9f{_INVISIBLE}"
_VISIBLE_RE = re.compile(rf"[^{_SEEN}]")
# A visible character that is never Markdown block syntax: found, the question is settled.
_TEXT_RE = re.compile(rf"[^{_SEEN}0-9#>*+=_.)\-]")
_LINE_SYNTAX_RE = re.compile(
    r"[ \t]*(?:(?:>|[-+*](?=[ \t]|$)|[0-9]{1,9}[.)](?=[ \t]|$)|#{1,6}(?=[ \t]|$))[ \t]*)*",
    re.MULTILINE,
)
_RULE_RE = re.compile(r"[-*_=# \t]*")


def scan_text(content: str) -> str:
    """``content`` with CRLF → space + LF and a lone CR → LF (same length)."""
    if "\r" not in content:
        return content
    return content.replace("\r\n", " \n").replace("\r", "\n")


def parse_text(body: str) -> str:
    """``body`` with every line ending written LF."""
    if "\r" not in body:
        return body
    return body.replace("\r\n", "\n").replace("\r", "\n")


def has_visible_text(text: str, start: int, end: int) -> bool:
    """Does ``text[start:end]`` (ordinary Markdown, line endings LF) show a reader any
    character?  Linear: one search, then at most one pass over the lines."""
    if _TEXT_RE.search(text, start, end):
        return True
    if not _VISIBLE_RE.search(text, start, end):
        return False
    pos = start
    while pos < end:
        eol = text.find("\n", pos, end)
        eol = end if eol < 0 else eol
        content = _LINE_SYNTAX_RE.match(text, pos, eol)
        body = content.end() if content else pos
        rule = _RULE_RE.match(text, body, eol)
        if not (rule and rule.end() == eol) and _VISIBLE_RE.search(text, body, eol):
            return True
        pos = eol + 1
    return False
