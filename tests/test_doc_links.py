"""Every link in README.md and docs/*.md resolves (issue 24): a relative link names a file
of the repository, and its ``#anchor`` a heading of that page (GitHub's anchors); a web
address is only one of the few this project may name (never a guessed page of its own)."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest
from harness import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"(?<!!)\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.M | re.S)
CODE = re.compile(r"`[^`\n]*`")


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, markup and punctuation but ``-`` and ``_``
    dropped, spaces to hyphens."""
    text = re.sub(r"[`*]|\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip()).lower()
    kept = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LNM")
    return kept.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    out = set()
    for m in re.finditer(r"^#{1,6} (.+)$", text, re.M):
        base = _anchor(m.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def _links(page: Path) -> list[str]:
    text = CODE.sub("", FENCE.sub("", page.read_text(encoding="utf-8")))
    return LINK.findall(text)


LINKS = [(p, target) for p in PAGES for target in _links(p)]


def test_links_are_found() -> None:
    assert len(LINKS) > 30
    assert any("#" in t for _, t in LINKS)


def test_anchor_rule() -> None:
    assert _anchor("Fixes (`validate --fix`), `--exit-zero`, `--statistics`") == \
        "fixes-validate---fix---exit-zero---statistics"
    assert _anchor("Bounds (issue 8)") == "bounds-issue-8"
    assert _anchor("Real corpus (`python bench/real_corpus.py`)") == \
        "real-corpus-python-benchreal_corpuspy"


@pytest.mark.parametrize(("page", "target"), LINKS,
                         ids=[f"{p.name}->{t}" for p, t in LINKS])
def test_every_link_resolves(page: Path, target: str) -> None:
    if re.match(r"[a-z]+:", target):
        assert target.startswith(("https://", "mailto:")), target
        assert "risutools/risutools" not in target, f"{page.name}: a guessed address {target}"
        return
    path, _, anchor = target.partition("#")
    dest = (page.parent / path).resolve() if path else page
    assert dest.exists(), f"{page.name}: {target} names a file that is not in the repository"
    assert ROOT in dest.parents or dest == ROOT, f"{page.name}: {target} leaves the repository"
    if anchor and dest.suffix == ".md":
        assert anchor in _anchors(dest), f"{page.name}: {target}: no such heading"
