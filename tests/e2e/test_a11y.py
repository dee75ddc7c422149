"""Accessibility: axe-core (from axe-playwright-python) finds no WCAG 2.1 A/AA violation on
the conversation page with every card kind, open and answered (folded, and unfolded), in
light and dark, at 1280 and 360 px."""

from __future__ import annotations

import json

from playwright.sync_api import expect

from tests.e2e.conftest import login

WCAG_21_AA = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}}

SETUP = """
import json
from django.contrib.auth.models import User
from chat.core.services import conversation_create, message_create
from questionnaires.asks.services import ask_answer, ask_create
from questionnaires.inline.services import questionnaire_answer
from tests.support.asking import TRIP, open_elicitation, open_form
user = User.objects.get(username="ann")
made = {}
c = conversation_create(owner=user, title="a11y cards", agent="external", language="en")
m = message_create(conversation=c, role="assistant", content=TRIP)
questionnaire_answer(conversation=c, message_id=m.pk, questionnaire_id=f"{m.pk}_q1",
    answers={"q1": "Rome", "q2": ["Train"], "q3": "quiet"}, other_text={}, user=user, lang="en")
message_create(conversation=c, role="assistant", content="Oops\\n```questionnaire\\ntitle: x\\n```\\n")
message_create(conversation=c, role="assistant", content=TRIP)
made["cards"] = c.pk
c = conversation_create(owner=user, title="a11y asks", agent="external", language="en")
options = [{"label": "Left", "value": "left"}, {"label": "Right", "value": "right"}]
done = ask_create(conversation=c, turn_id="t1",
    payload={"question": "Which side?", "field": "side", "options": options})
ask_answer(conversation=c, ask_message=done, answer={"field": "side", "turn_id": "t1",
    "source": "user_option_click", "value": "left"})
ask_create(conversation=c, turn_id="t2", payload={"type": "scale", "question": "How much?",
    "field": "score", "min": 0, "max": 10, "step": 1, "min_label": "None", "max_label": "Worst"})
made["asks"] = c.pk
c = conversation_create(owner=user, title="a11y form", agent="external", language="en")
open_form(c)
made["form"] = c.pk
c = conversation_create(owner=user, title="a11y elicitation", agent="external", language="en")
message_create(conversation=c, role="assistant", content="Let me book it.")
open_elicitation(c)
made["elicitation"] = c.pk
print(json.dumps(made))
"""


def test_every_card_kind_has_no_wcag_21_aa_violation(browser, server):
    from axe_playwright_python.sync_playwright import Axe

    made = json.loads(server.shell(SETUP).strip().splitlines()[-1])
    axe = Axe()
    found: dict[str, list[str]] = {}
    for viewport, theme in (
        ({"width": 1280, "height": 800}, "light"),
        ({"width": 360, "height": 740}, "dark"),
    ):
        ctx = browser.new_context(viewport=viewport, color_scheme=theme, locale="en-US")
        page = ctx.new_page()
        login(page, server)
        for name, cid in made.items():
            page.goto(f"{server.url}/conversations/{cid}/")
            expect(page.locator("#messages .qcard").first).to_be_attached()
            for unfold in (False, True):
                if unfold:  # the folded cards' insides and the rare actions, too
                    for summary in page.locator(
                        "#messages details.qcard-fold > summary, #messages .qcard-more > summary"
                    ).all():
                        summary.click()
                results = axe.run(page, options=WCAG_21_AA)
                problems = [
                    f"{v['id']}: {node['target']}"
                    for v in results.response["violations"]
                    for node in v["nodes"]
                ]
                if problems:
                    found[f"{name} {theme} {viewport['width']} unfolded={unfold}"] = problems
        ctx.close()
    assert found == {}, json.dumps(found, indent=1)
