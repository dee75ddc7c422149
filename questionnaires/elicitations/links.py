"""The link of a URL-mode elicitation: whether it may be opened, and how it is shown (its
host highlighted, as ASCII)."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

MAX_URL = 4096


@dataclass(frozen=True)
class UrlParts:
    """A URL split for display: the host (ASCII / punycode) is what gets highlighted."""

    before: str
    host: str
    after: str


def url_is_openable(url: str) -> bool:
    """Only absolute http(s) URLs with a host, no spaces or control characters."""
    if not url or len(url) > MAX_URL or any(ch.isspace() or ord(ch) < 32 for ch in url):
        return False
    try:
        parts = urlsplit(url)
        host = parts.hostname
        if host:
            host.encode("idna")
    except (ValueError, UnicodeError):
        return False
    return parts.scheme in ("http", "https") and bool(host)


def url_parts(url: str) -> UrlParts:
    """Split `url` around its host, shown as ASCII (IDN hosts as punycode)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        ascii_host = host.encode("idna").decode("ascii") if host else ""
    except (ValueError, UnicodeError):
        return UrlParts(url, "", "")
    netloc = parts.netloc
    start = len(parts.scheme) + 3 if url.startswith(f"{parts.scheme}://") else 0
    userinfo = netloc.rpartition("@")[0] + "@" if "@" in netloc else ""
    port = f":{parts.port}" if parts.port else ""
    before = url[:start] + userinfo
    return UrlParts(before, ascii_host, port + url[start + len(netloc) :])
