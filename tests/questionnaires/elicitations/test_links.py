"""URL-mode links read as a browser reads them (issue 22: the card named the wrong host)."""

from __future__ import annotations

import pytest

from questionnaires.elicitations.links import link_check

SAFE = [
    # (link, host shown, what Open navigates to)
    ("https://example.com/a?b=1#c", "example.com", "https://example.com/a?b=1#c"),
    ("HTTPS://Example.COM/Path", "example.com", "https://example.com/Path"),
    ("https://bücher.example/pay?x=<b>", "xn--bcher-kva.example", None),
    ("https://аpple.com/", "xn--pple-43d.com", "https://xn--pple-43d.com/"),  # Cyrillic а
    ("https://[::1]:8443/x", "[::1]", "https://[::1]:8443/x"),
]
UNSAFE = [
    ("https://evil\\@good/", "url_ambiguous"),  # a browser opens "evil"
    ("https://good.example\\.evil.example/", "url_ambiguous"),
    ("https://%65vil.com/", "url_ambiguous"),
    ("https://good.example@evil.example/", "url_userinfo"),
    ("https://user:pw@example.com/", "url_userinfo"),
    ("https://example.com/\u202egnp.exe", "url_characters"),  # right-to-left override
    ("https://exa\u2066mple.com/", "url_characters"),
    ("https://exa\u200bmple.com/", "url_characters"),
    ("https://exa mple.com", "url_characters"),
    ("https://example.com/\x00", "url_characters"),
    ("http://example.com/", "url_scheme"),
    ("javascript:alert(1)", "url_scheme"),
    ("data:text/html,<b>", "url_scheme"),
    ("https://", "url_unparsable"),
    ("", "url_characters"),
    ("https://" + "a" * 5000, "url_characters"),
]


@pytest.mark.parametrize(("url", "host", "href"), SAFE)
def test_safe_links_show_the_host_the_browser_opens(url, host, href):
    link = link_check(url)
    assert link.openable and link.host == host
    assert link.before + link.host + link.after == link.href
    if href:
        assert link.href == href


@pytest.mark.parametrize(("url", "problem"), UNSAFE)
def test_unsafe_links_are_inert_text(url, problem):
    link = link_check(url)
    assert link.problem == problem and not link.openable
    assert link.href == "" and link.host == ""
    assert not any(0x202A <= ord(c) <= 0x202E or 0x2066 <= ord(c) <= 0x2069 for c in link.before)


def test_plain_http_only_to_loopback_and_only_when_allowed():
    assert link_check("http://127.0.0.1:8000/x", allow_http_loopback=True).openable
    assert link_check("http://localhost/x", allow_http_loopback=True).openable
    assert not link_check("http://127.0.0.1:8000/x").openable
    assert not link_check("http://example.com/", allow_http_loopback=True).openable
