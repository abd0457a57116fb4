"""Offline prompt regression sees instructions (issue 18).

For each instruction the built-in prompt gives, the prompt with it removed, and reworded two other
ways, regresses the grader that targets it against the built-in prompt's run, offline; the
unmodified prompt reproduces the verdicts recorded before the vocabulary existed; the three tries
of the issue fail with a reason; a change the offline model cannot see prints the coverage note.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from prompt_variants import VARIANTS, builtin_source, edited, write_variant
from pytest_ctxeval.reporting.baseline import diff_runs, format_run_diff
from pytest_ctxeval.cli import main
from pytest_ctxeval.engine.prompt import PromptSet
from pytest_ctxeval.options import builtin_scenarios_dir
from pytest_ctxeval.reporting.prompt_coverage import coverage_note, format_coverage

SCENARIOS = builtin_scenarios_dir()
TARGETS = sorted({g for g, _, _ in VARIANTS.values()} | {"nine_sections"})


def run_offline(tmp: Path, name: str, scenarios: list[str], graders: list[str], prompt: Path | None = None,
                capsys: Any = None) -> dict[str, Any]:
    """``ctxeval run`` over built-in scenarios (offline) → the results document."""
    out = tmp / f"{name}.json"
    args = ["run", *[str(SCENARIOS / f"{s}.yaml") for s in scenarios], "--json", str(out), "--graders", ",".join(graders)]
    if prompt is not None:
        args += ["--prompt", str(prompt)]
    main(args)
    if capsys is not None:
        capsys.readouterr()
    return json.loads(out.read_text(encoding="utf-8"))


# pytest-xdist: the tests that read the built-in prompt's run (a module fixture) go to one worker,
# which makes that run once (each worker that ran one of them made it again).
pytestmark = pytest.mark.xdist_group("prompt_regression_builtin_run")


@pytest.fixture(scope="module")
def builtin_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    scenarios = sorted({s for _, ss, _ in VARIANTS.values() for s in ss})
    return run_offline(tmp_path_factory.mktemp("builtin"), "builtin", scenarios, TARGETS)


CASES = [(inst, variant) for inst, (_, _, variants) in VARIANTS.items() for variant in variants]


def test_every_edit_still_applies_to_the_builtin_prompt() -> None:
    for _inst, (_, _, variants) in VARIANTS.items():
        for edits in variants.values():
            assert edited(edits) != builtin_source()


@pytest.mark.parametrize("inst, variant", CASES, ids=[f"{i}-{v}" for i, v in CASES])
def test_removing_or_weakening_an_instruction_regresses_its_grader(
        inst: str, variant: str, builtin_run: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    grader, scenarios, variants = VARIANTS[inst]
    prompt = write_variant(tmp_path, f"{inst}-{variant}", variants[variant])
    doc = run_offline(tmp_path, "variant", list(scenarios), [grader], prompt, capsys)
    base = {**builtin_run, "scenarios": [s for s in builtin_run["scenarios"] if s["name"] in scenarios]}
    cmp = diff_runs(base, doc)
    hits = [c for c in cmp.regressions if c.grader == grader]
    assert {c.scenario for c in hits} == set(scenarios), format_run_diff(cmp)
    assert all(c.reason for c in hits)
    # ... and the coverage note says the change is read offline, naming the instruction.
    note = coverage_note(PromptSet(prompt).render_compact())
    assert note is not None and any(inst_title in "; ".join(line["mapped"]) for line in note["lines"]
                                    for inst_title in [_title(inst)])


def _title(name: str) -> str:
    from pytest_ctxeval.llm.instructions import instruction

    return instruction(name).title


def test_the_unmodified_prompt_reproduces_the_verdicts_recorded_before(tmp_path: Path) -> None:
    """tests/llm/data/builtin_verdicts.json: ``pytest --ctxeval`` before the vocabulary existed."""
    recorded = json.loads((Path(__file__).parent / "data" / "builtin_verdicts.json").read_text())["scenarios"]
    graders = sorted({g for s in recorded.values() for g in s["graders"]})
    copy = tmp_path / "compact.j2"
    copy.write_text(builtin_source(), encoding="utf-8")
    doc = run_offline(tmp_path, "same", sorted(recorded), graders, copy)
    for s in doc["scenarios"]:
        want = recorded[s["name"]]
        assert {g: v["status"] for g, v in s["graders"].items()} == want["graders"], s["name"]
        got = [{v["grader"]: v["status"] for v in c["verdicts"]} for c in s["compactions"]]
        assert got == want["compactions"], s["name"]
    assert coverage_note(PromptSet(copy).render_compact()) is None  # nothing changed, no note


# -- the three tries of the issue, and an invisible change ---------------------------------------

def _diff(tmp: Path, base: dict[str, Any], doc: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    (tmp / "base.json").write_text(json.dumps(base))
    (tmp / "new.json").write_text(json.dumps(doc))
    code = main(["diff", str(tmp / "base.json"), str(tmp / "new.json")])
    return code, capsys.readouterr().out


def test_try_1_dropping_the_next_step_quote_rule_fails(builtin_run: dict[str, Any], tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    prompt = write_variant(tmp_path, "no_quote", VARIANTS["next_step_quotes"][2]["removed"])
    doc = run_offline(tmp_path, "no_quote", ["auth_refactor"], TARGETS, prompt, capsys)
    base = {**builtin_run, "scenarios": [s for s in builtin_run["scenarios"] if s["name"] == "auth_refactor"]}
    code, out = _diff(tmp_path, base, doc, capsys)
    assert code == 1
    assert "REGRESSED auth_refactor compaction 1  next_step_quote" in out
    assert "proposes a step but quotes nothing" in out
    # the DIRECTLY-in-line sentence is marked as not seen offline, the quote sentences as read
    assert "NOT SEEN OFFLINE IMPORTANT: ensure that this step is DIRECTLY in line" in out
    assert "[instruction: next step with direct quotes]" in out


def test_try_2_paraphrased_user_messages_fail(builtin_run: dict[str, Any], tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    prompt = write_variant(tmp_path, "paraphrased", VARIANTS["user_messages_verbatim"][2]["paraphrased"])
    doc = run_offline(tmp_path, "paraphrased", ["auth_refactor"], TARGETS, prompt, capsys)
    base = {**builtin_run, "scenarios": [s for s in builtin_run["scenarios"] if s["name"] == "auth_refactor"]}
    code, out = _diff(tmp_path, base, doc, capsys)
    assert code == 1
    assert "verbatim_user_messages  pass 1.00 → fail" in out
    assert "is not verbatim in section 6" in out
    reasons = " ".join(r for c in doc["scenarios"][0]["compactions"] for v in c["verdicts"]
                       if v["grader"] == "verbatim_user_messages" for r in v["reasons"])
    assert "closest item" in reasons and "it is verbatim in section 1" in reasons
    summary = doc["scenarios"][0]["compactions"][0]["summary"]
    assert "The user asked" in summary  # a rewording, not a copy
    # section 6's own wording does not reach section 1: the user's requests and constraints stay there
    assert {c.grader for c in diff_runs(base, doc).regressions} == {"verbatim_user_messages"}


OLD_STYLE = """{% include "_no_tools_preamble.j2" %}

Your task is to create a detailed summary of the conversation so far.

Your summary should include the following sections:

{% include "_sections.j2" %}

<summary>
1. Primary Request and Intent:
   [Detailed description]

2. Key Technical Concepts:
   - [Concept]

3. Files and Code Sections:
   - [File name]

4. Errors and fixes:
   - [Error, quoted]: [How it was fixed]

5. Problem Solving:
   [Solved problems]
SIX
7. Pending Tasks:
   - [Task]

8. Current Work:
   [Precise description of current work]

9. Optional Next Step:
   [Next step, with a verbatim quote of the most recent request]
</summary>

{% include "_no_tools_trailer.j2" %}
"""


@pytest.mark.parametrize("style", ["skeleton_of_an_old_copy", "the_one_list"])
def test_try_3_deleting_section_6_where_the_user_sees_it_fails(style: str, builtin_run: dict[str, Any],
                                                               tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prompt = tmp_path / "no6.j2"
    if style == "the_one_list":
        source = builtin_source()
        line = next(l for l in source.split("\n") if l.startswith("6. All user messages"))
        prompt.write_text(source.replace(line + "\n", ""), encoding="utf-8")
    else:  # an old copy of compact.j2: the list comes from _sections.j2, the skeleton is what it shows
        prompt.write_text(OLD_STYLE.replace("SIX\n", ""), encoding="utf-8")
        assert "6. All user messages:" in PromptSet(prompt).render_compact()  # the included list still has it
    doc = run_offline(tmp_path, "no6", ["auth_refactor"], TARGETS, prompt, capsys)
    base = {**builtin_run, "scenarios": [s for s in builtin_run["scenarios"] if s["name"] == "auth_refactor"]}
    code, out = _diff(tmp_path, base, doc, capsys)
    assert code == 1
    assert "nine_sections  pass 1.00 → fail" in out and "missing section: 6. All user messages" in out
    assert "verbatim_user_messages  pass 1.00 → fail 0.00" in out


def test_an_invisible_change_prints_the_coverage_note(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = builtin_source().replace("- Double-check for technical accuracy and completeness.",
                                      "- Be warm and encouraging: for example, thank the user for the <b>bug report</b>.")
    prompt = tmp_path / "tone.j2"
    prompt.write_text(source, encoding="utf-8")
    main(["run", str(SCENARIOS / "idle_gap.yaml"), "--prompt", str(prompt), "--graders", "nine_sections",
          "--json", str(tmp_path / "tone.json")])
    out = capsys.readouterr().out
    assert "prompt-change coverage: 2 changed sentences against the built-in prompt, 0 read by the offline model, " \
           "2 not seen offline" in out
    assert "NOT SEEN OFFLINE - Be warm and encouraging" in out
    assert "--ctxeval-backend anthropic" in out and "replay" in out
    doc = json.loads((tmp_path / "tone.json").read_text())
    assert doc["prompt_coverage"]["unseen"] == 2
    from pytest_ctxeval.reporting.report import render_html, render_markdown

    html = render_html(doc)
    assert "prompt-change coverage" in html and "&lt;b&gt;bug report&lt;/b&gt;" in html and "<b>bug" not in html
    assert "not seen offline" in render_markdown(doc)
    assert "\n".join(format_coverage(doc["prompt_coverage"])).count("NOT SEEN OFFLINE") == 2


def test_the_baseline_diff_compares_against_the_baselines_prompt(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A baseline recorded under prompt A, a run under B: the note is about A → B, not the built-in."""
    a = tmp_path / "a.j2"
    a.write_text(builtin_source().replace("- Double-check for technical accuracy and completeness.", "- Be terse."))
    b = tmp_path / "b.j2"
    b.write_text(builtin_source().replace("- Double-check for technical accuracy and completeness.", "- Be terse.")
                 .replace(" Keep the rules of memory files (CLAUDE.md) that still apply.", ""))
    doc_a = run_offline(tmp_path, "a", ["memory_file_rule"], ["constraints_preserved"], a, capsys)
    doc_b = run_offline(tmp_path, "b", ["memory_file_rule"], ["constraints_preserved"], b, capsys)
    code, out = _diff(tmp_path, doc_a, doc_b, capsys)
    assert code == 1 and "constraints_preserved" in out
    assert "prompt-change coverage: 1 changed sentence against the baseline's prompt (a.j2)" in out
    assert "read             Keep the rules of memory files (CLAUDE.md) that still apply." in out
    assert "Be terse" not in out  # the same in both: not a change
