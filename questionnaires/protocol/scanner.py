"""Linear-time scanner: finds protocol blocks in a message before Markdown rendering.

The scanner walks the message once, line by line, keeping just enough CommonMark block
structure to know what is code: fenced code (backticks or tildes, also after blockquote
and list markers), indented code, and inline code spans.  A protocol block is
recognized only where it *starts* in prose (DESIGN §4.7).

Everything is linear in the input: lines are visited once (a fence consumes the lines
it covers, an unclosed fence consumes the rest of the message), code-span partners come
from a precomputed "next run of the same length" table, and closing tags are found by
bisecting a list built in one pass.  No regular expression here can backtrack more than
the length of one run of spaces or one tag name.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass, field
from typing import Any, Literal

_INLINE_RE = re.compile(r"`+|<|&lt;")
_TICKS_RE = re.compile(r"`+")
_OPEN_RE = re.compile(r"<([A-Za-z][A-Za-z0-9_-]*)[ \t]*(/?)>")
_ESC_OPEN_RE = re.compile(r"&lt;([A-Za-z][A-Za-z0-9_-]*)[ \t]*(/?)&gt;")
_CLOSE_RE = re.compile(r"</([A-Za-z][A-Za-z0-9_-]*)[ \t]*>")
_ESC_CLOSE_RE = re.compile(r"&lt;/([A-Za-z][A-Za-z0-9_-]*)[ \t]*&gt;")
_CONTAINER_RE = re.compile(r"(?:[ \t]*(?:>|[-+*][ \t]|[0-9]{1,9}[.)][ \t]))+[ \t]*")
_JSON_START_RE = re.compile(r"\s*\{")
_VISIBLE_RE = re.compile(r"[^\W_]")

_BLANK, _TEXT, _HEADING, _CODE, _FENCE = range(5)
# First characters of a line that may end a paragraph (blank, fence, heading, container).
_BLOCK_START = frozenset(" \t\r\n`~#>-+*0123456789")
_MARKERS = frozenset(">-+*0123456789")  # can only end a paragraph as a container fence
FenceMode = Literal["top", "loose", "container"]


@dataclass(frozen=True, slots=True)
class RawBlock:
    """A protocol block found by the scanner, before its body is validated.

    ``problem`` names a structural failure (``unclosed``, ``nested``, ``mismatch``,
    ``self_closing``); ``prose_before`` says whether visible prose precedes it.
    """

    kind: Literal["fence", "tag"]
    name: str
    start: int
    end: int
    body_start: int
    body_end: int
    line: int
    prose_before: bool
    escaped: bool = False
    fence_len: int = 0
    problem: str | None = None
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class _Fence:
    char: str
    length: int
    info: str
    mode: FenceMode


class _Scanner:
    def __init__(
        self,
        text: str,
        fence_names: frozenset[str],
        tag_names: frozenset[str],
        closer_names: frozenset[str],
    ) -> None:
        self.text = text
        self.n = len(text)
        self.fence_names = fence_names
        self.tag_names = tag_names
        self.closer_names = closer_names | tag_names
        self.blocks: list[RawBlock] = []
        self.seen_prose = False
        self._closers: dict[bool, tuple[list[int], list[tuple[int, str]]]] = {}
        self._line_pos = 0
        self._line_no = 1

    # -- helpers ---------------------------------------------------------------------

    def line_of(self, pos: int) -> int:
        """1-based line number of ``pos``; positions must be asked in increasing order."""
        if pos < self._line_pos:
            return self.text.count("\n", 0, pos) + 1
        self._line_no += self.text.count("\n", self._line_pos, pos)
        self._line_pos = pos
        return self._line_no

    def _eol(self, pos: int) -> int:
        eol = self.text.find("\n", pos)
        return self.n if eol < 0 else eol

    def _note_prose(self, start: int, end: int) -> None:
        if not self.seen_prose and start < end and _VISIBLE_RE.search(self.text, start, end):
            self.seen_prose = True

    # -- line classification ------------------------------------------------------------

    def _classify(self, pos: int, eol: int, in_para: bool) -> tuple[int, _Fence | None]:
        line = self.text[pos:eol]
        body = line.lstrip(" \t")
        if not body.strip(" \t\r"):
            return _BLANK, None
        ws = len(line) - len(body)
        cols = len(line[:ws].expandtabs(4)) if "\t" in line[:ws] else ws
        first = body[0]
        if first in "`~":
            fence = _fence_at(body, "top" if cols <= 3 else "loose")
            if fence is not None and (cols <= 3 or in_para):
                return _FENCE, fence
        if cols >= 4:
            return (_TEXT, None) if in_para else (_CODE, None)
        if first in ">-+*0123456789" and ("```" in body or "~~~" in body):
            m = _CONTAINER_RE.match(line)
            if m is not None:
                fence = _fence_at(line[m.end() :], "container")
                if fence is not None:
                    return _FENCE, fence
        if first == "#":
            hashes = len(body) - len(body.lstrip("#"))
            if hashes <= 6 and body[hashes : hashes + 1] in ("", " ", "\t", "\r"):
                return _HEADING, None
        return _TEXT, None

    # -- main loop ----------------------------------------------------------------------

    def run(self) -> list[RawBlock]:
        text, pos, in_para = self.text, 0, False
        while pos < self.n:
            if pos and text[pos - 1] != "\n":
                pos, in_para = self._paragraph(pos, at_line_start=False)
                continue
            eol = self._eol(pos)
            kind, fence = self._classify(pos, eol, in_para)
            if kind == _FENCE and fence is not None:
                pos, in_para = self._fence(pos, eol, fence), False
            elif kind in (_BLANK, _CODE):
                pos, in_para = eol + 1, False
            else:
                pos, in_para = self._paragraph(pos, at_line_start=True)
        return self.blocks

    # -- fences -------------------------------------------------------------------------

    def _fence(self, pos: int, eol: int, fence: _Fence) -> int:
        name = fence.info.strip(" \t\r").lower()
        is_protocol = (
            fence.mode == "top"
            and fence.char == "`"
            and name in self.fence_names
            and self.text[pos:eol].lstrip(" ")[:1] == "`"
        )
        body_start = min(eol + 1, self.n)
        close, nested = self._find_close(body_start, fence, track_nested=is_protocol)
        if not is_protocol:
            return self.n if close is None else close[1] + 1
        if close is None:
            self._add_fence(pos, self.n, body_start, self.n, name, fence, "unclosed", {})
            return self.n
        line_start, line_end = close
        end = line_end - 1 if self.text[line_end - 1 : line_end] == "\r" else line_end
        problem, details = None, {}
        if nested is not None:
            problem, details = "nested", {"nested_at": nested}
        self._add_fence(pos, end, body_start, line_start, name, fence, problem, details)
        return line_end + 1

    def _add_fence(
        self,
        start: int,
        end: int,
        body_start: int,
        body_end: int,
        name: str,
        fence: _Fence,
        problem: str | None,
        details: dict[str, Any],
    ) -> None:
        line = self.line_of(start)
        if "nested_at" in details:
            details = {"line": self.line_of(details["nested_at"])}
        block = RawBlock(
            kind="fence",
            name=name,
            start=start,
            end=end,
            body_start=body_start,
            body_end=body_end,
            line=line,
            prose_before=self.seen_prose,
            fence_len=fence.length,
            problem=problem,
            details=details,
        )
        self.blocks.append(block)

    def _find_close(
        self, pos: int, fence: _Fence, *, track_nested: bool
    ) -> tuple[tuple[int, int] | None, int | None]:
        text, char, nested = self.text, fence.char, None
        opener = char * 3
        while pos < self.n:
            eol = self._eol(pos)
            line = text[pos:eol]
            body = line.lstrip(" \t>") if fence.mode == "container" else line.lstrip(" \t")
            if body.startswith(opener):
                run = len(body) - len(body.lstrip(char))
                indent_ok = fence.mode != "top" or len(line[: len(line) - len(body)]) <= 3
                if run >= fence.length and indent_ok and not body[run:].strip(" \t\r"):
                    return (pos, eol), nested
            if track_nested and nested is None and body.startswith(("```", "~~~")):
                nested = pos
            pos = eol + 1
        return None, nested

    # -- paragraphs, code spans and tags ------------------------------------------------

    def _may_end_paragraph(self, pos: int, eol: int) -> bool:
        """Cheap pre-check: most prose lines can't be a blank, fence or heading line."""
        first = self.text[pos]
        if first not in _BLOCK_START:
            return False
        if first in _MARKERS:
            return self.text.find("```", pos, eol) >= 0 or self.text.find("~~~", pos, eol) >= 0
        return True

    def _paragraph_end(self, start: int, at_line_start: bool) -> tuple[int, bool]:
        """End of the paragraph that starts at ``start`` and whether it was a heading."""
        eol = self._eol(start)
        if at_line_start and self._classify(start, eol, False)[0] == _HEADING:
            return min(eol + 1, self.n), True
        pos = eol + 1
        while pos < self.n:
            eol = self._eol(pos)
            if self._may_end_paragraph(pos, eol) and self._classify(pos, eol, True)[0] in (
                _BLANK,
                _FENCE,
                _HEADING,
            ):
                return pos, False
            pos = eol + 1
        return self.n, False

    def _paragraph(self, start: int, *, at_line_start: bool) -> tuple[int, bool]:
        end, heading = self._paragraph_end(start, at_line_start)
        text, pos, prose_from = self.text, start, start
        if text.find("<", start, end) < 0 and text.find("&lt;", start, end) < 0:
            self._note_prose(start, end)  # no tag can start here: skip inline scanning
            return end, not heading
        spans: _Spans | None = None
        while pos < end:
            m = _INLINE_RE.search(text, pos, end)
            if m is None:
                break
            if m.group()[0] == "`":
                if spans is None:
                    spans = _Spans(text, start, end)
                pos = spans.skip(m.start(), m.end())
                continue
            block = self._tag(m.start(), m.group() == "&lt;")
            if block is None:
                pos = m.end()
                continue
            self._note_prose(prose_from, block.start)
            self.blocks.append(block)
            prose_from = pos = block.end
            if pos >= end:
                return pos, True
        self._note_prose(prose_from, end)
        return end, not heading

    def _tag(self, pos: int, escaped: bool) -> RawBlock | None:
        m = (_ESC_OPEN_RE if escaped else _OPEN_RE).match(self.text, pos)
        if m is None or m.group(1).lower() not in self.tag_names:
            return None
        name, open_end = m.group(1).lower(), m.end()
        common: dict[str, Any] = {
            "kind": "tag",
            "name": name,
            "start": pos,
            "line": self.line_of(pos),
            "prose_before": self.seen_prose,
            "escaped": escaped,
        }
        if m.group(2):
            details = {"name": name}
            return RawBlock(
                end=open_end,
                body_start=open_end,
                body_end=open_end,
                problem="self_closing",
                details=details,
                **common,
            )
        closer = self._next_closer(open_end, escaped)
        if closer is None:
            if not _JSON_START_RE.match(self.text, open_end):
                return None
            return RawBlock(
                end=self.n,
                body_start=open_end,
                body_end=self.n,
                problem="unclosed",
                details={"name": name},
                **common,
            )
        close_start, close_end, close_name = closer
        problem = None if close_name == name else "mismatch"
        details = {} if problem is None else {"open": name, "close": close_name}
        return RawBlock(
            end=close_end,
            body_start=open_end,
            body_end=close_start,
            problem=problem,
            details=details,
            **common,
        )

    def _next_closer(self, pos: int, escaped: bool) -> tuple[int, int, str] | None:
        if escaped not in self._closers:
            regex = _ESC_CLOSE_RE if escaped else _CLOSE_RE
            starts: list[int] = []
            rest: list[tuple[int, str]] = []
            for m in regex.finditer(self.text):
                name = m.group(1).lower()
                if name in self.closer_names:
                    starts.append(m.start())
                    rest.append((m.end(), name))
            self._closers[escaped] = (starts, rest)
        starts, rest = self._closers[escaped]
        i = bisect_left(starts, pos)
        if i == len(starts):
            return None
        return starts[i], rest[i][0], rest[i][1]


class _Spans:
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


def _fence_at(body: str, mode: FenceMode) -> _Fence | None:
    char = body[:1]
    if char not in ("`", "~") or not body.startswith(char * 3):
        return None
    run = len(body) - len(body.lstrip(char))
    info = body[run:]
    if char == "`" and "`" in info:
        return None
    return _Fence(char=char, length=run, info=info, mode=mode)


def scan(
    text: str,
    *,
    fence_names: frozenset[str],
    tag_names: frozenset[str],
    closer_names: frozenset[str] = frozenset(),
) -> list[RawBlock]:
    """Find the protocol blocks of ``text`` in order.

    ``fence_names`` are the names recognized as fenced YAML info strings, ``tag_names``
    the XML tag names recognized as openers; ``closer_names`` are further tag names
    whose closing tags end a block (so a wrong closing name is reported as a
    mismatch rather than swallowing the rest of the message).
    """
    return _Scanner(text, fence_names, tag_names, closer_names).run()
