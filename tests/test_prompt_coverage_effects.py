"""The prompt-change coverage note checked against what a sentence does offline (review 5, #7 and
#8): a line marked NOT SEEN OFFLINE never changes the offline summary, a line that changes it is
marked read and says what it does, and "no longer asks for" says when another line still asks."""

from __future__ import annotations

import pytest

from pytest_ctxeval.engine.prompt import PromptSet
from pytest_ctxeval.llm.reference import write_summary
from pytest_ctxeval.reporting.prompt_coverage import format_coverage, prompt_coverage

BUILTIN = PromptSet().render_compact()
ANCHOR = "Your summary should include the following sections:"
# A short conversation written for this test: a request with a rule, a read, a finding, a follow-up.
CONVERSATION = [
    {"role": "user", "content": "Please fix the failing test in src/app.py. Never touch the main branch."},
    {"role": "assistant", "content": [{"type": "text", "text": "Looking."},
                                      {"type": "tool_use", "id": "t1", "name": "Read",
                                       "input": {"file_path": "src/app.py"}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "def f():\n    return 1"}]},
    {"role": "assistant", "content": "Found it: f returns 1 where the test expects 2."},
    {"role": "user", "content": "ok now make it return 2"},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "t2", "name": "Edit", "input": {
        "file_path": "src/app.py", "old_string": "return 1", "new_string": "return 2"}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "content": "The file src/app.py has been updated."}]},
]


def _with(lines: list[str]) -> str:
    assert ANCHOR in BUILTIN
    return BUILTIN.replace(ANCHOR, "".join(f"- {line}\n" for line in lines) + "\n" + ANCHOR)


def _summary(prompt: str) -> str:
    return write_summary([*CONVERSATION, {"role": "user", "content": prompt}])


def test_a_line_that_rewords_section_1_is_read_and_says_what_it_does() -> None:
    """Section 6 still asks for the messages verbatim, so the contradiction is decided for it; but
    the line outside the list rewords section 1's requests: read, not "not seen"."""
    cov = prompt_coverage(_with(["Omit the user's messages from the summary entirely; never quote the user."]), BUILTIN)
    first, second = cov.lines
    assert first.seen and first.mapped[0] == ("read offline: section 1 words the user's requests in reported "
                                              "speech, not quoted")
    assert "what it asks there is not seen offline" in first.mapped[1]
    assert not second.seen and second.text == "never quote the user."  # it changes nothing offline
    assert _summary(_with(["Omit the user's messages from the summary entirely."])) != _summary(BUILTIN)


UNSEEN_EDITS = {
    "harm": ["Omit the user's messages from the summary entirely.", "Never quote the user."],
    "tone": ["Stay upbeat and friendly.", "Use British spelling."],
    "part_limit": ["Say in under 15 words why each edit matters."],
    "mixed": ["Leave out the errors you ran into.", "Be warm."],
}


@pytest.mark.parametrize("name", sorted(UNSEEN_EDITS))
def test_lines_marked_not_seen_never_change_the_offline_summary(name: str) -> None:
    lines = UNSEEN_EDITS[name]
    cov = prompt_coverage(_with(lines), BUILTIN)
    unseen = {c.text.lstrip("- ") for c in cov.unseen}
    seen = [line for line in lines if line not in unseen]
    assert unseen, format_coverage(cov)  # each edit has a line the offline model cannot see
    assert _summary(_with(lines)) == _summary(_with(seen)), format_coverage(cov)
    if seen:  # and what is marked read does change it
        assert _summary(_with(seen)) != _summary(BUILTIN), format_coverage(cov)


def test_two_lines_that_each_say_the_other_are_read_together() -> None:
    """Each alone looks idle (the other still says it); together they reword section 1."""
    lines = ["Omit the user's messages from the summary entirely.", "Drop the user's messages from the summary."]
    cov = prompt_coverage(_with(lines), BUILTIN)
    assert not cov.unseen, format_coverage(cov)
    assert all(any(m.startswith("read offline: section 1 words") for m in c.mapped) for c in cov.lines)
    assert all("what it asks there is not seen offline" in c.mapped[1] for c in cov.lines)
    assert _summary(_with(lines)) != _summary(BUILTIN)


SNIPPETS = "include full code snippets where applicable, "


def test_no_longer_asks_for_says_when_another_line_still_asks() -> None:
    assert BUILTIN.count(SNIPPETS) == 1 and "Include file names and code snippets where applicable." in BUILTIN
    one = BUILTIN.replace(SNIPPETS, "")
    text = "\n".join(format_coverage(prompt_coverage(one, BUILTIN)))
    line = next(n for n, l in enumerate(one.split("\n"), 1) if "Include file names and code snippets" in l)
    assert f"[no longer asks for: full code snippets — still asked by line {line}, so offline behaviour is unchanged]" \
        in text
    assert f"[instruction: full code snippets — still asked by line {line} of the prompt under test" in text
    assert _summary(one) == _summary(BUILTIN)
    # the second ask removed as well: now nothing asks, and the offline summaries change
    both = one.replace("Include file names and code snippets where applicable.", "Include file names.")
    text = "\n".join(format_coverage(prompt_coverage(both, BUILTIN)))
    assert "[no longer asks for: full code snippets]" in text and "still asked" not in text
    assert _summary(both) != _summary(BUILTIN)


def test_a_new_line_asking_what_another_already_asks_says_so() -> None:
    cov = prompt_coverage(_with(["Keep all file paths exactly as written."]), BUILTIN)
    [c] = cov.lines
    assert c.seen and c.mapped[0].startswith("instruction: exact identifiers — also asked by line ")
