"""The CSS scale (static/css/scale.css): corner radii and spacing as custom properties.

Every corner comes from `--radius-*` (no literal radius in any other stylesheet), every
`var(--radius-*)` / `var(--space-*)` a stylesheet or template uses is defined in the
scale, and every page family links the scale before its own stylesheets — an undefined
custom property would silently draw square corners or no spacing.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
CSS = ROOT / "static" / "css"
SCALE = CSS / "scale.css"
STYLESHEETS = [p for p in sorted(CSS.glob("*.css")) if p != SCALE]
TEMPLATES = sorted((ROOT / "templates").rglob("*.html"))
DEFINED = dict(re.findall(r"(--(?:radius|space)-[\w-]+):\s*([^;]+);", SCALE.read_text()))


def _px(value: str) -> int:
    assert value.endswith("px"), value
    return int(value.removesuffix("px"))


def test_the_scale_grows_step_by_step():
    for prefix in ("--radius-", "--space-"):
        steps = [_px(v) for name, v in DEFINED.items() if name.startswith(prefix)]
        assert len(steps) >= 4 and steps == sorted(set(steps)), (prefix, steps)
    spaces = [name for name in DEFINED if name.startswith("--space-")]
    assert spaces == [f"--space-{n}" for n in range(1, len(spaces) + 1)]


def test_no_stylesheet_draws_a_literal_corner():
    literal = []
    for path in STYLESHEETS:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            for value in re.findall(r"border(?:-[a-z]+)*-radius:\s*([^;}!]+)", line):
                if any(part not in ("0",) and not part.startswith("var(--radius-")
                       for part in value.split()):  # fmt: skip
                    literal.append(f"{path.name}:{number}: {value.strip()}")
    assert literal == []


def test_every_scale_property_used_is_defined():
    used: set[str] = set()
    for path in [*STYLESHEETS, *TEMPLATES]:
        used |= set(re.findall(r"var\((--(?:radius|space)[\w-]*)", path.read_text()))
    assert used, "nothing uses the scale"
    assert used <= set(DEFINED), used - set(DEFINED)


def test_every_page_family_links_the_scale_before_its_stylesheets():
    """A template that links the project's stylesheets links scale.css first."""
    linking = []
    for path in TEMPLATES:
        links = re.findall(r"\{% static 'css/([\w-]+\.css)' %\}", path.read_text())
        if links:
            linking.append(path.relative_to(ROOT / "templates").as_posix())
            assert links[0] == "scale.css", (path, links)
    # The four families: the app, its 500 page, the admin, the API docs.
    assert set(linking) == {"_base.html", "500.html", "admin/base_site.html", "chat/api_docs.html"}
