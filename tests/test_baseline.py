"""pytest_ctxeval.reporting.baseline: the committed baseline form, the comparison and its classification,
the A/B table, and ``ctxeval diff`` / ``ctxeval report`` (on hand-built results documents)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from pytest_ctxeval.reporting.baseline import (
    BASELINE_FORMAT, ab_table, baseline_document, diff_runs, dumps, format_ab, format_run_diff, load_document,
    write_baseline,
)
from pytest_ctxeval.cli import main
from pytest_ctxeval.errors import UsageError


def verdict(grader: str, status: str = "pass", score: float = 1.0, **extra: object) -> dict:
    return {"grader": grader, "kind": "rule", "status": status, "score": score,
            "reasons": [f"{grader} says {status}"], **extra}


def results(*scenarios: dict, prompt: str = "compact.j2") -> dict:
    return {"format": "pytest-ctxeval/results", "version": 1, "backend": "offline", "model": "ctxeval-reference",
            "judge": None, "prompt": {"path": f"<builtin>/{prompt}", "fingerprint": "f" * 12},
            "scenarios": list(scenarios), "usage": {"api_calls": 1}}


def scenario(name: str, *compactions: list[dict], error: str | None = None) -> dict:
    comps = [{"index": i, "kind": "full", "trigger": "auto", "turn": 3 * i, "line": None, "pre_tokens": 1000,
              "post_tokens": 200, "summary": f"summary {i} of {name}", "verdicts": vs,
              "lost": {"user_messages": [], "files": [], "errors": [], "todos": [], "identifiers": [],
                       "identifiers_total": 0}}
             for i, vs in enumerate(compactions, start=1)]
    graders: dict[str, dict] = {}
    for vs in compactions:
        for v in vs:
            row = graders.setdefault(v["grader"], {k: v[k] for k in ("kind", "status", "score", "reasons")})
            if v["status"] == "fail":
                row.update(status="fail", reasons=v["reasons"])
            row["score"] = round(min(row["score"], v["score"]), 4)
    return {"name": name, "source": f"scenarios/{name}.yaml", "kind": "scenario", "context_window": 4000,
            "error": error, "events": [], "graders": graders, "compactions": comps, "messages": {}}


BASE = results(
    scenario("alpha", [verdict("verbatim_user_messages"), verdict("files_preserved", "fail", 0.8,
                                                                   missing=["src/a.py"])]),
    scenario("beta", [verdict("verbatim_user_messages")], [verdict("verbatim_user_messages")]),
    scenario("gone", [verdict("verbatim_user_messages")]))


def changed(**edits: object) -> dict:
    doc = copy.deepcopy(BASE)
    for key, value in edits.items():
        name, comp, grader = key.split("__")
        s = next(s for s in doc["scenarios"] if s["name"] == name)
        v = next(v for v in s["compactions"][int(comp) - 1]["verdicts"] if v["grader"] == grader)
        v.update(value)  # type: ignore[arg-type]
        s["graders"][grader].update({k: v[k] for k in ("status", "score", "reasons")})
    return doc


def test_baseline_form_is_stable_sorted_and_lean() -> None:
    doc = baseline_document(BASE)
    assert doc["format"] == BASELINE_FORMAT and list(doc["scenarios"]) == ["alpha", "beta", "gone"]
    comp = doc["scenarios"]["alpha"]["compactions"][0]
    assert comp["graders"]["files_preserved"] == {"status": "fail", "score": 0.8, "missing": ["src/a.py"]}
    assert "reasons" not in json.dumps(doc)  # reasons are for the report, not for review diffs
    text = dumps(doc)
    assert text == dumps(json.loads(text)) and text.endswith("\n")
    assert list(json.loads(text)) == sorted(json.loads(text))
    assert baseline_document(doc) is doc  # a baseline is already in baseline form


def test_no_change_is_no_regression() -> None:
    cmp = diff_runs(BASE, copy.deepcopy(BASE))
    assert not cmp.failed and not cmp.improvements and not cmp.notes
    assert format_run_diff(cmp)[0].startswith("0 regressions, 0 improvements")


def test_pass_to_fail_is_a_regression_with_the_reason() -> None:
    cur = changed(alpha__1__verbatim_user_messages={"status": "fail", "score": 0.5,
                                                    "reasons": ["user message 2 of 2 is not verbatim in section 6"]})
    cmp = diff_runs(BASE, cur, name="base.json")
    assert cmp.failed
    [r] = cmp.regressions
    assert (r.scenario, r.compaction, r.grader, r.before, r.after) == (
        "alpha", 1, "verbatim_user_messages", "pass 1.00", "fail 0.50")
    assert "user message 2 of 2" in r.reason
    lines = format_run_diff(cmp)
    assert "REGRESSED alpha compaction 1  verbatim_user_messages  pass 1.00 → fail 0.50" in lines[1]


@pytest.mark.parametrize(("score", "tolerance", "kind"), [
    (0.7, 0.05, "regression"), (0.78, 0.05, None), (0.7, 0.2, None), (0.9, 0.05, "improvement"), (0.84, 0.05, None),
])
def test_score_changes_against_the_tolerance(score: float, tolerance: float, kind: str | None) -> None:
    cur = changed(alpha__1__files_preserved={"score": score})
    cmp = diff_runs(BASE, cur, tolerance=tolerance)
    got = [c.kind for c in cmp.regressions + cmp.improvements]
    assert got == ([kind] if kind else [])


def test_fail_to_pass_is_an_improvement_that_names_what_came_back() -> None:
    cur = changed(alpha__1__files_preserved={"status": "pass", "score": 1.0, "missing": []})
    cmp = diff_runs(BASE, cur)
    assert not cmp.failed
    [i] = cmp.improvements
    assert (i.grader, i.before, i.after) == ("files_preserved", "fail 0.80", "pass 1.00")
    assert i.reason == 'now kept: "src/a.py"'


def test_new_and_removed_scenarios_graders_and_compactions_are_notes() -> None:
    cur = copy.deepcopy(BASE)
    cur["scenarios"] = [s for s in cur["scenarios"] if s["name"] != "gone"]
    cur["scenarios"].append(scenario("new_one", [verdict("verbatim_user_messages", "fail", 0.0)]))
    beta = cur["scenarios"][1]
    beta["compactions"].pop()
    beta["graders"]["tool_pairing"] = {"kind": "rule", "status": "pass", "score": 1.0, "reasons": []}
    cmp = diff_runs(BASE, cur)
    assert not cmp.failed  # a new failing scenario is listed, not a regression
    notes = {(n.scenario, n.compaction, n.grader, n.reason) for n in cmp.notes}
    assert notes == {("gone", None, None, "missing from this run"), ("new_one", None, None, "new scenario"),
                     ("beta", 2, None, "compaction no longer happens"), ("beta", None, "tool_pairing", "new grader")}


def test_a_baseline_scenario_missing_from_the_run_is_said_by_name() -> None:
    cur = copy.deepcopy(BASE)
    cur["scenarios"] = [s for s in cur["scenarios"] if s["name"] != "gone"]
    lines = format_run_diff(diff_runs(BASE, cur))
    assert "  note      missing from this run: gone" in lines
    assert not any("gone" in line for line in lines if "missing from this run" not in line)


def test_the_nothing_in_common_rule_is_shared() -> None:
    from pytest_ctxeval.reporting.baseline import nothing_in_common

    assert nothing_in_common({"cache_ttl"}, {"a", "b"}, "B", "this run", "fix it") == (
        "B and this run have no scenario in common (cache_ttl against a, b): nothing to compare; fix it")
    assert nothing_in_common({"a", "c"}, {"a", "b"}, "B", "R", "") is None  # one in common: a diff with notes
    assert nothing_in_common(set(), {"a"}, "B", "R", "") is None            # nothing selected or recorded
    assert nothing_in_common({"a"}, set(), "B", "R", "") is None


def test_a_new_failing_compaction_is_a_scenario_level_regression() -> None:
    cur = copy.deepcopy(BASE)
    beta = cur["scenarios"][1]
    beta["compactions"].append(scenario("x", [verdict("verbatim_user_messages", "fail", 0.0)])["compactions"][0])
    beta["compactions"][-1]["index"] = 3
    beta["graders"]["verbatim_user_messages"].update(status="fail", score=0.6667, reasons=["compaction 3: lost"])
    cmp = diff_runs(BASE, cur)
    [r] = cmp.regressions
    assert (r.scenario, r.compaction, r.grader, r.after) == ("beta", None, "verbatim_user_messages", "fail 0.67")
    assert any(n.reason == "new compaction" and n.compaction == 3 for n in cmp.notes)


def test_a_change_among_many_removed_graders_is_still_found() -> None:
    """deepdiff must descend into a mapping that lost most of its keys (a -k selection)."""
    many = results(scenario("alpha", [verdict(f"g{i}") for i in range(12)]))
    few = results(scenario("alpha", [verdict("g0", "fail", 0.0)]))
    cmp = diff_runs(many, few)
    assert [(r.grader, r.compaction) for r in cmp.regressions] == [("g0", 1)]
    assert sum(1 for n in cmp.notes if n.reason == "grader no longer run") == 11
    lines = format_run_diff(cmp)
    assert len(lines) == 3 and lines[2].startswith("  note      11 × grader no longer run:  alpha g1, alpha g10")


def test_scenario_error_and_prompt_change_are_noted() -> None:
    cur = copy.deepcopy(BASE)
    cur["prompt"] = {"path": "my.j2", "fingerprint": "0" * 12}
    cur["scenarios"][2] = scenario("gone", error="gone.yaml:3: turns: bad")
    cur["scenarios"][2]["graders"] = {"verbatim_user_messages": {"kind": "rule", "status": "fail", "score": 0.0,
                                                                 "reasons": ["gone.yaml:3: turns: bad"]}}
    cmp = diff_runs(BASE, cur)
    # A scenario that stopped running is ONE regression, its error (an older results file that
    # lists the error under every grader too is not counted again per grader; review 2, F8).
    assert [(r.scenario, r.grader, r.reason) for r in cmp.regressions] == [("gone", None, "gone.yaml:3: turns: bad")]
    reasons = [n.reason for n in cmp.notes]
    assert any(r.startswith("prompt changed: name compact.j2") and "my.j2" in r for r in reasons)


def test_compare_accepts_a_baseline_on_either_side() -> None:
    cur = changed(alpha__1__verbatim_user_messages={"status": "fail", "score": 0.0})
    a = diff_runs(baseline_document(BASE), baseline_document(cur))
    assert [(r.grader, r.reason) for r in a.regressions] == [("verbatim_user_messages", "")]


def test_ab_table() -> None:
    b = changed(alpha__1__files_preserved={"status": "pass", "score": 1.0})
    table = ab_table(BASE, b, a_label="old.j2", b_label="new.j2")
    row = {r["grader"]: r for r in table["graders"]}["files_preserved"]
    assert row["a"] == {"graded": 1, "passed": 0, "pass_rate": 0.0, "mean_score": 0.8}
    assert row["b"] == {"graded": 1, "passed": 1, "pass_rate": 1.0, "mean_score": 1.0}
    assert row["flipped"] == [{"scenario": "alpha", "a": "fail 0.80", "b": "pass 1.00", "reason": "files_preserved says fail"}]
    lines = format_ab(table)
    assert lines[0] == "A = old.j2, B = new.j2"
    assert any(line.startswith("files_preserved") and "alpha fail 0.80 → pass 1.00" in line for line in lines)


def test_load_document_errors_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": \n nope}')
    with pytest.raises(UsageError, match=r"bad.json:2: invalid JSON"):
        load_document(bad)
    bad.write_text('{"format": "something-else"}')
    with pytest.raises(UsageError, match="not a ctxeval results or baseline file"):
        load_document(bad)
    with pytest.raises(UsageError, match=r"missing\.json: no such file"):
        load_document(tmp_path / "missing.json")
    bad.write_text(json.dumps({"format": BASELINE_FORMAT, "version": 99, "scenarios": {}}))
    with pytest.raises(UsageError, match="baseline version 99 is not supported"):
        load_document(bad)


def test_ctxeval_diff_exit_codes_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = write_baseline(tmp_path / "base.json", BASE)
    same, worse = tmp_path / "same.json", tmp_path / "worse.json"
    same.write_text(json.dumps(BASE))
    worse.write_text(json.dumps(changed(alpha__1__verbatim_user_messages={"status": "fail", "score": 0.5})))
    assert main(["diff", str(base), str(same)]) == 0
    assert "0 regressions" in capsys.readouterr().out
    assert main(["diff", str(base), str(worse), "--json", str(tmp_path / "cmp.json")]) == 1
    out = capsys.readouterr().out
    assert "REGRESSED alpha compaction 1  verbatim_user_messages  pass 1.00 → fail 0.50" in out
    assert json.loads((tmp_path / "cmp.json").read_text())["regressions"][0]["grader"] == "verbatim_user_messages"
    with pytest.raises(SystemExit) as exc:  # argparse: out of range
        main(["diff", str(base), str(worse), "--tolerance", "2"])
    assert exc.value.code == 2
    assert main(["diff", str(base), str(tmp_path / "nope.json")]) == 2
    err = capsys.readouterr().err
    assert "nope.json: no such file" in err and "--ctxeval-save-baseline" in err  # and how to make one


def test_ctxeval_report_writes_each_kind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    res = tmp_path / "results.json"
    res.write_text(json.dumps(changed(alpha__1__verbatim_user_messages={"status": "fail", "score": 0.5})))
    base = write_baseline(tmp_path / "base.json", BASE)
    outs = [tmp_path / "r.html", tmp_path / "r.md", tmp_path / "r.json"]
    assert main(["report", str(res), "--baseline", str(base)] + [a for o in outs for a in ("-o", str(o))]) == 0
    html = outs[0].read_text()
    assert "Against the baseline" in html and "summary 1 of alpha" in html
    assert "Regressions against" in outs[1].read_text()
    assert json.loads(outs[2].read_text())["comparison"]["regressions"][0]["scenario"] == "alpha"
    assert main(["report", str(base), "-o", str(tmp_path / "x.html")]) == 2
    assert "a baseline holds no events" in capsys.readouterr().err
    assert main(["report", str(res), "-o", str(tmp_path / "x.txt")]) == 2


@pytest.mark.parametrize("records", [
    # a session as Claude Code writes it (many lines: as JSON it fails at line 2, "Extra data")
    [{"type": "file-history-snapshot", "messageId": "m1", "snapshot": {}, "isSnapshotUpdate": False},
     {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "s", "message": {"role": "user", "content": "hi"}}],
    # a one-line file parses as JSON, but is a record, not a results document
    [{"type": "summary", "summary": "Fix the login", "leafUuid": "u9"}],
])
def test_a_session_transcript_given_as_results_says_what_it_is_and_which_verb_reads_it(
        tmp_path: Path, records: list[dict[str, object]]) -> None:
    session = tmp_path / "session.jsonl"
    session.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    with pytest.raises(UsageError) as err:
        load_document(session)
    assert str(err.value) == (f"{session}: a Claude Code session transcript (JSON Lines, one record per line), not a "
                              "ctxeval results or baseline file: grade it with ctxeval grade FILE (its --json, --md "
                              "and --html write the results and reports that ctxeval report and diff read)")


def test_broken_results_json_still_names_its_line(tmp_path: Path) -> None:
    broken = tmp_path / "results.json"
    broken.write_text('{"format": "pytest-ctxeval/results",\n "scenarios": {]}\n', encoding="utf-8")
    with pytest.raises(UsageError, match=r"results\.json:2: invalid JSON"):
        load_document(broken)
