"""Planted-fact scenarios: the generator, `ctxeval facts`, the survival table in the terminal summary
and the reports, and the reference summary's relied facts (llm/relied.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_ctxeval.cli import main
from pytest_ctxeval.evaluation import evaluate_run
from pytest_ctxeval.results import outcome_entry, results_document
from pytest_ctxeval.scenario.factgen import generate, generate_yaml
from pytest_ctxeval.reporting.facts_table import survival_lines
from pytest_ctxeval.grading import load_graders
from pytest_ctxeval.llm import relied
from pytest_ctxeval.core.messages import AssistantMessage, TextBlock, ToolResultBlock, ToolUseBlock, UserMessage
from pytest_ctxeval.reporting.report import render_html, render_markdown
from pytest_ctxeval.runner import run_scenario
from pytest_ctxeval.scenario.expansion import expand
from pytest_ctxeval.scenario.schema import load_scenario

LIBRARY = Path(__file__).resolve().parents[1] / "scenarios"
GENERATED = {"facts_planted_everywhere": ["--seed", "11"],
             "facts_in_tool_results": ["--seed", "12", "--planted-in", "tool"],
             "facts_updated_values": ["--seed", "13", "--updates", "6"]}


def test_the_generator_is_deterministic_and_seeds_differ() -> None:
    assert generate_yaml(5) == generate_yaml(5)
    a, b = generate(5), generate(6)
    assert [f["tokens"] for f in a["facts"]] != [f["tokens"] for f in b["facts"]]
    assert len(a["facts"]) == 20 and {f["type"] for f in a["facts"]} == {
        "safety_rule", "constraint", "fact", "goal_state", "preference"}
    tools = [t for turn in a["turns"] for t in turn.get("tools", [])]
    assert {"Read", "Edit", "Bash", "TodoWrite"} <= {t["name"] for t in tools}  # a coding session, not chat
    assert sum(1 for turn in a["turns"] if "compact" in turn) == 5


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_the_library_scenarios_are_the_generators_output(name: str, tmp_path: Path) -> None:
    out = tmp_path / f"{name}.yaml"
    assert main(["facts", "generate", *GENERATED[name], "--name", name, "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == (LIBRARY / f"{name}.yaml").read_text(encoding="utf-8")
    scenario = load_scenario(out)
    assert 50 <= len(expand(scenario).steps) <= 400 and scenario.facts


def test_the_tool_only_and_updated_scenarios_plant_what_they_say() -> None:
    tool_only = load_scenario(LIBRARY / "facts_in_tool_results.yaml")
    assert {f.planted for f in tool_only.facts} == {"tool"}
    updated = load_scenario(LIBRARY / "facts_updated_values.yaml")
    assert sum(f.update is not None for f in updated.facts) == 6


@pytest.mark.parametrize(("args", "message"), [
    (["--rounds", "0"], "--rounds must be from 1 to 20"),
    (["--planted-in", "chat"], "--planted-in takes some of user, memory, tool, assistant"),
    (["--types", "Safety Rule"], "--types takes fact types"),
    (["--updates", "99"], "--updates must be from 0 to the number of facts (20)"),
])
def test_generate_refuses_bad_options(tmp_path: Path, capsys, args, message) -> None:
    assert main(["facts", "generate", "--seed", "1", *args, "-o", str(tmp_path / "x.yaml")]) == 2
    assert message in capsys.readouterr().err


@pytest.fixture(scope="module")
def entries(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    base = tmp_path_factory.mktemp("facts")
    registry = load_graders()
    out = []
    for name in GENERATED:
        run = run_scenario(LIBRARY / f"{name}.yaml", session_dir=base / name)
        out.append(outcome_entry(evaluate_run(run, registry, registry.select(["facts_survive", "stale_values"]))))
    return out


def test_the_reference_keeps_every_planted_fact_through_five_rounds(entries: list[dict]) -> None:
    for e in entries:
        assert e["graders"]["facts_survive"]["status"] == "pass", e["graders"]["facts_survive"]["reasons"]
        for row in e["survival"]["by_place"]["types"].values():
            assert row["curve"] == [1.0] * 5, (e["name"], row)
    updated = next(e for e in entries if e["name"] == "facts_updated_values")
    assert updated["graders"]["stale_values"]["status"] == "pass", updated["graders"]["stale_values"]["reasons"]


def test_the_survival_table_per_type_and_place(entries: list[dict]) -> None:
    lines = survival_lines(entries, label="claude_code")
    assert lines[0].split()[:5] == ["planted", "facts", "held", "(claude_code)", "round"]
    rows = {l.split("  ")[1].strip(): l for l in lines[1:] if l.startswith("  ") and not l.strip().startswith("(")}
    assert rows["safety_rule"].split()[1:7] == ["100%"] * 5 + ["100%"] and rows["safety_rule"].split()[-1] == "-"
    assert "planted in tool" in rows and "(3 scenarios, 60 facts;" in lines[-1]


def test_reports_show_the_survival_table_and_the_charts_escaped(entries: list[dict]) -> None:
    doc = results_document([], usage={}, backend="offline", model=None)
    doc["scenarios"] = [dict(e, name="<b>x</b>" if i == 0 else e["name"]) for i, e in enumerate(entries)]
    html = render_html(doc)
    assert html.count("<svg") == 2 * len(entries) and "Planted facts held per round" in html
    assert "<b>x</b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html
    assert "<script" not in html.lower()
    md = render_markdown(doc)
    assert "#### Planted facts held per round" in md and "safety_rule" in md


def test_pytest_prints_the_survival_table(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", **{"scenarios/facts": (LIBRARY / "facts_in_tool_results.yaml").read_text()})
    result = pytester.runpytest("--ctxeval", "-p", "no:cacheprovider", "-k", "facts_survive or compresses")
    result.assert_outcomes(passed=2, deselected=19)
    result.stdout.fnmatch_lines(["*ctxeval planted facts: share held per round*",
                                 "planted facts held*round 1*round 5*bar*cliff",
                                 "  safety_rule * 100% * 100%*", "  planted in tool*"])


def test_facts_survival_prints_a_table_per_compactor(capsys) -> None:
    assert main(["facts", "survival", str(LIBRARY / "facts_in_tool_results.yaml"),
                 "--compactors", "claude_code,observation_masking"]) == 0
    out = capsys.readouterr().out
    assert "planted facts held (claude_code)" in out and "planted facts held (observation_masking)" in out


# -- the reference's relied facts -------------------------------------------------------------------


def _session() -> list:
    use = ToolUseBlock(id="toolu_1", name="Read", input={"file_path": "config/app.toml"})
    msgs = [UserMessage(uuid="u1", content="Tune the app config."),
            AssistantMessage(uuid="a1", content=[TextBlock(text="Goal: done means the orbit_suite passes."), use]),
            UserMessage(uuid="r1", content=[ToolResultBlock(tool_use_id="toolu_1", content=(
                "[server]\nport = 8080\nworkers = 4\n# NOTE: never restart the billing_db primary by hand\n"
                "just some prose about the config"))])]
    for i in range(30):  # more narration than the reference keeps
        msgs.append(AssistantMessage(uuid=f"n{i}", content=[TextBlock(
            text=f"Looking at another part of the configuration to see how it is loaded, step {'x' * i}.")]))
    msgs.append(UserMessage(uuid="u2", content="Actually the port is 9090 now, not 8080."))
    return msgs


def test_relied_facts_keep_tool_facts_and_early_findings_and_mark_changed_ones() -> None:
    msgs = _session()
    facts = relied.tool_facts(msgs, [])
    assert "# NOTE: never restart the billing_db primary by hand" in facts
    assert any(f.startswith("port = 8080 (replaced later: \"Actually the port is 9090 now") for f in facts)
    assert "just some prose about the config" not in facts
    found = relied.findings(msgs, [], [])
    assert found[0] == "Goal: done means the orbit_suite passes."  # not pushed out by 30 later statements
    assert len(found) <= 1 + relied.RECENT


def test_section_9_quotes_the_latest_request_not_a_statement_after_it() -> None:
    from pytest_ctxeval.llm.reference import write_summary
    from pytest_ctxeval.engine.prompt import PromptSet

    prompt = PromptSet().render_compact()
    api = [{"role": "user", "content": "Add retries to the uploader"},
           {"role": "assistant", "content": "Adding retries."},
           {"role": "user", "content": "I prefer exponential backoff, by the way."},
           {"role": "user", "content": prompt}]
    text = write_summary(api)
    nxt = text[text.index("9. Optional Next Step"):]
    assert 'most recent request, quoted verbatim: "Add retries to the uploader"' in nxt
    assert 'latest message, to keep in mind (not a new task): "I prefer exponential backoff, by the way."' in nxt
