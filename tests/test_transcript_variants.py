"""The transcript reader on sessions the project writes itself, one per era of Claude Code's format
(``tests/transcript_eras.py``, built with ``tests/transcript_builder.py``), covering every record type
and version variant the real corpus shows (``tests/fixtures/transcript_variants.md``). Needs no
shared corpus: a bare clone runs it."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_ctxeval.core.messages import (
    AssistantMessage, AttachmentMessage, CompactBoundary, UserMessage, person_text, to_api, validate_api,
)
from pytest_ctxeval.transcript import read_transcript

from transcript_builder import PRIMARY
from transcript_eras import ERAS, write_all
from transcript_variants import read_table, survey, version_key

TABLE = Path(__file__).parent / "fixtures" / "transcript_variants.md"


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    return write_all(tmp_path_factory.mktemp("eras"))


@pytest.fixture(scope="module")
def read(built):
    cache: dict[str, object] = {}

    def get(name: str):
        if name not in cache:
            cache[name] = read_transcript(built[name], sidechains=True)
        return cache[name]
    return get


# --- the builder shows what the corpus shows -----------------------------------------------------------

def test_the_builder_shows_every_variant_of_the_corpus_and_no_other(built):
    expected = read_table(TABLE)
    assert len(expected) > 200
    shown = survey(sorted(built.values()))
    missing = sorted(set(expected) - set(shown))
    invented = sorted(set(shown) - set(expected))
    assert not missing, f"variants the corpus shows and no built session does: {missing}"
    assert not invented, f"variants no corpus session shows (add them to the corpus or drop them): {invented}"


def test_each_variant_is_built_at_a_version_the_corpus_shows_it_in(built):
    expected = read_table(TABLE)
    shown = survey(sorted(built.values()))
    wrong = [f"{name}: built {s.first}-{s.last}, corpus {expected[name].first}-{expected[name].last}"
             for name, s in shown.items() if name in expected and expected[name].first
             and (version_key(s.last) < version_key(expected[name].first)
                  or version_key(s.first) > version_key(expected[name].last))]
    assert not wrong, wrong


def test_the_survey_sees_a_variant_the_table_lacks(tmp_path):
    """The coverage check can fail: a session with a record type of its own is a new variant."""
    path = tmp_path / "new.jsonl"
    path.write_text('{"type": "user", "uuid": "u1", "parentUuid": null, "version": "9.0.0", '
                    '"message": {"role": "user", "content": [{"type": "hologram"}]}}\n', encoding="utf-8")
    seen = survey([path])
    assert "user-block:hologram" in seen and "user-block:hologram" not in read_table(TABLE)
    assert seen["user-block:hologram"].first == "9.0.0"


# --- what the reader finds in each era ------------------------------------------------------------------

#: file -> compactions as (version, trigger, preTokens, boundary line, summary line).
COMPACTIONS = {
    "legacy-1.0.98.jsonl": [],
    "manual-2.0.60.jsonl": [("2.0.60", "manual", 120_000, 19, 20)],
    "auto-2.0.65.jsonl": [("2.0.65", "auto", 155_000, 27, 28)],
    "images-2.1.22-29.jsonl": [],
    "progress-2.1.38-39.jsonl": [("2.1.39", "auto", 167_731, 36, 37)],
    "agent-subagent-2.1.39.jsonl": [],
    "agent-acompact-2.1.39.jsonl": [],
    "auto-dangling-2.1.45.jsonl": [("2.1.45", "auto", 178_144, 17, 18)],
    "two-auto-dangling-2.1.49.jsonl": [("2.1.49", "auto", 167_332, 19, 20), ("2.1.49", "auto", 167_602, 31, 32)],
    "resumed-2.1.50-56.jsonl": [("2.1.56", "auto", 168_663, 30, 31)],
    "toolsearch-2.1.69.jsonl": [("2.1.69", "auto", 171_817, 14, 15), ("2.1.69", "auto", 168_199, 20, 21)],
    "manual-2.1.87.jsonl": [("2.1.87", "manual", 244_099, 24, 25)],
    "attachments-2.1.149.jsonl": [("2.1.149", "auto", 169_346, 32, 33)],
    "manual-args-2.1.150.jsonl": [("2.1.150", "manual", 361_748, 30, 31)],
    "subagents-2.1.179.jsonl": [("2.1.179", "auto", 167_465, 21, 22)],
    "resumed-2.1.177-183.jsonl": [("2.1.183", "manual", 231_468, 19, 20)],
}

#: file -> (line, words) of every problem the reader reports; any other file reports none.
PROBLEMS = {
    # The compaction call's first record hangs off the main session, whose file this is not.
    "agent-acompact-2.1.39.jsonl": [(1, "parent in-the-main-session is not in the file")],
    # The resume wrote six records of the history again: reported once, first copies used.
    "attachments-2.1.149.jsonl": [(34, "6 records repeat a uuid read earlier")],
}

#: file -> the messages the person typed, in order (queued prompts and /compact arguments included;
#: commands, caveats, reminders, interruptions, IDE notes and notifications left out).
TYPED = {
    "legacy-1.0.98.jsonl": [PRIMARY],
    "manual-2.0.60.jsonl": [PRIMARY, "also keep the old syntax working", "a request 0", "a request 1",
                            "now run the tests"],
    "auto-2.0.65.jsonl": [PRIMARY, "and the docs", "a request 0", "a request 1", "go on"],
    "images-2.1.22-29.jsonl": ["This is the error I get"],
    "progress-2.1.38-39.jsonl": [PRIMARY, "no, edit src/parser.py instead", "a request 0", "a request 1", "continue"],
    "agent-subagent-2.1.39.jsonl": ["Find every caller of parse_list"],
    "agent-acompact-2.1.39.jsonl": ["Your task is to create a detailed summary of the conversation so far."],
    "auto-dangling-2.1.45.jsonl": [PRIMARY, "see the screenshot", "a request 0", "a request 1", "go on"],
    "two-auto-dangling-2.1.49.jsonl": [PRIMARY, "a request 0", "b request 0", "b request 1", "go on"],
    "resumed-2.1.50-56.jsonl": [PRIMARY, "a request 0", "a request 1", "go on"],
    "toolsearch-2.1.69.jsonl": [PRIMARY, "a request 0", "b request 0", "go on"],
    "manual-2.1.87.jsonl": [PRIMARY, "a request 0", "a request 1", "go on"],
    "attachments-2.1.149.jsonl": [PRIMARY, "also update the changelog", "a request 0", "a request 1", "go on"],
    "manual-args-2.1.150.jsonl": [PRIMARY, "a request 0", "a request 1", "and the changelog",
                                  "keep the parser details", "go on"],
    "subagents-2.1.179.jsonl": [PRIMARY, "a request 0", "a request 1", "go on"],
    "resumed-2.1.177-183.jsonl": [PRIMARY, "and the lexer", "a request 0", "a request 1", "go on"],
}


def test_every_era_has_expectations():
    assert set(COMPACTIONS) == set(TYPED) == set(ERAS)


@pytest.mark.parametrize("name", sorted(ERAS))
def test_compactions_of_each_era(read, name):
    t = read(name)
    got = [(c.version, c.trigger, c.pre_tokens, c.boundary_line, c.summary_line) for c in t.compactions]
    assert got == COMPACTIONS[name]
    start = 0
    for c in t.compactions:
        assert not c.inherited
        assert c.summary is not None and c.summary.is_compact_summary
        assert c.history and isinstance(c.before[-1], (AssistantMessage, UserMessage))
        # What the summariser saw: every message since the previous compaction's summary, in order.
        assert c.before == [m for m in t.messages[start:t.messages.index(c.boundary)]
                            if not isinstance(m, CompactBoundary)]
        assert not any(person_text(m) for m in c.kept if m not in c.preserved)
        start = t.messages.index(c.boundary) + 1


@pytest.mark.parametrize("name", sorted(ERAS))
def test_problems_of_each_era(read, name):
    t = read(name)
    assert [(p.line, w) for p, (_, w) in zip(t.problems, PROBLEMS.get(name, []))] == PROBLEMS.get(name, [])
    assert len(t.problems) == len(PROBLEMS.get(name, []))
    assert all(w in p.message for p, (_, w) in zip(t.problems, PROBLEMS.get(name, [])))


@pytest.mark.parametrize("name", sorted(ERAS))
def test_typed_messages_of_each_era(read, name):
    assert [person_text(m) for m in read(name).messages if person_text(m)] == TYPED[name]


@pytest.mark.parametrize("name", sorted(ERAS))
def test_each_stretch_is_a_valid_request_and_each_message_has_its_line(read, built, name):
    t = read(name)
    cuts = [i for i, m in enumerate(t.messages) if isinstance(m, CompactBoundary)] + [len(t.messages)]
    start = 0
    for cut in cuts:
        assert validate_api(to_api(t.messages[start:cut]), allow_pending_tool_use=True) == []
        start = cut + 1
    lines = built[name].read_bytes().count(b"\n")
    assert all(1 <= t.line_of[m.uuid] <= lines for m in t.messages)


def test_dangling_logical_parents_follow_the_last_message_before_the_boundary(read):
    """2.1.45 - 2.1.69: the boundary names a record never written; the summarised context ends with
    the message just before the boundary in the file, and nothing is reported."""
    for name in ("auto-dangling-2.1.45.jsonl", "two-auto-dangling-2.1.49.jsonl", "toolsearch-2.1.69.jsonl"):
        t = read(name)
        for c in t.compactions:
            assert c.boundary.logical_parent_uuid.startswith("never-written-")
            assert t.line_of[c.before[-1].uuid] < c.boundary_line
            assert c.before[-1].content[0].text.endswith(("done 0", "done 1"))


def test_a_logical_parent_written_after_the_boundary_does_not_loop(read):
    t = read("resumed-2.1.177-183.jsonl")
    (c,) = t.compactions
    assert t.line_of[c.boundary.logical_parent_uuid] > c.boundary_line
    assert c.history[0].uuid == t.messages[0].uuid and person_text(c.before[0]) == PRIMARY
    assert c.kept[0].uuid == "preserved-0001"


def test_preserved_messages_are_kept(read):
    t = read("manual-args-2.1.150.jsonl")
    (c,) = t.compactions
    uuids = c.metadata["preservedMessages"]["uuids"]
    assert [m.uuid for m in c.preserved] == uuids and c.kept[:3] == c.preserved
    assert set(c.metadata) == {"trigger", "preTokens", "durationMs", "postTokens", "preCompactDiscoveredTools",
                               "preservedSegment", "preservedMessages"}


def test_legacy_inline_subagent_and_resume_title(read):
    t = read("legacy-1.0.98.jsonl")
    assert t.title == "Trailing commas in the parser" and t.sidechain_records == 2
    ((key, side),) = t.sidechains.items()
    task = next(b for m in t.messages if isinstance(m, AssistantMessage) for b in m.content
                if getattr(b, "name", None) == "Task")
    assert key == task.id and person_text(side[0]) == "Find every caller of parse_list"
    assert not any(person_text(m) == "Find every caller of parse_list" for m in t.messages)


def test_a_subagent_file_is_read_as_its_own_conversation_with_parallel_results(read):
    t = read("agent-subagent-2.1.39.jsonl")
    assert t.agent_id == "a2898e3" and t.problems == []
    call, *results, last = t.messages[1:]
    assert [b.id for b in call.content if b.type == "tool_use"] == ["toolu_p1", "toolu_p2"]
    assert [r.content[0].tool_use_id for r in results] == ["toolu_p1", "toolu_p2"]
    assert last.content[0].text == "parse_list is called from src/cli.py"


def test_agent_progress_records_become_sidechains(read):
    assert list(read("progress-2.1.38-39.jsonl").sidechains) == ["a1b2c3d"]
    assert list(read("toolsearch-2.1.69.jsonl").sidechains) == ["y"]


def test_attachments_are_messages_and_metadata_records_are_counted(read):
    t = read("attachments-2.1.149.jsonl")
    kinds = [m.attachment_type for m in t.messages if isinstance(m, AttachmentMessage)]
    assert len(kinds) == 13 and "hook_success" in kinds and "queued_command" not in kinds
    assert t.metadata_records == 2          # worktree-state, last-prompt
    assert read("resumed-2.1.177-183.jsonl").metadata_records == 3   # ai-title, mode, agent-name


def test_a_rewind_reads_the_branch_taken(read):
    t = read("images-2.1.22-29.jsonl")
    assert [m.content[0].text for m in t.messages if isinstance(m, AssistantMessage)] == [
        "I see a SyntaxError.", "The parser rejects the trailing comma."]
    assert t.title == "Screenshots of the parser error"
    assert t.messages[0].content[1].type == "image"


@pytest.mark.parametrize("record", [
    {"type": "system", "subtype": "microcompact_boundary", "content": "Context microcompacted",
     "microcompactMetadata": {"trigger": "auto", "preTokens": 90_000, "tokensSaved": 30_000}},
    {"type": "system", "subtype": "informational", "content": "Hooks changed", "level": "info"},
], ids=["microcompact_boundary", "informational"])
def test_a_record_the_reader_does_not_know_is_walked_through_silently(tmp_path, record):
    """Not in the corpus: a system subtype of a newer version, on the conversation's chain, is
    neither a message nor a problem, and the messages after it keep their place. (A record *type*
    the reader does not know is walked through too, but reported: tests/test_unknown_record_types.py.)"""
    from transcript_builder import Builder

    s = Builder("2.1.183")
    s.work(1, "a")
    s.add(record)
    s.typed("next")
    s.reply(text="ok")
    t = read_transcript(s.write(tmp_path / "s.jsonl"))
    assert t.problems == [] and t.compactions == []
    assert [person_text(m) for m in t.messages if person_text(m)] == ["a request 0", "next"]
    assert len(t.messages) == 6
