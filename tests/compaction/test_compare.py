"""Comparing compactors: the table, ``ctxeval compare`` over the built-in library (offline, as in
CI), bad input, and ``--ctxeval-compactor`` / ``--ctxeval-compare-compactors`` in pytest."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for library_wide when run alone
from library_wide import LIBRARY_TESTS
from pytest_ctxeval.cli import main
from pytest_ctxeval.compaction.compare import OFFLINE_NOTE, format_compactor_table, compactor_table

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = ROOT / "scenarios"
#: The scenarios the unit suite compares the compactors on (the whole library in .ci/run's
#: library-wide step, tests/library_wide.py): every compaction kind and tier the library has, a
#: session-memory compaction, media, huge parallel outputs, calls in flight, an overflowing window,
#: the summariser's circuit breaker and an idle gap.
COMPARED_SCENARIOS = ("compaction_overflow", "idle_gap", "parallel_search_huge_output", "screenshot_and_pdf",
                      "session_memory_then_full", "summariser_circuit_breaker", "tool_calls_in_flight")


def _entry(name, graders, compactions=((10_000, 2_000),), **extra):
    return {"name": name, "graders": graders, "compactions": [
        {"index": i, "pre_tokens": a, "post_tokens": b, "verdicts": []} for i, (a, b) in enumerate(compactions, 1)],
        **extra}


def test_the_table_counts_pass_rates_probes_failures_and_skips():
    ok = {"status": "pass", "score": 1.0}
    docs = {
        "claude_code": {"scenarios": [
            _entry("a", {"g": ok, "h": {"status": "fail", "score": 0.5, "reasons": ["r"], "known_failure": "known"}}),
            _entry("b", {"g": ok, "h": {"status": "n/a", "score": 1.0}})],
            "run_usage": {"api_calls": 4, "input_tokens": 1_000_000, "output_tokens": 0, "usd": 0.0,
                          "by_model": {"ctxeval-reference": {"input_tokens": 1_000_000, "output_tokens": 0}}}},
        "codex": {"scenarios": [
            _entry("a", {"g": {"status": "fail", "score": 0.25, "reasons": ["lost the first request"]},
                         "h": ok}, compactions=((12_000, 1_000), (9_000, 3_000))),
            {**_entry("b", {}, compactions=()), "error": "boom"}]},
        "anthropic_server": {"scenarios": [{"name": "a", "skipped": "needs the API", "graders": {}, "compactions": []}]},
    }
    docs["codex"]["scenarios"][0]["compactions"][1]["verdicts"] = [{"grader": "probes", "by_kind": {"recall": 4.0}}]
    table = compactor_table(docs, price_model="claude-sonnet-5-5")
    cc, cx, api = table["rows"]
    assert cc["graders"]["g"]["pass_rate"] == 1.0 and cc["graders"]["h"]["graded"] == 0   # a known failure is not graded
    assert cc["verdicts"]["xfail"] == 1 and cc["usd_at"] == 2.0                           # $2 per million input
    assert (cx["compactions"], cx["tokens_before"], cx["tokens_after"]) == (2, 10_500, 2_000)
    assert cx["graders"]["g"] == {"passed": 0, "graded": 1, "na": 0, "ungraded": 0, "pass_rate": 0.0,
                                  "mean_score": 0.25}
    assert cx["probes"] == {"recall": 4.0} and cx["errors"] == 1
    assert (api["ran"], api["skipped"]) == (0, "needs the API")
    assert table["failures"] == [
        {"scenario": "a", "compactor": "codex", "grader": "g", "reason": "lost the first request"},
        {"scenario": "b", "compactor": "codex", "grader": "(run)", "reason": "boom"}]
    lines = format_compactor_table(table)
    assert lines[0] == OFFLINE_NOTE
    assert any(l.startswith("anthropic_server: skipped on 1 scenario(s): needs the API") for l in lines)
    assert any(l.startswith("g ") and "100% (2/2)" in l and "0% (0/1)" in l for l in lines)


#: The graders whose pass rates the comparison tests check: structure (sections, formats, pairing)
#: and what every compactor must keep (the messages, the last request).
COMPARED = ("format_sections", "nine_sections", "tool_pairing", "last_request_intact", "verbatim_user_messages")


@pytest.fixture(scope="module")
def library_comparison(tmp_path_factory):
    """``ctxeval compare`` over :data:`COMPARED_SCENARIOS` (the whole built-in library in the
    library-wide step), offline, graded by the graders the tests below read (the comparison with
    every grader is the docs' command, which CI's docs step runs: docs/compactors.md)."""
    out = tmp_path_factory.mktemp("compare")
    paths = [str(LIBRARY)] if LIBRARY_TESTS else [str(LIBRARY / f"{name}.yaml") for name in COMPARED_SCENARIOS]
    code = main(["compare", *paths, "--graders", ",".join(COMPARED), "--json", str(out / "cmp.json"),
                 "--html", str(out / "cmp.html")])
    return code, json.loads((out / "cmp.json").read_text()), (out / "cmp.html").read_text()


@pytest.mark.xdist_group("library_comparison")  # one worker runs the comparison (the fixture), not each
def test_compare_over_the_builtin_library_runs_offline(library_comparison, capsys):
    code, doc, html = library_comparison
    assert code == 0
    table = doc["table"]
    assert table["compactors"] == ["claude_code", "codex", "gemini_cli", "opencode", "observation_masking"]
    scenarios = len(list(LIBRARY.glob("*.yaml"))) if LIBRARY_TESTS else len(COMPARED_SCENARIOS)
    rows = {r["compactor"]: r for r in table["rows"]}
    for name, row in rows.items():
        results = doc["results"][name]["scenarios"]
        assert row["ran"] == scenarios and not row["errors"], name
        assert row["compactions"] == sum(len(e["compactions"]) for e in results) > 0, name
    # the reference engine fails nothing but its declared known failures
    assert rows["claude_code"]["verdicts"]["fail"] == 0
    assert not [f for f in table["failures"] if f["compactor"] == "claude_code"]
    # structure the compactors are made of, as the graders see it
    assert rows["observation_masking"]["model_calls"] == 0
    assert rows["gemini_cli"]["model_calls"] >= 2 * rows["gemini_cli"]["compactions"] - rows["gemini_cli"]["ran"]
    for name in ("codex", "gemini_cli", "opencode"):
        assert rows[name]["graders"]["format_sections"]["pass_rate"] == 1.0
        assert rows[name]["graders"]["nine_sections"]["pass_rate"] is None
        assert rows[name]["graders"]["tool_pairing"]["pass_rate"] == 1.0
    assert rows["claude_code"]["graders"]["nine_sections"]["pass_rate"] == 1.0
    assert all(r["graders"]["last_request_intact"]["pass_rate"] == 1.0 for r in rows.values())
    # the HTML report section, under the report's no-script policy, with the offline note in its header
    assert 'id="compactors"' in html and "Compactors compared:" in html
    assert "Offline, every compactor&#39;s summaries come from the reference model" in html
    assert "<script" not in html.lower() and "default-src 'none'" in html


@pytest.mark.xdist_group("library_comparison")  # one worker runs the comparison (the fixture), not each
def test_compare_prints_the_table_and_the_failures(library_comparison, capsys):
    # the table printed is the JSON's table, formatted
    _, doc, _ = library_comparison
    lines = format_compactor_table(doc["table"])
    assert any(l.startswith("pass rate by grader") for l in lines)
    assert any(l.startswith("failures (") for l in lines) == bool(doc["table"]["failures"])


@pytest.mark.parametrize("argv, message", [
    (["compare", "--compactors", "codx", str(LIBRARY / "auth_refactor.yaml")], "unknown compactor 'codx' (did you mean 'codex'?)"),
    (["compare", "--compactors", "", str(LIBRARY / "auth_refactor.yaml")], "--compactors: name at least one compactor"),
    (["compare", "--compactor", "codex", str(LIBRARY / "auth_refactor.yaml")], "compare takes --compactors a,b,..."),
    (["compare", "--compactors", "codex,codex(tiers=none)", str(LIBRARY / "auth_refactor.yaml")], "names 'codex' twice"),
    (["run", "--compactor", "mypkg.missing:Thing", str(LIBRARY / "auth_refactor.yaml")], "cannot import module 'mypkg.missing'"),
], ids=["unknown", "empty", "singular-option", "duplicate", "bad-module"])
def test_bad_compactors_are_usage_errors(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_run_under_a_compactor_and_a_skipped_one(tmp_path, capsys):
    scenario = str(LIBRARY / "debug_failing_test.yaml")
    assert main(["run", scenario, "--compactor", "codex", "--graders", "nine_sections,tool_pairing",
                 "--json", str(tmp_path / "r.json")]) == 0
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["compactor"] == "codex" and doc["scenarios"][0]["compactor"] == "codex"
    assert doc["scenarios"][0]["graders"]["nine_sections"]["status"] == "n/a"
    assert main(["run", scenario, "--compactor", "anthropic_server"]) == 0
    assert "SKIPPED: anthropic_server is the API's server-side compaction" in capsys.readouterr().out


TINY = (ROOT / "scenarios" / "debug_failing_test.yaml").read_text()


def test_pytest_compactor_options(pytester: pytest.Pytester):
    pytester.makefile(".yaml", **{"scenarios/debug": TINY})
    result = pytester.runpytest("--ctxeval", "-p", "no:cacheprovider", "-rs", "--ctxeval-compactor", "codex",
                                "-k", "nine_sections or tool_pairing or verbatim")
    result.assert_outcomes(passed=2, skipped=1, deselected=18)
    result.stdout.fnmatch_lines(["*n/a: nine_sections checks the format of the claude_code compactor; the codex "
                                 "compactor writes a Codex handoff summary*"])
    result = pytester.runpytest("--ctxeval", "-p", "no:cacheprovider", "-k", "tool_pairing",
                                "--ctxeval-compare-compactors", "opencode,observation_masking(keep=5),anthropic_server",
                                "--ctxeval-report", "out.json", "--ctxeval-report", "out.md")
    result.assert_outcomes(passed=1, deselected=20)
    result.stdout.fnmatch_lines(["*ctxeval compactors: claude_code, opencode, observation_masking, anthropic_server*",
                                 "Offline, every compactor's summaries*",
                                 "anthropic_server: skipped on 1 scenario(s)*"])
    doc = json.loads((pytester.path / "out.json").read_text())
    assert [r["compactor"] for r in doc["compactors"]["rows"]] == [
        "claude_code", "opencode", "observation_masking", "anthropic_server"]
    assert doc["compactors"]["rows"][2]["model_calls"] == 0
    summary = (pytester.path / "out.md").read_text()
    assert "#### Compactors: claude\\_code, opencode, observation\\_masking, anthropic\\_server" in summary


def test_the_options_are_in_help(pytester: pytest.Pytester, capsys):
    with pytest.raises(SystemExit):
        main(["compare", "--help"])
    out = capsys.readouterr().out
    for option in ("--compactors", "--json OUT", "--html OUT", "--context-window", "--graders", "--backend"):
        assert option in out
    help_text = pytester.runpytest("--help").stdout.str()
    assert "--ctxeval-compactor=SPEC" in help_text and "--ctxeval-compare-compactors=a,b,..." in help_text


def test_pytest_bad_compactor_is_a_usage_error(pytester: pytest.Pytester):
    pytester.makefile(".yaml", **{"scenarios/debug": TINY})
    result = pytester.runpytest("--ctxeval", "-p", "no:cacheprovider", "--ctxeval-compare-compactors", "codex(x=1)")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*compactor codex: unknown option x; it takes tiers, fraction, user_tokens*"])
