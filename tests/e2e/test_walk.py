"""Issue 32's stateful walk: random answer / type / skip / change / panel edit / composer /
confirm / decline / reload steps over an intake conversation open in two tabs and a no-JS
client, with DESIGN §4.14's invariants I1-I6 checked after every step (bench/walk.py).

A few short seeded walks per run (the seeds are printed; `WALK_SEED=7 WALK_COUNT=1` replays
one); the long soak is `python -m bench.bench_walk --walks 50`."""

from __future__ import annotations

import os
import random

import pytest

from bench.walk import Tab, Walk
from tests.e2e.conftest import login, start_from_home

WALKS = int(os.environ.get("WALK_COUNT", "2"))
STEPS = int(os.environ.get("WALK_STEPS", "10"))
FIRST_SEED = int(os.environ.get("WALK_SEED", str(random.SystemRandom().randrange(1_000_000))))

# Checks failing today because of a defect another branch fixes: (invariant, action) ->
# issue 32 defect number. Each goes once main has its fix.
KNOWN: dict[tuple[str, str], int] = {
    ("I1", "compose"): 6,  # answered from the composer: "Closed" live, "Answered" reloaded
    ("I1", "type"): 6,
    ("I1", "change"): 6,  # a change: both bubbles live, only the change reloaded
    ("I2", "decline"): 1,  # the declined card's bubble shows only the title
    ("I4", "decline"): 1,  # ...and the intake re-posts the identical summary
    ("I4", "panel_edit"): 9,  # every panel edit re-posts the summary and its card
    ("I2", "confirm"): 2,  # a click on the preselected option says "kept the default"
}


@pytest.mark.parametrize("n", range(WALKS))
def test_two_tabs_and_a_no_js_client_agree_with_the_record(browser, page, server, n):
    seed = FIRST_SEED + n
    print(f"walk seed {seed} (WALK_SEED={seed} WALK_COUNT=1 replays it)")
    start_from_home(page, server, agent="intake", intake="knee")
    cid = int(page.url.rstrip("/").split("/")[-1])
    second = page.context.new_page()
    nojs_ctx = browser.new_context(java_script_enabled=False, locale="en-US")
    nojs = nojs_ctx.new_page()
    login(nojs, server)
    checker = page.context.new_page()
    walk = Walk(
        server=server,
        cid=cid,
        tabs=[Tab("tab A", page), Tab("tab B", second), Tab("no-JS", nojs, js=False)],
        checker=checker,
        rng=random.Random(seed),
        seed=seed,
        known=KNOWN,
    )
    try:
        walk.run(STEPS)
    finally:
        nojs_ctx.close()
        print("\n".join(walk.log))
    if walk.hits:
        defects = sorted({d for _, d, _ in walk.hits})
        pytest.xfail(f"known issue 32 defects {defects} (seed {seed})")
