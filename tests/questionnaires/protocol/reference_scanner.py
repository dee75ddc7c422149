"""The scanner as it was before issue 38's speed-up (questionnaires/protocol/scanner.py at
1ddd925), kept unchanged as the reference the property test compares the fast one with:
the same blocks, positions and problems for every input. Not used by the app.

Linear-time scanner: finds protocol blocks in a message before Markdown rendering.

The scanner walks the message once, line by line, keeping just enough CommonMark block
structure to know what is code: fenced code (backticks or tildes, also after blockquote
and list markers), indented code, and inline code spans (``fences.py``).  A protocol
block is recognized only where it *starts* in prose (DESIGN §4.7), and a tag block ends
only at a closing tag in prose: a closing tag inside a code span or a fence never closes
a block opened outside it.

An opener that starts a block (``tags.body_start``) is *pending* while the walk goes on
through the following lines exactly as through any Markdown; the first closing tag the
walk meets in prose ends it, and whatever the walk found meanwhile was the block's body.
If the message ends first, the opener was a word in prose (or, with a JSON body, an
unclosed block).  A JSON body is first read by the JSON decoder, so its strings can't
turn the closing tag into code; that is tried for the first ``MAX_BLOCKS`` blocks only.

Everything is linear in the input: lines are visited once (a fence consumes the lines
it covers, an unclosed fence consumes the rest of the message), code-span partners come
from a precomputed "next run of the same length" table, and the JSON decoder reads at
most 64 KiB for each of at most ``MAX_BLOCKS`` + 1 blocks.  No regular expression here
can backtrack more than the length of one run of spaces or one tag.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from questionnaires.protocol.fences import Fence, Spans, fence_line, is_fence_line
from questionnaires.protocol.limits import MAX_BLOCKS
from questionnaires.protocol.lines import (
    BLANK,
    BREAK,
    CODE,
    CONTAINER_RE,
    FENCE,
    HEADING,
    classify,
    may_end_paragraph,
)
from questionnaires.protocol.tags import (
    JSON_START_RE,
    OpenTag,
    body_start,
    close_after_json,
    match_close,
    match_open,
)
from questionnaires.protocol.text import has_visible_text, scan_text

_INLINE_RE = re.compile(r"`+|<|&lt;")
_NONE, _PARA, _LIST = range(3)  # after a line: no paragraph, a paragraph, one in a container


@dataclass(frozen=True, slots=True)
class RawBlock:
    """A protocol block found by the scanner, before its body is validated.

    ``problem`` names a structural failure (``unclosed``, ``nested``, ``mismatch``,
    ``self_closing``); ``attributes`` holds what a tag carried after its name (an
    error of its own); ``prose_before`` says whether visible prose precedes it.
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
    attributes: str = ""


@dataclass(slots=True)
class _Pending:
    """An opener waiting for its closing tag (see the module docstring)."""

    tag: OpenTag
    line: int
    prose_before: bool
    blocks_before: int
    # The first opener with a JSON body met while waiting: if no closing tag ever
    # comes, it is the unclosed block (the first opener was a word in prose).
    json_opener: _Pending | None = None


class _Scanner:
    def __init__(
        self,
        text: str,
        fence_names: frozenset[str],
        tag_names: frozenset[str],
        closer_names: frozenset[str],
    ) -> None:
        self.raw = text
        self.text = scan_text(text)
        self.n = len(text)
        self.fence_names = fence_names
        self.tag_names = tag_names
        self.closer_names = closer_names | tag_names
        self.blocks: list[RawBlock] = []
        self.seen_prose = False
        self.pending: _Pending | None = None
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
        if not self.seen_prose and self.pending is None and start < end:
            self.seen_prose = has_visible_text(self.text, start, end)

    # -- main loop ----------------------------------------------------------------------

    def run(self) -> list[RawBlock]:
        text, pos, para = self.text, 0, _NONE
        while pos < self.n:
            if pos and text[pos - 1] != "\n":
                pos, para = self._paragraph(pos, at_line_start=False)
                continue
            eol = self._eol(pos)
            kind, fence = classify(text[pos:eol], para != _NONE, para == _LIST)
            if kind == FENCE and fence is not None:
                pos, para = self._fence(pos, eol, fence), _NONE
            elif kind in (BLANK, CODE, BREAK):
                pos, para = eol + 1, _NONE
            else:
                pos, para = self._paragraph(pos, at_line_start=True)
        self._finish_pending()
        return self.blocks

    # -- fences -------------------------------------------------------------------------

    def _fence(self, pos: int, eol: int, fence: Fence) -> int:
        name = fence.info.strip(" \t").lower()
        is_protocol = (
            fence.mode == "top"
            and fence.char == "`"
            and name in self.fence_names
            and self.text[pos:eol].lstrip(" ")[:1] == "`"
        )
        body_start = min(eol + 1, self.n)
        close, nested, ended = self._find_close(body_start, fence, track_nested=is_protocol)
        if not is_protocol:
            return ended if close is None else close[1] + 1
        if close is None:
            line = self.line_of(pos)
            self._add_fence(pos, self.n, body_start, self.n, name, fence, "unclosed", {}, line)
            return self.n
        line_start, line_end = close
        # A CRLF's CR belongs to the line ending, not to the block.
        end = line_end - 1 if self.raw[line_end - 1 : line_end] == "\r" else line_end
        problem, details = None, {}
        line = self.line_of(pos)
        if nested is not None:
            problem, details = "nested", {"line": self.line_of(nested)}
        self._add_fence(pos, end, body_start, line_start, name, fence, problem, details, line)
        return line_end + 1

    def _add_fence(
        self,
        start: int,
        end: int,
        body_start: int,
        body_end: int,
        name: str,
        fence: Fence,
        problem: str | None,
        details: dict[str, Any],
        line: int,
    ) -> None:
        block = RawBlock(
            kind="fence",
            name=name,
            start=start,
            end=end,
            body_start=body_start,
            body_end=body_end,
            line=line,
            prose_before=self._prose_before(),
            fence_len=fence.length,
            problem=problem,
            details=details,
        )
        self.blocks.append(block)

    def _find_close(
        self, pos: int, fence: Fence, *, track_nested: bool
    ) -> tuple[tuple[int, int] | None, int | None, int]:
        """The closing line (start, end of line) of ``fence``, the first nested fence line,
        and where the code ends without a closing line (its container's end, or the end
        of the message)."""
        nested = None
        while pos < self.n:
            eol = self._eol(pos)
            line = self.text[pos:eol]
            what = fence_line(line, fence)
            if what == "close":
                return (pos, eol), nested, eol + 1
            if what == "end":
                return None, nested, pos
            if track_nested and nested is None and is_fence_line(line):
                nested = pos
            pos = eol + 1
        return None, nested, self.n

    # -- paragraphs and code spans ------------------------------------------------------

    def _paragraph_end(self, start: int, at_line_start: bool) -> tuple[int, int]:
        """End of the paragraph that starts at ``start``, and what follows it: ``_NONE``
        after a heading, ``_LIST`` after a paragraph in a list item or quote."""
        eol = self._eol(start)
        text = self.text
        if at_line_start and classify(text[start:eol], False)[0] == HEADING:
            return min(eol + 1, self.n), _NONE
        container = at_line_start and CONTAINER_RE.match(text, start, eol) is not None
        pos, n = eol + 1, self.n
        while pos < n:
            eol = text.find("\n", pos)
            if eol < 0:
                eol = n
            if may_end_paragraph(text, pos, eol):
                kind = classify(text[pos:eol], True, container)[0]
                if kind in (BLANK, FENCE, HEADING, BREAK):
                    break
            pos = eol + 1
        return min(pos, self.n), _LIST if container else _PARA

    def _paragraph(self, start: int, *, at_line_start: bool) -> tuple[int, int]:
        end, after = self._paragraph_end(start, at_line_start)
        text, pos, prose_from = self.text, start, start
        if text.find("<", start, end) < 0 and text.find("&lt;", start, end) < 0:
            self._note_prose(start, end)  # no tag can start here: skip inline scanning
            return end, after
        spans: Spans | None = None
        while pos < end:
            m = _INLINE_RE.search(text, pos, end)
            if m is None:
                break
            if m.group()[0] == "`":
                if spans is None:
                    spans = Spans(text, start, end)
                pos = spans.skip(m.start(), m.end())
                continue
            after_tag = self._tag(m.start(), m.group() == "&lt;", prose_from)
            if after_tag is None:
                pos = m.end()
                continue
            prose_from = pos = after_tag
            if pos >= end:
                return pos, _PARA
        self._note_prose(prose_from, end)
        return end, after

    # -- tags ---------------------------------------------------------------------------

    def _tag(self, pos: int, escaped: bool, prose_from: int) -> int | None:
        """Where the walk goes on after a tag at ``pos``, or None when it isn't one."""
        if self.pending is not None:
            closer = match_close(self.text, pos, escaped, self.closer_names)
            if closer is not None and escaped == self.pending.tag.escaped:
                return self._close(self.pending, closer.start, closer.end, closer.name)
        tag = match_open(self.text, pos, escaped, self.tag_names)
        if tag is None:
            return None
        if not tag.self_closing:
            start = body_start(self.text, tag)
            if start is None:
                return None  # a word in a sentence
            if self.pending is not None:
                unclosed_if_alone = JSON_START_RE.match(self.text, tag.end) is not None
                if unclosed_if_alone and self.pending.json_opener is None:
                    self.pending.json_opener = self._waiting(tag)
                return tag.end
        self._note_prose(prose_from, tag.start)
        if tag.self_closing:
            waiting = self._waiting(tag)
            self.blocks.append(self._tag_block(waiting, tag.end, tag.end, "self_closing"))
            return tag.end
        if start == "json" and len(self.blocks) <= MAX_BLOCKS:
            closer = close_after_json(self.text, tag, self.closer_names)
            if closer is not None:
                self.pending = self._waiting(tag)
                return self._close(self.pending, closer.start, closer.end, closer.name)
        self.pending = self._waiting(tag)
        return tag.end

    def _prose_before(self) -> bool:
        # While an opener waits, it is a word of prose itself should it never close.
        return self.seen_prose or self.pending is not None

    def _waiting(self, tag: OpenTag) -> _Pending:
        return _Pending(tag, self.line_of(tag.start), self._prose_before(), len(self.blocks))

    def _close(self, pending: _Pending, close_start: int, close_end: int, name: str) -> int:
        del self.blocks[pending.blocks_before :]  # found inside the body: not blocks
        problem = None if name == pending.tag.name else "mismatch"
        details = {} if problem is None else {"open": pending.tag.name, "close": name}
        self.pending = None
        self.blocks.append(self._tag_block(pending, close_end, close_start, problem, details))
        return close_end

    def _finish_pending(self) -> None:
        """The message ended with an opener still waiting for its closing tag."""
        pending, self.pending = self.pending, None
        if pending is not None and not JSON_START_RE.match(self.text, pending.tag.end):
            pending = pending.json_opener  # the first opener was a word in prose
        if pending is None:
            return
        del self.blocks[pending.blocks_before :]
        self.blocks.append(self._tag_block(pending, self.n, self.n, "unclosed"))

    @staticmethod
    def _tag_block(
        opener: _Pending,
        end: int,
        body_end: int,
        problem: str | None,
        details: dict[str, Any] | None = None,
    ) -> RawBlock:
        tag = opener.tag
        return RawBlock(
            kind="tag",
            name=tag.name,
            start=tag.start,
            end=end,
            body_start=tag.end,
            body_end=body_end,
            line=opener.line,
            prose_before=opener.prose_before,
            escaped=tag.escaped,
            problem=problem,
            details={"name": tag.name} if details is None else details,
            attributes=tag.attributes,
        )


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
    mismatch rather than swallowing the rest of the message).  Positions index
    ``text`` itself; line endings are read as ``text.scan_text`` says.
    """
    return _Scanner(text, fence_names, tag_names, closer_names).run()
