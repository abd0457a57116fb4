"""One evaluation loop (pytest_ctxeval.evaluate, issue 22): the pytest plugin, ``ctxeval run`` and
the compactor comparison give the same outcome for the same scenario, errors included."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_ctxeval.cli import main
from pytest_ctxeval.compaction.compare import run_compactors
from pytest_ctxeval.errors import ProviderError
from pytest_ctxeval.evaluate import Evaluator, evaluate, recompactor
from pytest_ctxeval.grading import load_graders
from pytest_ctxeval.options import RunOptions
from pytest_ctxeval.scenario.schema import load_scenario
from tests.scenario_texts import TINY

GRADERS = ["verbatim_user_messages", "files_preserved", "nine_sections", "intent_preservation", "drift"]

#: Loads, then fails while it runs (the template is expanded by the runner): an error outcome.
BROKEN = TINY.replace("name: tiny", "name: broken").replace("python_file(lines=260, seed=1)",
                                                            "python_file(lines=-5, seed=1)")
#: Every judgement of this scenario comes back without JSON: its judge-based graders are ungraded.
JUDGE_FAULTS = TINY.replace("name: tiny", "name: judge_faults") + "faults:\n  judge: [" + \
    ", ".join(["malformed_json"] * 40) + "]\n"

SCENARIOS = {"tiny": TINY, "broken": BROKEN, "judge_faults": JUDGE_FAULTS}


def essence(doc: dict[str, Any]) -> dict[str, Any]:
    """What an outcome says, whichever front end wrote it: errors, verdicts, summaries."""
    return {s["name"]: {
        "error": s["error"], "skipped": s.get("skipped"),
        "graders": {g: (v["status"], v["score"], v["reasons"]) for g, v in sorted(s["graders"].items())},
        "compactions": [(c["index"], c["summary"], sorted((v["grader"], v["status"], v["score"]) for v in c["verdicts"]))
                        for c in s["compactions"]]}
        for s in doc["scenarios"]}


@pytest.fixture
def folder(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The scenarios in ``scen/`` of pytester's folder, which is also the working directory (so
    every front end names them by the same relative path)."""
    monkeypatch.chdir(pytester.path)
    for name, text in SCENARIOS.items():
        (pytester.path / "scen").mkdir(exist_ok=True)
        (pytester.path / "scen" / f"{name}.yaml").write_text(text, encoding="utf-8")
    return pytester.path


def paths() -> list[str]:
    return [f"scen/{name}.yaml" for name in SCENARIOS]


def plugin_doc(pytester: pytest.Pytester, *options: str) -> dict[str, Any]:
    result = pytester.runpytest("--ctxeval", *paths(), "-p", "no:cacheprovider", "-k", " or ".join(GRADERS),
                                "--ctxeval-report", "plugin.json", *options)
    assert result.ret == 1, result.stdout.str()[-3000:]  # broken fails its graders
    return json.loads((pytester.path / "plugin.json").read_text(encoding="utf-8"))


def cli_doc(*options: str) -> dict[str, Any]:
    assert main(["run", *paths(), "--graders", ",".join(GRADERS), "--json", "cli.json", *options]) == 1
    return json.loads(Path("cli.json").read_text(encoding="utf-8"))


def compare_doc(**options: Any) -> dict[str, Any]:
    registry = load_graders()
    results = run_compactors([load_scenario(p) for p in paths()], ["claude_code"], options=RunOptions(**options),
                             registry=registry, graders=registry.select(GRADERS))
    return results[0].doc


def test_the_three_front_ends_give_one_outcome(folder: Path, pytester: pytest.Pytester,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    plugin, cli, compared = essence(plugin_doc(pytester)), essence(cli_doc()), essence(compare_doc())
    assert plugin == cli == compared
    # The error policy, the same everywhere: the scenario that cannot run is one error with the
    # file, line and field (no grader verdict), and the others still ran.
    assert "scen/broken.yaml:9: turns[1].tools[0].result: template error" in plugin["broken"]["error"]
    assert plugin["broken"]["graders"] == {}
    assert {status for status, _, _ in plugin["tiny"]["graders"].values()} == {"pass"}
    # A scenario's scripted judge faults reach its own judge (the plugin's used to ignore them).
    faulted = plugin["judge_faults"]["graders"]
    assert faulted["intent_preservation"][0] == "ungraded"
    assert "no JSON object in the reply" in " ".join(faulted["intent_preservation"][2])
    assert faulted["nine_sections"][0] == "pass"


def test_a_session_folder_that_cannot_be_written_fails_that_scenario_only(tmp_path: Path) -> None:
    (tmp_path / "tiny.yaml").write_text(TINY, encoding="utf-8")
    evaluator = Evaluator(graders=load_graders().select(["nine_sections"]))

    def unwritable(name: str) -> Path:
        raise PermissionError(13, "Permission denied", str(tmp_path / "sessions" / name))

    failed = evaluator.evaluate(tmp_path / "tiny.yaml", session_dir=unwritable).outcome
    assert failed.failed and failed.error is not None
    assert "cannot write the session files" in failed.error and "Permission denied" in failed.error
    assert str(tmp_path / "sessions" / "tiny") in failed.error
    assert not evaluator.evaluate(tmp_path / "tiny.yaml", session_dir=tmp_path / "ok").outcome.failed


def test_a_provider_error_stops_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "tiny.yaml").write_text(TINY, encoding="utf-8")

    def down(*args: Any, **kwargs: Any) -> Any:
        raise ProviderError("the endpoint answered 401 authentication_error; check ANTHROPIC_API_KEY")

    monkeypatch.setattr(RunOptions, "make_llm", down)
    with pytest.raises(ProviderError, match="401"):
        evaluate(tmp_path / "tiny.yaml", graders=["nine_sections"])


def test_a_compactor_the_backend_cannot_play_is_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "f.yaml").write_text(JUDGE_FAULTS, encoding="utf-8")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    outcome = evaluate(tmp_path / "f.yaml", options=RunOptions(backend="anthropic", cassettes=tmp_path / "c"),
                       graders=["nine_sections"])
    assert outcome.skipped is not None and "cannot be played against the anthropic backend" in outcome.skipped
    assert not outcome.failed and outcome.grader_verdict("nine_sections").status == "n/a"


def test_one_judge_per_run_and_a_view_per_scenario(tmp_path: Path) -> None:
    for name in ("a", "b"):
        (tmp_path / f"{name}.yaml").write_text(TINY.replace("name: tiny", f"name: {name}"), encoding="utf-8")
    evaluator = Evaluator(graders=load_graders().select(["intent_preservation"]))
    a, b = (evaluator.evaluate(tmp_path / f"{n}.yaml") for n in ("a", "b"))
    judge, _ = evaluator.shared()
    assert evaluator.shared()[0] is judge  # made once
    # Each scenario's usage is its own: the same scenario twice spends the same.
    assert a.grading_usage["api_calls"] == b.grading_usage["api_calls"] > 0
    assert evaluator.shared_usage()["api_calls"] == 0  # nothing spent outside a scenario


def test_a_transcript_goes_through_the_same_call(tmp_path: Path) -> None:
    from pytest_ctxeval.runner import run_scenario

    (tmp_path / "tiny.yaml").write_text(TINY, encoding="utf-8")
    run = run_scenario(tmp_path / "tiny.yaml", session_dir=tmp_path / "s")
    outcome = evaluate(run.transcript_path, graders=["nine_sections"])
    assert outcome.kind == "transcript" and len(outcome.cases) == 1
    assert outcome.grader_verdict("nine_sections").status == "pass"


def test_the_drift_generation_follows_the_compactor() -> None:
    from pytest_ctxeval.compaction import load_compactor
    from pytest_ctxeval.engine.prompt import PromptSet

    prompts = PromptSet()
    reference, codex = recompactor(None, None, prompts), recompactor(load_compactor("codex"), None, prompts)
    assert reference.__qualname__.startswith("make_recompact")
    assert codex.__qualname__.startswith("compactor_recompact")
