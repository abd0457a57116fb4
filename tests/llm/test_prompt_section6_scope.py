"""A section-6-only edit moves only what a model would move (a second fresh review, F1): told to
give the gist of each user message in section 6, a model still keeps the user's requests and
constraints in section 1 and the latest request quoted in section 9, compaction after compaction.
Told to reword the user's requests everywhere, section 1 is reworded too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from prompt_variants import S6, edited
from test_prompt_regression import run_offline
from pytest_ctxeval.llm.instructions import read_prompt
from pytest_ctxeval.reporting.baseline import diff_runs, format_run_diff

SCENARIOS = ["auth_refactor", "debug_failing_test", "long_migration", "multi_part_request"]
GRADERS = ["verbatim_user_messages", "constraints_preserved", "last_request_intact", "next_step_quote", "drift"]

pytestmark = pytest.mark.xdist_group("prompt_section6_scope_builtin_run")

SECTION6_ONLY = {
    "gist": "List ALL user messages that are not tool results, one per item. Shorten any message longer than one "
            "sentence to its gist.",
    "own_words": "List ALL user messages that are not tool results, in your own words, one per item.",
    "paraphrased": "Each user message, briefly paraphrased.",
}


@pytest.fixture(scope="module")
def builtin_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return run_offline(tmp_path_factory.mktemp("builtin"), "builtin", SCENARIOS, GRADERS)


@pytest.mark.parametrize("name", sorted(SECTION6_ONLY))
def test_a_section6_rewording_regresses_verbatim_only(name: str, builtin_run: dict[str, Any], tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    prompt = tmp_path / "compact.j2"
    prompt.write_text(edited([(S6, SECTION6_ONLY[name])]), encoding="utf-8")
    doc = run_offline(tmp_path, name, SCENARIOS, GRADERS, prompt, capsys)
    cmp = diff_runs(builtin_run, doc)
    assert {c.grader for c in cmp.regressions} == {"verbatim_user_messages"}, format_run_diff(cmp)
    assert {c.scenario for c in cmp.regressions} == set(SCENARIOS)
    # every compaction's section 1 still quotes the first request, section 6 rewords it
    for s in doc["scenarios"]:
        for c in s["compactions"]:
            head, _, rest = c["summary"].partition("2. Key Technical Concepts:")
            assert "The user's first request: \"" in head, (s["name"], head[:300])
            assert "The user asked" in rest.partition("6. All user messages:")[2]


def test_rewording_the_requests_everywhere_reaches_section_1(builtin_run: dict[str, Any], tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    text = edited([(S6, "Each user message, briefly paraphrased.")]).replace(
        "Your summary should include the following sections:",
        "Paraphrase the user's requests everywhere in the summary; never quote them.\n\n"
        "Your summary should include the following sections:")
    assert read_prompt(text).requests_reworded
    prompt = tmp_path / "compact.j2"
    prompt.write_text(text, encoding="utf-8")
    doc = run_offline(tmp_path, "everywhere", ["auth_refactor"], GRADERS, prompt, capsys)
    summary = doc["scenarios"][0]["compactions"][0]["summary"]
    assert "The user's first request: The user asked" in summary
    cmp = diff_runs({**builtin_run, "scenarios": [s for s in builtin_run["scenarios"] if s["name"] == "auth_refactor"]},
                    doc)
    # reworded, not cut: the constraint is still in section 1, in other words (review 3, F12)
    assert {c.grader for c in cmp.regressions} == {"verbatim_user_messages"}, format_run_diff(cmp)
    assert "to keep the public API of src/auth/service.py unchanged" in summary.partition("2. Key Technical")[0]


def test_section_6_alone_does_not_reword_section_1() -> None:
    for name, sentence in SECTION6_ONLY.items():
        r = read_prompt(edited([(S6, sentence)]))
        assert "user_messages_verbatim" not in r and not r.requests_reworded, name


# -- F13: an ask limited in its own sentence, or discouraged after it, is not the ask ----------------

#: Section 6 reworded; kind: "opposite" (read, asks the opposite) or "partial" (asked in part: not seen offline).
LIMITED = {
    "discouraged": ("List ALL user messages that are not tool results. Quoting them verbatim is discouraged.", "opposite"),
    "should_be_avoided": ("List ALL user messages that are not tool results; verbatim copies should be avoided.",
                          "opposite"),
    "not_recommended": ("List ALL user messages; exact quotes are not recommended.", "opposite"),
    "older_than_the_last_three": ("List ALL user messages that are not tool results, verbatim, one per item, but drop "
                                  "any message older than the last three.", "partial"),
    "the_last_5": ("Quote the last 5 user messages verbatim, one per item.", "partial"),
    "translated": ("List ALL user messages that are not tool results, verbatim, one per item, translated into "
                   "English.", "partial"),
    "typos_fixed": ("List ALL user messages verbatim, one per item, with typos fixed.", "partial"),
    "except_acks": ("List ALL user messages that are not tool results, verbatim, one per item, except short "
                    "acknowledgements.", "partial"),
    "unless_long": ("Quote each user message verbatim unless it runs over a paragraph.", "partial"),
    "only_when_short": ("List ALL user messages that are not tool results, verbatim only when they are short.",
                        "partial"),
    "if_short": ("List the user messages verbatim if they are short, one per item.", "partial"),
}

#: The same ask in other words: still asked, and read.
STILL_ASKED = [
    "List ALL user messages other than tool results, verbatim, one per item.",
    "Quote every user message verbatim, one per item, even when they are long.",
    "List ALL user messages that are not tool results, word for word, one per item, in the order they were sent.",
    "List ALL user messages except tool results, verbatim, one per item.",
]


@pytest.mark.parametrize("name", sorted(LIMITED))
def test_a_limited_or_discouraged_verbatim_ask_is_not_read_as_the_ask(name: str) -> None:
    from pytest_ctxeval.reporting.prompt_coverage import coverage_note

    sentence, kind = LIMITED[name]
    text = edited([(S6, sentence)])
    r = read_prompt(text)
    assert "user_messages_verbatim" not in r, name
    assert ("user_messages_verbatim" in r.partial) == (kind == "partial"), (name, r.partial, r.opposed)
    note = coverage_note(text)
    assert note is not None
    line = next(l for l in note["lines"] if l["sign"] == "+" and "user messages verbatim" in "; ".join(l["mapped"]))
    if kind == "partial":  # the offline model cannot keep "part": the line is not seen, with the advice
        assert not line["seen"] and "asked for in part only" in line["mapped"][0], line
    else:
        assert line["seen"] and "asks the opposite" in line["mapped"][0], line


@pytest.mark.parametrize("sentence", STILL_ASKED)
def test_the_same_ask_in_other_words_is_still_read(sentence: str) -> None:
    r = read_prompt(edited([(S6, sentence)]))
    assert "user_messages_verbatim" in r and not r.partial, (sentence, r.partial, r.opposed)


@pytest.mark.parametrize("name", ["discouraged", "except_acks", "translated"])
def test_a_limited_ask_regresses_verbatim_offline(name: str, builtin_run: dict[str, Any], tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    prompt = tmp_path / "compact.j2"
    prompt.write_text(edited([(S6, LIMITED[name][0])]), encoding="utf-8")
    doc = run_offline(tmp_path, name, ["auth_refactor"], GRADERS, prompt, capsys)
    base = {**builtin_run, "scenarios": [s for s in builtin_run["scenarios"] if s["name"] == "auth_refactor"]}
    cmp = diff_runs(base, doc)
    assert {c.grader for c in cmp.regressions} == {"verbatim_user_messages"}, format_run_diff(cmp)
