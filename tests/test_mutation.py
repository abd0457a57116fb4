"""The built-in mutation operators: each breaks exactly its invariant and leaves the others intact,
is deterministic for a seed, and makes no mutant where it does not apply."""

from __future__ import annotations

import random

import pytest

from pytest_ctxeval.errors import GraderError
from pytest_ctxeval.grading import CompactionCase
from pytest_ctxeval.grading.mutants import Mutant, MutationSpec, mutation, spec_of
from pytest_ctxeval.grading.mutation_library import builtin_mutations
from pytest_ctxeval.grading.mutation_facts import paraphrase_text, translate_text
from pytest_ctxeval.reading.proposals import proposals
from validation_kit import library_cases, statuses

# pytest-xdist (``--dist loadgroup``, conftest.py): the tests that use the library's compaction cases
# run on one worker, which replays the library (and validates it) once.
pytestmark = pytest.mark.xdist_group("library_cases")

OPERATORS = {op.name: op for op in builtin_mutations()}


def _first_mutant(op: MutationSpec) -> tuple[CompactionCase, Mutant, dict[str, str]]:
    """The first library case where ``op`` makes a mutant whose targets all passed the original."""
    for case, _known in library_cases():
        before: dict[str, str] | None = None
        for m in op.apply(case, seed=0):
            before = before or statuses(case)  # the original's verdicts, once per case
            counted = [t for t in m.targets if before.get(t) == "pass"]
            if counted and len(counted) == len([t for t in m.targets if t in before]):
                return case, m, before
    raise AssertionError(f"{op.name} made no countable mutant in the library")


def test_every_issue_operator_exists() -> None:
    wanted = {"drop_user_message", "paraphrase_user_message", "translate_user_message", "truncate_user_message",
              "drop_latest_request", "quote_old_message", "quote_nothing", "drop_edited_file", "drop_error_line",
              "drop_open_todo", "drop_constraint", "drop_failed_approach", "drop_section", "swap_sections",
              "keep_analysis", "revive_superseded", "split_tool_pair", "drop_continuation", "drop_transcript_path"}
    assert wanted <= set(OPERATORS)


@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_operator_breaks_exactly_its_invariant(name: str) -> None:
    op = OPERATORS[name]
    case, mutant, before = _first_mutant(op)
    after = statuses(mutant.case)
    for target in mutant.targets:
        if target in before:
            assert after[target] == "fail", (name, target, mutant.what, after[target])
    collateral = [g for g, s in before.items() if s == "pass" and g not in mutant.targets and after[g] == "fail"]
    assert collateral == [], (name, mutant.what, collateral)
    assert mutant.operator == name and mutant.what and mutant.case is not case
    assert case.summary != mutant.case.summary or case.summary_message != mutant.case.summary_message \
        or case.post_messages != mutant.case.post_messages


@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_operator_is_pure_and_deterministic(name: str) -> None:
    op = OPERATORS[name]
    case, _, _ = _first_mutant(op)
    summary, message, post = case.summary, case.summary_message, list(case.post_messages)
    first = [(m.case.summary, m.case.summary_message, m.text) for m in op.apply(case, seed=7)]
    again = [(m.case.summary, m.case.summary_message, m.text) for m in op.apply(case, seed=7)]
    assert first == again
    assert (case.summary, case.summary_message, case.post_messages) == (summary, message, post)


def _bare_case(summary: str) -> CompactionCase:
    return CompactionCase(source="bare.yaml", index=1, kind="full", trigger="manual", summary=summary,
                          summary_message=summary, summarized=[], history=[], post_messages=[])


@pytest.mark.parametrize("name", ["drop_user_message", "drop_latest_request", "quote_old_message", "drop_edited_file",
                                  "drop_error_line", "drop_open_todo", "drop_constraint", "drop_failed_approach",
                                  "revive_superseded", "split_tool_pair", "drop_continuation", "drop_transcript_path"])
def test_an_operator_with_nothing_to_break_makes_no_mutant(name: str) -> None:
    case = _bare_case("1. Primary Request and Intent:\n   nothing happened\n9. Optional Next Step:\n   None.")
    assert OPERATORS[name].apply(case, seed=0) == []


def test_paraphrase_and_translate_change_the_words() -> None:
    rng = random.Random(1)
    text = "Please fix the login test and keep the old session table."
    assert paraphrase_text(text, rng) not in (None, text)
    fr = translate_text(text, rng)
    assert fr is not None and fr != text and " le " in f" {fr} "
    assert translate_text("请修复登录测试", rng).startswith("(translated)")


def test_the_mutation_decorator_checks_its_arguments() -> None:
    with pytest.raises(GraderError, match="targets must name at least one grader"):
        mutation("x", targets=[])
    with pytest.raises(GraderError, match="letters, digits"):
        mutation("bad name", targets=["g"])

    @mutation("returns_text", targets=["g"])
    def bad(case, rng):
        return ["not a mutant"]

    with pytest.raises(GraderError, match="returned str, not a Mutant"):
        spec_of(bad).apply(_bare_case("x"), seed=0)


# The revived-intent detector over phrasings the operator does not write (pytest_ctxeval.reading.proposals).
@pytest.mark.parametrize(("text", "proposes"), [
    ("Might be worth picking the CSV export back up.", True),
    ("If time permits, CSV export for finance.", True),
    ("The CSV export is still on the list.", True),
    ("→ CSV export", True),
    ("Reminder: do not skip the CSV export.", True),
    ("Per the request (\"no more CSV, please\"), CSV export comes next.", True),
    ("Finish the breakdown; the CSV export after that.", True),
    ("CSV export: dropped by the user on Tuesday.", False),
    ("No CSV export, as the user decided.", False),
    ("The user cancelled the CSV export.", False),
    ("CSV export is no longer needed.", False),
    ("Do not resume the CSV export or the PDF.", False),
    ("Without the CSV export, finish the PDF.", False),
    ("The CSV export was replaced by the BI dashboard.", False),
    ("- ~~Add CSV export~~", False),
    ("Superseded: CSV export.", False),
    ("Removed from the plan: CSV export.", False),
    ("The user changed their mind about the CSV export.", False),
    ("CSV export — not needed anymore.", False),
    ("We are no longer doing the CSV export.", False),
    ("Do NOT add CSV export; finish the region breakdown.", False),
    ("CSV export won't be done.", False),
    ("Finish the breakdown. CSV export is out.", False),
    ("Switched from the CSV export to the BI dashboard.", False),
    ("Originally the user wanted a CSV export, but later asked for the BI dashboard.", False),
    ("Originally the plan had a PDF; now add the CSV export.", True),
])
def test_proposals_read_each_clause(text: str, proposes: bool) -> None:
    assert bool(proposals(text, "CSV export")) is proposes, text


@pytest.mark.parametrize(("text", "proposes"), [
    ("We could still add JWT access tokens for the mobile app.", True),
    ("Issuing JWT access tokens is next.", True),
    ("Remove the leftover JWT access token code.", False),
    ("JWT access tokens were replaced by server-side sessions.", False),
])
def test_an_intent_is_found_by_its_object_with_another_verb(text: str, proposes: bool) -> None:
    assert bool(proposals(text, "issue JWT access tokens")) is proposes, text
