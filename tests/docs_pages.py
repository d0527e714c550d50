"""The README and the pages of docs/: their text, code blocks and sections, for the tests that keep every example
in them real."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAGES = ["README.md", *sorted(f"docs/{path.name}" for path in (REPO / "docs").glob("*.md"))]


def text(page: str) -> str:
    """A page's text: `README.md` or `docs/NAME.md`."""
    return (REPO / page).read_text()


def blocks(page: str, language: str) -> list[str]:
    """The fenced code blocks of `language` on a page, in order."""
    return re.findall(rf"^```{language}\n(.*?)^```", text(page), re.M | re.S)


def all_blocks(language: str) -> list[str]:
    """The fenced code blocks of `language` on every page, README first."""
    return [block for page in PAGES for block in blocks(page, language)]


def section(page: str, heading: str) -> str:
    """The text under a heading (any level, given without its `#`s), to the next heading of the same or a higher
    level."""
    found = re.search(rf"^(#+) {re.escape(heading)}\n", text(page), re.M)
    assert found, f"{page} has no heading {heading!r}"
    rest = text(page)[found.end():]
    end = re.search(rf"^#{{1,{len(found.group(1))}}} ", rest, re.M)
    return rest[:end.start()] if end else rest


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, spaces as `-`."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: str) -> set[str]:
    """The anchors of a page's headings (outside code blocks)."""
    prose = re.sub(r"^```.*?^```", "", text(page), flags=re.M | re.S)
    return {anchor(heading) for heading in re.findall(r"^#{1,6} (.+)$", prose, re.M)}
