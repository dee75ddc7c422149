"""CommonMark fence lines and code spans, as the scanner needs them (markdown-it-py is the
reference; ``tests/questionnaires/protocol/test_commonmark.py`` compares the two).

- An opening fence is a run of at least three backticks or tildes indented at most three
  *columns* (a tab advances to the next multiple of four); a backtick fence's info
  string contains no backtick.
- A closing fence is a run of the same character, at least as long, indented at most
  three columns, followed only by spaces and tabs.  ``\\t```\\`` is indented four columns:
  it is content, never a closer.
- A fence opened in a blockquote or a list item ends with its container: at the first
  line without a ``>`` marker, or the first non-blank line indented less than the list
  item's content.  That line is then read afresh (it may open a fence of its own).
- Code spans pair backtick runs of equal length inside one paragraph; a run with no
  partner is literal text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

FenceMode = Literal["top", "loose", "container"]
_TICKS_RE = re.compile(r"`+")


@dataclass(frozen=True, slots=True)
class Fence:
    """An opening fence.  ``mode``: ``top`` (indented 0–3 columns), ``container`` (on a
    blockquote or list marker line: ``quoted`` for a quote, else the list item's content
    starts at column ``indent``), ``loose`` (indented four or more columns inside a list
    item's paragraph, where the item's own indentation is unknown)."""

    char: str
    length: int
    info: str
    mode: FenceMode
    quoted: bool = False
    indent: int = 0


def columns(indent: str) -> int:
    """Width of a line's leading spaces and tabs (tab stops every four columns)."""
    return len(indent.expandtabs(4)) if "\t" in indent else len(indent)


def fence_at(body: str, mode: FenceMode, prefix: str = "") -> Fence | None:
    """The fence opened by ``body`` (a line with its indentation or, for a container
    fence, its ``prefix`` of quote and list markers removed), if any."""
    char = body[:1]
    if char not in ("`", "~") or not body.startswith(char * 3):
        return None
    run = len(body) - len(body.lstrip(char))
    info = body[run:]
    if char == "`" and "`" in info:
        return None
    return Fence(char, run, info, mode, quoted=">" in prefix, indent=columns(prefix))


def fence_line(line: str, fence: Fence) -> Literal["close", "content", "end"]:
    """What ``line`` is to the open ``fence``: its closing line, a line of its code, or
    (for a container fence) the end of its container."""
    body = line.lstrip(" \t")
    lead = columns(line[: len(line) - len(body)])
    if fence.mode == "container":
        if fence.quoted:
            if not body.startswith(">") or lead > 3:
                return "end"
            body = body.lstrip(" \t>")
            lead = 0
        elif body and lead < fence.indent:
            return "end"
        else:
            lead -= fence.indent
    char = fence.char
    if not body.startswith(char * 3) or (fence.mode != "loose" and lead > 3):
        return "content"
    run = len(body) - len(body.lstrip(char))
    return "close" if run >= fence.length and not body[run:].strip(" \t") else "content"


def is_fence_line(line: str) -> bool:
    """A line that would open or close a fence somewhere (used to refuse nesting)."""
    return line.lstrip(" \t").startswith(("```", "~~~"))


class Spans:
    """Backtick runs of one paragraph with each run's next run of the same length, so
    finding a code span's closer is O(1) however many runs stay unmatched."""

    def __init__(self, text: str, start: int, end: int) -> None:
        self.index: dict[int, int] = {}
        ends: list[int] = []
        lengths: list[int] = []
        for i, m in enumerate(_TICKS_RE.finditer(text, start, end)):
            self.index[m.start()] = i
            ends.append(m.end())
            lengths.append(m.end() - m.start())
        partner = [-1] * len(ends)
        last: dict[int, int] = {}
        for i in range(len(ends) - 1, -1, -1):
            partner[i] = last.get(lengths[i], -1)
            last[lengths[i]] = i
        self.ends = ends
        self.partner = partner

    def skip(self, run_start: int, run_end: int) -> int:
        """Position after the code span opened at ``run_start`` (or after the run when
        it has no closer and is literal text)."""
        i = self.index.get(run_start)
        if i is None or self.partner[i] < 0:
            return run_end
        return self.ends[self.partner[i]]
