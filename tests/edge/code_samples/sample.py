"""A module docstring."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Point:
    '''A point.'''

    x: float
    y: float = 0.0

    def norm(self) -> float:
        """The length.

        Blank lines above and inside.
        """
        return (self.x**2 + self.y**2) ** 0.5


def parse(text: str, *, strict: bool = False) -> list[Point]:

    r"""Raw docstring after a blank line."""
    points = []
    for i, line in enumerate(text.splitlines()):
        match line.split(","):
            case [x, y]:
                points.append(Point(float(x), float(y)))
            case _ if strict:
                raise ValueError(f"line {i + 1}: {line!r}")
    return [p for p in points if p.norm() < 1e9]  # finite


async def main() -> None:
    b = b'\x00bytes'
    pattern = re.compile(rb"\d+")
    print(parse("1,2\n3,4"), b, pattern, 0x1F, 1_000)
