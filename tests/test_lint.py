"""``ctxeval lint``: each class of problem is caught, with file, line and field; every problem is
printed, not only the first; exit codes 0 (clean), 1 (problems), 2 (usage)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pytest_ctxeval.cli import main
from pytest_ctxeval.errors import UsageError
from pytest_ctxeval.scenario.lint import lint_file, lint_paths

REPO = Path(__file__).resolve().parents[1]

CLEAN = textwrap.dedent("""\
    name: clean
    context_window: 20000
    turns:
      - user: "Rename the helper in src/util.py to parse_date."
      - assistant: "Reading it."
        tools:
          - name: Read
            input: {file_path: src/util.py}
            result: "{{ python_file(lines=40, seed=1) }}"
      - assistant: "Renaming."
        tools:
          - name: Edit
            input: {file_path: src/util.py, old_string: "def pd(", new_string: "def parse_date("}
            result: "The file src/util.py has been updated."
    expect:
      files: [src/util.py]
      probes:
        - {kind: artifact, question: "What was renamed?", answer: "pd became parse_date in src/util.py."}
    """)


def write(tmp_path: Path, text: str, name: str = "s.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def problems(tmp_path: Path, text: str) -> list[str]:
    return [str(p) for p in lint_file(write(tmp_path, text))]


def test_a_clean_scenario_has_no_problem(tmp_path: Path) -> None:
    assert problems(tmp_path, CLEAN) == []


def test_the_builtin_library_is_clean() -> None:
    assert [str(p) for p in lint_paths([REPO / "scenarios"])] == []


def test_every_schema_error_is_reported_with_line_and_field(tmp_path: Path) -> None:
    found = problems(tmp_path, """\
        turns:
          - user: hi
            meta: maybe
          - assistant: x
            tools:
              - name: Read
                resutl: 1
        expect:
          filez: []
        """)
    path = tmp_path / "s.yaml"
    assert f"{path}:3: turns[0].meta: Input should be a valid boolean, unable to interpret input" in found
    assert any(p.startswith(f"{path}:7: turns[1].tools[0].resutl: unknown field") for p in found)
    assert any(p.startswith(f"{path}:9: expect.filez: unknown field") for p in found)
    assert len(found) == 3


def test_invalid_yaml_names_the_line(tmp_path: Path) -> None:
    (problem,) = problems(tmp_path, "turns:\n  - user: [unclosed\n")
    assert problem.startswith(f"{tmp_path / 's.yaml'}:3: (top level): invalid YAML")


def test_unknown_faults_config_and_known_failures(tmp_path: Path) -> None:
    found = problems(tmp_path, CLEAN + "faults: {compact: [gremlins]}\n")
    assert any("faults.compact[0]: unknown fault 'gremlins'" in p for p in found)
    found = problems(tmp_path, CLEAN + "known_failures: {nine_sectionz: because}\n")
    assert any("known_failures.nine_sectionz: no grader named 'nine_sectionz'" in p for p in found)


def test_templates_that_fail_are_each_reported_once(tmp_path: Path) -> None:
    found = problems(tmp_path, """\
        turns:
          - user: "Fix {{ nope }} please"
          - repeat: 3
            turns:
              - assistant: "x"
                tools:
                  - {name: Bash, input: {command: ls}, result: "{{ undefined_helper() }}"}
          - user: "{{ broken( }}"
        """)
    path = tmp_path / "s.yaml"
    assert any(p.startswith(f"{path}:2: turns[0].user: template error: 'nope' is undefined") for p in found)
    helper = [p for p in found if "'undefined_helper' is undefined" in p]
    assert len(helper) == 1 and helper[0].startswith(f"{path}:7: turns[1].turns[0].tools[0].result:")
    assert any(p.startswith(f"{path}:8: turns[2].user: template syntax error") for p in found)


def test_a_go_template_written_without_raw_is_a_template_problem(tmp_path: Path) -> None:
    """Verbatim means verbatim: braces of a pasted template must be escaped with {% raw %}."""
    found = problems(tmp_path, 'turns:\n  - user: "render it with {{ .Text }} please"\n')
    assert len(found) == 1 and "turns[0].user: template syntax error" in found[0]
    assert problems(tmp_path, 'turns:\n  - user: "{% raw %}render it with {{ .Text }} please{% endraw %}"\n') == []


def test_tool_calls_without_an_outcome_or_with_missing_inputs(tmp_path: Path) -> None:
    found = problems(tmp_path, """\
        turns:
          - user: go
          - assistant: "Reading."
            tools:
              - name: Read
                input: {path: src/a.py}
              - name: Edit
                input: {file_path: src/a.py, old_string: a}
                result: "The file src/a.py has been updated."
              - name: TodoWrite
                input: {todos: [{content: "Do it", status: doing}, {status: pending}]}
                result: ok
        """)
    path = tmp_path / "s.yaml"
    assert f'{path}:5: turns[1].tools[0]: Read call has neither result: nor error: (write result: "" for an empty output)' in found
    assert f"{path}:6: turns[1].tools[0].input: Read needs file_path in its input" in found
    assert f"{path}:8: turns[1].tools[1].input: Edit needs new_string in its input" in found
    assert any("turns[1].tools[2].input.todos[0].status: status 'doing' is not one of pending, in_progress, completed" in p
               for p in found)
    assert any("turns[1].tools[2].input.todos[1]: a todo needs a non-empty content:" in p for p in found)


def test_a_result_naming_another_file_than_the_call(tmp_path: Path) -> None:
    found = problems(tmp_path, """\
        turns:
          - user: go
          - assistant: "Editing."
            tools:
              - name: Edit
                input: {file_path: src/b.py, old_string: a, new_string: b}
                result: "The file src/c.py has been updated."
              - name: Write
                input: {file_path: src/new.py, content: x}
                result: "File created successfully at: src/old.py"
        """)
    assert found == [f"{tmp_path / 's.yaml'}:7: turns[1].tools[0].result: the result names src/c.py but the Edit is of src/b.py",
                     f"{tmp_path / 's.yaml'}:10: turns[1].tools[1].result: the result names src/old.py but the Write is of src/new.py"]


def test_a_read_over_the_windows_read_limit(tmp_path: Path) -> None:
    found = problems(tmp_path, """\
        context_window: 20000
        turns:
          - user: go
          - assistant: "Reading."
            tools:
              - name: Read
                input: {file_path: src/big.py}
                result: "{{ python_file(lines=900, seed=1) }}"
        """)
    assert len(found) == 1
    assert "turns[1].tools[0].result: the Read result of src/big.py is over this window's Read limit (2,500 tokens)" in found[0]
    assert "read it in pages (offset/limit)" in found[0]


def test_duplicate_tool_ids_and_tool_blocks_in_user_turns(tmp_path: Path) -> None:
    found = problems(tmp_path, """\
        turns:
          - user:
              - {type: text, text: "here"}
              - {type: tool_result, tool_use_id: toolu_x, content: "hi"}
          - repeat: 2
            turns:
              - assistant: "x"
                tools:
                  - {name: Bash, id: fixed, input: {command: ls}, result: ""}
          - assistant: "y"
            tools:
              - {name: Bash, id: fixed, input: {command: pwd}, result: "/"}
        """)
    assert any("turns[0].user[1]: a tool_result block in a user turn answers no tool call" in p for p in found)
    assert any("turns[1].turns[0].tools[0].id: tool id 'fixed' is repeated by its repeat: block" in p for p in found)
    assert any("turns[2].tools[0].id: tool id 'fixed' is used twice (first at turns[1].turns[0].tools[0])" in p
               for p in found)


def test_in_flight_without_a_following_compaction(tmp_path: Path) -> None:
    found = problems(tmp_path, """\
        turns:
          - user: go
          - assistant: "Running."
            in_flight: true
            tools:
              - {name: Bash, input: {command: make test}, result: ok}
          - user: "and?"
        """)
    assert found == [f"{tmp_path / 's.yaml'}:3: (top level): in_flight: an assistant turn with calls in flight must be "
                     "followed by a 'compact:' step (its results arrive after the compaction); got user"]


def test_expectations_the_script_never_reaches(tmp_path: Path) -> None:
    text = CLEAN.replace("  files: [src/util.py]\n", (
        "  files: [src/util.py, src/never.py]\n"
        "  errors: [\"Boom\", \"parse_date\"]\n"
        "  pending: [\"Write the docs\"]\n"
        "  superseded: [\"use regexes\"]\n"
        "  constraints: [\"never touch vendor/\"]\n"
        "  failed_approaches: [\"sed -i\"]\n"))
    found = problems(tmp_path, text)
    path = tmp_path / "s.yaml"
    expected = [
        ("expect.files[1]", "'src/never.py' is never in the script", "files_preserved"),
        ("expect.errors[0]", "'Boom' is never in the script", "errors_preserved"),
        ("expect.pending[0]", "'Write the docs' is never in the script", "pending_tasks"),
        ("expect.superseded[0]", "'use regexes' is never in the script", "no_superseded_work"),
        ("expect.constraints[0]", "'never touch vendor/' is never in the script", "constraints_preserved"),
        ("expect.failed_approaches[0]", "'sed -i' is never in the script", "failed_approaches_preserved"),
    ]
    for field, message, grader in expected:
        assert any(f": {field}: {message}" in p and f"so {grader} never checks it" in p for p in found), (field, found)
    assert all(p.startswith(f"{path}:") for p in found)
    assert len(found) == 6, found  # "parse_date" is in the script: errors_preserved checks it


@pytest.mark.parametrize("answer", ["TODO", "?", "...", "  tbd ", "<answer>", "What was renamed?"])
def test_probes_without_a_real_answer(tmp_path: Path, answer: str) -> None:
    text = CLEAN.replace('answer: "pd became parse_date in src/util.py."', f'answer: "{answer}"')
    (problem,) = problems(tmp_path, text)
    assert ": expect.probes[0].answer: the probe 'What was renamed?' has no real answer" in problem


def test_cli_prints_every_problem_and_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, CLEAN, "a_clean.yaml")
    write(tmp_path, "turns:\n  - user: \"{{ nope }}\"\n  - assistant: x\n    tools:\n      - {name: Read, input: {}}\n",
          "b_bad.yaml")
    assert main(["lint", str(tmp_path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "3 problems in 1 of 2 scenario files"
    assert all(line.startswith(str(tmp_path / "b_bad.yaml") + ":") for line in out[:-1])


def test_cli_clean_exits_0_and_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, CLEAN)
    assert main(["lint", str(tmp_path / "s.yaml")]) == 0
    assert capsys.readouterr().out.strip() == "1 scenario file: no problems"
    assert main(["lint", str(tmp_path / "missing.yaml")]) == 2
    assert "no such file or directory" in capsys.readouterr().err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["lint", str(empty)]) == 2
    with pytest.raises(UsageError, match="no scenario files"):
        lint_paths([empty])


def test_an_undefined_name_one_slip_from_a_var_or_helper_says_which(tmp_path: Path) -> None:
    found = problems(tmp_path, """\
        vars:
          modules: [catalog, pricing]
        turns:
          - user: "Read src/{{ modulez[0] }}/cache.py"
          - assistant: "Reading."
            tools:
              - name: Grep
                input: {pattern: TTL}
                result: "{{ grep_hit(n=3) }}"
          - user: "and {{ nothing_like_it }}"
        """)
    assert [p.split(" (helpers:")[0] for p in found] == [
        f"{tmp_path / 's.yaml'}:4: turns[0].user: template error: 'modulez' is undefined; did you mean 'modules'?",
        f"{tmp_path / 's.yaml'}:9: turns[1].tools[0].result: template error: 'grep_hit' is undefined; did you mean "
        "'grep_hits'?",
        f"{tmp_path / 's.yaml'}:10: turns[2].user: template error: 'nothing_like_it' is undefined"]
