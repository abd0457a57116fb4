"""The offline reference model answers every compactor's prompt in that compactor's structure, reads
their summaries back as earlier summaries, and reads opencode's text-line conversations."""

from __future__ import annotations

import pytest

from pytest_ctxeval.compaction import codex, gemini_cli, opencode
from pytest_ctxeval.compaction.base import render
from pytest_ctxeval.engine.prompt import PromptSet
from pytest_ctxeval.llm.peer_formats import deserialise
from pytest_ctxeval.llm.reference import SUMMARY_OPENINGS, _is_summary, write_summary
from pytest_ctxeval.core.messages import (
    AssistantMessage, TextBlock, ToolResultBlock, ToolUseBlock, UserMessage, to_api,
)
from pytest_ctxeval.reading.summary import parse_summary

FIRST = "Port the invoice exporter to the new ledger API, keep the CSV columns unchanged."
SECOND = "Don't touch the legacy importer."


def _conversation():
    return [
        UserMessage(uuid="u1", content=FIRST),
        AssistantMessage(uuid="a1", content=[TextBlock(text="Running the exporter tests."),
                                             ToolUseBlock(id="t1", name="Bash", input={"command": "pytest tests/export"})]),
        UserMessage(uuid="r1", content=[ToolResultBlock(tool_use_id="t1", is_error=True,
                                                        content="E   KeyError: 'ledger_id'\nFAILED tests/export")]),
        AssistantMessage(uuid="a2", content=[TextBlock(text="Adding ledger_id to the row did not work. Reverting it."),
                                             ToolUseBlock(id="t2", name="Edit", input={
                                                 "file_path": "src/export/rows.py", "old_string": "a", "new_string": "b"})]),
        UserMessage(uuid="r2", content=[ToolResultBlock(tool_use_id="t2", content="updated")]),
        UserMessage(uuid="u2", content=SECOND),
    ]


def _ask(prompt: str, messages=None) -> str:
    api = to_api((messages or _conversation()) + [UserMessage(uuid="p", content=prompt)])
    return write_summary(api)


@pytest.mark.parametrize("module, template, args", [
    (codex, "codex_handoff.j2", {"instructions": ""}),
    (gemini_cli, "gemini_snapshot.j2", {"instructions": ""}),
])
def test_each_prompt_gets_its_formats_sections_in_order(module, template, args):
    reply = _ask(render(template, **args))
    fmt = module.FORMAT
    summary = gemini_cli.extract_snapshot(reply) if module is gemini_cli else reply
    parsed = fmt.parse(summary)
    assert [s.title for s in parsed.sections] == fmt.titles
    assert all(s.body.strip() for s in parsed.sections)
    assert "<analysis>" not in reply  # Claude Code's scratchpad layout only where the prompt asks for it
    assert FIRST in parsed.get("request").body


def test_opencode_conversation_lines_are_read_back_into_messages():
    head = _conversation()
    text = opencode.serialise(head, 2_000)
    instruction, messages, earlier = deserialise(render("opencode_summary.j2", conversation=text, previous="",
                                                       instructions=""))
    assert "<conversation>" not in instruction and earlier == []
    uses = [b for m in messages if m["role"] == "assistant" for b in m["content"] if b["type"] == "tool_use"]
    results = [b for m in messages if m["role"] == "user" and isinstance(m["content"], list) for b in m["content"]]
    assert [u["name"] for u in uses] == ["Bash", "Edit"] and uses[1]["input"]["file_path"] == "src/export/rows.py"
    assert [(r["tool_use_id"], r["is_error"]) for r in results] == [(uses[0]["id"], True), (uses[1]["id"], False)]
    reply = write_summary([{"role": "user", "content": render("opencode_summary.j2", conversation=text, previous="",
                                                             instructions="")}])
    parsed = opencode.FORMAT.parse(reply)
    assert [s.title for s in parsed.sections] == opencode.FORMAT.titles
    assert "src/export/rows.py" in parsed.get("files").body and "KeyError: 'ledger_id'" in reply
    assert "Adding ledger_id to the row did not work" in parsed.get("critical").body  # the dead end is kept


def test_every_compactors_summary_opening_marks_an_earlier_summary():
    for opening in (codex.OPENING, opencode.OPENING, "<state_snapshot>"):
        assert _is_summary(f"{opening}\nrest") and any(o.startswith(opening[:20]) for o in SUMMARY_OPENINGS)
    assert not _is_summary(FIRST)


def test_an_earlier_codex_summary_is_carried_forward_not_read_as_a_request():
    first = _ask(render("codex_handoff.j2", instructions=""))
    earlier = UserMessage(uuid="s", content=render("codex_prefix.j2", summary=first), is_compact_summary=True)
    later = [earlier, UserMessage(uuid="u3", content="Now add a changelog entry."),
             AssistantMessage(uuid="a3", content=[TextBlock(text="Writing the changelog entry.")])]
    second = codex.FORMAT.parse(_ask(render("codex_handoff.j2", instructions=""), later))
    goal = second.get("request").body
    assert FIRST in goal and "Now add a changelog entry." in goal
    assert codex.OPENING not in goal                     # the summary is not a user request
    assert "Adding ledger_id to the row did not work" in second.get("problem").body  # failed approach carried
    assert "src/export/rows.py" in second.get("critical").body


def test_an_earlier_gemini_snapshot_is_carried_forward():
    first = gemini_cli.extract_snapshot(_ask(render("gemini_snapshot.j2", instructions="")))
    later = [UserMessage(uuid="s", content=first, is_compact_summary=True),
             AssistantMessage(uuid="k", content=[TextBlock(text=gemini_cli.ACKNOWLEDGEMENT)]),
             UserMessage(uuid="u3", content="Now add a changelog entry.")]
    second = gemini_cli.FORMAT.parse(_ask(render("gemini_snapshot.j2", instructions=""), later))
    assert FIRST in second.get("request").body and "src/export/rows.py" in second.get("files").body
    assert "KeyError: 'ledger_id'" in second.get("concepts").body  # key knowledge: errors met


def test_user_messages_merged_by_the_api_are_listed_one_by_one_and_media_stay_with_their_text():
    # consecutive user messages reach the API as one (to_api); a pasted image reaches the summariser
    # as an "[image]" marker (media stripped)
    msgs = [UserMessage(uuid="u1", content=FIRST), UserMessage(uuid="u2", content=SECOND),
            UserMessage(uuid="u3", content=[TextBlock(text="Staging shows this"), TextBlock(text="[image]")])]
    reply = _ask(PromptSet().render_compact(), msgs)
    body = parse_summary(reply).get("user_messages").body
    items = [line for line in body.split("\n") if line.startswith("- ")]
    assert items[:2] == [f'- "{FIRST}"', f'- "{SECOND}"']
    assert items[2].startswith('- "Staging shows this') and "[image]" in body.split(items[2])[1][:40] + items[2]
    assert len(items) == 3  # the marker is not a message of its own
