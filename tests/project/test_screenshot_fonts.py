"""`make screenshots` checks its fonts first (bug 9: Chinese and emoji drawn as boxes)."""

from __future__ import annotations

import subprocess

import pytest

from tests.e2e.screenshots import INSTALL, ensure_fonts, fonts_missing

BOTH = "/usr/share/fonts/a.ttc: Noto Sans CJK SC:style=Regular\n/x.ttf: Noto Color Emoji:style=Regular\n"


def _fake(outputs):
    calls = []

    def run(cmd, **kwargs):
        calls.append(cmd)
        out = outputs.pop(0) if cmd == ["fc-list"] else ""
        return subprocess.CompletedProcess(cmd, 0, stdout=out, stderr="")

    return run, calls


def test_fonts_present_need_nothing():
    run, calls = _fake([BOTH])
    ensure_fonts(run, is_root=False)
    assert calls == [["fc-list"]]
    assert fonts_missing(BOTH) == []


def test_missing_fonts_fail_loudly_with_the_command_when_not_root():
    run, calls = _fake(["/x.ttf: DejaVu Sans:style=Book\n"])
    with pytest.raises(SystemExit) as stop:
        ensure_fonts(run, is_root=False)
    assert INSTALL in str(stop.value) and "fonts-noto-cjk" in str(stop.value)
    assert calls == [["fc-list"]]  # nothing installed


def test_missing_fonts_are_installed_as_root(monkeypatch):
    monkeypatch.setattr("shutil.which", lambda name: "/usr/bin/" + name)
    run, calls = _fake(["/x.ttf: Noto Sans CJK SC\n", BOTH])
    ensure_fonts(run, is_root=True)
    assert [
        "apt-get",
        "install",
        "-y",
        "--no-install-recommends",
        "fonts-noto-color-emoji",
    ] in calls
    assert ["fc-cache", "-f"] in calls
