"""Baselines, A/B, reports and the pytest ecosystem (xdist, junitxml, -k/-m), through pytester with
the real plugin: the checks of issue 9."""

from __future__ import annotations

import json
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from scenario_texts import TINY


TESTS = textwrap.dedent("""\
    name: tests
    context_window: 4000
    turns:
      - user: "Make tests/test_api.py pass; do not touch the fixtures."
      - assistant: "Running them."
        tools:
          - name: Bash
            input: {command: pytest tests/test_api.py -q}
            error: "E   KeyError: 'user_id'\\nFAILED tests/test_api.py::test_get - KeyError"
      - assistant: "Fixing the lookup."
        tools:
          - name: Edit
            input: {file_path: src/api.py, old_string: "row['user_id']", new_string: "row.get('user_id')"}
            result: "ok"
      - compact: true
      - user: "Now run the whole suite."
      - assistant: "Running it."
        tools:
          - name: Bash
            input: {command: pytest -q}
            result: "{{ log(lines=40, seed='suite') }}"
      - compact: true
    """)

# The built-in prompt's nine sections without section 6 (the user messages).
NO_SECTION_6 = textwrap.dedent("""\
    Summarise the conversation so far in <summary> tags with these sections:
    1. Primary Request and Intent: the user's requests.
    2. Key Technical Concepts: concepts.
    3. Files and Code Sections: files.
    4. Errors and fixes: errors, quoted.
    5. Problem Solving: problems.
    6. Pending Tasks: open tasks.
    7. Current Work: what was being done.
    8. Optional Next Step: the next step, quoting the most recent request.
    {% if custom_instructions %}Additional Instructions:
    {{ custom_instructions }}{% endif %}
    """)

RULE_GRADERS = 18  # items per scenario: 18 rule graders + 3 llm graders
LLM_GRADERS = 3


def run(p: pytest.Pytester, *args: str) -> pytest.RunResult:
    return p.runpytest("--ctxeval", "-p", "no:cacheprovider", *args)


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makefile(".yaml", **{"scenarios/tiny": TINY, "scenarios/tests": TESTS})
    pytester.makefile(".j2", no6=NO_SECTION_6)
    return pytester


def load(p: pytest.Pytester, name: str) -> dict:
    return json.loads((p.path / name).read_text(encoding="utf-8"))


def graders_of(doc: dict) -> int:
    return len(next(iter(doc["scenarios"]))["graders"])


# -- baselines --------------------------------------------------------------------------------


def test_baseline_round_trip_with_no_change_passes(project: pytest.Pytester) -> None:
    first = run(project, "--ctxeval-save-baseline", "ctxeval-baseline.json")
    assert first.ret == 0
    first.stdout.fnmatch_lines(["ctxeval: wrote ctxeval-baseline.json"])
    saved = (project.path / "ctxeval-baseline.json").read_bytes()
    second = run(project, "--ctxeval-baseline", "ctxeval-baseline.json", "--ctxeval-save-baseline", "again.json")
    assert second.ret == 0
    second.stdout.fnmatch_lines(["*ctxeval baseline*", "0 regressions, 0 improvements against ctxeval-baseline.json*"])
    assert (project.path / "again.json").read_bytes() == saved  # stable: same run, same bytes
    doc = json.loads(saved)
    assert sorted(doc["scenarios"]) == ["tests", "tiny"]
    assert doc["scenarios"]["tests"]["compactions"][0]["graders"]["errors_preserved"]["status"] == "pass"


def test_a_prompt_that_drops_section_6_is_a_regression_and_fails(project: pytest.Pytester) -> None:
    assert run(project, "--ctxeval-save-baseline", "base.json").ret == 0
    result = run(project, "--ctxeval-prompt", "no6.j2", "--ctxeval-baseline", "base.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([
        "*ctxeval baseline*",
        "*regressions, * against base.json (score tolerance 0.05)",
        "*REGRESSED tests compaction 1  verbatim_user_messages  pass 1.00 → fail 0.00  "
        "section 6 'All user messages' is missing*",
    ])
    result.stdout.fnmatch_lines(["*REGRESSED tiny compaction 1  verbatim_user_messages  pass 1.00 → fail*"])


def test_a_baseline_regression_alone_fails_the_session(project: pytest.Pytester) -> None:
    """The regressed graders are declared known failures, so every item passes or xfails: only the
    comparison against the baseline fails the run."""
    assert run(project, "--ctxeval-save-baseline", "base.json", "-k", "tiny").ret == 0
    (project.path / "scenarios" / "tests.yaml").unlink()
    known = TINY + "known_failures:\n  verbatim_user_messages: dropped by no6.j2\n  nine_sections: dropped too\n"
    (project.path / "scenarios" / "tiny.yaml").write_text(known)
    result = run(project, "--ctxeval-prompt", "no6.j2", "--ctxeval-baseline", "base.json",
                 "-k", "verbatim_user_messages or nine_sections")
    result.assert_outcomes(xfailed=2, deselected=RULE_GRADERS + LLM_GRADERS - 2)
    result.stdout.fnmatch_lines(["*REGRESSED tiny compaction 1  verbatim_user_messages*"])
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_an_improved_prompt_passes_and_lists_the_improvement(project: pytest.Pytester) -> None:
    run(project, "--ctxeval-prompt", "no6.j2", "--ctxeval-save-baseline", "weak.json")
    result = run(project, "--ctxeval-baseline", "weak.json", "--ctxeval-report", "summary.md")
    assert result.ret == 0
    result.stdout.fnmatch_lines([
        "0 regressions, * improvements against weak.json*",
        "*improved  tests compaction 1  verbatim_user_messages  fail 0.00 → pass 1.00*",
    ])
    md = (project.path / "summary.md").read_text()
    assert "#### Regressions against weak.json (0)" in md
    assert "- **tiny compaction 1** · verbatim\\_user\\_messages: fail 0.00 → pass 1.00" in md


def test_tolerance_option(project: pytest.Pytester) -> None:
    result = run(project, "--ctxeval-tolerance", "1.5")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*expected a number between 0 and 1, got '1.5'*"])
    result = run(project, "--ctxeval-baseline", "missing.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*missing.json: no such file*"])


# -- prompts under test -----------------------------------------------------------------------


def test_template_errors_name_the_file_and_line(project: pytest.Pytester) -> None:
    project.makefile(".j2", bad="Summarise.\n\n{{ nope.attr }}\n", broken="Summarise.\n{% if x %}\n")
    result = run(project, "--ctxeval-prompt", "bad.j2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*bad.j2:3: template error: 'nope' is undefined*"])
    result = run(project, "--ctxeval-session-memory-prompt", "broken.j2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*broken.j2:2: template error: Unexpected end of template*"])
    result = run(project, "--ctxeval-compare-prompt", "bad.j2")
    result.stderr.fnmatch_lines(["*bad.j2:3: template error*"])


def test_prompt_from_ini_and_session_memory_prompt(project: pytest.Pytester) -> None:
    project.makeini("[pytest]\nctxeval_prompt = no6.j2\nctxeval_session_memory_prompt = notes.j2\n")
    project.makefile(".j2", notes="# Session Title\n_title_\n\n# Current State\n_now_\n\n# Our Own Heading\n_x_\n")
    builtin = Path(__file__).resolve().parents[1] / "scenarios" / "session_memory_then_full.yaml"
    (project.path / "scenarios" / "sm.yaml").write_text(builtin.read_text(encoding="utf-8").replace(
        "name: session_memory_then_full", "name: sm"), encoding="utf-8")
    result = run(project, "-k", "verbatim_user_messages", "--ctxeval-report", "r.json")
    result.stdout.fnmatch_lines(["*section 6 'All user messages' is missing*"])  # no6.j2 from the ini
    doc = load(project, "r.json")
    assert doc["prompt"]["path"] == "no6.j2"
    sm_comp = next(s for s in doc["scenarios"] if s["name"] == "sm")["compactions"][0]
    assert sm_comp["kind"] == "session_memory" and "# Our Own Heading" in sm_comp["summary"]


# -- A/B --------------------------------------------------------------------------------------


def test_compare_prompt_reports_pass_rates_and_flips(project: pytest.Pytester) -> None:
    result = run(project, "--ctxeval-compare-prompt", "no6.j2", "--ctxeval-report", "ab.json",
                 "--ctxeval-report", "ab.html")
    assert result.ret == 0  # items follow the prompt under test (B, the built-in one)
    result.stdout.fnmatch_lines([
        "*ctxeval A/B: prompt A vs prompt B*",
        "A = no6.j2 (*), B = compact.j2 (*)",
        "grader*A pass*A mean*B pass*B mean*flipped (A → B)",
        "verbatim_user_messages*0% (0/2)*0.00*100% (2/2)*1.00*tests fail 0.00 → pass 1.00, tiny fail 0.00 → pass 1.00",
    ])
    doc = load(project, "ab.json")
    row = next(r for r in doc["ab"]["table"]["graders"] if r["grader"] == "verbatim_user_messages")
    assert row["a"]["pass_rate"] == 0.0 and row["b"]["pass_rate"] == 1.0
    assert [f["scenario"] for f in row["flipped"]] == ["tests", "tiny"]
    assert doc["ab"]["prompt"]["path"] == "no6.j2"
    assert "6. All user messages" not in doc["ab"]["scenarios"][0]["compactions"][0]["summary"]
    html = (project.path / "ab.html").read_text()
    assert "A/B: two prompts, same scenarios" in html and "Summary against prompt A" in html


# -- reports ----------------------------------------------------------------------------------


def test_reports_by_suffix(project: pytest.Pytester) -> None:
    result = run(project, "--ctxeval-report", "out/r.html", "--ctxeval-report", "out/r.json",
                 "--ctxeval-report", "out/r.md")
    result.stdout.fnmatch_lines(["ctxeval: wrote out/r.html", "ctxeval: wrote out/r.json", "ctxeval: wrote out/r.md"])
    doc = load(project, "out/r.json")
    assert doc["format"] == "pytest-ctxeval/results" and [s["name"] for s in doc["scenarios"]] == ["tests", "tiny"]
    tests = doc["scenarios"][0]
    assert [c["index"] for c in tests["compactions"]] == [1, 2]
    assert {"lost", "summary", "verdicts"} <= set(tests["compactions"][0])
    assert len(tests["compactions"][0]["verdicts"]) == RULE_GRADERS + LLM_GRADERS
    assert doc["usage"]["api_calls"] > 0
    # The rendered prompt text is recorded too (issue 18: a diff's coverage note compares against it).
    from pytest_ctxeval.engine.prompt import PromptSet

    assert doc["prompt"] == {"path": "<builtin>/compact.j2", "fingerprint": doc["prompt"]["fingerprint"],
                             "text": PromptSet().render_compact()}
    html = (project.path / "out/r.html").read_text()
    assert "Compaction 2: full, manual" in html and "1. Primary Request and Intent" in html
    md = (project.path / "out/r.md").read_text()
    assert md.startswith("### ctxeval: passed") and "| tiny | 1 |" in md
    result = run(project, "--ctxeval-report", "r.txt")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*the suffix says which report: .html, .json or .md*"])


def test_results_hold_no_run_dependent_paths(project: pytest.Pytester) -> None:
    """Whatever pytest's basetemp (where the transcripts really are), the paths the engine names to
    the model (the transcript path every continuation message carries, persisted results) are the
    same, and so are the tokens, the summaries and the results file."""
    run(project, "--ctxeval-report", "a.json", "--basetemp", str(project.path / "tmp-a"))
    run(project, "--ctxeval-report", "b.json", "--basetemp", str(project.path / "a-much-longer-basetemp-b"))
    a, b = (project.path / "a.json").read_text(), (project.path / "b.json").read_text()
    assert a == b
    assert "tmp-a" not in a and str(project.path) not in a
    persisted = [e for s in json.loads(a)["scenarios"] for e in s["events"] if "chars ->" in e["detail"]]
    assert persisted and all("chars -> ~/.claude/projects/ctxeval/" in e["detail"] for e in persisted)


# -- the pytest ecosystem ---------------------------------------------------------------------


def test_xdist_and_serial_runs_write_identical_results(project: pytest.Pytester) -> None:
    """Results, HTML report, baseline, A/B table and baseline comparison: the same bytes whether
    the scenarios ran in one process or on two xdist workers (the controller assembles them from
    the reports); the terminal summary and the outcome counts are the same too (the one serial
    vs. xdist check of the suite: each xdist run starts three interpreters)."""
    pytest.importorskip("xdist")
    assert run(project, "--ctxeval-save-baseline", "base.json", "--ctxeval-prompt", "no6.j2").ret == 1

    def args(name: str) -> list[str]:
        return ["--ctxeval-report", f"{name}.json", "--ctxeval-report", f"{name}.html", "--ctxeval-report",
                f"{name}.md", "--ctxeval-save-baseline", f"{name}-base.json", "--ctxeval-compare-prompt", "no6.j2",
                "--ctxeval-baseline", "base.json", "-rs"]

    serial = run(project, *args("serial"))
    xdist = run(project, "-n", "2", *args("xdist"))  # the controller in this process, two worker processes
    assert serial.ret == 0 and xdist.ret == 0, xdist.stdout.str()
    xdist.stdout.fnmatch_lines(["*created: 2/2 workers*"])
    for suffix in (".json", ".html", ".md", "-base.json"):
        assert (project.path / f"serial{suffix}").read_bytes() == (project.path / f"xdist{suffix}").read_bytes(), suffix
    doc = load(project, "xdist.json")
    assert [r["grader"] for r in doc["comparison"]["improvements"]].count("verbatim_user_messages") == 3  # 2 + 1 compactions
    assert doc["ab"]["table"]["graders"][0]["flipped"]

    def summary(result: pytest.RunResult) -> list[str]:
        lines = result.stdout.lines
        start = next(i for i, line in enumerate(lines) if "ctxeval summary" in line)
        end = next(i for i, line in enumerate(lines) if line.startswith("ctxeval: wrote"))
        return lines[start:end]

    assert summary(serial) == summary(xdist)
    assert summary(serial)[2].startswith("tests ") and any("model usage (offline)" in x for x in summary(serial))
    assert serial.parseoutcomes() == xdist.parseoutcomes()


def test_junit_xml_has_one_testcase_per_scenario_and_grader(project: pytest.Pytester) -> None:
    result = run(project, "--ctxeval-prompt", "no6.j2", "--junitxml", "junit.xml")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    root = ET.parse(project.path / "junit.xml").getroot()
    cases = root.findall(".//testcase")
    assert len(cases) == 2 * (RULE_GRADERS + LLM_GRADERS)
    names = {(c.get("classname"), c.get("name")) for c in cases}
    assert ("scenarios.tiny.yaml", "verbatim_user_messages") in names
    assert ("scenarios.tests.yaml", "tool_pairing") in names
    failed = {c.get("name"): c.find("failure") for c in cases if c.get("classname") == "scenarios.tiny.yaml"
              and c.find("failure") is not None}
    assert "verbatim_user_messages" in failed
    message = failed["verbatim_user_messages"].get("message")
    assert message.startswith("verbatim_user_messages failed on tiny.yaml (score 0.00):")
    assert "section 6 'All user messages' is missing" in message
    props = {p.get("name") for p in root.iter("property")}
    assert "ctxeval_verdict" in props
    assert not props & {"ctxeval_item", "ctxeval_scenario"}  # the scenario payloads stay out of the XML


def test_k_and_m_select_scenarios_and_graders(project: pytest.Pytester) -> None:
    total = 2 * (RULE_GRADERS + LLM_GRADERS)
    result = run(project, "-m", "ctxeval_llm", "--ctxeval-report", "llm.json")
    result.assert_outcomes(passed=2 * LLM_GRADERS - _llm_na(project, "llm.json"), skipped=_llm_na(project, "llm.json"),
                           deselected=total - 2 * LLM_GRADERS)
    assert set(load(project, "llm.json")["scenarios"][0]["graders"]) == {"intent_preservation", "probes", "drift"}
    result = run(project, "-m", "not ctxeval_llm", "-k", "tiny and (verbatim or tool_pairing)", "--ctxeval-report",
                 "k.json")
    result.assert_outcomes(passed=2, deselected=total - 2)
    doc = load(project, "k.json")
    assert [s["name"] for s in doc["scenarios"]] == ["tiny"]
    assert list(doc["scenarios"][0]["graders"]) == ["verbatim_user_messages", "tool_pairing"] or \
        sorted(doc["scenarios"][0]["graders"]) == ["tool_pairing", "verbatim_user_messages"]
    assert [v["grader"] for v in doc["scenarios"][0]["compactions"][0]["verdicts"]] == \
        list(doc["scenarios"][0]["graders"])


def _llm_na(p: pytest.Pytester, name: str) -> int:
    doc = load(p, name)
    return sum(1 for s in doc["scenarios"] for g in s["graders"].values() if g["status"] in ("n/a", "ungraded"))
