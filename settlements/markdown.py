"""The players' text of a rulebook version: Markdown, refused when it carries script, and
rendered with raw HTML switched off, so nothing a proposer types reaches a page as markup."""

import re

from markdown_it import MarkdownIt

from settlements.errors import DomainError

# Raw HTML is shown as text anyway; a proposal that tries script or event handlers is refused
# outright, so that nobody approves a text whose intent was to run code on players' screens.
_SCRIPT = re.compile(r"<\s*/?\s*script\b|<[^>]*\son[a-z]+\s*=|javascript\s*:", re.IGNORECASE)
TEXT_MAX_LENGTH = 50_000

_RENDERER = MarkdownIt("commonmark", {"html": False, "linkify": False})


def check_text(text: str, field: str = "text") -> str:
    """The text, stripped; DomainError naming ``field`` if empty, too long or scripted."""
    text = (text or "").strip()
    if not text:
        raise DomainError("Please give the text shown to players.", field=field)
    if len(text) > TEXT_MAX_LENGTH:
        raise DomainError(f"The text must be at most {TEXT_MAX_LENGTH:,} characters.", field=field)
    if _SCRIPT.search(text):
        raise DomainError(
            "The text may not contain scripts, event attributes or javascript: links.",
            field=field,
        )
    return text


def render(text: str) -> str:
    """Safe HTML for ``text``: raw HTML escaped, unsafe link schemes dropped by markdown-it."""
    return _RENDERER.render(text)
