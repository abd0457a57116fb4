"""ctxeval prompt show|init, ctxeval plan / lint --plan, and the per-grader roll-up of a baseline
comparison (issue 18, items 3-5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_ctxeval.reporting.baseline import Change, RunDiff, format_run_diff, rollup
from pytest_ctxeval.cli import main
from pytest_ctxeval.engine.prompt import BUILTIN_PROMPTS, PromptSet
from pytest_ctxeval.options import builtin_scenarios_dir

SCENARIOS = builtin_scenarios_dir()


# -- prompt show / init -----------------------------------------------------------------------------

def test_show_prints_every_rendered_line_with_its_origin(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prompt", "show"]) == 0
    out = capsys.readouterr().out
    rendered = PromptSet().render_compact().split("\n")
    shown = [l.split(" | ", 1)[1] for l in out.split("\n") if " | " in l]
    assert shown[: len(rendered)] == rendered  # the whole prompt, in order
    assert "_no_tools_preamble.j2:1 (built-in) | CRITICAL: Respond with TEXT ONLY." in out
    assert "compact.j2:24 (built-in)" in out and "| 6. All user messages: List ALL user messages" in out
    assert "# sections: Primary Request and Intent, Key Technical Concepts" in out
    assert "user messages verbatim (compact.j2:24)" in out


def test_show_partial_takes_the_section_list_of_the_prompt_in_use(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    source = (BUILTIN_PROMPTS / "compact.j2").read_text()
    line = next(l for l in source.split("\n") if l.startswith("6. All user messages"))
    mine = tmp_path / "mine.j2"
    mine.write_text(source.replace(line + "\n", ""))
    assert main(["prompt", "show", "partial", "--prompt", str(mine)]) == 0
    out = capsys.readouterr().out
    assert "partial_compact.j2" in out and "mine.j2:" in out  # the list is attributed to the user's file
    assert "6. All user messages" not in out  # one place: dropping it in compact.j2 drops it here too
    assert "7. Pending Tasks" in out


def test_show_session_memory_and_plain(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prompt", "show", "session_memory"]) == 0
    out = capsys.readouterr().out
    assert "session_memory_template.j2:2 (built-in)  | # Session Title" in out
    assert main(["prompt", "show", "--plain"]) == 0
    assert capsys.readouterr().out.strip() == PromptSet().render_compact()


def test_show_notes_a_skeleton_that_disagrees_with_the_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "old.j2"
    p.write_text('Sections:\n\n{% include "_sections.j2" %}\n\n<summary>\n1. Primary Request and Intent:\n   [x]\n\n'
                 '9. Optional Next Step:\n   [y]\n</summary>\n')
    assert main(["prompt", "show", "--prompt", str(p)]) == 0
    out = capsys.readouterr().out
    assert "# sections: Primary Request and Intent, Optional Next Step" in out
    assert "# note: the reply skeleton in <summary> asks for other sections than the list" in out


def test_init_copies_the_templates_and_refuses_to_overwrite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "prompts"
    assert main(["prompt", "init", str(folder)]) == 0
    names = sorted(p.name for p in folder.glob("*.j2"))
    assert names == sorted(p.name for p in BUILTIN_PROMPTS.glob("*.j2"))
    assert "--ctxeval-prompt" in capsys.readouterr().out
    assert PromptSet(folder / "compact.j2").render_compact() == PromptSet().render_compact()
    (folder / "compact.j2").write_text("mine")
    assert main(["prompt", "init", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "compact.j2 already exist" in err and "--force" in err
    assert (folder / "compact.j2").read_text() == "mine"  # nothing lost
    assert main(["prompt", "init", str(folder), "--force"]) == 0
    assert (folder / "compact.j2").read_text() != "mine"


def test_an_edited_part_next_to_the_prompt_wins(tmp_path: Path) -> None:
    folder = tmp_path / "p"
    main(["prompt", "init", str(folder)])
    (folder / "_no_tools_trailer.j2").write_text("REMINDER: mine.")
    assert PromptSet(folder / "compact.j2").render_compact().endswith("REMINDER: mine.")


# -- plan -----------------------------------------------------------------------------------------

def test_plan_shows_the_thresholds_and_where_compaction_fires(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(SCENARIOS / "auth_refactor.yaml")]) == 0
    out = capsys.readouterr().out
    assert "window 20,000, warning at 16,000, auto-compact at 16,700" in out
    # The sizes are the engine's own: ``ctxeval run`` of the same scenario compacts at the same sizes.
    main(["run", str(SCENARIOS / "auth_refactor.yaml"), "--graders", "nine_sections", "--json", str(tmp_path / "r.json")])
    capsys.readouterr()
    (auto, manual) = json.loads((tmp_path / "r.json").read_text())["scenarios"][0]["compactions"]
    first = f"{auto['pre_tokens']:,} → {auto['post_tokens']:,}"
    assert f"COMPACTED  autocompact full compaction {first}" in out
    assert f"(manual) compact full compaction {manual['pre_tokens']:,} → {manual['post_tokens']:,}" in out
    assert f"2 compactions: #1 auto at request 16 ({first})" in out


def test_plan_names_the_tiers_and_groups_repeats(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(SCENARIOS / "tool_result_budget.yaml")]) == 0
    out = capsys.readouterr().out
    assert "budget persisted ×9" in out and " warning " in out


def test_plan_of_a_scenario_that_never_compacts_says_how_to_make_it(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "small.yaml"
    p.write_text("name: small\ncontext_window: 20000\nturns:\n  - user: hi\n  - assistant: hello\n")
    assert main(["plan", str(p)]) == 0
    out = capsys.readouterr().out
    assert "1 requests, 0 compactions (grow a tool result" in out


def test_plan_bad_input_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(tmp_path)]) == 2
    assert "no scenario files" in capsys.readouterr().err


def test_lint_plan_prints_the_plan_after_a_clean_lint(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", str(SCENARIOS / "idle_gap.yaml"), "--plan"]) == 0
    out = capsys.readouterr().out
    assert "no problems" in out and "idle_gap (" in out and "auto-compact at" in out


# -- roll-up --------------------------------------------------------------------------------------

def test_a_comparison_rolls_regressions_up_per_grader_before_the_items() -> None:
    regs = ([Change("regression", f"s{i}", "nine_sections", 1, "pass 1.00", "fail 0.89") for i in range(3)]
            + [Change("regression", f"s{i}", "verbatim_user_messages", 1, "pass 1.00", "fail 0.00") for i in range(2)]
            + [Change("regression", "s0", "intent_preservation", 1, "pass 1.00", "pass 0.80")])
    cmp = RunDiff(baseline="b.json", tolerance=0.05, regressions=regs)
    assert rollup(regs) == [("nine_sections", 3, "fail"), ("verbatim_user_messages", 2, "fail"),
                            ("intent_preservation", 1, "lower score")]
    lines = format_run_diff(cmp)
    assert lines[1] == ("  regressed by grader: nine_sections 3 → fail, verbatim_user_messages 2 → fail, "
                        "intent_preservation 1 → lower score")
    assert lines[2].lstrip().startswith("REGRESSED")
    one = RunDiff(baseline="b.json", tolerance=0.05, regressions=regs[:1])
    assert "by grader" not in "\n".join(format_run_diff(one))  # one item needs no roll-up


def test_the_builtin_section_list_is_written_once_and_sections_j2_is_its_copy() -> None:
    from pytest_ctxeval.engine.prompt import section_list

    prompts = PromptSet()
    listed = prompts.section_list()
    assert listed.startswith("1. Primary Request and Intent:") and "\n9. Optional Next Step:" in listed
    part = (BUILTIN_PROMPTS / "_sections.j2").read_text().split("-#}\n", 1)[1].strip()
    assert part == listed
    rendered = prompts.render_compact()
    assert rendered.count("6. All user messages") == 1  # no second copy under <summary>
    assert section_list(prompts.render_partial("up_to")) == listed


def test_plan_tells_work_after_a_reply_from_a_manual_compaction(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(SCENARIOS / "session_memory_then_full.yaml")]) == 0
    out = capsys.readouterr().out
    assert "(after the reply) session memory extracted" in out
    assert "COMPACTED  autocompact session memory compaction" in out
    assert "(manual) compact full compaction" in out and "(manual) session memory" not in out
