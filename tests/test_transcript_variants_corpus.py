"""The variant table the builder is checked against (``tests/fixtures/transcript_variants.md``) is
the survey of the shared corpus, exactly: a corpus file showing a new record type or field fails here
until the table is rewritten and the builder shows the new variant too."""

from __future__ import annotations

from pathlib import Path

from transcript_variants import read_table, survey

from shared_paths import CORPUS

TABLE = Path(__file__).parent / "fixtures" / "transcript_variants.md"


def test_the_table_is_the_survey_of_the_corpus():
    seen = survey(sorted(CORPUS.glob("*.jsonl")))
    table = read_table(TABLE)
    fix = ('rewrite it: python tests/transcript_variants.py "$CTXEVAL_SHARED/corpus" > '
           "tests/fixtures/transcript_variants.md, then make tests/transcript_eras.py show what is new")
    assert sorted(set(seen) - set(table)) == [], f"variants missing from the table; {fix}"
    assert sorted(set(table) - set(seen)) == [], f"variants the corpus no longer shows; {fix}"
    changed = {name: (table[name], s) for name, s in seen.items() if s != table[name]}
    assert not changed, f"versions or counts differ; {fix}: {changed}"
