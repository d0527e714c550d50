"""The README leads and docs/ holds the reference: every link between them leads to a file and a heading that
exist, and every page is reachable from the README's table of contents."""

from __future__ import annotations

import posixpath
import re

from docs_pages import PAGES, REPO, anchors, section, text

LINK = re.compile(r"\]\(([^)\s]+)\)")


def _links(page: str) -> list[str]:
    prose = re.sub(r"^```.*?^```", "", text(page), flags=re.M | re.S)
    return [target for target in LINK.findall(prose) if not re.match(r"[a-z]+:", target)]


def test_every_relative_link_leads_to_a_file_and_a_heading_there() -> None:
    broken = []
    links = 0
    for page in PAGES:
        for target in _links(page):
            links += 1
            path, _, fragment = target.partition("#")
            goal = posixpath.normpath(posixpath.join(posixpath.dirname(page), path)) if path else page
            if not (REPO / goal).exists():
                broken.append((page, target, "no such file"))
            elif fragment and goal.endswith(".md") and fragment not in anchors(goal):
                broken.append((page, target, "no such heading"))
    assert broken == []
    assert links > 50


def test_every_docs_page_is_in_the_readmes_table_of_contents() -> None:
    contents = section("README.md", "Documentation")
    listed = {f"docs/{name}" for name in re.findall(r"\]\(docs/([\w-]+\.md)\)", contents)}
    assert listed == {page for page in PAGES if page.startswith("docs/")}


def test_the_readme_leads_with_what_a_newcomer_needs() -> None:
    headings = re.findall(r"^## (.+)$", text("README.md"), re.M)
    assert headings == ["Quick start", "Your first suite", "In GitHub Actions", "Documentation"]
    assert len(text("README.md").splitlines()) < 300
    opening = text("README.md").split("\n\n")[1]           # the paragraph under the title
    assert "Yao" not in opening and len(opening.split(". ")) <= 2
    assert "Calling an agent" not in text("docs/providers.md")          # a section that never was


def test_every_page_renders_every_heading_as_github_would() -> None:
    """A closing code fence with text on its line never closes (docs/configuration.md once showed a whole section
    as code): GitHub's renderer must see every heading the source has."""
    import cmarkgfm

    for page in PAGES:
        prose = re.sub(r"^```.*?^```", "", text(page), flags=re.M | re.S)
        written = len(re.findall(r"^#{1,6} ", prose, re.M))
        rendered = len(re.findall(r"<h[1-6][ >]", cmarkgfm.github_flavored_markdown_to_html(text(page))))
        assert (page, rendered) == (page, written)
