"""The link of a URL-mode elicitation: what a browser will open, and whether to offer it.

A card must name the host the person's browser will really go to. Browsers parse URLs
by the WHATWG URL standard, which differs from Python's `urllib` on purpose-built
input: `https://evil\\@good/` is the host "evil" to a browser (a backslash is a slash)
and "good" to `urllib`. So the link is parsed with `ada-url` (a WHATWG parser), shown as
that parser serialises it (scheme in lower case, the host in ASCII / punycode), and Open
navigates to exactly that string. A link is *unsafe* — refused, shown as inert text,
with no Open button — when:

- it has control characters, whitespace or bidirectional-text controls (which can
  reverse how the line reads), or is longer than `MAX_URL`;
- it isn't a WHATWG URL, or isn't `https:` (plain `http:` only to a loopback host, and
  only with DEBUG on, for local development);
- it carries a user name or password (`https://good.example@evil.example/`);
- `urllib` reads another host out of it than the WHATWG parser (parsers disagree).
"""

from __future__ import annotations

import ipaddress
import unicodedata
from dataclasses import dataclass
from urllib.parse import urlsplit

import ada_url
from django.conf import settings

MAX_URL = 4096
# Bidirectional-text controls: embeddings, overrides, isolates and marks.
BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


@dataclass(frozen=True)
class Link:
    """`href` is what Open navigates to ("" when unsafe); `before` + `host` + `after` is
    what the card shows, the host highlighted. `problem` is "" or a stable code:
    `url_characters`, `url_unparsable`, `url_scheme`, `url_userinfo`, `url_ambiguous`."""

    href: str
    before: str
    host: str
    after: str
    problem: str = ""

    @property
    def openable(self) -> bool:
        return not self.problem


def shown(text: str) -> str:
    """``text`` with every control, format (bidi, zero-width) and space character other
    than a plain space made visible as `\\u…`, so it can't reorder or hide the line."""
    return "".join(
        f"\\u{ord(c):04x}" if unicodedata.category(c)[0] in "CZ" and c != " " else c
        for c in text[:MAX_URL]
    )


def _unsafe(url: str, problem: str) -> Link:
    return Link(href="", before=shown(url), host="", after="", problem=problem)


def _loopback(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _urllib_host(url: str) -> str | None:
    """The host Python's parser reads, in ASCII (None: it has none or can't say)."""
    try:
        host = urlsplit(url).hostname
        return host.encode("idna").decode("ascii").lower() if host else None
    except (ValueError, UnicodeError):
        return None


def link_check(url: str, *, allow_http_loopback: bool = False) -> Link:
    """Read a server's link as a browser would (see the module doc)."""
    if not url or len(url) > MAX_URL:
        return _unsafe(url, "url_characters")
    if any(c in BIDI or c.isspace() or unicodedata.category(c) in ("Cc", "Cf") for c in url):
        return _unsafe(url, "url_characters")
    try:
        parsed = ada_url.URL(url)
    except ValueError:
        return _unsafe(url, "url_unparsable")
    scheme, host = parsed.protocol, parsed.hostname
    if not host or not (
        scheme == "https:" or (scheme == "http:" and allow_http_loopback and _loopback(host))
    ):
        return _unsafe(url, "url_scheme")
    if parsed.username or parsed.password:
        return _unsafe(url, "url_userinfo")
    if _urllib_host(url) != host.strip("[]").lower():
        return _unsafe(url, "url_ambiguous")
    port = f":{parsed.port}" if parsed.port else ""
    after = port + parsed.pathname + parsed.search + parsed.hash
    return Link(href=parsed.href, before=f"{scheme}//", host=host, after=after)


def link_of(url: str) -> Link:
    """The link as a browser reads it (plain http only to loopback, only in DEBUG)."""
    return link_check(url, allow_http_loopback=settings.DEBUG)
