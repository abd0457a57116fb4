"""A compaction prompt whose section list is written another way (a dash after the title, a
section renamed in its place) asks for the same nine sections: the partial prompt keeps every
entry, the offline model writes every section under the user's title, and the graders read the
summary by the titles of the prompt it answered. A section really removed from the list is still
missed. (A fresh reader's review found 400 false regressions for ``1. Title — ...`` and 84 for
``7. Outstanding Tasks:``.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_ctxeval.engine.prompt import PromptSet, section_list
from pytest_ctxeval.evaluate import evaluate
from pytest_ctxeval.llm.reference import prompt_sections, requested_sections
from pytest_ctxeval.reading.summary import SECTION_KINDS, parse_summary, prompt_titles, section_entries

ROOT = Path(__file__).resolve().parents[1]
BUILTIN = PromptSet().render_compact()
LIST = [line for line in BUILTIN.split("\n") if re.match(r"\d\. ", line)]


def _renamed(*pairs: tuple[str, str]) -> str:
    text = BUILTIN
    for old, new in pairs:
        assert old in text
        text = text.replace(old, new)
    return text


def _dashed(dash: str) -> str:
    return re.sub(r"^(\d\. [A-Za-z ]+?): ", lambda m: f"{m.group(1)}{dash}", BUILTIN, flags=re.MULTILINE)


def test_the_builtin_list_is_read_as_before() -> None:
    entries = section_entries(BUILTIN)
    assert [(e.number, e.kind) for e in entries] == list(enumerate(SECTION_KINDS, start=1))
    assert section_list(BUILTIN).split("\n")[:9] == LIST
    assert prompt_titles(BUILTIN) == {}


@pytest.mark.parametrize("dash", [" — ", " – ", " - ", "—", " -- "])
def test_a_dash_after_the_title_ends_it_as_a_colon_does(dash: str) -> None:
    text = _dashed(dash)
    assert [e.kind for e in section_entries(text)] == list(SECTION_KINDS)
    assert [k for k, _ in prompt_sections(text)] == list(SECTION_KINDS)
    assert len(section_list(text).split("\n")) == len(section_list(BUILTIN).split("\n"))


def test_bold_titles_with_a_dash_and_blank_lines_between_entries() -> None:
    text = re.sub(r"^(\d)\. ([A-Za-z ]+?): ", r"\1. **\2** - ", BUILTIN, flags=re.MULTILINE).replace("\n2. ", "\n\n2. ")
    assert [e.kind for e in section_entries(text)] == list(SECTION_KINDS)
    assert [k for k, _ in requested_sections(text)] == list(SECTION_KINDS)


def test_a_renamed_section_keeps_the_kind_of_its_place() -> None:
    text = _renamed(("7. Pending Tasks:", "7. Outstanding Tasks:"), ("8. Current Work:", "8. Work in Progress:"),
                    ("1. Primary Request and Intent:", "1. User Requests:"))
    assert [(k, t) for k, t in requested_sections(text) if k in ("request", "pending", "current")] == [
        ("request", "User Requests"), ("pending", "Outstanding Tasks"), ("current", "Work in Progress")]
    assert prompt_titles(text) == {"user requests": "request", "outstanding tasks": "pending",
                                   "work in progress": "current"}
    # the partial prompt asks for every section of the user's list (it stopped at the first unknown title)
    partial = section_list(text)
    assert "7. Outstanding Tasks:" in partial and "9. Optional Next Step:" in partial


def test_a_list_numbered_otherwise_leaves_an_unknown_title_unread() -> None:
    text = "1. Primary Request and Intent: a\n2. Stuff: b\n3. Key Technical Concepts: c\n"
    assert [(e.title, e.kind) for e in section_entries(text)] == [
        ("Primary Request and Intent", "request"), ("Stuff", None), ("Key Technical Concepts", "concepts")]


def test_a_numbered_list_that_is_not_the_section_list_is_passed_over() -> None:
    text = "Steps:\n1. Read the code\n2. Think\n\nSections:\n1. Primary Request: a\n2. Key Concepts: b\n3. Odds and ends: c\n"
    assert [(e.number, e.kind) for e in section_entries(text)] == [(1, "request"), (2, "concepts"), (3, "files")]


def test_a_section_left_out_of_the_numbering_keeps_the_rest_of_the_list() -> None:
    text = _renamed((LIST[6] + "\n", ""))  # 7. Pending Tasks removed; 8 and 9 keep their numbers
    assert [e.number for e in section_entries(text)] == [1, 2, 3, 4, 5, 6, 8, 9]
    assert "9. Optional Next Step:" in section_list(text)


def test_the_peer_compactors_prompts_are_read_as_before() -> None:
    prompts = ROOT / "pytest_ctxeval" / "compaction" / "prompts"
    codex = (prompts / "codex_handoff.j2").read_text()
    assert [k for k, _ in prompt_sections(codex)] == ["request", "progress", "constraints", "pending", "critical"]
    opencode = (prompts / "opencode_summary.j2").read_text()
    before = [k for k, _ in prompt_sections(opencode)]
    assert before and all(k for k in before)


def test_parse_summary_reads_the_titles_of_the_prompt() -> None:
    summary = "\n".join(f"{n}. {t}:\n   - item {n}" for n, t in enumerate(
        ["Primary Request and Intent", "Key Technical Concepts", "Files and Code Sections", "Errors and fixes",
         "Problem Solving", "All user messages", "Outstanding Tasks", "Work in Progress", "Optional Next Step"], 1))
    assert [s.kind for s in parse_summary(summary).sections] == [k for k in SECTION_KINDS if k not in ("pending", "current")]
    titles = prompt_titles(_renamed(("7. Pending Tasks:", "7. Outstanding Tasks:"), ("8. Current Work:", "8. Work in Progress:")))
    assert [s.kind for s in parse_summary(summary, titles=titles).sections] == list(SECTION_KINDS)


def _verdicts(prompt: str, tmp_path: Path, name: str) -> dict[str, list[str]]:
    path = tmp_path / f"{name}.j2"
    path.write_text(prompt)
    outcome = evaluate(ROOT / "scenarios" / "debug_failing_test.yaml", prompts=PromptSet(str(path)),
                       session_dir=tmp_path / name, graders=["nine_sections", "pending_tasks", "next_step_quote",
                                                               "verbatim_user_messages"])
    assert outcome.error is None and outcome.cases
    return {g: [v[i].status for v in outcome.verdicts] for i, g in enumerate(outcome.graders)}


def test_a_renamed_or_dashed_prompt_gets_the_verdicts_of_the_builtin_one(tmp_path: Path) -> None:
    builtin = _verdicts(BUILTIN, tmp_path, "builtin")
    assert all(s in ("pass", "n/a") for statuses in builtin.values() for s in statuses), builtin
    renamed = _renamed(("7. Pending Tasks:", "7. Outstanding Tasks:"), ("8. Current Work:", "8. Work in Progress:"))
    assert _verdicts(renamed, tmp_path, "renamed") == builtin
    assert _verdicts(_dashed(" — "), tmp_path, "dashed") == builtin
    # a section really removed from the list is still missed
    dropped = _verdicts(_renamed((LIST[6] + "\n", "")), tmp_path, "dropped")
    assert "fail" in dropped["nine_sections"]


def test_prompt_show_names_the_sections_read_by_place_and_the_entry_it_cannot_read(tmp_path: Path, capsys) -> None:
    from pytest_ctxeval.cli import main

    renamed = tmp_path / "renamed.j2"
    renamed.write_text(_renamed(("7. Pending Tasks:", "7. Outstanding Tasks:")))
    assert main(["prompt", "show", "--prompt", str(renamed)]) == 0
    out = capsys.readouterr().out
    assert "# renamed sections, read by their place in the list: 7. 'Outstanding Tasks' as 'Pending Tasks'" in out
    assert "not read as a section" not in out
    odd = tmp_path / "odd.j2"
    odd.write_text("1. Primary Request and Intent: a\n2. Stuff: b\n3. Key Technical Concepts: c\n<summary></summary>\n")
    assert main(["prompt", "show", "--prompt", str(odd)]) == 0
    out = capsys.readouterr().out
    assert "# note: not read as a section" in out and "odd.j2:2 'Stuff'" in out


# An up_to partial compaction summarises the earlier messages and keeps the recent ones verbatim
# (seed 003:336): its section 9 quotes the end of what it summarised, not a request it never saw.


def _partial_case(tmp_path: Path):
    text = (ROOT / "scenarios" / "debug_failing_test.yaml").read_text()
    assert "  - compact: true" in text
    path = tmp_path / "partial.yaml"
    path.write_text(text.replace("  - compact: true", "  - compact: {partial: up_to, messages: 20}"))
    outcome = evaluate(path, session_dir=tmp_path / "s", graders=["next_step_quote"])
    assert outcome.error is None
    case = outcome.cases[-1]
    assert case.kind == "partial" and len(case.span()) < len(case.history)
    return outcome, case


def test_an_up_to_partial_summary_quotes_the_end_of_what_it_summarised(tmp_path: Path) -> None:
    outcome, case = _partial_case(tmp_path)
    assert case.span_people()[-1].text != case.person_messages()[-1].text  # a later request was kept, not summarised
    verdict = outcome.verdicts[-1][0]
    assert verdict.status == "pass", verdict.reasons


def test_an_up_to_partial_summary_that_quotes_an_older_request_still_drifts(tmp_path: Path) -> None:
    from dataclasses import replace

    from pytest_ctxeval.evaluate import load_graders

    _, case = _partial_case(tmp_path)
    first = case.span_people()[0].text
    section = case.sections.get("next")
    assert section is not None
    drifted = case.summary.replace(section.body, f'Go back to the first request: "{first}"')
    registry = load_graders([])
    mutant = replace(case, summary=drifted)
    (verdict,) = registry.run(mutant, registry.select(["next_step_quote"]))
    assert verdict.status == "fail" and "drift to an old task" in verdict.reasons[0], verdict.reasons


# A second fresh reader's variants, generalised: other list styles, a moved section, a title that
# sounds like another section, and the drift generations of a renamed prompt.


def _headings(text: str) -> str:
    """The section list as Markdown headings, each with its instruction on the line below."""
    return re.sub(r"^(\d)\. ([A-Za-z ]+?): (.*)$", r"### \1. \2\n\3", text, flags=re.MULTILINE)


@pytest.mark.parametrize("style", [
    lambda t: _headings(t),
    lambda t: re.sub(r"^(\d)\. ", r"Step \1 - ", t, flags=re.MULTILINE),
    lambda t: re.sub(r"^(\d)\. ([A-Za-z ]+?): ", r"### \1 · \2\n", t, flags=re.MULTILINE),
    lambda t: re.sub(r"^(\d)\. ", r"\1) ", t, flags=re.MULTILINE),
], ids=["md-headings", "step-n", "middle-dot", "paren"])
def test_other_list_styles_are_read_whole_with_their_instructions(style) -> None:
    text = style(BUILTIN)
    assert [e.kind for e in section_entries(text)] == list(SECTION_KINDS)
    assert [k for k, _ in prompt_sections(text)] == list(SECTION_KINDS)
    partial = section_list(text)
    assert "verbatim, one per item" in partial and "Optional Next Step" in partial  # the instructions come along
    from pytest_ctxeval.llm.instructions import read_prompt

    assert set(read_prompt(text).asked) == set(read_prompt(BUILTIN).asked)


def test_a_paraphrase_instruction_under_a_markdown_heading_reaches_the_partial_prompt() -> None:
    text = _headings(BUILTIN).replace(
        "List ALL user messages that are not tool results, verbatim, one per item.", "Paraphrase each user message briefly.")
    assert "Paraphrase each user message briefly." in section_list(text)  # not the built-in list's "verbatim"
    from pytest_ctxeval.llm.instructions import read_prompt

    assert "user_messages_verbatim" not in read_prompt(text)


def test_a_moved_section_keeps_the_whole_list_and_its_order() -> None:
    six = LIST[5]
    text = _renamed((six + "\n", "")).replace(LIST[0] + "\n", LIST[0] + "\n" + six + "\n")
    assert [e.number for e in section_entries(text)] == [1, 6, 2, 3, 4, 5, 7, 8, 9]
    assert len([line for line in section_list(text).split("\n") if re.match(r"\d\. ", line)]) == 9


def test_a_title_that_sounds_like_another_section_takes_the_section_of_its_place() -> None:
    text = _renamed(("7. Pending Tasks:", "7. Remaining errors to triage:"), ("8. Current Work:", "8. Next steps already in progress:"))
    assert [e.kind for e in section_entries(text)] == list(SECTION_KINDS)


def test_a_moved_or_renamed_prompt_gets_the_builtin_verdicts_including_drift(tmp_path: Path) -> None:
    graders = ["nine_sections", "pending_tasks", "verbatim_user_messages", "drift"]

    def verdicts(prompt: str, name: str) -> dict[str, list[str]]:
        path = tmp_path / f"{name}.j2"
        path.write_text(prompt)
        outcome = evaluate(ROOT / "scenarios" / "debug_failing_test.yaml", prompts=PromptSet(str(path)),
                           session_dir=tmp_path / name, graders=graders)
        assert outcome.error is None
        return {g: [v[i].status for v in outcome.verdicts] for i, g in enumerate(outcome.graders)}

    builtin = verdicts(BUILTIN, "builtin")
    six = LIST[5]
    moved = _renamed((six + "\n", "")).replace(LIST[0] + "\n", LIST[0] + "\n" + six + "\n")
    assert verdicts(moved, "moved") == builtin
    # the drift generations are read by the renamed prompt's titles too
    assert verdicts(_renamed(("1. Primary Request and Intent:", "1. User Requests:")), "renamed1") == builtin


@pytest.mark.parametrize("text", [
    BUILTIN.replace("   If there is a next step,", "   1. Run the tests: first.\n   2. Then commit: after.\n   If there is a next step,"),
    _headings(BUILTIN).replace("Enumerate the files", "1. List each file: with its role.\n2. Then the snippets: in full.\nEnumerate the files"),
], ids=["indented", "under-a-heading"])
def test_a_numbered_sub_list_inside_an_entry_stays_in_it(text: str) -> None:
    entries = section_entries(text)
    assert [e.kind for e in entries] == list(SECTION_KINDS)
    assert "Then" in section_list(text)


def test_reasons_name_the_sections_as_the_prompt_does(tmp_path: Path) -> None:
    # 7 renamed and the todo list's section then dropped by the (offline) model: the reason says
    # "Outstanding Tasks", the name the user's prompt gives it, not the built-in "Pending Tasks"
    from dataclasses import replace

    from pytest_ctxeval.evaluate import load_graders

    renamed = _renamed(("7. Pending Tasks:", "7. Outstanding Tasks:"))
    path = tmp_path / "p.j2"
    path.write_text(renamed)
    outcome = evaluate(ROOT / "scenarios" / "debug_failing_test.yaml", prompts=PromptSet(str(path)),
                       session_dir=tmp_path / "s", graders=["nine_sections"])
    case = outcome.cases[0]
    assert case.section_name("pending") == (7, "Outstanding Tasks")
    section = case.sections.get("pending")
    assert section is not None
    dropped = case.summary.replace(f"7. {section.title}:", "7x. gone:")
    registry = load_graders([])
    (verdict,) = registry.run(replace(case, summary=dropped), registry.select(["nine_sections"]))
    assert verdict.status == "fail" and "missing section: 7. Outstanding Tasks" in verdict.reasons[0], verdict.reasons
