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
    assert "constraints_preserved" in {c.grader for c in cmp.regressions}, format_run_diff(cmp)


def test_section_6_alone_does_not_reword_section_1() -> None:
    for name, sentence in SECTION6_ONLY.items():
        r = read_prompt(edited([(S6, sentence)]))
        assert "user_messages_verbatim" not in r and not r.requests_reworded, name
