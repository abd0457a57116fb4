"""Issue 23, malformed results, baselines and cassettes: exit 2 with one line naming the file and
the field or line, never a traceback; JSON never carries NaN/Infinity."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_ctxeval.cli import main
from pytest_ctxeval.core.documents import BadDocument, dumps_finite, loads_strict

RESULTS = {"format": "pytest-ctxeval/results", "version": 1, "backend": "offline", "model": "m", "judge": None,
           "prompt": {"path": "compact.j2", "fingerprint": "abc"}, "usage": {},
           "scenarios": [{"name": "s", "source": "s.yaml", "kind": "scenario", "context_window": 1000, "error": None,
                          "events": [], "graders": {"nine_sections": {"kind": "rule", "status": "pass", "score": 1.0,
                                                                      "reasons": []}},
                          "compactions": [{"index": 1, "kind": "full", "trigger": "auto", "turn": 3, "line": 4,
                                           "pre_tokens": 900, "post_tokens": 100, "summary": "text",
                                           "verdicts": [{"grader": "nine_sections", "kind": "rule", "status": "pass",
                                                         "score": 1.0, "reasons": []}],
                                           "lost": {"files": [], "identifiers_total": 0}}],
                          "messages": {}}]}


def _baseline(tmp_path: Path) -> dict:
    assert main(["diff", str(_write(tmp_path / "r.json", RESULTS)), str(tmp_path / "r.json")]) == 0
    from pytest_ctxeval.reporting.baseline import baseline_document

    return baseline_document(RESULTS)


def _write(path: Path, doc: object) -> Path:
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


def _mutate(doc: dict, path: tuple, value: object) -> dict:
    doc = json.loads(json.dumps(doc))
    cur = doc
    for key in path[:-1]:
        cur = cur[key]
    if value is KeyError:
        del cur[path[-1]]
    else:
        cur[path[-1]] = value
    return doc


BAD_RESULTS = [
    ("version-2", ("version",), 2, "results version 2 is not supported"),
    ("no-name", ("scenarios", 0, "name"), KeyError, "scenarios[0].name: expected the scenario's name"),
    ("nan-score", ("scenarios", 0, "graders", "nine_sections", "score"), "NaN", ":1: NaN is not a JSON number"),
    ("score-1.7", ("scenarios", 0, "graders", "nine_sections", "score"), 1.7, "1.7 is not a score"),
    ("status-Pass", ("scenarios", 0, "compactions", 0, "verdicts", 0, "status"), "Pass", "'Pass' is not a status"),
    ("index-str", ("scenarios", 0, "compactions", 0, "index"), "1", "compactions[0].index"),
    ("lost-not-list", ("scenarios", 0, "compactions", 0, "lost", "files"), 3, "lost.files: expected a list"),
    ("scenarios-dict", ("scenarios",), {}, "scenarios: expected a list"),
    ("events-str", ("scenarios", 0, "events"), "x", "events: expected a list"),
    ("huge-tokens", ("scenarios", 0, "compactions", 0, "pre_tokens"), 1.5, "pre_tokens"),
    ("usage-str", ("usage", "usd"), "0.1", "usage.usd: expected a number"),
    ("unpriced-str", ("usage", "unpriced"), "claude-x", "usage.unpriced: expected a list of model names"),
    ("unpriced-num", ("usage", "unpriced"), [3], "usage.unpriced: expected a list of model names"),
]


@pytest.mark.parametrize("unpriced", [[], ["claude-unpriced-test"]])
def test_the_usage_a_run_writes_is_read_back(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             unpriced: list[str]) -> None:
    """usage.unpriced (the models the price table does not know) is a list, not a number."""
    doc = _mutate(RESULTS, ("usage",), {"api_calls": 2, "input_tokens": 10, "usd": 0.0, "unpriced": unpriced,
                                        "by_model": {"m": {"api_calls": 2, "input_tokens": 10, "usd": 0.0}}})
    src = _write(tmp_path / "r.json", doc)
    assert main(["diff", str(src), str(src)]) == 0
    assert main(["report", str(src), "-o", str(tmp_path / "out.md")]) == 0
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize("case, path, value, message", BAD_RESULTS, ids=[c[0] for c in BAD_RESULTS])
def test_report_and_diff_refuse_a_malformed_results_file(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        case: str, path: tuple, value: object, message: str) -> None:
    doc = _mutate(RESULTS, path, value)
    text = json.dumps(doc).replace('"NaN"', "NaN")
    src = _write(tmp_path / "r.json", text)
    assert main(["report", str(src), "-o", str(tmp_path / "out.html")]) == 2
    err = capsys.readouterr().err
    assert message in err and str(src) in err and "Traceback" not in err and err.count("\n") == 1
    assert not (tmp_path / "out.html").exists()
    assert main(["diff", str(src), str(src)]) == 2


@pytest.mark.parametrize("text, message", [
    ('{"format": "pytest-ctxeval/results", "version": 1, "scenarios": [], "x": Infinity}', "r.json:1: Infinity"),
    ('{"format": "pytest-ctxeval/results",\n "version": 1, "scenarios": [], "x": 1e999}', "r.json:2: 1e999"),
    ("[" * 5000 + "]" * 5000, "nested"),
    ('{"format": "pytest-ctxeval/results", "version": 1, "scenarios": [' + "[" * 200 + "]" * 200 + "]}", "nested"),
    ("not json", "invalid JSON"),
    ("\xff", ""),
], ids=["infinity", "1e999-line", "deep-5000", "deep-200", "garbage", "not-utf8"])
def test_values_json_cannot_carry_are_refused_on_reading(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         text: str, message: str) -> None:
    src = tmp_path / "r.json"
    src.write_bytes(text.encode("latin-1") if text == "\xff" else text.encode())
    assert main(["report", str(src), "-o", str(tmp_path / "o.md")]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


BAD_BASELINES = [
    ("no-scenarios", ("scenarios",), KeyError, "scenarios: missing or not an object"),
    ("nan-score", ("scenarios", "s", "graders", "nine_sections", "score"), "NaN", "NaN is not a JSON number"),
    ("score-negative", ("scenarios", "s", "compactions", 0, "graders", "nine_sections", "score"), -0.5,
     "compactions[0].graders.nine_sections.score: -0.5 is not a score"),
    ("status-Pass", ("scenarios", "s", "graders", "nine_sections", "status"), "Pass", "'Pass' is not a status"),
    ("compactions-str", ("scenarios", "s", "compactions"), "x", "compactions: expected a list"),
]


@pytest.mark.parametrize("case, path, value, message", BAD_BASELINES, ids=[c[0] for c in BAD_BASELINES])
def test_diff_and_the_plugin_refuse_a_corrupt_baseline_before_the_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], pytester: pytest.Pytester,
        case: str, path: tuple, value: object, message: str) -> None:
    base = _mutate(_baseline(tmp_path), path, value)
    src = _write(tmp_path / "base.json", json.dumps(base).replace('"NaN"', "NaN"))
    capsys.readouterr()
    assert main(["diff", str(src), str(tmp_path / "r.json")]) == 2
    assert message in capsys.readouterr().err
    pytester.makefile(".yaml", **{"scenarios/tiny": "turns:\n  - user: hi\n  - assistant: hello\n  - compact: {}\n"})
    result = pytester.runpytest("--ctxeval", f"--ctxeval-baseline={src}", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{message.replace('[', '[[]')}*"])
    result.stdout.no_fnmatch_line("*Traceback*")


def test_dumps_finite_never_writes_nan_or_infinity() -> None:
    text = dumps_finite({"a": float("nan"), "b": [float("inf"), 1.5, {"c": float("-inf")}]})
    assert json.loads(text) == {"a": None, "b": [None, 1.5, {"c": None}]}
    assert "NaN" not in text and "Infinity" not in text
    with pytest.raises(BadDocument, match="NaN"):
        loads_strict('{"a": NaN}')


def test_results_with_a_nan_score_are_written_as_null(tmp_path: Path) -> None:
    from pytest_ctxeval.results import write_results

    out = write_results(tmp_path / "r.json", {"score": float("nan"), "x": [float("inf")]})
    assert json.loads(out.read_text()) == {"score": None, "x": [None]}


@pytest.mark.parametrize("content, message", [
    ('{"task": "compact", "response": {"status": 200, "json": null}}', "response.json: NoneType"),
    ('{"task": "compact", "response": {"status": 200}}', "response.json"),
    ('{"task": "compact"}', "response: missing"),
    ('{"task": "compact", "response": {"status": "200", "json": {}}}', "response.status"),
    ("{not json", "invalid JSON"),
    ('{"response": {"json": {"x": NaN}}}', "NaN"),
], ids=["json-null", "no-json", "no-response", "status-str", "garbage", "nan"])
def test_a_broken_cassette_is_named_never_a_connection_error(tmp_path: Path, content: str, message: str) -> None:
    import httpx2

    from pytest_ctxeval.errors import ModelError
    from pytest_ctxeval.llm import make_llm
    from pytest_ctxeval.llm.cassettes import CassetteStore, request_key

    def api(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        return httpx2.Response(200, json={"id": "msg_1", "type": "message", "role": "assistant", "model": body["model"],
                                          "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
                                          "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}})

    import os
    os.environ.setdefault("ANTHROPIC_API_KEY", "sk-ant-api03-" + "k" * 40)
    llm = make_llm("record", "claude-test", cassettes=tmp_path, network=httpx2.MockTransport(api))
    llm.complete(task="chat", messages=[{"role": "user", "content": "hi"}], max_tokens=5)
    (path,) = list(tmp_path.glob("*/*.json"))
    path.write_text(content)
    replay = make_llm("replay", "claude-test", cassettes=tmp_path)
    with pytest.raises(ModelError) as err:
        replay.complete(task="chat", messages=[{"role": "user", "content": "hi"}], max_tokens=5)
    text = str(err.value)
    assert "broken cassette" in text and message in text and path.name in text
    assert "Connection error" not in text
    assert CassetteStore
    assert request_key
