"""Fuzz every Pygments lexer with hostile shapes and measure how its cost grows.

A *shape* is a prefix and a unit repeated: "x" then spaces (the ```` ```systemd ````
case of issue 22, cubic), runs of every ASCII punctuation character, tabs, line breaks,
letters, digits and a few two-character units, after the usual openers (quotes,
brackets, comment starts). Each lexer highlights each shape at `SMALL` and `LARGE`
characters exactly as a render does (`chat.highlight.highlight_html`), and the growth
between the two sizes is extrapolated to the sizes of `chat.highlight.SIZES`:

    t(n) = t(LARGE) × (n / LARGE) ** max(1, log(t(LARGE) / t(SMALL)) / log(LARGE / SMALL))

A lexer's *cost curve* is the worst shape's t(n) at each of those sizes; written into
`chat/lexer_costs.json`, it is what the renderer charges a block of code against the
Markdown budget, so a lexer whose cost grows fast still highlights small blocks and shows
big ones as plain code. A lexer that needs more than `GIVE_UP_SECONDS` for `LARGE`
characters of some shape (or never finishes: an alarm stops a shape after
`ITEM_TIMEOUT` — CPython's regular expression engine checks for signals) is *unbounded*
and always shown as plain code. Shapes are timed in CPU seconds in child processes; a
shape whose first timing matters is timed again (best of three). Growth can speed up past
`LARGE` (Mathematica's `(*(*(*…` is 1.25 between 400 and 1,600 characters, 1.7 beyond),
so each bounded lexer's worst shape is then timed at the curve's middle size too (with
`REFINE_TIMEOUT`), and a measured point above the extrapolated one replaces it; the
renderer never lets growth slow down past a measured point (`chat.highlight.worst_seconds`).
`--refine` does only this step on the written file.

    python -m bench.lexer_fuzz [--write] [--refine] [--jobs 2] [ALIAS …]

Without ``--write`` it prints the costliest lexers. With ALIASes (``c cpp csharp``) only
those lexers are measured, and ``--write`` merges their verdicts into the file (the
others keep theirs; the file must be for the installed Pygments) — the way to measure a
new or changed bounded lexer (`chat.lexers`) without fuzzing all ~600 lexers again.
A fence is highlighted with the lexer `chat.highlight.lexer_for` gives, so the file
names the bounded variants (``BoundedCLexer``) in place of the originals; ``bench_adversarial`` renders each
lexer's worst shape at its budget's edge through the real page path.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SMALL, LARGE = 400, 1600
GIVE_UP_SECONDS = 0.5
ITEM_TIMEOUT = 1.0
REFINE_TIMEOUT = 4.0
RETIME_ABOVE = 0.02  # seconds at LARGE characters worth timing again (best of 3)

PUNCTUATION = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
UNITS = [*PUNCTUATION, " ", "\t", "\n", "x", "0", "é", "\u3000"]
PAIRS = [
    "x ", "x\n", " \n", "\\\n", "\t\n", "0.", "a.", "a-", "a:", "a=", "a,", "a_", "/*",
    "*/", "<!--", "${", "#{", "'a", '"a', "(x", "[x", "{x", "\\x", "--", "//", "(*",
    "{-", "%{", "<<", "0x", "1e", "x\t", "a b", ";\n", "$x", "@x", "x(", ")\n",
]  # fmt: skip
PREFIXES = ["", "x", "#", "'", '"', "(", "<", "/*", "a = "]


def shapes() -> dict[str, tuple[str, str]]:
    """name -> (prefix, unit)."""
    found = {f"{p!r} + {u!r}*n": (p, u) for p in PREFIXES for u in UNITS}
    found.update({f"{u!r}*n": ("", u) for u in PAIRS})
    return found


def shape_text(prefix: str, unit: str, size: int) -> str:
    return prefix + unit * max(1, (size - len(prefix)) // len(unit))


def lexer_aliases() -> dict[str, str]:
    """Every lexer class a fence can be highlighted with → its first alias: the classes
    Pygments ships, with the bounded variants of `chat.lexers.BOUNDED` in place of
    their originals."""
    from pygments.lexers._mapping import LEXERS

    from chat.lexers import BOUNDED

    return {
        (BOUNDED[name].__name__ if name in BOUNDED else name): spec[2][0]
        for name, spec in sorted(LEXERS.items())
        if spec[2]
    }


class _Timeout(Exception):
    pass


def _on_alarm(signum: int, frame: Any) -> None:
    raise _Timeout  # CPython's regular expression engine checks for signals


def _time(
    highlight: Callable[[str], object], text: str, repeat: int, timeout: float = ITEM_TIMEOUT
) -> float:
    """Best CPU seconds of ``repeat`` runs; `inf` past ``timeout`` (wall clock)."""
    best = math.inf
    for _ in range(repeat):
        signal.setitimer(signal.ITIMER_REAL, timeout)
        start = time.process_time()
        try:
            highlight(text)
        except _Timeout:
            return math.inf
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        best = min(best, time.process_time() - start)
    return best


def curve(small: float, large: float) -> tuple[float, ...]:
    """Seconds at each of `SIZES`, extrapolated from the two timings (at least linear)."""
    from chat.highlight import SIZES

    if math.isinf(small) or math.isinf(large):
        return tuple(math.inf for _ in SIZES)
    growth = math.log(max(large, 1e-6) / max(small, 1e-6)) / math.log(LARGE / SMALL)
    return tuple(large * (n / LARGE) ** max(1.0, growth) for n in SIZES)


@dataclass(frozen=True)
class Verdict:
    alias: str
    costs: tuple[float, ...]  # worst seconds at each of chat.highlight.SIZES
    shape: str  # the shape that costs most at the largest size

    @property
    def bounded(self) -> bool:
        return not math.isinf(self.costs[0])


def lexer_verdict(alias: str) -> Verdict:
    """One lexer's cost curve over every shape (the worst at each size)."""
    from chat.highlight import highlight_html, lexer_for

    lexer = lexer_for(alias)

    def highlight(text: str) -> object:
        return highlight_html(text, lexer)

    worst: list[float] = []
    shape = ""
    for name, (prefix, unit) in shapes().items():
        texts = [shape_text(prefix, unit, size) for size in (SMALL, LARGE)]
        small, large = (_time(highlight, text, 1) for text in texts)
        if RETIME_ABOVE < large < math.inf:
            small, large = (_time(highlight, text, 3) for text in texts)
        if large > GIVE_UP_SECONDS:
            large = math.inf
        costs = curve(small, large)
        if not worst or costs[-1] > worst[-1]:
            shape = name
        worst = [max(pair) for pair in zip(worst or costs, costs, strict=True)]
        if math.isinf(large):
            break
    return Verdict(alias, tuple(worst), shape)


def refined(verdict: Verdict) -> Verdict:
    """The verdict with its worst shape timed at the curve's middle size."""
    from chat.highlight import SIZES, highlight_html, lexer_for

    if not verdict.bounded:
        return verdict
    lexer = lexer_for(verdict.alias)
    prefix, unit = shapes()[verdict.shape]
    text = shape_text(prefix, unit, SIZES[1])
    seconds = _time(lambda t: highlight_html(t, lexer), text, 1, REFINE_TIMEOUT)
    costs = list(verdict.costs)
    if seconds > costs[1]:
        costs[1:] = [seconds, math.inf if math.isinf(seconds) else costs[2]]
    return Verdict(verdict.alias, tuple(costs), verdict.shape)


def _child() -> None:
    signal.signal(signal.SIGALRM, _on_alarm)
    for line in sys.stdin:
        job = json.loads(line)
        if isinstance(job, list):  # --refine: [alias, costs, shape]
            verdict = refined(
                Verdict(job[0], tuple(math.inf if c is None else c for c in job[1]), job[2])
            )
        else:
            verdict = refined(lexer_verdict(job))
        costs = [None if math.isinf(c) else c for c in verdict.costs]
        print(json.dumps([verdict.alias, costs, verdict.shape]), flush=True)


# --- the parent ---------------------------------------------------------------------------


def _run(jobs: list[Any]) -> list[Verdict]:
    proc = subprocess.run(
        [sys.executable, "-m", "bench.lexer_fuzz", "--child"],
        cwd=ROOT,
        input="".join(json.dumps(job) + "\n" for job in jobs),
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    verdicts = []
    for line in proc.stdout.splitlines():
        alias, costs, shape = json.loads(line)
        verdicts.append(Verdict(alias, tuple(math.inf if c is None else c for c in costs), shape))
    return verdicts


def fuzz(jobs: list[Any], workers: int = 2) -> dict[str, Verdict]:
    """Every alias's cost curve (or, for `[alias, costs, shape]` jobs, the curve refined),
    in ``workers`` child processes."""
    chunks = [jobs[i::workers] for i in range(workers)]
    with ThreadPoolExecutor(workers) as pool:
        return {v.alias: v for part in pool.map(_run, chunks) for v in part}


def write_costs(verdicts: dict[str, Verdict], path: Path, *, merge: bool = False) -> None:
    """Write the verdicts to ``path``; with ``merge``, into the file's other lexers'
    (which must have been measured for this Pygments version), dropping lexers that are
    no longer highlighted (an original replaced by its bounded variant)."""
    import pygments

    from chat.highlight import SIZES

    names = lexer_aliases()
    by_alias = {alias: name for name, alias in names.items()}
    lexers: dict[str, Any] = {}
    shapes_: dict[str, str] = {}
    unbounded: set[str] = set()
    if merge:
        old = json.loads(path.read_text(encoding="utf-8"))
        if old["pygments"] != pygments.__version__ or old["sizes"] != list(SIZES):
            raise SystemExit(f"{path} was measured for another Pygments: measure all lexers")
        lexers = {n: c for n, c in old["lexers"].items() if n in names}
        shapes_ = {n: s for n, s in old["worst_shapes"].items() if n in names}
        unbounded = {n for n in old["unbounded"] if n in names}
    for v in verdicts.values():
        name = by_alias[v.alias]
        lexers.pop(name, None)
        unbounded.discard(name)
        shapes_[name] = v.shape
        if v.bounded:
            lexers[name] = [None if math.isinf(c) else round(c, 6) for c in v.costs]
        else:
            unbounded.add(name)
    data: dict[str, Any] = {
        "pygments": pygments.__version__,
        "measured": "python -m bench.lexer_fuzz --write: worst CPU seconds of any shape",
        "sizes": list(SIZES),
        "lexers": dict(sorted(lexers.items())),
        "worst_shapes": dict(sorted(shapes_.items())),
        "unbounded": sorted(unbounded),
    }
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def main(argv: list[str]) -> int:
    if argv == ["--child"]:
        _child()
        return 0
    write = "--write" in argv
    workers = int(argv[argv.index("--jobs") + 1]) if "--jobs" in argv else 2
    wanted = [a for a in argv if not a.startswith("--") and not a.isdigit()]
    jobs: list[Any] = wanted or list(lexer_aliases().values())
    if "--refine" in argv:
        from chat.highlight import COSTS_FILE

        data = json.loads(COSTS_FILE.read_text(encoding="utf-8"))
        names = lexer_aliases()
        jobs = [
            [names[name], data["lexers"].get(name), data["worst_shapes"][name]]
            for name in data["worst_shapes"]
            if name in names
        ]
        jobs = [[a, c if c is not None else [None] * 3, s] for a, c, s in jobs]
    started = time.monotonic()
    verdicts = fuzz(jobs, workers)
    for verdict in sorted(verdicts.values(), key=lambda v: -v.costs[-1])[:60]:
        mark = "ok " if verdict.bounded else "OUT"
        costs = " ".join(f"{c:9.4f}" for c in verdict.costs)
        print(f"{mark} {costs} s  {verdict.alias:<24} {verdict.shape}")
    out = sum(not v.bounded for v in verdicts.values())
    print(f"{len(verdicts)} lexers, {out} unbounded, {time.monotonic() - started:.0f} s")
    if write:
        from chat.highlight import COSTS_FILE

        write_costs(verdicts, COSTS_FILE, merge=bool(wanted) or "--refine" in argv)
        print(f"wrote {COSTS_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
