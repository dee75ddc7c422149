"""The zh-Hans catalog is complete, and the compiled .mo matches the .po."""

from __future__ import annotations

import gettext
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PO = ROOT / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"
MO = PO.with_suffix(".mo")
STRING = r'"(?:[^"\\]|\\.)*"'


def _entries() -> list[tuple[str, str, bool]]:
    """(msgid, first msgstr, fuzzy) for every entry but the header."""
    entries = []
    for block in PO.read_text(encoding="utf-8").split("\n\n"):
        msgid = re.search(r"^msgid ((?:\".*\"\n?)+)", block, re.M)
        msgstr = re.search(r"^msgstr(?:\[0\])? ((?:\".*\"\n?)+)", block, re.M)
        if not msgid or not msgstr:
            continue
        key = "".join(json.loads(p) for p in re.findall(STRING, msgid.group(1)))
        if key:
            value = "".join(json.loads(p) for p in re.findall(STRING, msgstr.group(1)))
            entries.append((key, value, "fuzzy" in block.split("msgid")[0]))
    return entries


def test_every_string_is_translated():
    entries = _entries()
    assert len(entries) > 200
    untranslated = [k for k, v, fuzzy in entries if not v or fuzzy]
    assert untranslated == []


def test_compiled_catalog_is_current():
    with MO.open("rb") as handle:
        compiled = gettext.GNUTranslations(handle)
    stale = [k for k, v, _ in _entries() if "%(n)s" not in k and compiled.gettext(k) != v]
    assert stale == [], "run `make messages` (compilemessages) and commit the .mo"
