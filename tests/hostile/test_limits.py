"""Issue 23, bounds: every named limit holds at its boundary (the limit passes, one more is refused
with a message naming it), and hostile inputs stay under a memory ceiling measured in a subprocess
with ``resource`` (RLIMIT_AS), never by a timer."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import jinja2
import pytest

from pytest_ctxeval.core import limits
from pytest_ctxeval.errors import ScenarioError
from pytest_ctxeval.scenario.fillers import FILLERS
from pytest_ctxeval.scenario.sandbox import BoundedSandbox
from pytest_ctxeval.core.yaml_safe import BadYAML, load_yaml

INPUTS = Path(__file__).parent / "inputs"


def _nested_yaml(levels: int) -> str:
    return "[" * (levels - 1) + "1" + "]" * (levels - 1)


def test_nesting_limit_at_its_boundary() -> None:
    load_yaml(_nested_yaml(limits.MAX_NESTING))
    with pytest.raises(BadYAML, match=r"limits\.MAX_NESTING"):
        load_yaml(_nested_yaml(limits.MAX_NESTING + 1))


def _aliases(n: int) -> str:
    return "base: &b {x: 1}\nuses:\n" + "".join("  - *b\n" for _ in range(n))


def test_alias_limit_at_its_boundary() -> None:
    load_yaml(_aliases(limits.MAX_YAML_ALIASES))
    with pytest.raises(BadYAML, match=r"limits\.MAX_YAML_ALIASES"):
        load_yaml(_aliases(limits.MAX_YAML_ALIASES + 1))


def _bomb(width: int, depth: int) -> str:
    lines = ["l0: &l0 [" + ", ".join(["x"] * width) + "]"]
    for d in range(1, depth):
        lines.append(f"l{d}: &l{d} [" + ", ".join([f"*l{d - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


def test_expanded_size_limit_at_its_boundary(monkeypatch: pytest.MonkeyPatch) -> None:
    # root mapping, two key scalars, l0 (1 + 10), l1 expanded (1 + 10 x 11)
    monkeypatch.setattr("pytest_ctxeval.core.yaml_safe.MAX_YAML_NODES", 1 + 2 + 11 + 111)
    load_yaml(_bomb(10, 2))
    monkeypatch.setattr("pytest_ctxeval.core.yaml_safe.MAX_YAML_NODES", 1 + 2 + 11 + 111 - 1)
    with pytest.raises(BadYAML, match="MAX_YAML_NODES"):
        load_yaml(_bomb(10, 2))


def test_duplicate_keys_name_both_lines() -> None:
    with pytest.raises(BadYAML) as err:
        load_yaml("turns:\n  - user: one\n    user: two\n")
    assert err.value.line == 3 and "first on line 2" in str(err.value)
    load_yaml("a: &a {x: 1}\nb:\n  <<: *a\n  x: 2\n")  # a merge key then an override is not a duplicate


RUN = textwrap.dedent("""
    import resource, sys
    limit = int(sys.argv[1]) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    from pytest_ctxeval.cli import main
    rc = main(sys.argv[2:])
    print("peak_mb", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
    sys.exit(rc)
""")


def _bounded(args: list[str], ceiling_mb: int = 1024) -> subprocess.CompletedProcess[str]:
    """A ctxeval command in a child process that may not map more than ``ceiling_mb``."""
    return subprocess.run([sys.executable, "-c", RUN, str(ceiling_mb), *args], capture_output=True, text=True,
                          timeout=600, check=False)


def test_an_alias_bomb_is_refused_under_a_memory_ceiling(tmp_path: Path) -> None:
    scenario = tmp_path / "bomb.yaml"
    scenario.write_text("vars:\n  " + _bomb(10, 9).replace("\n", "\n  ") + "\nturns:\n  - user: hi\n")
    for verb in ("lint", "run"):
        done = _bounded([verb, str(scenario)])
        assert done.returncode in (1, 2), done.stderr
        assert "MAX_YAML_NODES" in done.stdout + done.stderr and "Traceback" not in done.stderr
        assert "MemoryError" not in done.stderr


HUGE_TEMPLATES = {
    "lorem": "{{ lorem(words=1000000000) }}", "log": "{{ log(lines=1000000000) }}",
    "sql_file": "{{ sql_file(lines=1000000000) }}", "python_file": "{{ python_file(lines=1000000000) }}",
    "grep_hits": "{{ grep_hits(n=1000000000) }}", "center": "{{ 'x'|center(1000000000) }}",
    "indent": "{{ 'a'|indent(1000000000) }}", "percent": "{{ '%1000000000s' % 'a' }}",
    "json_response": "{{ json_response(items=1000000000) }}", "api_response": "{{ api_response(items=1000000000) }}",
    "stack_trace": "{{ stack_trace(depth=1000000000) }}",
    "silent_loops": "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
    "doubling": "{% set x = 'ab' * 8000000 %}{% for i in range(30) %}{% set x = x ~ x %}{% endfor %}{{ x }}",
}


def test_huge_template_arguments_fail_fast_under_a_memory_ceiling(tmp_path: Path) -> None:
    """Each file would take minutes or gigabytes unbounded; lint (which renders every template)
    refuses all of them, naming the field and the limit, inside 768 MB of address space."""
    for name, template in HUGE_TEMPLATES.items():
        (tmp_path / f"{name}.yaml").write_text(f"turns:\n  - user: \"{template}\"\n  - assistant: ok\n")
    done = _bounded(["lint", str(tmp_path)], ceiling_mb=768)
    assert done.returncode == 1, done.stderr
    assert "MemoryError" not in done.stdout + done.stderr and "Traceback" not in done.stderr
    for name in HUGE_TEMPLATES:
        line = next((ln for ln in done.stdout.splitlines() if f"{name}.yaml:2: turns[0].user:" in ln), "")
        assert "limits." in line, (name, done.stdout)


@pytest.mark.parametrize("helper, name", [(h, n) for h, args in limits.FILLER_RANGES.items() for n in args])
def test_each_filler_range_at_its_boundary(helper: str, name: str) -> None:
    low, high = limits.FILLER_RANGES[helper][name]
    kwargs = {"error": "boom"} if helper == "log" and name == "error_at" else {}
    if high <= 1000 or name in ("status",):
        FILLERS[helper](**{name: high}, **kwargs)
    with pytest.raises(ValueError, match=f"{helper}: {name} must be an integer from {low} to {high}"):
        FILLERS[helper](**{name: high + 1}, **kwargs)
    with pytest.raises(ValueError):
        FILLERS[helper](**{name: low - 1}, **kwargs)


def test_filler_text_arguments_are_bounded() -> None:
    FILLERS["log"](lines=2, service="s" * limits.MAX_FILLER_NAME)
    with pytest.raises(ValueError, match="MAX_FILLER_NAME"):
        FILLERS["log"](lines=2, service="s" * (limits.MAX_FILLER_NAME + 1))
    with pytest.raises(ValueError, match="MAX_FILLER_TEXT"):
        FILLERS["stack_trace"](exc="e" * (limits.MAX_FILLER_TEXT + 1))


def _render(source: str) -> str:
    env = BoundedSandbox(undefined=jinja2.StrictUndefined)
    return env.from_string(source).render()


def test_pad_width_at_its_boundary() -> None:
    w = limits.MAX_PAD_WIDTH
    for template in ("{{ 'x'|center(%d) }}", "{{ 'x'.ljust(%d) }}", "{{ '%%%ds' %% 'x' }}", "{{ '{:>%d}'.format('x') }}"):
        assert len(_render(template % w)) == w
        with pytest.raises(ScenarioError, match="MAX_PAD_WIDTH"):
            _render(template % (w + 1))


def test_loop_steps_at_their_boundary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("pytest_ctxeval.scenario.sandbox.MAX_LOOP_STEPS", 100)
    assert _render("{% for i in range(10) %}{% for j in range(9) %}{% endfor %}{% endfor %}") == ""  # 100 steps
    with pytest.raises(ScenarioError, match="MAX_LOOP_STEPS"):
        _render("{% for i in range(10) %}{% for j in range(10) %}{% endfor %}{% endfor %}")  # 110 steps


def test_field_size_is_checked_before_joining(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("pytest_ctxeval.scenario.sandbox.MAX_FIELD_CHARS", 10)
    assert _render("{{ 'abcde' ~ 'fghij' }}") == "abcdefghij"
    for template in ("{{ 'abcde' ~ 'fghijk' }}", "{{ 'abcde' + 'fghijk' }}", "{{ ['abcdef', 'ghijk']|join }}",
                     "{{ 'aaaaaa'.replace('a', 'bb') }}"):
        with pytest.raises(ScenarioError, match="MAX_FIELD_CHARS"):
            _render(template)


def test_judge_votes_at_their_boundary(capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_ctxeval.cli import build_parser

    parser = build_parser()
    assert parser.parse_args(["run", "--judge-votes", str(limits.MAX_JUDGE_VOTES)]).ctxeval_judge_votes == 25
    with pytest.raises(SystemExit) as exit_:
        parser.parse_args(["run", "--judge-votes", str(limits.MAX_JUDGE_VOTES + 1)])
    assert exit_.value.code == 2 and "limits.MAX_JUDGE_VOTES" in capsys.readouterr().err


@pytest.mark.parametrize("when, ok", [("1970-01-01T00:00:00Z", True), ("9000-01-01T00:00:00Z", True),
                                      ("1969-12-31T23:59:59Z", False), ("9000-01-01T00:00:01Z", False),
                                      ("9999-12-31T23:59:59-23:59", False)])
def test_dates_at_their_boundary_in_load_and_lint(tmp_path: Path, when: str, ok: bool) -> None:
    from pytest_ctxeval.scenario.lint import lint_file
    from pytest_ctxeval.scenario.schema import load_scenario

    scenario = tmp_path / "d.yaml"
    scenario.write_text(f"start: {when}\nturns:\n  - user: hi\n  - assistant: ok\n    at: {when}\n")
    problems = [str(p) for p in lint_file(scenario)]
    if ok:
        load_scenario(scenario)
        assert problems == []
    else:
        with pytest.raises(ScenarioError, match=r"limits\.EARLIEST_TIME, limits\.LATEST_TIME"):
            load_scenario(scenario)
        assert any("d.yaml:1: start:" in p and "outside" in p for p in problems)


def test_a_summary_fifo_without_a_writer_does_not_block(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    import os

    from pytest_ctxeval.cli import main

    monkeypatch.setattr(limits, "PIPE_WAIT_SECONDS", 0.2)
    fifo = tmp_path / "summary"
    os.mkfifo(fifo)
    assert main(["grade", str(INPUTS / "terminal_escapes.jsonl"), "--summary", str(fifo)]) == 2
    assert "limits.PIPE_WAIT_SECONDS" in capsys.readouterr().err


def test_a_summary_over_its_limit_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_ctxeval.cli import main

    monkeypatch.setattr(limits, "MAX_SUMMARY_BYTES", 100)
    summary = tmp_path / "s.txt"
    summary.write_text("x" * 100)
    assert main(["grade", str(INPUTS / "terminal_escapes.jsonl"), "--summary", str(summary)]) in (0, 1)
    summary.write_text("x" * 101)
    assert main(["grade", str(INPUTS / "terminal_escapes.jsonl"), "--summary", str(summary)]) == 2
    assert "limits.MAX_SUMMARY_BYTES" in capsys.readouterr().err


def test_transcript_line_limit_at_its_boundary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # limits.MAX_LINE_BYTES: a line of exactly the limit (newline included) is read; one byte more
    # is reported with its line number and skipped, and the records after it are still read.
    import json as _json

    from pytest_ctxeval.core import limits
    from pytest_ctxeval.transcript import read_transcript

    from session_kit import Session

    s = Session()
    s.user("first question")
    s.assistant(text="first answer")
    path = s.write(tmp_path / "s.jsonl")
    lines = path.read_bytes().splitlines(keepends=True)
    cap = max(len(line) for line in lines)
    monkeypatch.setattr(limits, "MAX_LINE_BYTES", cap)
    assert not read_transcript(path).problems
    # One more byte on the first record (spaces inside the JSON object keep it valid JSON).
    record = _json.loads(lines[0])
    base = _json.dumps(record)
    long_line = (base[:-1] + " " * (cap - len(base)) + "}\n").encode()
    assert len(long_line) == cap + 1
    path.write_bytes(long_line + b"".join(lines[1:]))
    t = read_transcript(path)
    assert t.problems[0].line == 1 and "limits.MAX_LINE_BYTES" in t.problems[0].message
    # The next record (whose parent was the skipped one) is still read, and reported as placed.
    assert any("first answer" in str(m.content) for m in t.messages)
