"""Record shapes of real Claude Code transcripts that public session parsers and viewers handle and
the shared corpus does not hold (round 4 of reading unseen sessions): a ``microcompact_boundary``
record (old tool results cleared, ``microcompactMetadata`` with ``tokensSaved``, no summary), a
manual compaction whose instructions are in ``compactMetadata.userContext``, and a ``/compact`` echo
that opens with its ``<command-message>`` tag or names the command without its slash. Each file is
written by the test (``transcript_builder``); the words are the test's own."""

from __future__ import annotations

import pytest

from pytest_ctxeval.cli import main
from pytest_ctxeval.grading.registry import cases_from_transcript
from pytest_ctxeval.transcript import read_transcript
from pytest_ctxeval.transcript.compactions import nothing_to_grade

from transcript_builder import Builder, bash_result, summary_text

ASK = "make the csv export keep the column order of the table"


def _micro(b: Builder, n: int = 1) -> None:
    for i in range(n):
        b.add({"type": "system", "subtype": "microcompact_boundary", "content": "Microcompact boundary",
               "level": "info", "microcompactMetadata": {"trigger": "auto", "preTokens": 90_000 + i,
                                                          "tokensSaved": 25_000, "compactedToolIds": ["toolu_001"],
                                                          "clearedAttachmentUUIDs": []}})


def _work(b: Builder) -> None:
    b.typed(ASK)
    b.tool("Bash", {"command": "pytest tests/test_export.py"}, bash_result("3 passed"), "3 passed")
    b.reply(text="The export keeps the order now.")


def test_a_file_with_only_microcompactions_names_them(tmp_path, capsys):
    """Real transcripts can hold ``microcompact_boundary`` records (tool results cleared, no
    summary). A file with only those was reported as holding "no compact_boundary record", as if
    nothing had been compacted; it names the microcompactions and why there is nothing to grade."""
    b = Builder("2.1.150")
    _work(b)
    _micro(b, 2)
    b.typed("and the tsv export too")
    b.reply(text="Done.")
    path = b.write(tmp_path / "micro.jsonl")
    t = read_transcript(path)
    assert len(t.microcompactions) == 2 and t.compactions == []
    why = nothing_to_grade(t.compactions, t.left_boundaries, t.microcompactions)
    assert why is not None and "2 microcompact_boundary records, lines" in why and "no summary" in why
    # the conversation walks through them: the message after them is on it
    assert any(getattr(m, "content", None) == "and the tsv export too" for m in t.messages)
    assert main(["grade", str(path)]) == 2
    err = capsys.readouterr().err
    assert "microcompact_boundary" in err and "no summary to grade" in err


def test_a_microcompaction_before_a_compaction_leaves_the_compaction_found(tmp_path):
    b = Builder("2.1.150")
    _work(b)
    _micro(b)
    b.typed("now add a header row option")
    b.reply(text="Added.")
    b.boundary("auto", 170_000)
    b.summary(summary_text("2.1.150", ASK))
    t = read_transcript(b.write(tmp_path / "s.jsonl"))
    assert len(t.compactions) == 1 and t.compactions[0].gradable
    assert t.microcompactions and nothing_to_grade(t.compactions, t.left_boundaries, t.microcompactions) is None
    # a file with neither says only that
    assert nothing_to_grade([], [], []) == "no compaction in this session"


def _manual(tmp_path, *, echo: str | None, user_context: str | None):
    b = Builder("2.1.150")
    _work(b)
    meta = {"userContext": user_context} if user_context is not None else None
    b.boundary("manual", 150_000, metadata=meta)
    b.summary(summary_text("2.1.150", ASK, auto=False), auto=False)
    if echo is not None:
        b.user(echo, advance=0.01)
    (case,) = cases_from_transcript(read_transcript(b.write(tmp_path / "m.jsonl")))
    return case


@pytest.mark.parametrize("echo", [
    "<command-name>/compact</command-name>\n<command-message>compact</command-message>\n<command-args>keep the export work</command-args>",
    "<command-message>compact</command-message>\n<command-name>/compact</command-name>\n<command-args>keep the export work</command-args>",
    "<command-name>compact</command-name><command-args>keep the export work</command-args>",
])
def test_compact_instructions_are_read_from_every_echo_shape(tmp_path, echo):
    """Parsers of real transcripts read ``/compact`` echoes that open with ``<command-message>`` (the
    order prompt commands are echoed in, also in the corpus) and ones naming ``compact`` without its
    slash; only the first shape was read, so the others' instructions were lost."""
    assert _manual(tmp_path, echo=echo, user_context=None).compact_args == "keep the export work"


def test_compact_instructions_in_the_boundary_metadata(tmp_path):
    """Newer boundaries record the instructions as ``compactMetadata.userContext``; with no echo
    record in the file they are still the instructions. The echo wins when both are there."""
    assert _manual(tmp_path, echo=None, user_context="keep the export work").compact_args == "keep the export work"
    assert _manual(tmp_path, echo=None, user_context="  ").compact_args is None
    both = _manual(tmp_path, echo="<command-name>/compact</command-name><command-args>the echo</command-args>",
                   user_context="the metadata")
    assert both.compact_args == "the echo"
    # another command's echo is not /compact's
    other = _manual(tmp_path, echo="<command-message>compactor</command-message>\n<command-name>/compactor</command-name>"
                                   "<command-args>x</command-args>", user_context=None)
    assert other.compact_args is None


# --- a summary copied from the terminal, graded with --summary ------------------------------------

def _terminal_copy(next_step: str) -> str:
    body = summary_text("2.0.76", ASK, auto=False).splitlines()
    first, rest = body[0], body[1:]
    lines = ["● Compact summary", "  ⎿ " + first] + ["    " + line for line in rest]
    lines[-1] = "       " + next_step
    return "\n".join(lines + ["  ⎿  Read src/export.py (120 lines)", "  ⎿  Todo list read (3 items)", ""])


def _graded(tmp_path, version: str, text: str):
    from pytest_ctxeval.grading import load_graders

    b = Builder(version)
    _work(b)
    path = b.write(tmp_path / f"{version}.jsonl")
    (case,) = cases_from_transcript(read_transcript(path), summary_text=text)
    registry = load_graders()
    names = ("analysis_stripped", "continuation", "nine_sections", "next_step_quote")
    return case, {v.grader: v for v in registry.run(case, [g for g in registry if g.name in names])}


def test_a_terminal_copy_of_a_summary_is_read_as_the_summary(tmp_path):
    """A real summary saved from the terminal (``● Compact summary``, a ``⎿`` before the preamble,
    every line indented, then ``⎿  Read FILE (N lines)`` per re-read attachment) and graded with
    ``--summary``: the ``⎿`` lines after section 9 were read as its body, and the summary, written by
    Claude Code 2.0.x, was held to the engine's rules (Analysis: must be stripped, a transcript path
    must end it): two false failures."""
    case, verdicts = _graded(tmp_path, "2.0.76", _terminal_copy(f'Keep the column order, as asked: "{ASK}"'))
    assert "● Compact summary" not in case.summary and "Read src/export.py" not in case.summary
    assert case.version == "2.0.76"
    assert verdicts["nine_sections"].status == "pass", verdicts["nine_sections"].reasons
    assert "Read src/export.py" not in case.sections.get("next").body
    assert verdicts["analysis_stripped"].status == "n/a" and "2.0.76" in verdicts["analysis_stripped"].reasons[0]
    assert verdicts["continuation"].status == "n/a", verdicts["continuation"].reasons
    assert verdicts["next_step_quote"].status == "pass", verdicts["next_step_quote"].reasons


def test_a_pasted_summary_is_still_held_to_what_its_version_promised(tmp_path):
    """The other side: the same copy given for a 2.1.69 session keeps an Analysis: part that 2.1.69
    strips (fail), a step that quotes nothing still fails, and a text that does not open with Claude
    Code's preamble (not Claude Code's summary) keeps the engine's rules."""
    _, verdicts = _graded(tmp_path, "2.1.69", _terminal_copy("Run the export tests."))
    assert verdicts["analysis_stripped"].status == "fail" and "2.1.69 strips it" in verdicts["analysis_stripped"].reasons[0]
    assert verdicts["next_step_quote"].status == "fail"
    own = summary_text("2.0.76", ASK, auto=False).split("\n", 2)[2]   # the sections, without the preamble
    case, verdicts = _graded(tmp_path, "2.0.76", own)
    assert case.version is None and verdicts["analysis_stripped"].status == "fail"


# --- partial compactions: /rewind -> "Summarize from here" / "Summarize up to here" ----------------

THEME = "add a dark theme to the settings page"
TOGGLE = "now make the theme toggle remember the choice across reloads"


def _partial(tmp_path, direction: str, *, names: str, quotes: str):
    """A session of two requests, then a partial compaction as parsers of real transcripts show it:
    the summary carries ``summarizeMetadata`` (direction, messagesSummarized, userContext), the
    boundary a ``preservedSegment`` of the kept messages and, as its logical parent, the last kept
    message ("from") or the last summarised one ("up_to")."""
    b = Builder("2.1.150")
    first = b.typed(THEME)
    b.tool("Edit", {"file_path": "/home/dev/app/src/theme.css", "old_string": "a", "new_string": "b"}, {}, "ok")
    kept_last = b.reply(text="Dark theme added.")[-1]
    second = b.typed(TOGGLE)
    b.tool("Edit", {"file_path": "/home/dev/app/src/toggle.ts", "old_string": "a", "new_string": "b"}, {}, "ok")
    last = b.reply(text="The toggle stores the choice in localStorage.")[-1]
    head, tail = (first, kept_last) if direction == "from" else (second, last)
    b.boundary("manual", 40_000, logical=kept_last,
               metadata={"messagesSummarized": 3, "preservedSegment": {"headUuid": head, "anchorUuid": head, "tailUuid": tail}})
    asked = TOGGLE if direction == "from" else THEME
    text = (summary_text("2.1.150", asked, auto=False).replace("src/parser.py", names)
            .replace(f'Run the tests, as asked: "{asked}"', quotes)
            + "\nIf you need specific details from before compaction, read the full transcript at: /home/dev/t.jsonl")
    b.user(text, advance=0.01, isCompactSummary=True,
           summarizeMetadata={"messagesSummarized": 3, "direction": direction, "userContext": "keep the toggle details"})
    b.typed("thanks, now the contrast check")
    b.reply(text="Checking contrast.")
    t = read_transcript(b.write(tmp_path / f"partial-{direction}.jsonl"))
    (comp,) = t.compactions
    return t, comp


def _run(t, names=("next_step_quote", "files_preserved", "continuation", "verbatim_user_messages")):
    from pytest_ctxeval.grading import load_graders

    (case,) = cases_from_transcript(t)
    registry = load_graders()
    return {v.grader: v for v in registry.run(case, [g for g in registry if g.name in names])}


def test_summarize_from_here_is_graded_against_the_messages_it_summarised(tmp_path):
    """A "Summarize from here" compaction summarises the messages after the selected one and keeps
    the ones before; the boundary continues from the last kept message, so the summarised messages
    are on a branch the conversation left. The reader graded the summary against the kept messages
    only: a good next step (quoting the latest request) failed as "not verbatim in the most recent
    conversation", and a summary that dropped a file the summarised part changed passed."""
    t, comp = _partial(tmp_path, "from", names="src/toggle.ts", quotes=f'Continue, as asked: "{TOGGLE}"')
    assert comp.partial == "from" and comp.describe()["partial"] == "from"
    assert comp.before[0].content == TOGGLE        # the summarised branch
    assert THEME in [getattr(m, "content", None) for m in comp.history]           # the kept part too
    assert THEME in [getattr(m, "content", None) for m in comp.preserved]
    assert comp.compact_args == "keep the toggle details"                          # summarizeMetadata.userContext
    verdicts = _run(t)
    for name in ("next_step_quote", "files_preserved", "continuation", "verbatim_user_messages"):
        assert verdicts[name].status == "pass", (name, verdicts[name].reasons)
    assert "Summarize from here" in verdicts["continuation"].reasons[0]


def test_summarize_from_here_still_fails_what_the_summary_lost(tmp_path):
    t, _ = _partial(tmp_path, "from", names="src/other.ts", quotes=f'Continue, as asked: "{THEME}"')
    verdicts = _run(t)
    assert verdicts["files_preserved"].status == "fail" and "toggle.ts" in verdicts["files_preserved"].reasons[0]
    assert verdicts["next_step_quote"].status == "fail", verdicts["next_step_quote"].reasons
    # the transcript path is still written for a partial compaction: its absence fails
    t, _ = _partial(tmp_path, "from", names="src/toggle.ts", quotes=f'"{TOGGLE}"')
    no_path = cases_from_transcript(t)[0]
    no_path.summary = no_path.summary_message = no_path.summary.rsplit("\nIf you need", 1)[0]
    from pytest_ctxeval.grading import load_graders
    registry = load_graders()
    (verdict,) = registry.run(no_path, [g for g in registry if g.name == "continuation"])
    assert verdict.status == "fail" and "no transcript path" in verdict.reasons[0]


def test_summarize_up_to_here_is_graded_against_the_older_part(tmp_path):
    """The other direction: the summary is of the messages before the selected one; the boundary
    continues from the last of them, so the conversation the summary covers ends there."""
    t, comp = _partial(tmp_path, "up_to", names="src/theme.css", quotes=f'Continue, as asked: "{THEME}"')
    assert comp.partial == "up_to"
    assert TOGGLE not in [getattr(m, "content", None) for m in comp.before]
    verdicts = _run(t, ("next_step_quote", "files_preserved", "continuation"))
    for name, verdict in verdicts.items():
        assert verdict.status == "pass", (name, verdict.reasons)
