"""End to end: a scenario through the engine with the offline reference model, graded by every
built-in rule grader; then the same scenario with a bad prompt. The graders must tell them apart.

Session memory is off so both compactions are full ones (tests/engine covers session-memory
compaction). The window is 8000 tokens, not 4000: at 4000 the built-in compaction prompt (about 1,300
estimated tokens) does not fit between the auto-compact threshold (3,340) and the window, so every
automatic compaction fails as prompt-too-long and only a small manual one can succeed. At 8000 the
run gets one automatic compaction mid-session and a manual one at the end (which re-summarises the
first summary, so cross-compaction carry-over is graded too).
"""

from __future__ import annotations

import textwrap

import pytest

from pytest_ctxeval.engine.prompt import PromptSet
from pytest_ctxeval.grading.registry import cases_from_run
from pytest_ctxeval.runner import run_scenario

SCENARIO = textwrap.dedent("""\
    name: grader_e2e
    context_window: 8000
    config: {session_memory_enabled: false}   # full compactions only: this file tests their graders
    turns:
      - user: "Refactor src/auth/session.py to use JWT for session tokens"
      - assistant: "Planning the work."
        tools:
          - name: TodoWrite
            input:
              todos:
                - {content: "Read the session module", status: completed}
                - {content: "Add token revocation table", status: pending}
            result: "Todos have been modified successfully"
      - user: "Actually drop that idea: switch to opaque tokens stored server-side"
      - assistant: "Switching to opaque tokens."
        tools:
          - name: Edit
            input: {file_path: src/auth/session.py, old_string: "jwt.encode(user)", new_string: "store.issue(user)"}
            result: "The file src/auth/session.py has been updated."
      - assistant: "Running the session tests."
        tools:
          - name: Bash
            input: {command: "pytest tests/test_session.py"}
            error: "{{ stack_trace(exc=\\"KeyError: 'user_id'\\", depth=2) }}"
      - assistant: "Rerunning the tests unchanged did not help: the KeyError comes from the session loader."
      - repeat: 25
        turns:
          - assistant: "Reading part {{ i }}."
            tools:
              - name: Read
                input: {file_path: "src/auth/part{{ i }}.py"}
                result: "{{ python_file(lines=20, seed=i) }}"
      - user: "Now fix the KeyError in the session loader and rerun the tests"
      - repeat: 25
        turns:
          - assistant: "Checking log {{ i }}."
            tools:
              - name: Bash
                input: {command: "tail logs/{{ i }}.log"}
                result: "{{ log(lines=8, seed=i) }}"
      - assistant: "Fixing the loader."
        tools:
          - name: Write
            input: {file_path: src/auth/loader.py, content: "def load(claims): return claims.get('sub')"}
            result: "File created successfully at: src/auth/loader.py"
      - user: "Good, now add the revocation table migration"
      - assistant: "Writing the migration next."
    facts:
      - {id: tokens, type: goal_state, planted: user, tokens: [JWT], update: {tokens: [opaque tokens], replaces: [JWT]}}
      - {id: key-error, type: fact, planted: tool, tokens: ["KeyError: 'user_id'"]}
      - {id: loader, type: fact, planted: assistant, tokens: [session loader]}
    expect:
      files: [src/auth/session.py]
      errors: ["KeyError: 'user_id'"]
      pending: ["Add token revocation table"]
      superseded: ["use JWT"]
      constraints: ["opaque tokens stored server-side"]
      failed_approaches: ["Rerunning the tests unchanged"]
    """)

BAD_PROMPT = ("Summarise the conversation so far in at most three short lines of plain prose.\n"
              "Do not use numbered sections, headings or lists. Reply with <summary>...</summary> only.\n")

ALL = {"tool_pairing", "nine_sections", "analysis_stripped", "continuation", "verbatim_user_messages",
       "next_step_quote", "files_preserved", "errors_preserved", "pending_tasks", "no_superseded_work",
       "last_request_intact", "constraints_preserved", "failed_approaches_preserved", "fits_window",
       "facts_survive", "stale_values", "compresses"}
#: Checks another compactor's summary format: n/a on the engine's own compactions (tests/compaction).
OTHER_FORMATS = {"format_sections"}


@pytest.fixture
def scenario_path(tmp_path):
    path = tmp_path / "grader_e2e.yaml"
    path.write_text(SCENARIO, encoding="utf-8")
    return path


def _graded(registry, path, tmp_path, prompts=None, label="good"):
    run = run_scenario(path, compact_at_end=True, prompts=prompts, session_dir=tmp_path / label)
    failed = [e for e in run.events if e.action == "failed"]
    assert not failed, [e.detail for e in failed]
    cases = cases_from_run(run)
    assert [c.trigger for c in cases] == ["auto", "manual"], run.events
    rules = registry.select(kinds=["rule"])  # the LLM graders have their own tests (tests/graders/test_judge.py)
    return run, [(case, {v.grader: v for v in registry.run(case, rules)}) for case in cases]


def test_reference_summaries_pass_every_grader(registry, scenario_path, tmp_path):
    run, graded = _graded(registry, scenario_path, tmp_path)
    assert {s.name for s in registry.select(kinds=["rule"])} == ALL | OTHER_FORMATS
    passed_somewhere = set()
    for case, verdicts in graded:
        bad = {n: (v.status, v.reasons) for n, v in verdicts.items() if v.status not in ("pass", "n/a")}
        assert not bad, f"{case.label}: {bad}\n--- summary ---\n{case.summary_message}"
        passed_somewhere |= {n for n, v in verdicts.items() if v.status == "pass"}
    # Every grader actually checked something in this run (none was only ever n/a).
    assert passed_somewhere == ALL
    first, second = graded[0][1], graded[1][1]
    assert "continuation instruction" in first["continuation"].reasons[0]          # auto
    assert "all 3 person-typed messages" in first["verbatim_user_messages"].reasons[0]
    assert "all 4 person-typed messages" in second["verbatim_user_messages"].reasons[0]  # carried over
    assert "Good, now add the revocation table migration" in second["next_step_quote"].reasons[0]
    assert "KeyError: 'user_id'" in graded[0][0].sections.get("errors").body


def test_a_three_line_prompt_fails_the_structure_and_verbatim_graders(registry, scenario_path, tmp_path):
    template = tmp_path / "three_lines.j2"
    template.write_text(BAD_PROMPT, encoding="utf-8")
    run, graded = _graded(registry, scenario_path, tmp_path, prompts=PromptSet(template), label="bad")
    for case, verdicts in graded:
        assert case.sections.kinds == [], case.summary   # really a prose summary
        nine = verdicts["nine_sections"]
        assert nine.status == "fail" and nine.score == 0.0
        assert nine.reasons[0].startswith("missing sections: 1. Primary Request and Intent")
        assert "6. All user messages" in nine.reasons[0]
        verbatim = verdicts["verbatim_user_messages"]
        assert verbatim.status == "fail" and verbatim.score < 1
        assert verbatim.reasons[0].startswith("section 6 'All user messages' is missing")
        assert "person-typed messages cannot survive" in verbatim.reasons[0]
        for name in ("next_step_quote", "constraints_preserved", "failed_approaches_preserved"):
            assert verdicts[name].status in ("fail", "n/a"), (name, verdicts[name].reasons)
        # The content graders read the whole prose summary for their facts (reading.summary_form): a
        # fact it holds is kept, one it lacks is "not named anywhere in the summary", never "cannot survive".
        for name in ("files_preserved", "errors_preserved", "pending_tasks"):
            assert all("cannot survive" not in r for r in verdicts[name].reasons), (name, verdicts[name].reasons)
            assert "it is not in the nine sections (0 of them found)" in verdicts[name].reasons[0], verdicts[name].reasons
        # Structure of the post-compact context does not depend on the prompt's wording.
        for name in ("tool_pairing", "analysis_stripped", "continuation"):
            assert verdicts[name].status == "pass", (name, verdicts[name].reasons)
    first, second = graded[0][1], graded[1][1]
    # the prose names src/auth/session.py only inside its quote of the first request: what was asked,
    # not that the file was changed (review 4, G19)
    assert first["files_preserved"].status == "fail", first["files_preserved"].reasons
    assert "it is named only in the person's own words" in first["files_preserved"].reasons[0]
    assert second["files_preserved"].status == "fail"   # ... but not src/auth/loader.py
    assert "src/auth/loader.py was changed but is not named anywhere in the summary" in \
        " ".join(second["files_preserved"].reasons)
    assert first["errors_preserved"].status == "fail"
    assert first["pending_tasks"].status == "fail"
    assert "constraint lost: \"opaque tokens stored server-side\" (set by the user in message 2)" in \
        first["constraints_preserved"].reasons[0]
    assert first["failed_approaches_preserved"].status == "fail"
    # A prose summary still quotes the latest request: that invariant holds.
    assert all(v["last_request_intact"].status == "pass" for _, v in graded)
