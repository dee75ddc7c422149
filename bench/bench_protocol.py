"""Protocol benchmarks (issue 3): segmentation overhead and scanner linearity."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from typing import Any

from markdown_it import MarkdownIt

from questionnaires.protocol import parse_message

from .corpus import SHAPES, adversarial, realistic_messages


def _best(func: Callable[[], object], repeat: int = 7) -> float:
    """Best of ``repeat`` runs with the garbage collector paused (less noise)."""
    times = []
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        try:
            start = time.perf_counter()
            func()
            times.append(time.perf_counter() - start)
        finally:
            gc.enable()
    return min(times)


def _overhead() -> float:
    md = MarkdownIt("js-default")
    messages = realistic_messages()

    def plain() -> None:
        for text in messages:
            md.render(text)

    def segmented() -> None:
        for index, text in enumerate(messages):
            for segment in parse_message(text, message_id=index):
                if segment.kind == "markdown":
                    md.render(segment.raw)
                else:
                    segment.to_dict()

    plain()
    segmented()
    # Alternate the two so a burst of machine load hits both alike.
    best_plain = best_segmented = float("inf")
    for _ in range(5):
        best_plain = min(best_plain, _best(plain, repeat=2))
        best_segmented = min(best_segmented, _best(segmented, repeat=2))
    return best_segmented / best_plain


def _linearity() -> tuple[float, float]:
    """Worst ratio and worst 1 MB time over the adversarial shapes."""
    ratios, seconds = [], []
    for shape in SHAPES:
        small, large = adversarial(100_000, shape), adversarial(1_000_000, shape)
        t_small = _best(lambda text=small: parse_message(text, message_id=1), repeat=9)
        t_large = _best(lambda text=large: parse_message(text, message_id=1), repeat=5)
        ratios.append(t_large / (10 * t_small))
        seconds.append(t_large)
    return max(ratios), max(seconds)


def run() -> dict[str, dict[str, Any]]:
    """Measure; each result is ``{"value", "unit", "target"}`` (value <= target)."""
    ratio, seconds = _linearity()
    return {
        "segment_overhead_ratio": {"value": round(_overhead(), 3), "unit": "x", "target": 1.25},
        "segmenter_linearity": {"value": round(ratio, 3), "unit": "x", "target": 1.5},
        "segmenter_1mb_adversarial_seconds": {
            "value": round(seconds, 4),
            "unit": "s",
            "target": 1.0,
        },
    }
