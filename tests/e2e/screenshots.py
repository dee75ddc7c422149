"""`make screenshots`: PNGs of the main screens, for reviewing the look and for the README.

Starts the app on its own SQLite file (tests.support.liveserver), makes conversations the way a
person would (the intake and the tour are driven in the browser) plus a few built
directly (a gallery of every card and widget kind, open and answered), then photographs
each screen at 1280 and 360 px, light and dark, in English and Simplified Chinese:

    python -m tests.e2e.screenshots [--out screenshots] [--only NAME ...]

Files are named `<screen>-<lang>-<width>-<theme>.png` in the (gitignored) output folder;
`--docs DIR` copies the README's curated few there. The CJK and emoji fonts are checked
first (installed with apt-get when running as root, else it stops with the command).
Uses Debian's /usr/bin/chromium like the browser tests; never downloads a browser.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS
from tests.support.liveserver import ROOT, LiveServer

PASSWORD = "screens-password-1"
SIZES = {"1280": {"width": 1280, "height": 800}, "360": {"width": 360, "height": 740}}
THEMES = ("light", "dark")
LANGS = {"en": "en-US", "zh-hans": "zh-CN"}

TRIP = {
    "en": (
        "Let me plan this with you.\n\n```questionnaire\ntitle: Trip plan\nquestions:\n"
        "  - type: single_choice\n    text: Where to?\n    options: [Paris, Rome, Lisbon]\n"
        "    default: Paris\n    allow_other: true\n"
        "  - type: multi_choice\n    text: How do you want to travel?\n"
        "    options: [Train, Plane, Car]\n    default: [Train]\n"
        "  - type: free_text\n    text: Anything else I should know?\n    default: ''\n```\n"
    ),
    "zh-hans": (
        "我们一起来规划。\n\n```questionnaire\ntitle: 旅行计划\nquestions:\n"
        "  - type: single_choice\n    text: 去哪里？\n    options: [巴黎, 罗马, 里斯本]\n"
        "    default: 巴黎\n    allow_other: true\n"
        "  - type: multi_choice\n    text: 怎么出行？\n    options: [火车, 飞机, 汽车]\n"
        "    default: [火车]\n"
        "  - type: free_text\n    text: 还有什么需要我知道的吗？\n    default: ''\n```\n"
    ),
}
MARKDOWN = {
    "en": (
        "Here is a quick comparison and a snippet you can reuse.\n\n"
        "| Option | Cost | Time |\n|---|---|---|\n| Train | €89 | 6 h |\n| Plane | €140 | 2 h |\n\n"
        '```python\ndef total(prices: list[float]) -> float:\n    """Sum the trip."""\n'
        "    return round(sum(prices), 2)\n```\n\nAnything else?"
    ),
    "zh-hans": (
        "这是一个简单的对比，还有一段可以复用的代码。\n\n"
        "| 方式 | 费用 | 时间 |\n|---|---|---|\n| 火车 | ¥680 | 6 小时 |\n| 飞机 | ¥1100 | 2 小时 |\n\n"
        "```python\ndef total(prices: list[float]) -> float:\n    return round(sum(prices), 2)\n```\n\n"
        "还需要别的吗？"
    ),
}

ASKS = {
    "en": [
        {
            "question": "Which season suits you?",
            "field": "season",
            "options": [
                {"label": "Spring", "value": "spring"},
                {"label": "Summer", "value": "summer"},
                {"label": "Autumn", "value": "autumn"},
            ],
            "allow_free_text": True,
            "free_text_placeholder": "Or tell me in your words…",
        },
        {
            "question": "Which country?",
            "field": "country",
            "options": [
                {"label": c, "value": c.lower()}
                for c in ("France", "Italy", "Portugal", "Spain", "Greece", "Norway", "Japan")
            ],
        },
        {
            "type": "scale",
            "question": "How flexible are your dates?",
            "field": "flex",
            "min": 0,
            "max": 10,
            "step": 1,
            "min_label": "Fixed",
            "max_label": "Any time",
        },
        {"type": "boolean", "question": "Travelling with children?", "field": "kids"},
        {
            "type": "free_text_only",
            "question": "What is the trip for?",
            "field": "purpose",
            "free_text_placeholder": "A birthday, a conference…",
        },
    ],
    "zh-hans": [
        {
            "question": "哪个季节合适？",
            "field": "season",
            "options": [
                {"label": "春天", "value": "spring"},
                {"label": "夏天", "value": "summer"},
                {"label": "秋天", "value": "autumn"},
            ],
            "allow_free_text": True,
            "free_text_placeholder": "或者用你自己的话说…",
        },
        {
            "question": "哪个国家？",
            "field": "country",
            "options": [
                {"label": c, "value": v}
                for c, v in (
                    ("法国", "fr"),
                    ("意大利", "it"),
                    ("葡萄牙", "pt"),
                    ("西班牙", "es"),
                    ("希腊", "gr"),
                    ("挪威", "no"),
                    ("日本", "jp"),
                )
            ],
        },
        {
            "type": "scale",
            "question": "你的日期有多灵活？",
            "field": "flex",
            "min": 0,
            "max": 10,
            "step": 1,
            "min_label": "固定",
            "max_label": "随时",
        },
        {"type": "boolean", "question": "带孩子一起旅行吗？", "field": "kids"},
        {
            "type": "free_text_only",
            "question": "这次旅行的目的是什么？",
            "field": "purpose",
            "free_text_placeholder": "生日、会议…",
        },
    ],
}
ANSWERS = [  # (field, source, value, text)
    ("season", "user_free_text", None, "Late spring, before the crowds\nideally May"),
    ("country", "user_option_click", "portugal", ""),
    ("flex", "user_option_click", 7, ""),
    ("kids", "user_skipped", None, ""),
    ("purpose", "user_free_text", None, "Our 10th anniversary — somewhere calm by the sea"),
]
ANSWERS_ZH = {
    "portugal": "pt",
    "Late spring, before the crowds\nideally May": "春末，人少的时候\n最好是五月",
    "Our 10th anniversary — somewhere calm by the sea": "结婚十周年，想去海边安静的地方",
}

SETUP = """
import json
from django.contrib.auth.models import User
from chat.models import Conversation
from chat.core.services import conversation_create, message_create
from questionnaires.asks.services import ask_create, ask_answer
from questionnaires.inline.services import questionnaire_answer
spec = json.loads({spec!r})
user = User.objects.get(username="ann")
out = {{}}
lang = spec["lang"]

def conv(title, agent):
    return conversation_create(owner=user, title=title, agent=agent, language=lang)

c = conv(spec["titles"]["cards"], "external")
message_create(conversation=c, role="user", content=spec["hello"])
m1 = message_create(conversation=c, role="assistant", content=spec["trip"])
questionnaire_answer(conversation=c, message_id=m1.pk, questionnaire_id=f"{{m1.pk}}_q1",
    answers={{"q1": "__questionnaire_other__", "q2": ["Train", "Car"] if lang == "en" else ["火车", "汽车"],
             "q3": spec["multiline"]}}, other_text={{"q1": spec["other"]}}, user=user, lang=lang)
message_create(conversation=c, role="assistant", content=spec["markdown"])
message_create(conversation=c, role="assistant", content=spec["trip"].replace("```questionnaire", "```questionnaire", 1))
out["cards"] = c.pk

c = conv(spec["titles"]["asks"], "external")
message_create(conversation=c, role="user", content=spec["hello"])
for payload in spec["asks"]:
    ask_create(conversation=c, payload=payload, turn_id="turn_gallery")
out["asks"] = c.pk

c = conv(spec["titles"]["answered"], "external")
message_create(conversation=c, role="user", content=spec["hello"])
asks = {{p["field"]: ask_create(conversation=c, payload=p, turn_id="turn_done") for p in spec["asks"]}}
for field, source, value, text in spec["answers"]:
    ask_answer(conversation=c, ask_message=asks[field], answer={{
        "field": field, "turn_id": "turn_done", "source": source, "value": value, "raw_text": text}})
message_create(conversation=c, role="assistant", content=spec["thanks"])
out["answered"] = c.pk

c = conv(spec["titles"]["openai"], "openai")
out["openai"] = c.pk
c = conv(spec["titles"]["external"], "external")
out["external"] = c.pk
print(json.dumps(out))
"""

TEXTS = {
    "en": {
        "titles": {
            "cards": "Trip planning (cards)",
            "asks": "Open questions",
            "answered": "Answered questions",
            "openai": "Model without endpoint",
            "external": "My own runtime",
        },
        "hello": "Help me plan a short trip in spring.",
        "other": "Porto",
        "multiline": "Quiet hotel please.\nNo early flights.",
        "thanks": "Thank you! I have everything I need to suggest three itineraries.",
    },
    "zh-hans": {
        "titles": {
            "cards": "旅行规划（卡片）",
            "asks": "待回答的问题",
            "answered": "已回答的问题",
            "openai": "未配置模型",
            "external": "我自己的运行时",
        },
        "hello": "帮我规划一次春天的短途旅行。",
        "other": "波尔图",
        "multiline": "请选安静的酒店。\n不要早班机。",
        "thanks": "谢谢！我已经有足够的信息来推荐三条路线了。",
    },
}


# Chinese text and emoji (in people's own messages) are drawn as boxes without these.
FONTS = {"Noto Sans CJK": "fonts-noto-cjk", "Noto Color Emoji": "fonts-noto-color-emoji"}
INSTALL = "sudo apt-get install fonts-noto-cjk fonts-noto-color-emoji"
# The README's pictures (docs/screenshots/, committed): a small, curated set.
CURATED = (
    "home-en-1280-light",
    "intake-en-1280-light",
    "sheet-en-360-light",
    "tour-en-1280-dark",
    "intake-zh-hans-360-light",
)


def fonts_missing(fc_list: str) -> list[str]:
    """The Debian packages of the fonts `fc-list`'s output lacks."""
    return [package for family, package in FONTS.items() if family not in fc_list]


def ensure_fonts(
    run: Callable[..., subprocess.CompletedProcess[str]] = subprocess.run,
    is_root: bool | None = None,
) -> None:
    """Install the CJK and emoji fonts when they are missing and we may (root with
    apt-get), else stop with the command that installs them."""
    is_root = os.geteuid() == 0 if is_root is None else is_root
    try:
        listed = run(["fc-list"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        raise SystemExit(
            f"fc-list (fontconfig) is missing: install it and the fonts: {INSTALL}"
        ) from None
    missing = fonts_missing(listed)
    if not missing:
        return
    if not is_root or shutil.which("apt-get") is None:
        raise SystemExit(
            f"Screenshots would draw Chinese and emoji as boxes: missing {', '.join(missing)}.\n"
            f"Install them with: {INSTALL}"
        )
    print(f"==> Installing fonts: {' '.join(missing)}", flush=True)
    run(["apt-get", "install", "-y", "--no-install-recommends", *missing], check=True)
    run(["fc-cache", "-f"], check=True)
    still = fonts_missing(run(["fc-list"], capture_output=True, text=True, check=True).stdout)
    if still:
        raise SystemExit(f"Fonts still missing after apt-get: {', '.join(still)}. {INSTALL}")


def curate(out: Path, docs: Path) -> list[Path]:
    """Copy the README's pictures (CURATED) from a full run into `docs`."""
    docs.mkdir(parents=True, exist_ok=True)
    copied = []
    for name in CURATED:
        source = out / f"{name}.png"
        if source.exists():
            copied.append(Path(shutil.copy2(source, docs / source.name)))
    return copied


@dataclass
class Screen:
    name: str
    path: str
    action: str = ""  # "playground" fills the playground


def _spec(lang: str) -> dict:
    answers = []
    for field, source, value, text in ANSWERS:
        if lang != "en":
            value = ANSWERS_ZH.get(value, value) if isinstance(value, str) else value
            text = ANSWERS_ZH.get(text, text)
        answers.append((field, source, value, text))
    return {
        "lang": lang,
        "trip": TRIP[lang],
        "markdown": MARKDOWN[lang],
        "asks": ASKS[lang],
        "answers": answers,
        **TEXTS[lang],
    }


def _login(page, server: LiveServer) -> None:
    page.goto(server.url + "/accounts/login/")
    page.fill("#id_username", "ann")
    page.fill("#id_password", PASSWORD)
    page.click("#login-form button[type=submit]")
    page.wait_for_url(server.url + "/")


def _start(page, server: LiveServer, agent: str, intake: str = "", text: str = "") -> str:
    """The home page's composer: the assistant (and topic) beside it, then Send."""
    page.goto(server.url + "/")
    page.select_option("#id_agent", agent)
    if intake:
        page.select_option("#id_intake", intake)
    if text:
        page.fill("#id_content", text)
    page.click(".home-composer button[type=submit]")
    page.wait_for_url("**/conversations/*/")
    return page.url.removeprefix(server.url)


def _scripted(page, server: LiveServer, script: str, title: str) -> str:
    """A scripted conversation on another walk-through than the tour (made server-side:
    the tour would open by itself)."""
    cid = server.json(
        "from django.contrib.auth.models import User\n"
        "from chat.core.services import conversation_create\n"
        f"c = conversation_create(owner=User.objects.get(username='ann'), agent='scripted',"
        f" title={title!r})\n"
        f"c.state = {{'script': {script!r}}}\nc.save()\nprint(c.pk)"
    )
    page.goto(f"{server.url}/conversations/{cid}/")
    return f"/conversations/{cid}/"


def _drive(browser, server: LiveServer, lang: str) -> dict[str, str]:
    """Conversations a person makes: the intake mid-way and confirmed, the tour, forms."""
    from playwright.sync_api import expect

    ctx = browser.new_context(
        locale=LANGS[lang], extra_http_headers={"Accept-Language": LANGS[lang]}
    )
    page = ctx.new_page()
    _login(page, server)
    urls: dict[str, str] = {}
    # the intake, a few answers in (buttons, other text, slider)
    urls["intake"] = _start(page, server, "intake", "knee")
    page.locator('.ask[data-field="knee_side"] button.ask-option').nth(1).click()
    pain = page.locator('.ask[data-field="pain_level"]:not(.ask-closed)')
    pain.locator("input[name=text]").fill("a little" if lang == "en" else "有一点")
    pain.locator("input[name=text]").press("Enter")
    # the next question, whichever the typed words left open (they may fill a later one)
    page.locator(".ask").nth(2).wait_for(timeout=15000)
    # the project intake, all the way to its summary
    urls["summary"] = _start(page, server, "intake", "project_kickoff")
    for _ in range(12):
        open_ask = page.locator(".ask:not(.ask-closed) form").first
        if page.locator("section.qcard-interactive").count():
            break
        open_ask.wait_for(timeout=15000)
        skip = open_ask.locator("button.ask-skip")
        if open_ask.locator("button.ask-option").count():
            open_ask.locator("button.ask-option").first.click()
        elif open_ask.locator("select").count():
            open_ask.locator("select").select_option(index=2)
            open_ask.locator("button.ask-choose").click()
        else:
            skip.click()
        page.wait_for_timeout(700)
    # the protocol tour (it opens by itself), four cards in
    urls["tour"] = _start(page, server, "scripted")
    for _ in range(4):
        card = page.locator("#messages section.qcard-interactive").last
        card.wait_for(timeout=15000)
        qid = card.get_attribute("data-questionnaire-id")
        card.locator("button[type=submit]:not([value=decline])").click()
        expect(page.locator(f'section[data-questionnaire-id="{qid}"]')).to_have_attribute(
            "data-card-mode", "answered", timeout=15000
        )
    page.wait_for_timeout(1500)
    # the deferred form (the tour's "forms" script)
    urls["form"] = _scripted(page, server, "forms", "Trip" if lang == "en" else "旅行")
    page.fill("#id_content", "Plan a trip for me" if lang == "en" else "帮我规划旅行")
    page.keyboard.press("Enter")
    page.locator("section.iform").wait_for(timeout=15000)
    # MCP elicitation cards from the bundled demo server (the "mcp_demo" script): a form
    # left open, one answered (locked, with the tool's result), a URL-mode card left open
    urls.update(_elicitations(page, server, lang))
    # an echo conversation named from its first message
    urls["echo"] = _start(
        page,
        server,
        "echo",
        text="Hello there! Can you **repeat** this?"
        if lang == "en"
        else "你好！能**重复**一下吗？",
    )
    page.locator("article.msg-assistant").wait_for(timeout=15000)
    ctx.close()
    return urls


def _mcp_demo(page, server: LiveServer, say: str) -> str:
    url = _scripted(page, server, "mcp_demo", "MCP")
    page.fill("#id_content", say)
    page.keyboard.press("Enter")
    page.locator("#messages section.elic-pending").wait_for(timeout=15000)
    return url


def _elicitations(page, server: LiveServer, lang: str) -> dict[str, str]:
    from playwright.sync_api import expect

    say = "Book us a table, please" if lang == "en" else "请帮我们订一张桌子"
    urls = {"elicit-form": _mcp_demo(page, server, say)}
    urls["elicit-answered"] = _mcp_demo(page, server, say)
    card = page.locator("#messages section.elic-pending")
    card.locator("input[type=date]").fill("2026-05-01")
    card.locator("input[type=number]").fill("4")
    card.locator("input[value=terrace]").check()
    card.locator("input[value=vegetarian]").check()
    card.locator("button[value=accept]").click()
    expect(page.locator("#messages .elic-outcome")).to_be_visible(timeout=15000)
    urls["elicit-url"] = _mcp_demo(page, server, say)
    page.locator("#messages section.elic-pending .qcard-more summary").click()  # "Other choices"
    page.locator("#messages section.elic-pending button[value=decline]").click()
    expect(page.locator("#run-status .run-active")).to_have_count(0, timeout=15000)
    page.fill("#id_content", "ann@example.test")
    page.keyboard.press("Enter")
    page.locator("#messages section.elic-pending button[value=accept]").wait_for(timeout=15000)
    return urls


# Questionnaire analytics of everything the screens made (the refresh's clock a minute on,
# past its lag); the definition shown most, for its report.
ANALYTICS = """
import json
from datetime import timedelta
from django.utils import timezone
from questionnaires.analytics.models import CardDefinition
from questionnaires.analytics.refresh import analytics_refresh
analytics_refresh(now=timezone.now() + timedelta(minutes=1))
print(json.dumps(CardDefinition.objects.order_by("-shown_count", "id").values_list("pk", flat=True).first()))
"""


def _shoot(browser, server: LiveServer, out: Path, lang: str, screens: list[Screen]) -> list[Path]:
    written = []
    for size, viewport in SIZES.items():
        for theme in THEMES:
            ctx = browser.new_context(
                viewport=viewport,
                color_scheme=theme,
                locale=LANGS[lang],
                extra_http_headers={"Accept-Language": LANGS[lang]},
                device_scale_factor=1,
            )
            page = ctx.new_page()
            _login(page, server)
            for screen in screens:
                page.goto(server.url + screen.path)
                if screen.action == "sidebar":
                    if size != "360":
                        continue
                    page.click("[data-sidebar-open]")
                    page.wait_for_timeout(300)
                if screen.action == "sheet":  # the side panel, opened from its pill
                    if size != "360":
                        continue
                    page.click("#panel-pill")
                    page.wait_for_timeout(300)
                if screen.action == "playground":
                    page.fill(
                        "#pg-content",
                        TRIP[lang] + '\n<questionnaire>{"title": 1}</questionnaire>\n',
                    )
                    page.click("#playground-form button[type=submit]")
                page.wait_for_timeout(400)
                path = out / f"{screen.name}-{lang}-{size}-{theme}.png"
                # simple pages scroll the window: the whole page; chat pages: the viewport
                full = page.locator("body.simple").count() > 0
                page.screenshot(path=str(path), full_page=full)
                written.append(path)
            ctx.close()
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=str(ROOT / "screenshots"))
    parser.add_argument("--only", nargs="*", help="screen names to take (default: all)")
    parser.add_argument("--lang", nargs="*", default=list(LANGS))
    parser.add_argument("--docs", help="also copy the README's curated pictures here")
    args = parser.parse_args(argv)
    ensure_fonts()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if not Path(CHROMIUM).exists():
        print(f"{CHROMIUM} not found: apt-get install chromium", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    with (
        tempfile.TemporaryDirectory() as tmp,
        LiveServer(Path(tmp), env={"SSE_KEEPALIVE_SECONDS": "2"}) as server,
    ):
        server.shell(
            "from django.contrib.auth.models import User\n"
            f"User.objects.create_superuser('ann', 'ann@example.com', '{PASSWORD}')"
        )
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for lang in args.lang:
                made = json.loads(
                    server.shell(SETUP.format(spec=json.dumps(_spec(lang))))
                    .strip()
                    .splitlines()[-1]
                )
                urls = _drive(browser, server, lang)
                analytics = server.json(ANALYTICS)
                screens = [
                    Screen("home", "/"),
                    Screen("intake", urls["intake"]),
                    Screen("intake-summary", urls["summary"]),
                    Screen("tour", urls["tour"]),
                    Screen("form", urls["form"]),
                    Screen("echo", urls["echo"]),
                    Screen("elicit-form", urls["elicit-form"]),
                    Screen("elicit-answered", urls["elicit-answered"]),
                    Screen("elicit-url", urls["elicit-url"]),
                    Screen("sidebar", urls["echo"], "sidebar"),
                    Screen("sheet", urls["intake"], "sheet"),
                    Screen("not-found", "/conversations/999999/"),
                    Screen("cards", f"/conversations/{made['cards']}/"),
                    Screen("asks-open", f"/conversations/{made['asks']}/"),
                    Screen("asks-answered", f"/conversations/{made['answered']}/"),
                    Screen("agent-openai", f"/conversations/{made['openai']}/"),
                    Screen("agent-external", f"/conversations/{made['external']}/"),
                    Screen("playground", "/questionnaires/playground/", "playground"),
                    Screen("admin", "/admin/"),
                    Screen(
                        "admin-conversation", f"/admin/chat/conversation/{made['cards']}/change/"
                    ),
                    Screen("admin-analytics", "/admin/questionnaires/carddefinition/"),
                    Screen(
                        "admin-analytics-report",
                        f"/admin/questionnaires/carddefinition/{analytics}/change/",
                    ),
                ]
                if args.only:
                    screens = [s for s in screens if s.name in args.only]
                for path in _shoot(browser, server, out, lang, screens):
                    print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
            browser.close()
    if args.docs:
        for path in curate(out, Path(args.docs)):
            print(f"{path} (README)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
