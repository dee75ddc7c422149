"""The segmenter against a peer (issue 38 item 1): Sage's own JavaScript splitter under
node, on the same corpus, in the same run.

Sage (github.com/ZHangZHengEric/Sage) splits an assistant message into Markdown and
questionnaire parts in `splitInlineQuestionnaireContent`
(`app/desktop/ui/src/utils/inlineQuestionnaire.js`: fences, tags, YAML and JSON bodies,
the strict checks). Its source is not copied into this repository: point `SAGE_SPLITTER`
at that file in a checkout of Sage. The benchmark copies it to a temporary folder next to
`js-yaml` (its one import; `tests/support/api_clients`' npm install has it), and times it
under node (`bench/sage_peer.mjs`) and `parse_message` here on the same ~3.7 MB of
realistic messages (`bench.corpus.realistic_messages(310)`), alternating the two
`REPEATS` times so a burst of load on a shared machine hits both alike. The result is the
median of the repetitions' ratios (each: best Python pass ÷ best node pass), with the
spread. Without node, the file or js-yaml it is skipped, with the reason.

    SAGE_SPLITTER=~/src/Sage/app/desktop/ui/src/utils/inlineQuestionnaire.js \\
        python -m bench bench_peer_sage
"""

from __future__ import annotations

import gc
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from questionnaires.protocol import parse_message

from .corpus import realistic_messages

HERE = Path(__file__).resolve().parent
JS_YAML = HERE.parent / "tests" / "support" / "api_clients" / "node_modules" / "js-yaml"
MESSAGES = 310  # ~3.7 MB (the dense part: 3.0 MB)
REPEATS = 7
PASSES = 3  # per repetition and side: the first warms up, the best of the others counts


def missing() -> str | None:
    """Why the comparison can't run here, or None."""
    if shutil.which("node") is None:
        return "needs node (Node.js) to run Sage's splitter"
    source = os.environ.get("SAGE_SPLITTER", "")
    if not source or not Path(source).is_file():
        return (
            "set SAGE_SPLITTER to Sage's app/desktop/ui/src/utils/inlineQuestionnaire.js "
            "(github.com/ZHangZHengEric/Sage)"
        )
    if not JS_YAML.is_dir():
        return "needs js-yaml: run `make test` once (tests/support/api_clients' npm install)"
    return None


def _python_pass(messages: list[str]) -> tuple[float, int]:
    gc.collect()
    gc.disable()
    try:
        started = time.perf_counter()
        parts = sum(len(parse_message(text, message_id=i)) for i, text in enumerate(messages))
        return time.perf_counter() - started, parts
    finally:
        gc.enable()


def _node_passes(folder: Path, corpus: Path) -> list[float]:
    ran = subprocess.run(
        [
            "node",
            str(HERE / "sage_peer.mjs"),
            str(folder / "splitter.mjs"),
            str(corpus),
            str(PASSES),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    seconds: list[float] = json.loads(ran.stdout)["seconds"]
    return seconds


def corpora() -> dict[str, list[str]]:
    """`realistic`: the ~3.7 MB of replies as the app sees them (64 of the 310 name no
    questionnaire, which `parse_message` passes over at once); `dense`: the 246 that do
    (3.0 MB, every one scanned in full)."""
    messages = realistic_messages(MESSAGES)
    return {
        "realistic": messages,
        "dense": [m for m in messages if "questionnaire" in m.lower()],
    }


def measure(messages: list[str]) -> dict[str, Any]:
    """The ratios of each repetition, and the best times of each side."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        shutil.copyfile(os.environ["SAGE_SPLITTER"], folder / "splitter.mjs")
        (folder / "node_modules").mkdir()
        (folder / "node_modules" / "js-yaml").symlink_to(JS_YAML)
        corpus = folder / "corpus.json"
        corpus.write_text(json.dumps(messages), encoding="utf-8")
        ratios, py_best, node_best = [], [], []
        for _ in range(REPEATS):
            py = min(_python_pass(messages)[0] for _ in range(PASSES))
            js = min(_node_passes(folder, corpus)[1:])
            ratios.append(py / js)
            py_best.append(py)
            node_best.append(js)
    return {
        "ratios": ratios,
        "python_seconds": min(py_best),
        "node_seconds": min(node_best),
        "megabytes": sum(len(m.encode()) for m in messages) / 1e6,
    }


def _result(name: str, found: dict[str, Any]) -> dict[str, Any]:
    ratios = found["ratios"]
    return {
        "value": round(statistics.median(ratios), 2),
        "unit": "x",
        "target": 2.0,
        "note": (
            f"parse_message ÷ Sage's splitInlineQuestionnaireContent under node, {name} "
            f"corpus ({found['megabytes']:.1f} MB), median of {REPEATS} alternating "
            f"repetitions (range {min(ratios):.2f}–{max(ratios):.2f}; best "
            f"{found['python_seconds']:.3f} s vs {found['node_seconds']:.3f} s; load "
            f"average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
        ),
    }


def run() -> dict[str, dict[str, Any]]:
    reason = missing()
    if reason is not None:
        print(f"bench_peer_sage skipped: {reason}")
        return {}
    found = corpora()
    return {
        "segmenter_vs_sage_ratio": _result("realistic", measure(found["realistic"])),
        "segmenter_vs_sage_ratio_dense": _result("dense", measure(found["dense"])),
    }


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
