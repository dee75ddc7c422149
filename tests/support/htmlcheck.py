"""Parse HTML and fail on anything that could execute: the real check, not substrings."""

from __future__ import annotations

from html.parser import HTMLParser

DANGEROUS_TAGS = {"script", "iframe", "object", "embed", "svg", "math", "style", "base", "form"}
URL_ATTRS = {"href", "src", "action", "formaction", "xlink:href", "srcset", "poster"}
BAD_SCHEMES = ("javascript:", "vbscript:", "data:text/html")


class _Checker(HTMLParser):
    def __init__(self, allow_forms: bool) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self.allow_forms = allow_forms

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in DANGEROUS_TAGS and not (tag == "form" and self.allow_forms):
            self.problems.append(f"<{tag}>")
        for name, value in attrs:
            if name.startswith("on"):
                self.problems.append(f"{tag}[{name}]")
            if name == "style" and value and "url(" in value.lower():
                self.problems.append(f"{tag}[style]")
            if name in URL_ATTRS and value:
                compact = "".join(value.split()).lower()
                if compact.startswith(BAD_SCHEMES):
                    self.problems.append(f"{tag}[{name}={value}]")


def assert_inert(html: str, *, allow_forms: bool = False) -> None:
    checker = _Checker(allow_forms)
    checker.feed(str(html))
    checker.close()
    assert checker.problems == [], checker.problems
