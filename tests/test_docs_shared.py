"""Pages that cite the maintainers' shared corpus (seeds, PEERS.md, real transcripts,
CTXEVAL_SHARED) link to docs/shared-corpus.md, which says what it is and that it is optional: a
user does not have it (B7 of the fresh-eyes review)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MENTION = re.compile(r"shared corpus|CTXEVAL_SHARED|PEERS\.md|shared/")


def test_every_page_citing_the_shared_corpus_links_to_what_it_is():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    unexplained = [p.name for p in pages if p.name != "shared-corpus.md"
                   and MENTION.search(p.read_text(encoding="utf-8"))
                   and "shared-corpus.md" not in p.read_text(encoding="utf-8")]
    assert not unexplained, f"link these to docs/shared-corpus.md: {unexplained}"


def test_the_page_says_it_is_optional_and_not_distributed():
    text = " ".join((ROOT / "docs" / "shared-corpus.md").read_text(encoding="utf-8").split())
    assert "not part of the package and not distributed" in text and "You do not need it." in text
    assert "shared-corpus.md" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
