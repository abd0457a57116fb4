"""ctxeval import: every corpus file imports, replays API-valid and grades; the fasthooks golden
file; inert content; redaction; timestamps; sidechains; the CLI; streaming and broken chains."""

from __future__ import annotations

import hashlib
import json
import shutil
import tracemalloc
from datetime import datetime, timedelta, UTC
from pathlib import Path

import pytest
import yaml

from pytest_ctxeval.cli import main
from pytest_ctxeval.errors import TranscriptError, UsageError
from pytest_ctxeval.evaluation import evaluate_run
from pytest_ctxeval.results import results_document
from pytest_ctxeval.grading import load_graders
from pytest_ctxeval.grading.registry import cases_from_run
from pytest_ctxeval.scenario.importer import NO_RESULT, import_transcript, scenario_yaml, write_scenario
from pytest_ctxeval.core.messages import (
    AssistantMessage, RequestValidator, ToolResultBlock, UserMessage, person_text, result_text, tool_results, tool_uses,
    validate_api,
)
from pytest_ctxeval.runner import run_scenario
from pytest_ctxeval.scenario.expansion import AssistantStep, UserStep, expand
from pytest_ctxeval.scenario.schema import load_scenario
from pytest_ctxeval.transcript import read_transcript

from library_wide import LIBRARY_TESTS
from session_kit import FAKE_KEY, INJECTION, SCRIPT, Session, injection_session
from shared_paths import CORPUS, needs_shared

FILES = sorted(CORPUS.glob("*.jsonl"))
FASTHOOKS = CORPUS / "oneryalcin__fasthooks__sample_main_transcript.jsonl"
SPOTTER = CORPUS / "marot__spotter__8463c716-a2ea-4c14-9efa-87158ebd9f20__prefix-715.jsonl"
LEGACY = CORPUS / "d-kimuson__claude-code-viewer__fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
IMAGES = CORPUS / "moredip__session-share__images-in-user-messages.jsonl"
AGENT = CORPUS / "marot__spotter__agent-a2898e3.jsonl"
ACOMPACT = CORPUS / "marot__spotter__agent-acompact-f46190.jsonl"
SUBAGENT = CORPUS / "marot__spotter__subagent.jsonl"
WITH_COMPACTION = [p for p in FILES if b'"compact_boundary"' in p.read_bytes()]
#: The corpus files that are sessions (a compaction call is refused: test_a_subagent_file_imports_...).
SESSIONS = [p for p in FILES if p != ACOMPACT]
#: The corpus files the unit suite imports, replays and grades one by one (every file in the
#: library-wide step, tests/library_wide.py): one or two of each Claude Code generation and shape
#: (a published sample, 2.0 with legacy summaries, a legacy inline-sidechain session, images, a
#: subagent's and an agent's file, 2.1.45, 2.1.49 with rejected tools, 2.1.149, 2.1.177-183 resumed,
#: 2.1.179 with subagents); the rest repeat their shapes at several times the cost.
SAMPLED = {FASTHOOKS.name, SPOTTER.name, LEGACY.name, IMAGES.name, "M-Thisness__M-Claude__97b0ffde-ece9-4977-91cb-5c8cdeabdf3f.jsonl",
           "marot__spotter__agent-a2898e3.jsonl", "marot__spotter__subagent.jsonl",
           "TensorTemplar__slopometry__2.0.65-auto-legacy-summaries-0f112eb4.jsonl",
           "PackmindHub__context-evaluator__2.1.45-auto-8ecab05f.jsonl", "FSM1__cipher-box__2.1.49-manual-rejects-12f1f541.jsonl",
           "melagiri__code-insights__2.1.149-auto-queue-ac8d5915.jsonl",
           "roo-oliv__monodreams__2.1.177-183-manual-resumed-d9b49d30.jsonl",
           "port-experimental__port-cli__2.1.179-auto-subagents-14ddf933.jsonl"}
IMPORTED = SESSIONS if LIBRARY_TESTS else [p for p in SESSIONS if p.name in SAMPLED]
INSTALLED = WITH_COMPACTION if LIBRARY_TESTS else [p for p in WITH_COMPACTION if p.name in SAMPLED]
RULES = load_graders()
RULE_SPECS = RULES.select(kinds=["rule"])


def _imported(path: Path, tmp_path: Path, **kw):
    result = import_transcript(path, **kw)
    out, _ = write_scenario(result, tmp_path / f"{path.stem[:40]}.yaml")
    return result, load_scenario(out)


def _all_requests_valid(run) -> list[str]:
    check = RequestValidator()  # validate_api on each request, re-checking what changed (test_messages.py)
    bad = [f"request {i}: {p[0]}" for i, r in enumerate(run.requests) if (p := check(r["messages"]))]
    bad += [f"compaction {c.index}: {p[0]}" for c in run.compactions
            if c.result.request and (p := validate_api(c.result.request["messages"]))]
    return bad


# --- every corpus file: import, replay, grade -------------------------------------------------

@needs_shared
def test_the_sampled_corpus_files_exist():
    assert SAMPLED <= {p.name for p in SESSIONS}, sorted(SAMPLED - {p.name for p in SESSIONS})


@pytest.mark.parametrize("path", IMPORTED, ids=[p.name[:40] for p in IMPORTED])
def test_corpus_file_imports_replays_api_valid_and_grades(path, tmp_path):
    result, scenario = _imported(path, tmp_path)
    assert scenario.templates is False
    assert scenario.provenance.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert scenario.provenance.session_id == result.transcript.session_id
    has_cut = any(getattr(t, "compact", None) for t in scenario.turns)
    run = run_scenario(scenario, compact_at_end=not has_cut)
    assert _all_requests_valid(run) == []
    assert run.compactions, "the cut (or --compact-at-end) compacts"
    outcome = evaluate_run(run, RULES, RULE_SPECS)
    assert outcome.error is None
    crashed = [v for vs in outcome.verdicts for v in vs if v.status in ("ungraded", "error")]
    assert crashed == [], [v.reasons for v in crashed]
    assert outcome.verdicts[0][[s.name for s in RULE_SPECS].index("tool_pairing")].status == "pass"


@pytest.mark.parametrize("path", INSTALLED, ids=[p.name[:40] for p in INSTALLED])
def test_all_keeps_the_line_and_installs_claude_codes_summary(path, tmp_path):
    result, scenario = _imported(path, tmp_path, mode="all")
    transcript = read_transcript(path)
    recorded = [t.recorded_compaction for t in scenario.turns if hasattr(t, "recorded_compaction")]
    assert [r.summary for r in recorded] == [c.summary_text for c in transcript.compactions]
    assert [(r.trigger, r.pre_tokens) for r in recorded] == [(c.boundary.trigger, c.boundary.pre_tokens)
                                                           for c in transcript.compactions]
    run = run_scenario(scenario)
    assert _all_requests_valid(run) == []
    installed = [c for c in run.compactions if c.result.kind == "transcript"]
    assert [c.result.summary for c in installed] == [r.summary for r in recorded]
    assert all(c.result.request is None for c in installed)  # no model call
    # the compaction cases the graders get (grading them is the test above and `ctxeval grade`'s)
    case = next(c for c in cases_from_run(run) if c.kind == "transcript")
    assert case.pre_tokens == transcript.compactions[0].boundary.pre_tokens
    assert any(e.tier == "recorded" for e in run.events)


@pytest.mark.parametrize("path", [FASTHOOKS, SPOTTER, IMAGES, LEGACY], ids=lambda p: p.name[:30])
def test_content_round_trips_through_yaml_exactly(path, tmp_path):
    """Every tool result, user text and assistant text in the file comes back byte for byte."""
    result, scenario = _imported(path, tmp_path)
    transcript = result.transcript
    cut = next((i for i, m in enumerate(transcript.messages) if m.kind == "compact_boundary"), None)
    messages = transcript.messages[:cut]
    want = {b.tool_use_id: (b.content if isinstance(b.content, str) and not b.is_error else result_text(b))
            for m in messages for b in tool_results(m)}
    steps = expand(scenario).steps
    got = {t.id: (t.result if isinstance(t.result, str) else result_text(ToolResultBlock(tool_use_id="x", content=t.result)))
           for s in steps if isinstance(s, AssistantStep) for t in s.tools if t.id in want}
    assert got == {k: v for k, v in want.items() if k in got}
    assert len(got) == len(want)
    people = [person_text(m) for m in messages if person_text(m) is not None]
    typed = [person_text(UserMessage(uuid="x", content=s.content)) for s in steps if isinstance(s, UserStep) and not s.meta]
    assert [t for t in typed if t is not None] == people


# --- the golden file ----------------------------------------------------------------------------

def test_fasthooks_golden(tmp_path):
    result, scenario = _imported(FASTHOOKS, tmp_path)
    users = [t.user for t in scenario.turns if hasattr(t, "user") and not t.meta]
    assert users == ["can you run a command ls -la ",
                     "ok can you create a hello_world.py file and add a minimal code in it? ",
                     "can you read it back with Read tool? ",
                     "can you run `cat nonexistent.txt`",
                     "do something requiring multiple tools in one turn, "]
    comps = result.transcript.compactions
    assert [(c.boundary_line, c.summary_line, c.boundary.trigger, c.boundary.pre_tokens) for c in comps] == [
        (59, 60, "manual", 21_558)]
    last = scenario.turns[-1]
    assert last.compact.at == comps[0].boundary.timestamp and last.compact.instructions is None
    assert scenario.provenance.version == "2.0.76"
    assert scenario.provenance.session_id == "c45af7b1-cb7c-4e51-93db-8cbb250a877a"
    assert scenario.expect.intent == "do something requiring multiple tools in one turn, "
    assert scenario.expect.files == ["/workspace/hello_world.py", "/workspace/number_generator.py", "/workspace/data.txt"]
    # `cat` of a missing file (the person asked for it: its failure is the answer) is a probe; `python`
    # not installed, worked around with `python3`, is an error the summary must keep (review 5, #4:
    # reading/workarounds.py)
    assert scenario.expect.errors == ["python: command not found"]
    assert scenario.start == datetime(2026, 1, 2, 19, 18, 31, 28_000, tzinfo=UTC)
    # parallel calls (one response over records sharing message.id) stay one turn
    widest = max(scenario.turns, key=lambda t: len(getattr(t, "tools", [])))
    assert [c.name for c in widest.tools] == ["Read", "Bash", "Bash"]
    assert [[c.name for c in t.tools] for t in scenario.turns if len(getattr(t, "tools", [])) > 1] == [
        ["Write", "Write"], ["Read", "Bash", "Bash"]]
    assert result.counts["thinking_kept"] == 12
    # the meta caveat and /compact echo after the boundary are not turns; --all keeps the summary
    all_result = import_transcript(FASTHOOKS, mode="all")
    recorded = [t for t in all_result.document["turns"] if "recorded_compaction" in t]
    line60 = json.loads(FASTHOOKS.read_text(encoding="utf-8").splitlines()[59])
    assert recorded[0]["recorded_compaction"]["summary"] == line60["message"]["content"]
    assert not any("Caveat" in str(t.get("user", "")) or "<command-name>" in str(t.get("user", ""))
                   for t in all_result.document["turns"])


def test_spotter_parallel_results_and_thinking(tmp_path):
    result, scenario = _imported(SPOTTER, tmp_path)
    messages = result.transcript.messages
    widest = max(len(tool_uses(m)) for m in messages if isinstance(m, AssistantMessage))
    assert max(len(t.tools) for t in scenario.turns if hasattr(t, "tools")) == widest > 1
    assert result.counts["unanswered"] == 0
    dropped = import_transcript(SPOTTER, thinking=False)
    assert dropped.counts["thinking_dropped"] == result.counts["thinking_kept"] > 0
    assert not any("thinking" in t for t in dropped.document["turns"])


def test_images_are_block_lists_and_pending_calls_get_a_placeholder(tmp_path):
    result, scenario = _imported(IMAGES, tmp_path)
    blocks = [t.user for t in scenario.turns if hasattr(t, "user") and isinstance(t.user, list)]
    assert any(b.type == "image" and b.source["type"] == "base64" for lst in blocks for b in lst)
    pending = [c for t in scenario.turns if hasattr(t, "tools") for c in t.tools if c.result == NO_RESULT]
    assert len(pending) == result.counts["unanswered"] == 2  # the session ends on two Bash calls in flight


# --- inert content and redaction ----------------------------------------------------------------

def test_template_injection_fake_key_and_script_stay_inert(tmp_path, capsys):
    src = injection_session(tmp_path / "session.jsonl")
    out = tmp_path / "scenarios" / "inj.yaml"
    assert main(["import", str(src), "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "redactions: 2 (anthropic 1, bearer 1)" in printed
    text = out.read_text(encoding="utf-8")
    assert FAKE_KEY not in text and "[REDACTED:anthropic]" in text and "Bearer [REDACTED:bearer]" in text
    assert INJECTION in text and "{{ config }}" in text and SCRIPT in text
    scenario = load_scenario(out)
    run = run_scenario(scenario)
    sent = json.dumps(run.requests + [c.result.request for c in run.compactions], ensure_ascii=False)
    assert INJECTION in sent and "49" not in sent.replace(INJECTION, "") and SCRIPT in sent
    assert FAKE_KEY not in sent
    assert "now fix it {{ config }}" in run.compactions[0].result.summary  # the summary quotes it verbatim
    doc = results_document([evaluate_run(run, RULES, RULE_SPECS)], usage={}, backend="offline", model=None)
    dumped = json.dumps(doc, ensure_ascii=False)
    assert INJECTION in dumped and FAKE_KEY not in dumped
    assert json.loads(dumped)["scenarios"][0]["compactions"][0]["summary"] == run.compactions[0].result.summary
    # --no-redact keeps the key (the user's choice), still inert
    kept = import_transcript(src, redact=False)
    assert FAKE_KEY in scenario_yaml(kept) and kept.redactions == {}


def test_imported_content_is_never_rendered_even_in_sidechains_and_summaries(tmp_path):
    result, scenario = _imported(injection_session(tmp_path / "s.jsonl"), tmp_path, mode="all")
    recorded = next(t for t in scenario.turns if hasattr(t, "recorded_compaction")).recorded_compaction
    assert INJECTION in recorded.summary and "[REDACTED:anthropic]" in recorded.summary
    steps = expand(scenario).steps
    assert any(getattr(s, "summary", "").count(INJECTION) for s in steps)


# --- timestamps, meta, echoes, progress -----------------------------------------------------------

def test_timestamps_make_idle_gaps_real(tmp_path):
    s = Session()
    s.user("read the files")
    for i in range(8):
        s.assistant(text=f"reading {i}", tools=[(f"toolu_r{i}", "Read", {"file_path": f"src/m{i}.py"})])
        s.result(f"toolu_r{i}", f"def f{i}():\n    return {i}\n" * 50)
    s.user("back after lunch: what was in m0?", advance=95 * 60)
    s.assistant(text="Let me look.")
    result, scenario = _imported(s.write(tmp_path / "gap.jsonl"), tmp_path)
    run = run_scenario(scenario, compact_at_end=True)
    assert any(e.tier == "microcompact" and e.action == "time_based_clear" for e in run.events)
    stamps = [m.timestamp for m in run.history if isinstance(m, UserMessage) and isinstance(m.content, str)]
    assert stamps[1] - stamps[0] > timedelta(minutes=95)
    # without the timestamps the same session has no idle gap
    for t in scenario.turns:
        if hasattr(t, "at"):
            t.at = None
    assert not any(e.action == "time_based_clear" for e in run_scenario(scenario, compact_at_end=True).events)


def test_meta_echoes_progress_snapshots_and_queue_operations_are_not_turns(tmp_path):
    s = Session()
    s.user("<command-name>/model</command-name>\n<command-args></command-args>")
    s.user("Caveat: local commands follow.", isMeta=True)
    s.user("<local-command-stdout>Set model to opus</local-command-stdout>")
    s.user("fix the bug")
    s.noise()
    s.assistant(text="On it.", tools=[("toolu_1", "Bash", {"command": "pytest"})])
    s.noise()
    s.result("toolu_1", "1 passed")
    s.user([{"type": "text", "text": "<system-reminder>hook says hi</system-reminder>"}], isMeta=True)
    s.assistant(text="All green.")
    result, scenario = _imported(s.write(tmp_path / "meta.jsonl"), tmp_path)
    kinds = [next(k for k in ("user", "assistant", "compact") if hasattr(t, k)) for t in scenario.turns]
    assert kinds == ["user", "assistant", "assistant", "compact"]  # no compaction in the file: one at the end
    assert scenario.turns[0].user == "fix the bug"
    assert result.counts["meta"] == 2 and result.counts["command_echoes"] == 2


def test_a_session_opened_by_a_slash_command_starts_with_the_command_then_its_meta_expansion(tmp_path):
    result, scenario = _imported(LEGACY, tmp_path)
    first, second = scenario.turns[:2]
    # The command's arguments are what the person typed: a user turn, not meta.
    assert first.meta is False and "<command-name>/orchestrator</command-name>" in first.user
    assert person_text(UserMessage(uuid="x", content=first.user)) == "create TODO app by Next.js"
    assert second.meta is True and "Split complex tasks into independent subtasks" in second.user
    assert result.counts["opening_meta"] == 0


# --- sidechains and subagents -----------------------------------------------------------------

def test_legacy_inline_sidechains_are_kept_by_task_call_and_not_replayed(tmp_path):
    result, scenario = _imported(LEGACY, tmp_path)
    task_ids = {c.id for t in scenario.turns if hasattr(t, "tools") for c in t.tools if c.name == "Task"}
    assert set(scenario.sidechains) == task_ids and len(task_ids) == 5
    steps = expand(scenario).steps
    assert len(steps) == len(scenario.turns)  # sidechains are not expanded
    prompts = {c.id: c.input["prompt"] for t in scenario.turns if hasattr(t, "tools") for c in t.tools if c.name == "Task"}
    for key, turns in scenario.sidechains.items():
        assert turns[0].user == prompts[key]
    assert not import_transcript(LEGACY, subagents=False).document.get("sidechains")


def test_agent_progress_records_become_a_sidechain(tmp_path):
    _, scenario = _imported(SUBAGENT, tmp_path)
    assert list(scenario.sidechains) == ["afb92ff"]
    assert scenario.sidechains["afb92ff"][0].user[0].text.startswith("Draft bead content")


def test_2_1_layout_subagent_files_next_to_the_session(tmp_path):
    session = tmp_path / "project" / "8463c716.jsonl"
    session.parent.mkdir()
    shutil.copy(FASTHOOKS, session)
    sub = session.with_suffix("") / "subagents"
    sub.mkdir(parents=True)
    shutil.copy(AGENT, sub / "agent-a2898e3.jsonl")
    shutil.copy(ACOMPACT, sub / "agent-acompact-f46190.jsonl")
    result, scenario = _imported(session, tmp_path)
    assert list(scenario.sidechains) == ["a2898e3"]
    assert any("compaction call" in n for n in result.notes)


def test_a_subagent_file_imports_with_a_note_and_a_compaction_call_is_refused(tmp_path, capsys):
    """A subagent's own transcript is a conversation (imported, with a note). A compaction call
    (``agent-acompact-*``) is not: its one request is Claude Code's summarisation prompt, which every
    grader of the replay would hold as the person's intent (offline drift failed it at 1/5, "lost:
    1; 2; current; message"). It is refused, saying what it is and what to do instead."""
    agent, _ = _imported(AGENT, tmp_path)
    assert any("subagent's own transcript (agent a2898e3)" in n for n in agent.notes)
    with pytest.raises(TranscriptError, match=r"compaction call .*not a session.*compare-real") as refused:
        import_transcript(ACOMPACT)
    assert refused.value.not_a_session
    # in the 2.1 layout the message names the session file next to the subagents folder
    session = tmp_path / "project" / "8463c716.jsonl"
    session.parent.mkdir()
    shutil.copy(FASTHOOKS, session)
    sub = session.with_suffix("") / "subagents"
    sub.mkdir(parents=True)
    shutil.copy(ACOMPACT, sub / "agent-acompact-f46190.jsonl")
    assert main(["import", str(sub / "agent-acompact-f46190.jsonl"), "-o", str(tmp_path / "call.yaml")]) == 2
    err = capsys.readouterr().err
    assert "compaction call" in err and "Import the session it belongs to (8463c716.jsonl" in err, err
    assert not (tmp_path / "call.yaml").exists()


# --- robustness ---------------------------------------------------------------------------------

def test_malformed_line_is_reported_or_fatal_with_strict(tmp_path, capsys):
    s = Session()
    s.user("hello")
    s.assistant(text="hi")
    path = s.write(tmp_path / "bad.jsonl", extra_lines=[b'{"type": "user", "uuid": "x", "mess\n'])
    assert main(["import", str(path), "-o", str(tmp_path / "a.yaml")]) == 0
    assert "problem: line 3: not valid JSON" in capsys.readouterr().out
    assert main(["import", str(path), "-o", str(tmp_path / "b.yaml"), "--strict"]) == 2
    err = capsys.readouterr().err
    assert f"{path}:3: not valid JSON" in err and "strict" in err
    assert not (tmp_path / "b.yaml").exists()
    assert main(["grade", str(path), "--strict"]) == 2


def test_broken_chain_is_placed_after_the_newest_message_not_replaced_by_a_longer_one(tmp_path):
    s = Session()
    for i in range(6):
        s.user(f"question {i}")
        s.assistant(text=f"answer {i}")
    s.parent = "ghost-uuid"          # a newer branch hanging off a record that is not in the file
    s.user("orphan question")
    s.assistant(text="orphan answer")
    t = read_transcript(s.write(tmp_path / "broken.jsonl"))
    # The newest record is the conversation's end; its missing parent is replaced by the newest
    # message before it in the file, so nothing before it is lost either.
    assert [m.content for m in t.messages if isinstance(m, UserMessage)][-2:] == ["question 5", "orphan question"]
    assert len(t.messages) == 14
    lines = [str(p) for p in t.problems]
    assert any("ghost-uuid is not in the file; the record is placed after line 12" in p for p in lines)


def test_reading_keeps_no_progress_records_in_memory(tmp_path):
    """A file that is mostly progress output: the reader's peak stays far below the file size."""
    s = Session()
    s.user("start")
    s.assistant(text="ok")
    big = "y" * 200_000
    lines = [(json.dumps({"type": "progress", "uuid": f"p{i}", "parentUuid": s.parent,
                          "data": {"type": "bash_progress", "fullOutput": big}}) + "\n").encode() for i in range(60)]
    path = s.write(tmp_path / "noisy.jsonl", extra_lines=lines)
    assert path.stat().st_size > 12_000_000
    tracemalloc.start()
    t = read_transcript(path)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(t.messages) == 2
    assert peak < 2_000_000, peak    # one line at a time (~0.4 MB decoded), never the file


def test_cli_import_errors_and_help(tmp_path, capsys):
    assert main(["import", str(tmp_path / "missing.jsonl"), "-o", str(tmp_path / "x.yaml")]) == 2
    assert "no such transcript file" in capsys.readouterr().err
    out = tmp_path / "f.yaml"
    assert main(["import", str(FASTHOOKS), "-o", str(out)]) == 0
    assert main(["import", str(FASTHOOKS), "-o", str(out)]) == 2
    assert "--force" in capsys.readouterr().err
    assert main(["import", str(FASTHOOKS), "-o", str(out), "--force", "--all"]) == 0
    assert "recorded_compaction" in out.read_text(encoding="utf-8")
    with pytest.raises(SystemExit) as exc:
        main(["import", "--help"])
    assert exc.value.code == 0
    assert "--until-first-compaction" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        main(["import", str(FASTHOOKS), "-o", str(out), "--all", "--until-first-compaction"])
    assert exc.value.code == 2


def test_imported_yaml_is_plain_safe_yaml(tmp_path):
    result = import_transcript(FASTHOOKS)
    data = yaml.safe_load(scenario_yaml(result))
    assert data["templates"] is False and data["provenance"]["version"] == "2.0.76"
    assert data["turns"][0] == {"user": "can you run a command ls -la ", "at": "2026-01-02T19:18:31.028Z"}


def test_nothing_to_replay_is_an_input_error(tmp_path):
    s = Session()
    s.user("<command-name>/clear</command-name>")
    with pytest.raises(TranscriptError, match="nothing to replay"):
        import_transcript(s.write(tmp_path / "empty.jsonl"))
    with pytest.raises(UsageError, match="unknown import mode"):
        import_transcript(FASTHOOKS, mode="everything")


def test_a_file_opening_with_a_compaction_keeps_the_whole_line(tmp_path):
    s = Session()
    s.compact("This session is being continued from a previous conversation.\nSummary:\n1. Primary Request "
              "and Intent:\n   fix the bug", trigger="auto")
    s.user("go on")
    s.assistant(text="Going on.")
    result, scenario = _imported(s.write(tmp_path / "continued.jsonl"), tmp_path)
    assert result.mode == "all" and hasattr(scenario.turns[0], "recorded_compaction")
    run = run_scenario(scenario)
    assert _all_requests_valid(run) == [] and run.compactions[0].result.kind == "transcript"


def test_transcript_fields_in_the_header_comment_cannot_write_yaml_keys(tmp_path):
    hostile = "2.0.1\nknown_failures: {drift: hidden}\nconfig: {autocompact_enabled: false}\n#"
    s = Session(version=hostile)
    s.user("Rename pd to parse_date in src/util.py")
    s.assistant("Done.")
    out = tmp_path / "s.yaml"
    assert main(["import", str(s.write(tmp_path / "t.jsonl")), "-o", str(out)]) == 0
    scenario = load_scenario(out)
    assert scenario.known_failures == {} and scenario.config == {}
    assert scenario.provenance.version == hostile  # kept, as data
    assert "known_failures: {drift" in out.read_text().splitlines()[1]  # inside the comment, quoted
