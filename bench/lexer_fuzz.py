"""Fuzz every Pygments lexer with hostile shapes and measure how its cost grows.

A *shape* is a prefix and a unit repeated: "x" then spaces (the ```` ```systemd ````
case of issue 22, cubic), runs of every ASCII punctuation character, tabs, line breaks,
letters, digits and a few two-character units, after the usual openers (quotes,
brackets, comment starts). Each lexer highlights each shape at `SMALL` and `LARGE`
characters exactly as a render does (`chat.highlight.highlight_html`), and the growth
between the two sizes is extrapolated to the sizes of `chat.highlight.SIZES`:

    t(n) = t(LARGE) × (n / LARGE) ** max(1, log(t(LARGE) / t(SMALL)) / log(LARGE / SMALL))

A lexer that can run another lexer named in its text (a Markdown fence, PostgreSQL's
`$$ … $$ LANGUAGE name`, an HTTP body's Content-Type) is also timed on *nested* shapes
(`NESTINGS`): its opener naming a cubic lexer (`INNER`, ```` ```systemd ```` "x" and
spaces) around that lexer's worst shape, then its closer (issue 34: 4.9 s for 1,278
characters of ```` ```postgresql ````). `--nested` renders each nesting through
`chat.rendering.markdown_to_html` as one message at up to 20,000 characters and prints
the slowest (CPU seconds; it must stay under `GIVE_UP_SECONDS`).

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

    python -m bench.lexer_fuzz [--write] [--refine] [--nested] [--jobs 2] [ALIAS …]

Without ``--write`` it prints the costliest lexers. With ALIASes (``c cpp csharp``) only
those lexers are measured, and ``--write`` merges their verdicts into the file (the
others keep theirs; the file must be for the installed Pygments) — the way to measure a
new or changed bounded lexer (`chat.lexers`) without fuzzing all ~600 lexers again.
A fence is highlighted with the lexer `chat.highlight.lexer_for` gives, so the file
names the bounded variants (``BoundedCLexer``) in place of the originals. A lexer with no
alias that another runs (``BaseMakefileLexer`` under ``MakefileLexer``) is measured too,
as a ``module:Class`` job, since a block is charged the curves of every lexer its lexer
can run (`chat.highlight.charged_costs`); ``bench_adversarial`` renders each
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


INNER = [  # (alias, MIME type, prefix, unit): cubic lexers (lexer_costs.json "unbounded")
    ("systemd", "", "x", " "),
    ("autoit", "text/x-autoit", "", " "),
    ("pike", "text/x-pike", "x", " "),
]
NESTINGS = {  # outer alias -> (opener, closer) around an inner lexer's text
    "md": ("```{lang}\n", "\n```\n"),
    "tid": ("```{lang}\n", "\n```\n"),
    "rst": (".. code-block:: {lang}\n\n    ", "\n"),
    "postgresql": ("CREATE FUNCTION f() RETURNS void AS $$\n", "\n$$ LANGUAGE {lang};\n"),
    "plpgsql": ("CREATE FUNCTION f() RETURNS void AS $$\n", "\n$$ LANGUAGE {lang};\n"),
    "psql": ("CREATE FUNCTION f() RETURNS void AS $$\n", "\n$$ LANGUAGE {lang};\n"),
    "wikitext": ('<syntaxhighlight lang="{lang}">', "</syntaxhighlight>"),
    "http": ("HTTP/1.1 200 OK\nContent-Type: {mime}\n\n", ""),
    "mime": ("Content-Type: {mime}\n\n", ""),
    "arturo": ("{{!{lang} ", "\n}}"),
}


def nested_shapes(alias: str) -> dict[str, tuple[str, str, str]]:
    """name -> (prefix, unit, suffix): ``alias``'s nestings of each `INNER` lexer."""
    if alias not in NESTINGS:
        return {}
    opener, closer = NESTINGS[alias]
    found = {}
    for lang, mime, prefix, unit in INNER:
        if "{mime}" in opener + closer and not mime:
            continue
        start = opener.format(lang=lang, mime=mime) + prefix
        end = closer.format(lang=lang, mime=mime)
        found[f"{start!r} + {unit!r}*n + {end!r}"] = (start, unit, end)
    return found


def shape_parts(alias: str, name: str) -> tuple[str, str, str]:
    """A shape's (prefix, unit, suffix) by its name, plain or nested."""
    if name in (table := shapes()):
        return (*table[name], "")
    return nested_shapes(alias)[name]


def shape_text(prefix: str, unit: str, size: int, suffix: str = "") -> str:
    return prefix + unit * max(1, (size - len(prefix) - len(suffix)) // len(unit)) + suffix


def lexer_aliases() -> dict[str, str]:
    """Every lexer class a fence can be highlighted with → its first alias (the classes
    Pygments ships, with the bounded variants of `chat.lexers.BOUNDED` in place of
    their originals), and every lexer class with no alias that one of those can run →
    its ``module:Class`` job."""
    import importlib

    from pygments.lexers._mapping import LEXERS

    from chat.lexers import BOUNDED, ResolvesLexer, reached_lexers

    found = {
        (BOUNDED[name].__name__ if name in BOUNDED else name): spec[2][0]
        for name, spec in sorted(LEXERS.items())
        if spec[2]
    }
    helpers: dict[str, str] = {}
    for name, spec in sorted(LEXERS.items()):
        lexer = BOUNDED.get(name) or getattr(importlib.import_module(spec[0]), name)
        try:
            reached = reached_lexers(lexer)
        except ResolvesLexer:
            continue
        for other in reached:
            if other.__name__ not in found and other.__name__ not in LEXERS:
                helpers[other.__name__] = f"{other.__module__}:{other.__qualname__}"
    return found | dict(sorted(helpers.items()))


def job_lexer(job: str) -> Any:
    """The lexer a fuzz job measures: an alias's (`chat.highlight.lexer_for`) or a
    ``module:Class`` (a lexer with no alias that another runs)."""
    import importlib

    from chat.highlight import lexer_for

    if ":" not in job:
        return lexer_for(job)
    module, name = job.split(":")
    return getattr(importlib.import_module(module), name)(stripnl=False, ensurenl=False)


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
    from chat.highlight import highlight_html

    lexer = job_lexer(alias)

    def highlight(text: str) -> object:
        return highlight_html(text, lexer)

    worst: list[float] = []
    shape = ""
    every = {name: (*parts, "") for name, parts in shapes().items()} | nested_shapes(alias)
    for name, (prefix, unit, suffix) in every.items():
        texts = [shape_text(prefix, unit, size, suffix) for size in (SMALL, LARGE)]
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
    from chat.highlight import SIZES, highlight_html

    if not verdict.bounded:
        return verdict
    lexer = job_lexer(verdict.alias)
    prefix, unit, suffix = shape_parts(verdict.alias, verdict.shape)
    text = shape_text(prefix, unit, SIZES[1], suffix)
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


NESTED_SIZES = (1_278, 1_600, 5_000, 19_990)
NESTED_TIMEOUT = 10.0


def nested_messages() -> dict[str, str]:
    """name -> message: a fenced block of each nesting (an outer lexer running a cubic
    one) at each of `NESTED_SIZES` characters."""
    found = {}
    for outer in NESTINGS:
        for name, (prefix, unit, suffix) in nested_shapes(outer).items():
            for size in NESTED_SIZES:
                code = shape_text(prefix, unit, size, suffix)
                found[f"{outer} {size:,}: {name}"] = f"```{outer}\n{code}\n```\n"
    return found


def nested_worst() -> tuple[float, str, list[tuple[float, str]]]:
    """CPU seconds of rendering each nested message as a chat message does
    (`chat.rendering.markdown_to_html`): the slowest, its name, every timing."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "chat.settings")
        # never used (rendering does no queries), but never the developer's database
        os.environ.setdefault("DATABASE_URL", f"sqlite:///{Path(tmp) / 'unused.sqlite3'}")
        import django

        django.setup()
        from chat.rendering import markdown_to_html

        signal.signal(signal.SIGALRM, _on_alarm)
        for outer in NESTINGS:  # warm up: imports, the renderer, each lexer's tokens
            markdown_to_html(f"```{outer}\nx\n```\n")
        timings = [
            (_time(markdown_to_html, text, 1, NESTED_TIMEOUT), name)
            for name, text in nested_messages().items()
        ]
    seconds, name = max(timings)
    return seconds, name, timings


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
    if "--nested" in argv:
        seconds, name, timings = nested_worst()
        for each in sorted(timings, reverse=True)[:10]:
            print(f"{each[0]:8.4f} s  {each[1]}")
        print(f"{len(timings)} nested messages, the slowest {seconds:.3f} s CPU: {name}")
        return 0 if seconds <= GIVE_UP_SECONDS else 1
    write = "--write" in argv
    workers = int(argv[argv.index("--jobs") + 1]) if "--jobs" in argv else 2
    wanted = [a for a in argv if not a.startswith("--") and not a.isdigit()]
    if wanted:  # a lexer's first alias, as the file's jobs are named (`md` → `markdown`)
        names = lexer_aliases()
        wanted = [a if ":" in a else names[type(job_lexer(a)).__name__] for a in wanted]
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
