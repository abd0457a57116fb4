"""The scenario loader: strict schema with file:line: field errors, safe YAML only, sandboxed and
bounded template expansion, repeats, gaps, known failures, and names that are safe as folders."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pytest_ctxeval.scenario import expansion as ex
from pytest_ctxeval.scenario import schema as sc
from pytest_ctxeval.errors import ScenarioError
from pytest_ctxeval.scenario.expansion import AssistantStep, CompactStep, GapStep, UserStep, expand
from pytest_ctxeval.scenario.schema import find_scenarios, load_scenario, parse_duration


def write(tmp_path: Path, text: str, name: str = "s.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def error_of(tmp_path: Path, text: str) -> str:
    path = write(tmp_path, text)
    with pytest.raises(ScenarioError) as info:
        expand(load_scenario(path))
    message = str(info.value)
    assert message.startswith(str(path)), message  # every error names the file first
    return message


# --- a valid scenario -----------------------------------------------------------------------------

def test_a_scenario_expands_to_steps_in_order(tmp_path: Path) -> None:
    path = write(tmp_path, """\
        name: demo
        turns:
          - user: "Fix {{ target }}"
          - assistant: "Reading."
            tools:
              - name: Read
                input: {file_path: "{{ target }}"}
                result: "line one"
          - after: 75m
          - repeat: 3
            var: k
            turns:
              - user: "step {{ k }} of 3 (index {{ k0 }})"
          - compact: {instructions: "keep {{ target }}"}
        vars: {target: src/app.py}
        """)
    steps = expand(load_scenario(path)).steps
    assert [type(s) for s in steps] == [UserStep, AssistantStep, GapStep, UserStep, UserStep, UserStep, CompactStep]
    assert steps[0].content == "Fix src/app.py"
    assert steps[1].tools[0].input == {"file_path": "src/app.py"} and steps[1].tools[0].result == "line one"
    assert steps[2].seconds == 75 * 60
    assert [s.content for s in steps[3:6]] == ["step 1 of 3 (index 0)", "step 2 of 3 (index 1)",
                                                "step 3 of 3 (index 2)"]
    assert steps[6].instructions == "keep src/app.py"
    assert steps[1].where == f"{path}:4"  # steps know their line, for errors raised while running


def test_templates_off_leaves_text_as_written(tmp_path: Path) -> None:
    path = write(tmp_path, """\
        templates: false
        turns:
          - user: "{{ 7 * 7 }} and {% raw %}"
        """)
    assert expand(load_scenario(path)).steps[0].content == "{{ 7 * 7 }} and {% raw %}"


@pytest.mark.parametrize(("value", "seconds"), [("30s", 30), ("75m", 4500), ("2h", 7200), ("1.5h", 5400),
                                                ("1d", 86400), (90, 90)])
def test_durations(value: object, seconds: float) -> None:
    assert parse_duration(value).total_seconds() == seconds


@pytest.mark.parametrize("value", ["-5m", "soon", "5 parsecs", True, "99999999999999d", 1e400])
def test_bad_durations_are_refused(value: object) -> None:
    with pytest.raises(ValueError, match="duration"):
        parse_duration(value)


def test_find_scenarios_lists_yaml_files_of_a_folder_in_order(tmp_path: Path) -> None:
    for name in ("b.yaml", "a.yml", "notes.txt"):
        (tmp_path / name).write_text("turns: [{user: hi}]\n")
    assert [p.name for p in find_scenarios([tmp_path])] == ["a.yml", "b.yaml"]


# --- errors name file, line and field ------------------------------------------------------------

def test_an_unknown_field_is_named_with_its_line(tmp_path: Path) -> None:
    message = error_of(tmp_path, """\
        turns:
          - user: hi
          - assistant: ok
            tools:
              - name: Read
                inputs: {file_path: x}
        """)
    assert ":6: turns[1].tools[0].inputs: unknown field" in message


def test_a_turn_with_two_kinds_says_which_keys_are_allowed(tmp_path: Path) -> None:
    message = error_of(tmp_path, """\
        turns:
          - user: hi
            compact: true
        """)
    assert ":2: turns[0]" in message and "exactly one of the keys user, assistant" in message


def test_a_missing_turns_list_is_named(tmp_path: Path) -> None:
    assert "turns: required field is missing" in error_of(tmp_path, "name: x\n")


def test_result_and_error_together_are_refused(tmp_path: Path) -> None:
    message = error_of(tmp_path, """\
        turns:
          - assistant: ok
            tools:
              - {name: Bash, input: {command: ls}, result: a, error: b}
        """)
    assert "turns[0].tools[0]" in message and "either 'result' or 'error'" in message


def test_partial_needs_messages(tmp_path: Path) -> None:
    message = error_of(tmp_path, """\
        turns:
          - user: hi
          - compact: {partial: up_to}
        """)
    assert ":3: turns[1].compact" in message and "'partial' and 'messages' go together" in message
    assert "more" not in message  # one clear error, not the union's every branch


@pytest.mark.parametrize("value", ["false", "yes please", "3"])
def test_compact_is_true_or_a_mapping(tmp_path: Path, value: str) -> None:
    message = error_of(tmp_path, f"turns:\n  - user: hi\n  - compact: {value}\n")
    assert ":3: turns[1].compact" in message and "compact: true" in message


@pytest.mark.parametrize("name", ["../up", "a/b", "/abs", "", "a b"])
def test_names_that_are_not_safe_file_names_are_refused(tmp_path: Path, name: str) -> None:
    message = error_of(tmp_path, f"name: {name!r}\nturns: [{{user: hi}}]\n")
    assert "name" in message


def test_a_known_failure_needs_a_reason(tmp_path: Path) -> None:
    message = error_of(tmp_path, """\
        turns: [{user: hi}]
        known_failures: {drift: "  "}
        """)
    assert "known_failures.drift: give the reason" in message


def test_an_unknown_fault_lists_the_known_ones(tmp_path: Path) -> None:
    message = error_of(tmp_path, """\
        turns: [{user: hi}]
        faults:
          compact: [overloaded, gremlins]
        """)
    assert ":3: faults.compact[1]: unknown fault 'gremlins'" in message and "overloaded" in message


def test_a_bad_config_override_names_the_config_field(tmp_path: Path) -> None:
    message = error_of(tmp_path, """\
        turns: [{user: hi}]
        config: {no_such_knob: 3}
        """)
    assert ":2:" in message and "no_such_knob" in message


# --- safe YAML ------------------------------------------------------------------------------------

def test_python_tags_are_refused_with_the_line(tmp_path: Path) -> None:
    message = error_of(tmp_path, """\
        turns:
          - user: !!python/object/apply:os.system ["echo pwned"]
        """)
    assert ":2: invalid YAML" in message and "tags such as !!python/object are refused" in message


def test_a_yaml_syntax_error_names_the_line(tmp_path: Path) -> None:
    message = error_of(tmp_path, "turns:\n  - user: hi\n  - user: [unclosed\n")
    assert ("invalid YAML" in message and ":4" in message) or ":3" in message


def test_non_utf8_and_nul_bytes_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bin.yaml"
    path.write_bytes(b"turns:\n  - user: caf\xe9\n")
    with pytest.raises(ScenarioError, match=r"bin\.yaml:2: not UTF-8"):
        load_scenario(path)
    path.write_bytes(b"turns:\n  - user: hi\n  - user: a\x00b\n")
    with pytest.raises(ScenarioError, match=r"bin\.yaml:3: NUL byte"):
        load_scenario(path)


def test_a_top_level_list_is_not_a_scenario(tmp_path: Path) -> None:
    assert ":1: a scenario is a YAML mapping" in error_of(tmp_path, "- user: hi\n")


def test_an_oversized_file_is_refused_before_parsing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sc, "MAX_FILE_BYTES", 100)
    assert "over the 100-byte limit" in error_of(tmp_path, "turns: [{user: " + "x" * 200 + "}]\n")


# --- sandboxed, bounded templates -----------------------------------------------------------------

@pytest.mark.parametrize("template", ["{{ ''.__class__.__mro__[1].__subclasses__() }}",
                                      "{{ cycler.__init__.__globals__.os }}",
                                      "{{ lipsum.__globals__ }}"])
def test_the_sandbox_refuses_attribute_escapes(tmp_path: Path, template: str) -> None:
    message = error_of(tmp_path, f"turns:\n  - user: {template!r}\n")
    assert ":2: turns[0].user:" in message
    assert "sandbox" in message or "template error" in message


def test_an_undefined_name_lists_the_helpers(tmp_path: Path) -> None:
    message = error_of(tmp_path, "turns:\n  - user: '{{ nope }}'\n")
    assert "'nope' is undefined" in message and "python_file" in message and "vars:" in message


def test_a_template_syntax_error_names_the_field(tmp_path: Path) -> None:
    message = error_of(tmp_path, "turns:\n  - user: hi\n  - assistant: '{% for %}'\n")
    assert ":3: turns[1].assistant: template syntax error" in message


def test_string_multiplication_past_the_field_limit_is_stopped(tmp_path: Path) -> None:
    message = error_of(tmp_path, "turns:\n  - user: \"{{ 'x' * 10**12 }}\"\n")
    assert ":2: turns[0].user:" in message and "over the" in message


def test_a_huge_power_is_stopped(tmp_path: Path) -> None:
    message = error_of(tmp_path, "turns:\n  - user: '{{ 9 ** 999999 }}'\n")
    assert "power over 256" in message


def test_a_loop_that_expands_past_the_field_limit_names_the_template(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ex, "MAX_FIELD_CHARS", 10_000)
    message = error_of(tmp_path, """\
        turns:
          - user: hi
          - assistant: "{% for n in range(100000) %}xxxxxxxxxx{% endfor %}"
        """)
    assert ":3: turns[1].assistant: the template expands to more than 10000 characters" in message


def test_repeats_past_the_total_limit_are_stopped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ex, "MAX_TOTAL_CHARS", 50_000)
    message = error_of(tmp_path, """\
        turns:
          - repeat: 1000
            turns:
              - user: "{{ 'y' * 100 }}"
        """)
    assert "the scenario expands to more than 50000 characters" in message and "turns[0].turns[0].user" in message


def test_nested_repeats_past_the_step_limit_are_stopped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ex, "MAX_STEPS", 500)
    message = error_of(tmp_path, """\
        turns:
          - repeat: 100
            turns:
              - repeat: 100
                turns:
                  - user: hi
        """)
    assert "more than 500 steps; lower its repeat counts" in message


def test_a_repeat_count_over_ten_thousand_is_a_schema_error(tmp_path: Path) -> None:
    message = error_of(tmp_path, "turns:\n  - repeat: 10001\n    turns: [{user: hi}]\n")
    assert ":2: turns[0].repeat" in message


# --- names --------------------------------------------------------------------------------------

@pytest.mark.parametrize(("stem", "safe"), [("ok_name", "ok_name"), ("with space", "with_space"),
                                            ("..", "scenario"), ("-dash", "s-dash")])
def test_display_name_from_the_file_stem_is_a_safe_folder_name(tmp_path: Path, stem: str, safe: str) -> None:
    path = write(tmp_path, "turns: [{user: hi}]\n", name=f"{stem}.yaml")
    assert load_scenario(path).display_name == safe


def test_gaps_that_add_up_past_ten_years_are_stopped(tmp_path: Path) -> None:
    message = error_of(tmp_path, "turns:\n  - user: hi\n  - repeat: 20\n    turns: [{after: 300d}]\n")
    assert "idle gaps add up to more than 3650 days" in message


def test_the_window_is_not_a_config_override(tmp_path: Path) -> None:
    message = error_of(tmp_path, "turns: [{user: hi}]\nconfig: {context_window: 5000}\n")
    assert ":2:" in message and "set 'context_window:' at the top level" in message


def test_a_cross_field_config_error_does_not_dump_the_whole_config(tmp_path: Path) -> None:
    message = error_of(tmp_path, "turns: [{user: hi}]\nconfig: {microcompact_profile: nope}\n")
    assert "microcompact_profile must be one of default, read_only; got 'nope'" in message
    assert "summary_output_reserve_tokens" not in message


def test_a_typo_in_a_turn_key_gets_a_suggestion(tmp_path: Path) -> None:
    assert "did you mean 'assistant' for 'asistant'?" in error_of(tmp_path, "turns:\n  - asistant: hi\n")


def test_a_typo_in_a_field_gets_a_suggestion(tmp_path: Path) -> None:
    message = error_of(tmp_path, "turns:\n  - user: hi\n  - assistant: x\n    tools: [{name: Read, inputs: {}}]\n")
    assert "inputs: unknown field (did you mean 'input'?" in message


def test_a_conversation_must_open_with_the_user(tmp_path: Path) -> None:
    message = error_of(tmp_path, "turns:\n  - after: 5m\n  - assistant: hello\n  - user: hi\n")
    assert ":3: the conversation opens with an assistant turn" in message


def test_an_empty_user_block_list_is_refused(tmp_path: Path) -> None:
    assert ":3: a user turn with an empty block list" in error_of(tmp_path, "turns:\n  - user: hi\n  - user: []\n")


def test_a_tool_id_used_twice_names_both_places(tmp_path: Path) -> None:
    message = error_of(tmp_path, """\
        turns:
          - user: hi
          - assistant: one
            tools: [{name: Bash, id: toolu_same, input: {command: ls}, result: a}]
          - assistant: two
            tools: [{name: Bash, id: toolu_same, input: {command: ls}, result: b}]
        """)
    assert ":5: tool id 'toolu_same' is already used at" in message and "s.yaml:3" in message
