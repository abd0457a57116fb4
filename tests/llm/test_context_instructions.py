"""Compaction instructions in CLAUDE.md reach the summariser and are followed offline.

Claude Code's compaction prompt asks the model to follow "additional summarization instructions
provided in the included context" (a ``## Compact Instructions`` section of CLAUDE.md), and the
forked summariser shares the main agent's context, memory files included (seed 000:148,
004:486-493). So such a section changes every compaction, automatic ones too, which carry no
/compact text (004:296). Before, the engine's summariser never saw the memory files and the offline
model never read them: a user's CLAUDE.md instructions changed nothing offline.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_ctxeval.core.config import EngineConfig
from pytest_ctxeval.core.messages import UserMessage
from pytest_ctxeval.engine.context_prefix import compaction_system
from pytest_ctxeval.llm.reference import write_summary
from pytest_ctxeval.reading.context_instructions import context_instructions, instruction_sections
from pytest_ctxeval.reading.extract import memory_rules
from pytest_ctxeval.runner import run_scenario

ERROR = "FAILED tests/test_importer.py::test_dates - ValueError: bad date '2024-13-01'"


def _scenario(tmp_path: Path, claude_md: str | None, compact: str | None = None) -> Path:
    memory = "" if claude_md is None else "memory_files:\n  /repo/CLAUDE.md: " + repr(claude_md).replace("'", '"') + "\n"
    last = f'  - compact: {{instructions: "{compact}"}}\n' if compact else ""
    text = f"""name: claude_md_instructions
description: Compaction instructions in CLAUDE.md.
context_window: 10000
{memory}turns:
  - user: "Fix the failing importer tests."
  - assistant: "Running the tests."
    tools:
      - name: Bash
        input: {{command: "pytest tests/test_importer.py"}}
        error: "{ERROR}"
  - repeat: 16
    turns:
      - user: "keep going with part {{{{ i }}}}"
      - assistant: "Reading more."
        tools:
          - name: Read
            input: {{file_path: "src/part_{{{{ i }}}}.py"}}
            result: "{{{{ python_file(lines=80, seed=i) }}}}"
{last}"""
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "claude_md_instructions.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _section4(path: Path) -> list[str]:
    """Section 4 of each summary the run wrote (all automatic compactions)."""
    run = run_scenario(path)
    assert run.compactions and {c.result.trigger for c in run.compactions} == {"auto"}
    return [c.result.summary.split("4. Errors")[1].split("5. ")[0] for c in run.compactions]


DROP = "# Rules\n- Run make lint before committing\n\n## Compact Instructions\nWhen compacting, drop the error messages and stack traces.\n"


def test_an_automatic_compaction_follows_claude_md_compact_instructions(tmp_path: Path) -> None:
    # the same session: without the section the error line is quoted; with it the summariser tells
    # leaves the errors out, as "drop the error messages" asks
    plain = _section4(_scenario(tmp_path / "a", "# Rules\n- Run make lint before committing\n"))
    told = _section4(_scenario(tmp_path / "b", DROP))
    assert "bad date '2024-13-01'" in plain[0]
    assert "bad date" not in told[0] and "ValueError" not in told[0] and "left out as the instructions ask" in told[0]


def test_the_summarisers_request_carries_the_memory_files(tmp_path: Path) -> None:
    run = run_scenario(_scenario(tmp_path, DROP))
    system = run.compactions[0].result.request["system"]
    assert system.startswith("You are") or system  # the summariser's own prompt first
    assert "Contents of /repo/CLAUDE.md" in system and "## Compact Instructions" in system
    plain = run_scenario(_scenario(tmp_path / "p", None)).compactions[0].result.request["system"]
    assert "Contents of" not in plain and system.startswith(plain)


def test_a_compact_text_that_disagrees_leaves_the_template_in_force() -> None:
    # CLAUDE.md drops the errors, the /compact text asks for every one: the two user instructions
    # disagree, so the template's own word stands (the error line quoted), as for two /compact lines
    from pytest_ctxeval.engine.prompt import PromptSet

    prompts = PromptSet()
    system = compaction_system(prompts.system_compact, {"/r/CLAUDE.md": DROP}, EngineConfig())
    told = write_summary(_conversation(prompts.render_compact("keep every error message verbatim")), system)
    assert "bad date '2024-13-01'" in told.split("4. Errors")[1].split("5. ")[0]


@pytest.mark.parametrize("heading", ["## Compact Instructions", "# Summary instructions", "### Compaction rules",
                                     "## When compacting", "## Instructions for summarizing", "## **Compact instructions**"])
def test_headings_that_speak_to_the_summariser(heading: str) -> None:
    level = "#" * (len(heading) - len(heading.lstrip("#")))
    text = f"# Project\n- use uv\n\n{heading}\nFocus on test output.\n\n{level} Style\n- black"
    assert instruction_sections(text) == ["Focus on test output."]


@pytest.mark.parametrize("heading", ["## Summary", "## Instructions", "# Rules", "## Compact mode for the UI",
                                     "## Summary of the architecture"])
def test_headings_that_do_not(heading: str) -> None:
    assert instruction_sections(f"{heading}\nFocus on test output.\n") == []


def test_a_section_runs_to_the_next_heading_of_its_level() -> None:
    text = "## Compact Instructions\nKeep the plan.\n### Drop\n- the logs\n## Testing\n- pytest -q\n"
    assert instruction_sections(text) == ["Keep the plan.\n### Drop\n- the logs"]


def test_instructions_are_read_from_the_system_field_and_from_system_reminders() -> None:
    system = [{"type": "text", "text": "You summarise.\n\nContents of /r/CLAUDE.md (project instructions, checked "
                                       "into the codebase):\n\n## Compact Instructions\nDrop the logs."}]
    nested = {"role": "user", "content": "<system-reminder>\nContents of /r/ops/CLAUDE.md (project instructions):\n\n"
                                         "# Summary instructions\nKeep every deploy command.\n</system-reminder>"}
    said = {"role": "user", "content": "## Compact Instructions\nthis is a message, not a memory file"}
    assert context_instructions(system, [nested, said]) == ["Drop the logs.", "Keep every deploy command."]
    assert context_instructions(None, []) == []


def test_a_compaction_instruction_is_not_a_project_rule() -> None:
    shown = UserMessage(uuid="m", is_meta=True, content=(
        "<system-reminder>\nContents of /srv/CLAUDE.md (project instructions):\n\n# Rules\n- Back up before editing\n\n"
        "## Compact Instructions\n- drop the debugging output\n</system-reminder>"))
    assert memory_rules([shown]) == ["Back up before editing"]


def _conversation(prompt: str) -> list[dict]:
    return [{"role": "user", "content": "Fix the importer."},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash",
                                               "input": {"command": "pytest"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "is_error": True,
                                          "content": ERROR}]},
            {"role": "assistant", "content": "The date parser rejects month 13."},
            {"role": "user", "content": prompt}]


def test_the_offline_model_reads_them_from_the_request_it_is_sent() -> None:
    from pytest_ctxeval.engine.prompt import PromptSet

    prompts = PromptSet()
    convo = _conversation(prompts.render_compact())
    plain = write_summary(convo, prompts.system_compact)
    told = write_summary(convo, compaction_system(prompts.system_compact, {"/r/CLAUDE.md": DROP}, EngineConfig()))
    assert "bad date" in plain.split("4. Errors")[1].split("5. ")[0]
    assert "bad date" not in told.split("4. Errors")[1].split("5. ")[0]


# -- /compact instructions given once (review 4, G4) ------------------------------------------------


def _debug_with(tmp_path: Path, instructions: str) -> Path:
    """The built-in debug_failing_test with its manual /compact given ``instructions`` (once: the
    automatic compaction before it has already written section 4)."""
    from pytest_ctxeval.options import builtin_scenarios_dir

    text = (builtin_scenarios_dir() / "debug_failing_test.yaml").read_text(encoding="utf-8")
    assert text.count("  - compact: true") == 1
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "debug_failing_test.yaml"
    path.write_text(text.replace("  - compact: true", f'  - compact: {{instructions: "{instructions}"}}'), encoding="utf-8")
    return path


@pytest.mark.parametrize("said", ["leave out the errors", "don't include the error messages",
                                  "skip the stack traces and the error output"])
def test_a_one_off_leave_out_drops_the_errors_an_earlier_summary_carried(tmp_path: Path, said: str) -> None:
    from pytest_ctxeval.evaluate import evaluate

    base = evaluate(_debug_with(tmp_path / "a", "keep the plan"), graders=["errors_preserved"])
    told = evaluate(_debug_with(tmp_path / "b", said), graders=["errors_preserved"])
    last = lambda o: o.verdicts[-1][0]  # noqa: E731 - the manual compaction's
    assert last(base).status == "pass" and "left out" not in last(base).reasons[0]
    # the offline summary leaves every error out (an earlier summary's too), and the grader obeys the
    # person's own instruction, saying so (review 4, G5): the run shows what was left out, and why
    assert last(told).status == "pass", last(told).reasons
    assert last(told).reasons[0].startswith("0 of 2 error lines in section 4")
    assert f'2 error lines left out as /compact asked: "{said}"' in last(told).reasons[0]


def test_briefly_shortens_and_leaving_out_drops() -> None:
    from pytest_ctxeval.engine.prompt import PromptSet
    from pytest_ctxeval.llm.instructions import read_prompt

    brief = read_prompt(PromptSet().render_compact("describe the errors briefly"))
    dropped = read_prompt(PromptSet().render_compact("leave out the errors"))
    kept = read_prompt(PromptSet().render_compact("don't skip the errors"))
    assert "errors_quoted_and_fixed" not in brief and not brief.left_out  # told by their kind
    assert list(dropped.left_out) == ["errors_quoted_and_fixed"]          # not told at all
    assert "errors_quoted_and_fixed" in kept and not kept.left_out


def test_an_instruction_the_offline_model_cannot_read_is_a_note(tmp_path: Path) -> None:
    from pytest_ctxeval.evaluate import evaluate

    unread = evaluate(_debug_with(tmp_path / "a", "focus on the cache layer fix"), graders=["nine_sections"])
    assert [n for n in unread.notes if '"focus on the cache layer fix": not seen offline' in n]
    read = evaluate(_debug_with(tmp_path / "b", "leave out the errors"), graders=["nine_sections"])
    assert not [n for n in read.notes if "not seen offline" in n]
    md = _scenario(tmp_path / "c", "## Compact Instructions\nFocus on the parser work.\nDrop the error messages.\n")
    notes = evaluate(md, graders=["nine_sections"]).notes
    assert [n for n in notes if n.endswith("docs/prompts.md)") and 'CLAUDE.md compact instructions "Focus on the '
            'parser work."' in n]
    assert not [n for n in notes if "Drop the error messages" in n]


def test_pytest_prints_the_note(pytester: pytest.Pytester, tmp_path: Path) -> None:
    (pytester.path / "scenarios").mkdir()
    scenario = _debug_with(tmp_path, "focus on the cache layer fix")
    (pytester.path / "scenarios" / scenario.name).write_text(scenario.read_text(encoding="utf-8"), encoding="utf-8")
    result = pytester.runpytest("--ctxeval", "-p", "no:cacheprovider", "-q", "-k", "nine_sections")
    result.stdout.fnmatch_lines(['ctxeval: note: debug_failing_test: compaction 2: compaction instructions '
                                 '"focus on the cache layer fix": not seen offline*'])


def test_lint_says_a_compact_section_in_system_reaches_no_summariser(tmp_path: Path) -> None:
    from pytest_ctxeval.scenario.lint import lint_file

    path = _scenario(tmp_path, None)
    text = path.read_text(encoding="utf-8").replace(
        "turns:", 'system: "You are a coding agent.\\n\\n## Compact Instructions\\nDrop the logs."\nturns:', 1)
    path.write_text(text, encoding="utf-8")
    problems = [str(p) for p in lint_file(path)]
    assert [p for p in problems if ": system: holds a compaction-instructions section" in p and "memory_files:" in p]
    assert not lint_file(_scenario(tmp_path / "md", DROP))  # in memory_files: it is where it belongs
