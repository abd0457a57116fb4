"""Offline drift: which of the person's messages are "the first request" and "the latest request".

Three imported real sessions failed drift offline although each generation was on the person's
intent (measured with ``ctxeval import --all`` then ``ctxeval run --graders drift`` on the shared
corpus): the latest message was a status reply ("merged") that names nothing a summary repeats; the
first request was a slash command's arguments ("14" of ``/gsd:discuss-phase 14``); the latest
request was a console paste whose first log line stood on the typed lead's own line ("... in the
console: Warning: Encountered two children ...") and whose marker's number ("86,829 characters")
counted as a term. Each test is a hand-built case of the class in words written for the test: a
generation on the intent passes, one that drifted fails."""

from __future__ import annotations

import sys
from pathlib import Path

from pytest_ctxeval.grading.judging import Judge
from pytest_ctxeval.grading.registry import cases_from_transcript
from pytest_ctxeval.llm import make_llm
from pytest_ctxeval.transcript.jsonl import read_transcript

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: transcript_builder
from transcript_builder import Builder


def _summary(request: str, next_step: str) -> str:
    return ("This session is being continued from a previous conversation that ran out of context. The summary "
            "below covers the earlier portion of the conversation.\n\nSummary:\n"
            f"1. Primary Request and Intent:\n   {request}\n2. Key Technical Concepts:\n   - x\n"
            "3. Files and Code Sections:\n   - x\n4. Errors and fixes:\n   - none\n5. Problem Solving:\n   x\n"
            "6. All user messages:\n   - \"...\"\n7. Pending Tasks:\n   - x\n8. Current Work:\n   x\n"
            f"9. Optional Next Step:\n   {next_step}\n")


def _drift(registry, tmp_path: Path, typed: list[str], request: str, next_step: str):
    """A session of ``typed`` messages (a ``<command-args>`` one is a slash command's echo),
    compacted three times; every summary's request and next step are ``request`` and ``next_step``."""
    b = Builder("2.1.69")
    for text in typed:
        b.typed(text)
        b.reply(text="Done.")
    for _ in range(3):
        b.boundary("auto", 150_000)
        b.summary(_summary(request, next_step))
    path = tmp_path / "session.jsonl"
    b.write(path)
    last = cases_from_transcript(read_transcript(path))[-1]
    last.judge = Judge(make_llm("offline"))
    (verdict,) = registry.run(last, [registry.get("drift")])
    return verdict


def _intent(registry, tmp_path: Path, typed: list[str]) -> str:
    registry.get("drift")  # loads graders/judge.py
    judge = sys.modules[registry.get("drift").func.__module__]
    b = Builder("2.1.69")
    for text in typed:
        b.typed(text)
        b.reply(text="Done.")
    b.boundary("auto", 150_000)
    b.summary(_summary("x", "x"))
    case = cases_from_transcript(read_transcript(b.write(tmp_path / "intent.jsonl")))[0]
    return judge._intent(case)


FIRST = "port the csv exporter to the streaming writer so large reports stop timing out"
PICK = "good, now pick issue #412 and add retries to the upload client with a test for each failure mode"


def test_a_status_reply_is_not_the_latest_request(registry, tmp_path):
    """"merged" (the person reporting they merged the PR) asks for nothing: the latest request is
    the one before it, as "yes" or "go on" would be."""
    typed = [FIRST, PICK, "merged"]
    assert "merged" not in _intent(registry, tmp_path, typed)
    good = _drift(registry, tmp_path, typed, "Port the csv exporter to the streaming writer; then issue #412: "
                  "retries in the upload client with a test per failure mode.",
                  f'Add the retries to the upload client, as asked: "{PICK}"')
    assert good.status == "pass", good.reasons
    bad = _drift(registry, tmp_path, typed, "Redesign the billing dashboard colours.",
                 "Change the sidebar palette to the new brand colours.")
    assert bad.status == "fail", bad.reasons


def test_slash_command_arguments_are_read_with_their_command(registry, tmp_path):
    """A first request of "7" (``/gsd:plan-phase 7``) names only a number; with its command it is
    what the person asked for, and a summary that states the command's work holds it."""
    echo = ("<command-message>gsd:plan-phase</command-message>\n<command-name>/gsd:plan-phase</command-name>\n"
            "<command-args>7</command-args>")
    question = "why can the research agent not open the design tool?"
    typed = [echo, question]
    assert "First request: /gsd:plan-phase 7" in _intent(registry, tmp_path, typed)
    good = _drift(registry, tmp_path, typed, "The user ran `/gsd:plan-phase 7` to plan phase 7 of the project; "
                  "they asked why the research agent could not open the design tool.",
                  "Explain why the research agent cannot open the design tool, then continue planning phase 7.")
    assert good.status == "pass", good.reasons
    bad = _drift(registry, tmp_path, typed, "Rewrite the README in French.", "Translate the install section.")
    assert bad.status == "fail", bad.reasons


def test_a_log_pasted_on_the_lead_s_line_is_the_paste(registry, tmp_path):
    """The latest request was a typed lead whose line went on into the pasted warning ("… in the
    console: Warning: Each child in a list should have a unique key …"), then 300 stack lines: the
    warning's words were read as the person's request."""
    stack = "\n".join(f"    at Row (http://localhost:5173/src/table.tsx:{40 + i}:7)" for i in range(30))
    paste = ("it renders now but the console is full of this: Warning: Each child in a list should have a unique "
             "\"key\" prop, check the render method of OrdersTable for details and remove duplicates\n" + stack)
    typed = [FIRST, paste]
    intent = _intent(registry, tmp_path, typed)
    assert "Latest request: it renders now but the console is full of this: [pasted output:" in intent, intent
    good = _drift(registry, tmp_path, typed, "Port the csv exporter to the streaming writer; the table now "
                  "renders but the console is full of warnings.",
                  "Fix the console warnings the table renders with, then finish porting the csv exporter.")
    assert good.status == "pass", good.reasons
    bad = _drift(registry, tmp_path, typed, "Set up the nightly backup job.", "Schedule the backup cron.")
    assert bad.status == "fail", bad.reasons
