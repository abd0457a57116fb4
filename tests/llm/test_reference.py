"""The offline reference summariser keeps memory-file rules and failed attempts, and carries them
(with its findings) from one summary to the next."""

from __future__ import annotations

from pytest_ctxeval.engine.prompt import PromptSet
from pytest_ctxeval.reading.extract import failed_attempts, memory_rules
from pytest_ctxeval.llm.summary_text import FAILED_HEADER, FINDINGS_HEADER, RULES_HEADER
from pytest_ctxeval.llm.reference import write_session_notes, write_summary
from pytest_ctxeval.core.messages import AssistantMessage, TextBlock, UserMessage, to_api
from pytest_ctxeval.reading.summary import format_compact_summary, parse_summary

MEMORY = ("<system-reminder>\nAs you answer the user's questions, you can use the following context:\n"
          "Contents of /srv/shop/ops/CLAUDE.md (project instructions, checked into the codebase):\n\n"
          "# Servers\n- Always back up a file before editing it on the server\n- Reload, never restart\n\n"
          "      IMPORTANT: this context may or may not be relevant to your tasks.\n</system-reminder>")


def user(text: str, **kw) -> UserMessage:
    return UserMessage(uuid=f"u{abs(hash(text)) % 10**8}", content=text, **kw)


def say(text: str) -> AssistantMessage:
    return AssistantMessage(uuid=f"a{abs(hash(text)) % 10**8}", content=[TextBlock(text=text)])


def summarise(messages) -> str:
    return format_compact_summary(write_summary(to_api(messages) + [{"role": "user", "content": PromptSet().render_compact()}]))


def test_memory_rules_are_read_from_the_claude_md_reminder() -> None:
    assert memory_rules([user(MEMORY, is_meta=True)]) == ["Always back up a file before editing it on the server",
                                                          "Reload, never restart"]
    assert memory_rules([user("<system-reminder>\nThe date is 2026-01-05\n</system-reminder>")]) == []
    assert memory_rules([user("Contents of /x/CLAUDE.md (notes):\n- not in a reminder")]) == []


def test_failed_attempts_are_what_the_assistant_said_did_not_work() -> None:
    history = [say("Reading the module."), user("ok"),
               say("coupons.get(key) did not fix it: the discount is not applied. Reverting."), user("ok"),
               say("The export failed at the upload step: an IAM problem.")]
    assert failed_attempts(history) == ["coupons.get(key) did not fix it: the discount is not applied. Reverting."]


def test_rules_failures_and_findings_survive_a_second_summary() -> None:
    first = summarise([user("Fix the 502s on the web hosts."), user(MEMORY, is_meta=True),
                       say("Raising the timeout to 10s did not help: the 502s continue under load. Reverting it."),
                       user("go on"),
                       say("The workers are saturated: 2 gunicorn workers on 8 cores queue every request.")])
    parsed = parse_summary(first)
    assert RULES_HEADER in parsed.get("request").body
    assert FAILED_HEADER in parsed.get("problem").body and FINDINGS_HEADER in parsed.get("problem").body
    summary_message = f"This session is being continued from a previous conversation.\n\nSummary:\n{first}"
    second = summarise([user(summary_message, is_compact_summary=False), say("ok"), user("Now set 17 workers.")])
    assert "- Always back up a file before editing it on the server" in second
    assert "Raising the timeout to 10s did not help" in second
    assert "2 gunicorn workers on 8 cores" in second
    assert second.count("Raising the timeout to 10s did not help") == 1, "a failed attempt is not also a finding"


def test_session_notes_keep_rules_and_failed_attempts() -> None:
    messages = to_api([user("Fix the 502s."), user(MEMORY, is_meta=True),
                       say("Raising the timeout to 10s did not help. Reverting it.")])
    notes = write_session_notes(messages + [{"role": "user", "content": PromptSet().render_session_memory_update(None)}])
    assert "- Rule: Always back up a file before editing it on the server" in notes
    assert "- Failed approach: Raising the timeout to 10s did not help. Reverting it." in notes
