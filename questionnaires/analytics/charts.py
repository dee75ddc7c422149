"""Server-rendered SVG bar charts: geometry only (pure; the template draws it).

No script and no style attribute: bars carry a class (colours in
`static/css/analytics.css`, light and dark), positions are SVG attributes, and every
figure is also in the table beside the chart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

LABEL_WIDTH = 220
BAR_WIDTH = 360
VALUE_WIDTH = 110
ROW_HEIGHT = 26
BAR_HEIGHT = 16
TOP = 24


@dataclass(frozen=True)
class Series:
    css: str  # a class of analytics.css, e.g. "bar-answered"
    name: str  # the legend's text


@dataclass(frozen=True)
class Row:
    label: str
    # One fraction (0..1) and its text per series.
    values: Sequence[tuple[float, str]]


@dataclass(frozen=True)
class Rect:
    x: float
    y: float
    width: float
    height: float
    css: str
    title: str
    text: str
    text_x: float
    text_y: float


@dataclass(frozen=True)
class Label:
    x: float
    y: float
    text: str


@dataclass(frozen=True)
class Tick:
    x: float
    text: str


@dataclass(frozen=True)
class LegendItem:
    x: float
    css: str
    name: str


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    title: str
    rects: tuple[Rect, ...]
    labels: tuple[Label, ...]
    ticks: tuple[Tick, ...]
    legend: tuple[LegendItem, ...]
    axis_top: float
    axis_bottom: float


def _clip(text: str, limit: int = 34) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def bar_chart(title: str, series: Sequence[Series], rows: Sequence[Row]) -> Chart:
    """Horizontal bars, one group per row and one bar per series, on a 0-100 % axis."""
    group = ROW_HEIGHT * max(1, len(series)) + 8
    rects: list[Rect] = []
    labels: list[Label] = []
    for n, row in enumerate(rows):
        top = TOP + n * group
        labels.append(Label(LABEL_WIDTH - 8, top + group / 2 - 2, _clip(row.label)))
        for k, (fraction, text) in enumerate(row.values):
            fraction = min(1.0, max(0.0, fraction))
            y = top + k * ROW_HEIGHT + (ROW_HEIGHT - BAR_HEIGHT) / 2
            width = round(BAR_WIDTH * fraction, 1)
            rects.append(
                Rect(
                    x=LABEL_WIDTH,
                    y=y,
                    width=width,
                    height=BAR_HEIGHT,
                    css=series[k].css,
                    title=f"{row.label} — {series[k].name}: {text}",
                    text=text,
                    text_x=LABEL_WIDTH + width + 6,
                    text_y=y + BAR_HEIGHT - 3,
                )
            )
    bottom = TOP + len(rows) * group
    ticks = tuple(Tick(LABEL_WIDTH + BAR_WIDTH * p / 100, f"{p} %") for p in (0, 25, 50, 75, 100))
    legend = tuple(LegendItem(LABEL_WIDTH + k * 150, s.css, s.name) for k, s in enumerate(series))
    return Chart(
        width=LABEL_WIDTH + BAR_WIDTH + VALUE_WIDTH,
        height=int(bottom + 24),
        title=title,
        rects=tuple(rects),
        labels=tuple(labels),
        ticks=ticks,
        legend=legend if len(series) > 1 else (),
        axis_top=TOP - 4,
        axis_bottom=bottom,
    )
