"""The README stays a short guide, and every relative link of the README and the docs resolves.

``mkdocs build --strict`` (``make docs``) checks the links between documentation pages too; this
test also covers the README, which the site does not build, and runs without MkDocs.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README_MAX_LINES = 200

# [text](target) and ![alt](target); the target up to the first space or closing parenthesis.
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_FENCE = re.compile(r"^(```|~~~).*?^\1", flags=re.M | re.S)
_CODE = re.compile(r"`[^`\n]*`")


def _pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def relative_links(text: str) -> list[str]:
    """The relative link targets of a Markdown text, code blocks and code spans left out."""
    text = _CODE.sub("", _FENCE.sub("", text))
    targets = []
    for target in _LINK.findall(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith(("#", "/")):
            continue  # a URL (https:, mailto:), an anchor on the same page, or a site-absolute path
        targets.append(target.split("#", 1)[0])
    return targets


def test_readme_is_short():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert 0 < len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines"


def test_link_extraction():
    text = "see [a](docs/a.md#x), ![b](b.png), [c](https://x.org), [d](#top), `[e](no.md)`\n"
    text += "```\n[f](no.md)\n```\n"
    assert relative_links(text) == ["docs/a.md", "b.png"]


@pytest.mark.parametrize("page", _pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page: Path):
    missing = [
        target
        for target in relative_links(page.read_text())
        if not (page.parent / target).resolve().exists()
    ]
    assert not missing, f"{page.relative_to(ROOT)}: links to missing files: {missing}"


def test_docs_pages_exist():
    """Every page the site's navigation names is a file (the build fails otherwise, this says which)."""
    nav = re.findall(
        r":\s*([\w/.-]+\.md)\s*$|^\s*-\s*([\w/.-]+\.md)\s*$",
        (ROOT / "mkdocs.yml").read_text(),
        re.M,
    )
    pages = [a or b for a, b in nav]
    assert "index.md" in pages and "cli/reference.md" in pages
    assert [p for p in pages if not (ROOT / "docs" / p).is_file()] == []
