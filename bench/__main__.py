"""``python -m bench``: run every ``bench/bench_*.py`` module's ``run()``, print a table
and merge the results into ``bench/results.json``.

A module's ``run()`` returns ``{name: {"value", "unit", "target"}}``; a result meets its
target when ``value <= target`` (or ``>=`` when it says ``"higher_is_better": true``).
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results.json"


def _meets(result: dict[str, Any]) -> bool | None:
    target, value = result.get("target"), result.get("value")
    if not isinstance(target, int | float) or not isinstance(value, int | float):
        return None
    return value >= target if result.get("higher_is_better") else value <= target


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(HERE.parent))
    wanted = set(argv)
    results: dict[str, dict[str, Any]] = {}
    for path in sorted(HERE.glob("bench_*.py")):
        if wanted and path.stem not in wanted:
            continue
        module = importlib.import_module(f"bench.{path.stem}")
        results.update(module.run())
    merged = json.loads(RESULTS.read_text(encoding="utf-8")) if RESULTS.exists() else {}
    merged.update(results)
    RESULTS.write_text(json.dumps(merged, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    width = max((len(name) for name in results), default=10)
    failed = False
    for name, result in results.items():
        meets = _meets(result)
        failed |= meets is False
        mark = {True: "ok", False: "MISS", None: ""}[meets]
        op = ">=" if result.get("higher_is_better") else "<="
        target = f"target {op} {result['target']}" if result.get("target") is not None else ""
        print(
            f"{name:<{width}}  {result['value']!s:>10} {result.get('unit', ''):<5} {target}  {mark}"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
