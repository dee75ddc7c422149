"""What text can be stored: one check for every input path (JSON bodies, form posts, MCP).

PostgreSQL refuses NUL characters in text and JSON, and a lone UTF-16 surrogate (which
JSON's `\\ud800` escapes can carry) cannot be encoded at all; deep nesting costs recursion
in every consumer; and a non-finite number (`NaN`, `Infinity`: Python's JSON parsers
read them, pydantic's too, PostgreSQL's jsonb and SQLite's JSON refuse them). A request
carrying any of them is refused with a 400 that names the place, before anything is
written.
"""

from __future__ import annotations

import math
import re

MAX_JSON_DEPTH = 32
_BAD = re.compile("[\x00\ud800-\udfff]")


def text_problem(value: object, *, max_depth: int = MAX_JSON_DEPTH) -> tuple[str, str] | None:
    """`(code, path)` of the first thing in a JSON-like value that can't be stored —
    `text_invalid` (a NUL or a lone surrogate, in a key or a string), `invalid_json` (a
    non-finite number) or `json_too_deep` — or None. Iterative, so hostile nesting costs
    no recursion."""
    stack: list[tuple[object, str, int]] = [(value, "$", 0)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, str):
            if _BAD.search(item):
                return "text_invalid", path
        elif isinstance(item, float):
            if not math.isfinite(item):
                return "invalid_json", path
        elif isinstance(item, dict | list):
            if depth >= max_depth:
                return "json_too_deep", path
            pairs = item.items() if isinstance(item, dict) else enumerate(item)
            for key, child in pairs:
                if isinstance(key, str) and _BAD.search(key):
                    return "text_invalid", path
                stack.append(
                    (
                        child,
                        f"{path}.{key}" if isinstance(key, str) else f"{path}[{key}]",
                        depth + 1,
                    )
                )
    return None
