"""Attack paths, each closed by a test: path traversal, template injection, report injection,
secrets in outputs; and nothing lost when the process is killed mid-run."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import httpx2
import pytest

from pytest_ctxeval.cli import main
from pytest_ctxeval.core.config import EngineConfig
from pytest_ctxeval.engine.budget import ToolResultStore, safe_file_stem
from pytest_ctxeval.errors import ScenarioError
from pytest_ctxeval.llm import make_llm
from pytest_ctxeval.runner import run_scenario
from pytest_ctxeval.scenario.schema import load_scenario
from pytest_ctxeval.transcript import read_transcript

KEY = "sk-ant-api03-SECRETsecretSECRET-0123456789abcdef"

SMALL = textwrap.dedent("""\
    context_window: 12000
    turns:
      - user: "Summarise the repository layout."
      - repeat: 9
        turns:
          - assistant: "Reading part {{ i }}."
            tools:
              - name: Read
                input: {file_path: "src/mod{{ i }}.py"}
                result: "{{ python_file(lines=160, seed=i) }}"
      - assistant: "Done."
      - compact: true
    """)


# --- path traversal -----------------------------------------------------------------------------

@pytest.mark.parametrize("tool_id", ["../../etc/passwd", "/etc/passwd", "a\x00b", "..\\..\\win.ini", "C:\\x",
                                     "..", ".", "a/b", "x" * 500], ids=repr)
def test_tool_use_ids_cannot_escape_tool_results(tmp_path: Path, tool_id: str) -> None:
    store = ToolResultStore(tmp_path, EngineConfig())
    saved = store.persist(tool_id, "content")
    assert saved.path.parent == tmp_path / "tool-results"
    assert saved.path.resolve().is_relative_to((tmp_path / "tool-results").resolve())
    assert safe_file_stem(tool_id).startswith("unsafe-") or tool_id.replace("x", "") == ""


@pytest.mark.parametrize("name", ["../../evil", "/abs", "a\x00b", "..\\win", "a/b", ""], ids=repr)
def test_scenario_names_that_name_paths_are_refused(tmp_path: Path, name: str) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(json.dumps({"name": name, "turns": [{"user": "x"}]}))
    with pytest.raises(ScenarioError, match="name"):
        load_scenario(path)


@pytest.mark.parametrize("stem", ["..", "...", ".hidden", "a b"])
def test_file_stems_become_safe_session_folders(tmp_path: Path, stem: str) -> None:
    path = tmp_path / f"{stem}.yaml"
    path.write_text(SMALL)
    out = tmp_path / "sessions"
    main(["run", str(path), "--session-dir", str(out), "--graders", "tool_pairing"])
    for p in out.rglob("*"):
        assert p.resolve().is_relative_to(out.resolve())
    assert not (tmp_path / "tool-results").exists()


def test_imported_transcripts_with_hostile_ids_and_names_stay_inside(tmp_path: Path, capsys) -> None:
    records = [
        {"type": "user", "uuid": "u1", "parentUuid": None, "timestamp": "2026-01-01T00:00:00Z",
         "message": {"role": "user", "content": "go"}},
        {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "timestamp": "2026-01-01T00:00:01Z",
         "message": {"id": "m1", "role": "assistant", "content": [
             {"type": "tool_use", "id": "../../../tmp/pwned", "name": "Bash", "input": {"command": "ls"}}]}},
        {"type": "user", "uuid": "r1", "parentUuid": "a1", "timestamp": "2026-01-01T00:00:02Z",
         "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": "../../../tmp/pwned", "content": "x" * 70_000}]}},
        {"type": "assistant", "uuid": "a2", "parentUuid": "r1", "timestamp": "2026-01-01T00:00:03Z",
         "message": {"id": "m2", "role": "assistant", "content": [{"type": "text", "text": "ok"}]}},
    ]
    t = tmp_path / "t.jsonl"
    t.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    out = tmp_path / "out" / "imported.yaml"
    assert main(["import", str(t), "-o", str(out), "--name", "../../evil"]) == 0
    scenario = load_scenario(out)
    assert "/" not in scenario.display_name and not scenario.display_name.startswith(".")
    run = run_scenario(scenario, session_dir=tmp_path / "s")
    persisted = list((tmp_path / "s").rglob("tool-results/*"))
    assert persisted and all(p.resolve().is_relative_to((tmp_path / "s").resolve()) for p in persisted)
    assert not Path("/tmp/pwned.txt").exists()
    assert run.requests


# --- template injection ---------------------------------------------------------------------------

class Replies:
    """An offline model whose summaries carry template syntax."""

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        text = ("<analysis>{{ 7*7 }}</analysis><summary>1. Primary Request and Intent:\n   {{ 7*7 }} "
                "{% for x in range(3) %}x{% endfor %} {{ ''.__class__.__mro__ }}\n</summary>")
        return httpx2.Response(200, json={"id": "m", "type": "message", "role": "assistant", "model": body["model"],
                                          "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
                                          "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}})


def test_model_replies_are_never_rendered_as_templates(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(SMALL)
    run = run_scenario(path, llm=make_llm("offline", reference=Replies()), session_dir=tmp_path / "s")
    summary = run.compactions[-1].result.summary_message.content
    assert "{{ 7*7 }}" in summary and "{% for x in range(3) %}x{% endfor %}" in summary
    assert "49" not in summary.split("Summary:")[1] and "xxx" not in summary


def test_scenario_templates_render_in_a_sandbox(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text('turns:\n  - user: "{{ cycler.__init__.__globals__.os.system(\'touch /tmp/owned\') }}"\n')
    with pytest.raises(ScenarioError, match=r"unsafe|template"):
        from pytest_ctxeval.scenario.expansion import expand
        expand(load_scenario(path))
    assert not Path("/tmp/owned").exists()


def test_recorded_cassettes_are_data_not_templates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    llm = make_llm("record", "claude-x", cassettes=tmp_path / "c", network=httpx2.MockTransport(Replies()))
    llm.complete(task="compact", messages=[{"role": "user", "content": "hi"}])
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    replay = make_llm("replay", "claude-x", cassettes=tmp_path / "c")
    assert "{{ 7*7 }}" in replay.complete(task="compact", messages=[{"role": "user", "content": "hi"}]).text


# --- report injection -----------------------------------------------------------------------------

def test_compare_real_html_escapes_hostile_content(tmp_path: Path) -> None:
    hostile = '<script>alert(1)</script> "><img src=x onerror=alert(1)> </html> {{ 7*7 }}'
    records = [
        {"type": "user", "uuid": "u1", "parentUuid": None, "timestamp": "2026-01-01T00:00:00Z",
         "message": {"role": "user", "content": hostile}},
        {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "timestamp": "2026-01-01T00:00:01Z",
         "message": {"id": "m1", "role": "assistant", "content": [{"type": "text", "text": hostile}]}},
        {"type": "system", "subtype": "compact_boundary", "uuid": "b1", "parentUuid": None, "logicalParentUuid": "a1",
         "timestamp": "2026-01-01T00:00:02Z", "compactMetadata": {"trigger": "manual", "preTokens": 100}},
        {"type": "user", "uuid": "s1", "parentUuid": "b1", "isCompactSummary": True, "timestamp": "2026-01-01T00:00:03Z",
         "message": {"role": "user", "content": "Summary:\n1. Primary Request and Intent:\n   " + hostile}},
    ]
    t = tmp_path / "t.jsonl"
    t.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    html = tmp_path / "c.html"
    main(["compare-real", str(t), "--html", str(html), "--graders", "verbatim_user_messages"])
    page = html.read_text()
    assert "<script>alert(1)</script>" not in page and "onerror=alert(1)>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert page.count("</html>") == 1 and " on" + "error=" not in page.replace("onerror=alert", "")


# --- secrets --------------------------------------------------------------------------------------

class FakeAnthropic:
    def __init__(self) -> None:
        self.inner = httpx2.MockTransport(self.handle)

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        if request.headers.get("x-ctxeval-task") == "probe":  # a server that echoes the key back
            return httpx2.Response(400, json={"type": "error", "error": {
                "type": "invalid_request_error", "message": f"bad key {KEY}"}})
        from pytest_ctxeval.llm.reference import judge_reply, write_summary
        task = request.headers.get("x-ctxeval-task")
        text = write_summary(body["messages"]) if task == "compact" else judge_reply(
            "\n".join(str(m["content"]) for m in body["messages"]))
        return httpx2.Response(200, json={"id": "m", "type": "message", "role": "assistant", "model": body["model"],
                                          "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
                                          "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 10}})


def test_the_key_appears_in_no_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture) -> None:
    from pytest_ctxeval.llm.server import ApiServer
    from pytest_ctxeval.llm.wire import WireModel
    from pytest_ctxeval.llm.wire_errors import error_response

    class EchoingWire(WireModel):  # the real API behind a socket, echoing the key in the probes' error
        def messages(self, body, *, task, **kw):  # type: ignore[no-untyped-def]
            if task == "probe" or "probe 1 (" in json.dumps(body):  # the probes' judgement
                return error_response(400, f"bad key {KEY}", request_id="req_echo")
            return super().messages(body, task=task, **kw)

    server = ApiServer(EchoingWire(api_key=KEY)).start()
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    scenario = tmp_path / "s.yaml"
    scenario.write_text(SMALL + "expect:\n  probes:\n    - {kind: recall, question: q?, answer: a}\n"
                        f"  intent: 'mention {KEY} in the expectations too'\n")
    out = tmp_path / "out"
    caplog.set_level("DEBUG")
    try:
        main(["run", str(scenario), "--backend", "anthropic", "--cassettes", str(out / "cassettes"),
              "--json", str(out / "r.json"), "--session-dir", str(out / "sessions")])
    finally:
        server.stop()
    printed = capsys.readouterr()
    files = [p for p in out.rglob("*") if p.is_file()]
    assert any(p.suffix == ".json" for p in files) and any(p.suffix == ".jsonl" for p in files)
    for p in files:
        assert KEY not in p.read_text(errors="replace"), p
    assert KEY not in printed.out and KEY not in printed.err
    assert KEY not in caplog.text
    doc = json.loads((out / "r.json").read_text())
    probe = doc["scenarios"][0]["graders"]["probes"]
    assert probe["status"] == "ungraded"  # the echoed key became [REDACTED] wherever it went


def test_an_error_that_echoes_the_key_is_raised_without_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_ctxeval.errors import ModelError

    fake = FakeAnthropic()
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    llm = make_llm("anthropic", network=fake.inner, cassettes=tmp_path)
    with pytest.raises(ModelError) as info:
        llm.complete(task="probe", messages=[{"role": "user", "content": "q"}])
    assert "bad key [REDACTED:anthropic]" in str(info.value)
    assert KEY not in str(info.value) and KEY not in repr(info.value.args)
    assert info.value.__cause__ is None and info.value.__suppress_context__  # the SDK error (with the key) is not chained


# --- nothing lost ---------------------------------------------------------------------------------

CRASH = textwrap.dedent("""\
    import sys, time, httpx2
    from pytest_ctxeval.llm import make_llm
    from pytest_ctxeval.runner import run_scenario
    def slow(request):
        time.sleep(60)  # the compaction call never returns: the parent kills us here
    run_scenario(sys.argv[1], llm=make_llm("offline", reference=slow), session_dir=sys.argv[2])
    """)


def test_a_killed_run_leaves_a_transcript_that_reads_back(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(SMALL)
    script = tmp_path / "crash.py"
    script.write_text(CRASH)
    sessions = tmp_path / "sessions"
    proc = subprocess.Popen([sys.executable, str(script), str(scenario), str(sessions)])
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            files = list(sessions.glob("*.jsonl"))
            if files and files[0].read_text().count("\n") >= 19:  # the run is waiting in its compaction call
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    [path] = sessions.glob("*.jsonl")
    raw = path.read_text()
    lines = raw.splitlines()
    assert len(lines) >= 19 and raw.endswith("\n")  # every record complete: flushed one by one
    transcript = read_transcript(path)
    assert not transcript.problems
    assert len(transcript.messages) == len(lines)
    # and a torn last line (a crash mid-write) costs only that line
    path.write_text(raw + raw.splitlines()[-1][: 40])
    torn = read_transcript(path)
    assert len(torn.messages) == len(lines) and [p.line for p in torn.problems] == [len(lines) + 1]
