"""Issue 23, crashes and wrong results: crafted files get a result or exit 2 with one line naming the
file, line or field, never a traceback; one bad file never loses the others' results."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_ctxeval.cli import main

INPUTS = Path(__file__).parent / "inputs"
TINY = "name: {name}\ncontext_window: 4000\nturns:\n  - user: \"{{{{ lorem(words=300) }}}}\"\n  - assistant: ok\n  - compact: {{}}\n"


@pytest.mark.parametrize("verb", ["grade", "import", "compare-real"])
@pytest.mark.parametrize("name, note", [
    ("inf_tool_input", "line 3: 1e999 is out of range"),
    ("deep_tool_input", "line 3: nested more than 100 levels deep (limits.MAX_NESTING)"),
    ("date_overflow", None), ("terminal_escapes", None)])
def test_crafted_transcripts_get_a_result(tmp_path: Path, capsys: pytest.CaptureFixture[str], verb: str,
                                          name: str, note: str | None) -> None:
    src = INPUTS / f"{name}.jsonl"
    argv = {"grade": ["grade", str(src), "--json", str(tmp_path / "r.json")],
            "import": ["import", str(src), "-o", str(tmp_path / "s.yaml")],
            "compare-real": ["compare-real", str(src), "--json", str(tmp_path / "r.json"),
                             "--html", str(tmp_path / "r.html")]}[verb]
    assert main(argv) in (0, 1)
    out = capsys.readouterr()
    assert "Traceback" not in out.err and "\x1b" not in out.out + out.err
    if note:
        assert note in out.out + out.err
    if verb == "import":
        text = (tmp_path / "s.yaml").read_text()
        assert ".inf" not in text and ".nan" not in text
        assert main(["run", str(tmp_path / "s.yaml"), "--json", str(tmp_path / "run.json")]) in (0, 1)
    else:
        text = (tmp_path / "r.json").read_text()
        assert "Infinity" not in text and "NaN" not in text
        json.loads(text)


def test_a_bad_file_in_a_folder_does_not_lose_the_others(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "scenarios"
    folder.mkdir()
    (folder / "good.yaml").write_text(TINY.format(name="good"))
    (folder / "recursive.yaml").write_text("turns: &t\n  - user: hi\n  - *t\n")
    (folder / "date.yaml").write_text("start: 9999-12-31T23:59:00Z\n" + TINY.format(name="date"))
    (folder / "dup.yaml").write_text(TINY.format(name="dup").replace("  - assistant: ok\n", "  - assistant: ok\n    assistant: no\n"))
    out = tmp_path / "r.json"
    assert main(["run", str(folder), "--json", str(out)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 3 and all(line.startswith("ctxeval: error: ") for line in err)
    assert any("recursive.yaml:1: an anchor is used inside itself" in line for line in err)
    assert any("dup.yaml:6: key 'assistant' appears twice" in line for line in err)
    doc = json.loads(out.read_text())
    by_name = {s["name"]: s for s in doc["scenarios"]}
    assert by_name["good"]["error"] is None and by_name["good"]["compactions"]
    assert {"recursive", "date", "dup"} <= set(by_name) and by_name["date"]["error"]


def test_lint_reports_duplicate_keys_recursive_anchors_and_dates(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "dup.yaml").write_text("turns:\n  - user: one\n    user: two\n  - assistant: ok\nexpect:\n  files: [a]\nexpect:\n  files: [b]\n")
    (tmp_path / "rec.yaml").write_text("vars:\n  x: &x [*x]\nturns:\n  - user: hi\n")
    (tmp_path / "date.yaml").write_text("start: 9999-12-31T23:59:00Z\nturns:\n  - user: hi\n")
    assert main(["lint", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "dup.yaml:7: (top level): key 'expect' appears twice in one mapping (first on line 5)" in out
    assert "rec.yaml:2:" in out and "recursive alias" in out
    assert "date.yaml:1: start:" in out and "outside 1970-01-01..9000-01-01" in out


def test_a_broken_scenario_does_not_interrupt_the_pytest_session(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", **{"scenarios/good": TINY.format(name="good"),
                                  "scenarios/recursive": "turns: &t\n  - user: hi\n  - *t\n"})
    result = pytester.runpytest("--ctxeval", "-p", "no:cacheprovider", "-k", "nine_sections or load",
                                "--ctxeval-report", "r.json")
    result.stdout.fnmatch_lines(["*recursive.yaml:1: an anchor is used inside itself*"])
    result.stdout.no_fnmatch_line("*Interrupted*")
    result.stdout.no_fnmatch_line("*Traceback*")
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed") == 1 and outcomes.get("passed", 0) + outcomes.get("xfailed", 0) >= 1
    names = [s["name"] for s in json.loads((pytester.path / "r.json").read_text())["scenarios"]]
    assert "good" in names


def test_terminal_escapes_are_neutralised_on_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["grade", str(INPUTS / "terminal_escapes.jsonl"), "-v"]) in (0, 1)
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    from pytest_ctxeval.core.terminal import safe_text

    assert safe_text("a\x1b[2Jb\rc\u202ed\x9b") == "a\\x1b[2Jb\\x0dc\\u202ed\\x9b"
    assert safe_text("tab\tand\nnewline") == "tab\tand\nnewline"


def test_compare_real_html_has_a_content_security_policy(tmp_path: Path) -> None:
    assert main(["compare-real", str(INPUTS / "terminal_escapes.jsonl"), "--html", str(tmp_path / "c.html")]) in (0, 1)
    html = (tmp_path / "c.html").read_text()
    assert "Content-Security-Policy" in html and "default-src 'none'" in html


def test_markdown_neutralises_bare_www_links() -> None:
    from pytest_ctxeval.reporting.report import md

    assert "www." not in md("see www.evil.example and WWW.other.example").lower()
    assert "www&#46;evil.example" in md("see www.evil.example")


def test_the_crafted_scenario_itself_is_lint_clean(tmp_path: Path) -> None:
    shutil.copy(INPUTS / "leaky_tokens.yaml", tmp_path / "leaky.yaml")
    assert main(["lint", str(tmp_path / "leaky.yaml")]) == 0


@pytest.mark.parametrize("verb", ["run", "compare", "lint"])
def test_a_number_json_cannot_carry_is_refused_with_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                             verb: str) -> None:
    scenario = tmp_path / "inf.yaml"
    scenario.write_text("turns:\n  - user: hi\n  - assistant: ok\n    tools:\n      - name: Bash\n"
                        "        input: {command: ls, timeout: .inf}\n        result: done\n")
    argv = [verb, str(scenario)] + (["--compactors", "claude_code,codex"] if verb == "compare" else [])
    assert main(argv) in ((1,) if verb == "lint" else (2,))
    out = capsys.readouterr()
    assert "inf.yaml:6:" in out.out + out.err and ".inf is not a finite number" in out.out + out.err
    assert "Traceback" not in out.err
