"""The long soak of issue 32's stateful walk (bench/walk.py): many seeded walks over the
knee intake in two tabs and a no-JS client, DESIGN §4.14's invariants after every step.

    python -m bench.bench_walk --walks 50 --steps 12 --seed 7     # the soak
    python -m bench bench_walk                                     # WALK_COUNT / WALK_SEED

Reports `walk_invariant_failures` (target 0: a failure prints its seed and steps; replay
one with `--walks 1 --seed <seed>`), the known defects it met (xfail in the CI walk) and
the time per step. Needs Debian's /usr/bin/chromium (skipped without it).
"""

from __future__ import annotations

import argparse
import os
import random
import secrets
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.walk import KNOWN_DEFECTS, InvariantFailed, Tab, Walk
from tests.support.liveserver import LiveServer

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
PASSWORD = secrets.token_urlsafe(12)


def _login(page: Any, url: str) -> None:
    page.goto(url + "/accounts/login/")
    page.fill("#id_username", "walker")
    page.fill("#id_password", PASSWORD)
    page.click("#login-form button[type=submit]")
    page.wait_for_url(url + "/")


def soak(walks: int, steps: int, seed: int) -> dict[str, Any]:
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=20_000)
    failures: list[str] = []
    known: dict[int, int] = {}
    taken = 0
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        server = LiveServer(Path(tmp), settings_module="tests.support.settings_fast")
        server.migrate()
        server.shell(
            "from django.contrib.auth.models import User\n"
            f"User.objects.create_user('walker', password='{PASSWORD}')"
        )
        server.start(migrate=False)
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--headless"])
                for n in range(walks):
                    one = seed + n
                    ctx = browser.new_context(locale="en-US")
                    nojs_ctx = browser.new_context(java_script_enabled=False, locale="en-US")
                    page = ctx.new_page()
                    page.set_default_timeout(30_000)
                    _login(page, server.url)
                    page.select_option("#id_agent", "intake")
                    page.select_option("#id_intake", "knee")
                    page.click(".home-composer button[type=submit]")
                    page.wait_for_url("**/conversations/*/")
                    nojs = nojs_ctx.new_page()
                    _login(nojs, server.url)
                    walk = Walk(
                        server=server,
                        cid=int(page.url.rstrip("/").split("/")[-1]),
                        tabs=[
                            Tab("tab A", page),
                            Tab("tab B", ctx.new_page()),
                            Tab("no-JS", nojs, js=False),
                        ],
                        checker=ctx.new_page(),
                        rng=random.Random(one),
                        seed=one,
                        known=KNOWN_DEFECTS,
                    )
                    try:
                        walk.run(steps)
                    except InvariantFailed as failed:
                        failures.append(str(failed))
                        print(failed, file=sys.stderr)
                    except Exception as exc:  # a step that could not be taken
                        failures.append(f"seed {one}: {exc!r}")
                        print(f"seed {one}: {exc!r}\n" + "\n".join(walk.log), file=sys.stderr)
                    for _, defect, _ in walk.hits:
                        known[defect] = known.get(defect, 0) + 1
                    taken += sum(1 for line in walk.log if line[:3].strip().rstrip(".").isdigit())
                    nojs_ctx.close()
                    ctx.close()
                browser.close()
        finally:
            server.stop()
    elapsed = time.monotonic() - started
    return {
        "failures": failures,
        "known": known,
        "steps": taken,
        "seconds_per_step": elapsed / max(taken, 1),
    }


def run() -> dict[str, dict[str, Any]]:
    if not Path(CHROMIUM).exists():
        return {"walk_skipped": {"value": 0, "unit": "", "target": None, "note": CHROMIUM}}
    walks = int(os.environ.get("WALK_COUNT", "5"))
    seed = int(os.environ.get("WALK_SEED", "1"))
    result = soak(walks, int(os.environ.get("WALK_STEPS", "12")), seed)
    note = (
        f"{walks} walks from seed {seed}, {result['steps']} steps; known defects {result['known']}"
    )
    return {
        "walk_invariant_failures": {
            "value": len(result["failures"]),
            "unit": "",
            "target": 0,
            "note": note,
        },
        "walk_seconds_per_step": {
            "value": round(result["seconds_per_step"], 2),
            "unit": "s",
            "target": None,
        },
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--walks", type=int, default=50)
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--seed", type=int, default=random.SystemRandom().randrange(1_000_000))
    args = parser.parse_args(argv)
    print(f"{args.walks} walks of {args.steps} steps from seed {args.seed}")
    result = soak(args.walks, args.steps, args.seed)
    print(
        f"{result['steps']} steps, {result['seconds_per_step']:.2f} s each; "
        f"known defects met {result['known']}; {len(result['failures'])} failure(s)"
    )
    return 1 if result["failures"] else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
