"""How a summary names a changed file (review finding A2): by its bare name when that can mean only
this file, by what redaction left of its path, by its stem on a line naming its folder."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pytest_ctxeval.reading.extract import file_mentioned

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: shared_paths
from shared_paths import needs_shared

ROOT = "/repo/Cargo.toml"
LIB = "/repo/crates/lib/Cargo.toml"
CLI = "/repo/crates/cli/Cargo.toml"


def _case(kit, paths: list[str], files_body: str):
    messages = [kit.user("restructure the workspace")]
    for p in paths:
        messages += kit.tool("Write", {"file_path": p, "content": "x"})
    return kit.case(messages, kit.summary_of(files=files_body))


def test_a_bare_file_name_names_the_one_namesake_not_named_by_a_longer_path(grade, kit):
    good = "- **`Cargo.toml` (workspace root)** — 3 members\n- `crates/lib/Cargo.toml` — deps\n- `crates/cli/Cargo.toml`"
    verdict = grade("files_preserved", _case(kit, [ROOT, LIB, CLI], good))
    assert verdict.status == "pass", verdict.reasons
    # one crate's manifest not named by its path: the bare name could be either, so neither counts
    bad = "- **`Cargo.toml` (workspace root)** — 3 members\n- `crates/lib/Cargo.toml` — deps"
    verdict = grade("files_preserved", _case(kit, [ROOT, LIB, CLI], bad))
    assert verdict.status == "fail"
    assert [r.split(" was changed")[0] for r in verdict.reasons] == [ROOT, CLI]
    assert all("says only 'Cargo.toml', the name of 3 changed files" in r for r in verdict.reasons)


@pytest.mark.parametrize("text, named", [
    ("- `Cargo.toml` (root)\n- crates/lib/Cargo.toml", True),
    ("- crates/lib/Cargo.toml", False),                     # the only Cargo.toml in the text is lib's
    ("- Cargo.toml.bak\n- crates/lib/Cargo.toml", False),   # another file's name
])
def test_file_mentioned_by_bare_name_among_namesakes(text, named):
    assert file_mentioned(ROOT, text, [ROOT, LIB]) is named


def test_a_path_redaction_collapsed_is_named_by_what_is_left(grade, kit):
    # fenv-org/mementor 2.1.50-56: five Writes of one path, <home>.REDACTED.md (the Entire CLI replaced
    # "kang/dev/.../history/<doc>" by REDACTED); the summary, redacted alike, names `REDACTED.md`
    collapsed = "/Users/me/docs.REDACTED.md"
    verdict = grade("files_preserved", _case(kit, [collapsed, "/repo/README.md"],
                                             "- `REDACTED.md` — TODOs not marked done\n- README.md — rewritten"))
    assert verdict.status == "pass", verdict.reasons
    verdict = grade("files_preserved", _case(kit, [collapsed, "/repo/README.md"], "- README.md — rewritten"))
    assert verdict.status == "fail" and verdict.reasons[0].startswith(collapsed + " was changed")


def test_a_file_named_by_its_stem_beside_its_folder(grade, kit):
    docs = [f"/repo/history/2026-02-23_pivot/{n}.md" for n in ("00_overview", "02_data-layer")]
    good = "- 2 design documents under `history/2026-02-23_pivot/` (00_overview and 02_data-layer)"
    assert grade("files_preserved", _case(kit, docs, good)).status == "pass"
    ranged = "- 2 design documents under `history/2026-02-23_pivot/` (00_overview onwards)"
    verdict = grade("files_preserved", _case(kit, docs, ranged))
    assert verdict.status == "fail" and len(verdict.reasons) == 1
    assert verdict.reasons[0].startswith(docs[1] + " was changed")
    assert verdict.reasons[0].endswith("(only its folder 'history/2026-02-23_pivot/' is named)")
    # the stem on a line that does not name the folder is not the file
    assert not file_mentioned(docs[0], "see the 00_overview section\nhistory/2026-02-23_pivot/ is new", docs)


@needs_shared
def test_mementor_resumed_only_the_truly_unnamed_files_fail(corpus_verdict):
    """fenv-org/mementor 2.1.50-56 (summary line 1191): `Cargo.toml` (workspace root), `REDACTED.md`
    and 00_overview are named; the three 2026-02-20 history docs ("4 history docs deprecated") and the
    design docs 02, 03, 07 (covered only by "00_overview through 08_cleanup-docs") are not."""
    verdict = corpus_verdict("fenv-org__mementor__2.1.50-56-auto-resumed-81b5b775.jsonl", "files_preserved")
    assert verdict.status == "fail"
    missing = [r.split(" was changed")[0].rsplit("/", 1)[-1] for r in verdict.reasons]
    assert missing == ["02_data-layer.md", "03_tui-checkpoint-list.md", "07_plugin.md",
                       "2026-02-20_active-agent-pivot.md", "2026-02-20_extended-data-collection.md",
                       "2026-02-20_plugin.md"]
