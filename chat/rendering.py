"""Markdown rendering for untrusted text (LLM output, user input).

markdown-it-py with the `js-default` preset: raw HTML is off (escaped), and link
validation refuses `javascript:`, `vbscript:`, `file:` and non-image `data:` URLs.
Links open in a new tab without an opener. No database access here.
"""

from __future__ import annotations

from typing import Any

from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict


def _link_open(
    self: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    token = tokens[idx]
    token.attrSet("rel", "noopener noreferrer nofollow")
    token.attrSet("target", "_blank")
    return self.renderToken(tokens, idx, options, env)


def _build() -> MarkdownIt:
    md = MarkdownIt("js-default").enable("table").enable("strikethrough")
    md.add_render_rule("link_open", _link_open)
    return md


_MD = _build()


def markdown_to_html(text: str) -> SafeString:
    """Render untrusted Markdown to safe HTML."""
    return mark_safe(_MD.render(text))  # noqa: S308 - markdown-it escapes all raw HTML


def render_options() -> dict[str, Any]:
    return dict(_MD.options)
