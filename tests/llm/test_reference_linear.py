"""Parts of the offline reference summary read in one pass instead of once per item (the
10,000-turn benchmark has a thousand failures a span): each gives exactly the answers of its
direct definition, spelled out here."""

from __future__ import annotations

import random
import re
import sys

from pytest_ctxeval.core.messages import AssistantMessage, TextBlock, ToolResultBlock, ToolUseBlock, UserMessage, tool_uses
from pytest_ctxeval.llm.reference import _Carry, _Facts
from pytest_ctxeval.reading.summary import normalize_ws


def span(seed: int) -> list:
    rnd = random.Random(seed)
    history: list = [UserMessage(uuid="u", content="Fix the failing tests.")]
    for n in range(80):
        tool = rnd.choice(["Bash", "Read", "Edit", "Grep"])
        call = f"toolu_{seed}_{n}"
        history.append(AssistantMessage(uuid=f"a{n}", content=[
            TextBlock(text=f"Step {n}."), ToolUseBlock(id=call, name=tool, input={"command": f"run {n}"})]))
        failed = rnd.random() < 0.4
        history.append(UserMessage(uuid=f"r{n}", content=[ToolResultBlock(
            tool_use_id=call, content="AssertionError: expected 3, got 4" if failed else "ok", is_error=failed)]))
    return history


def direct_fix(facts: _Facts, failure) -> str:
    """A later call of the failed tool that did not fail, searched for this failure alone."""
    failed = {f.tool_use_id for f in facts.failures}
    later = [u for m in facts.history[failure.index + 1:] for u in tool_uses(m)
             if u.name == failure.tool and u.id not in failed]
    return " — fixed: a later call succeeded" if later else " — still open"


def test_fix_is_that_of_the_direct_definition() -> None:
    answers = set()
    for seed in range(10):
        facts = _Facts(span(seed), _Carry())
        assert facts.failures
        for failure in facts.failures:
            got = facts._fix(failure)
            assert got == direct_fix(facts, failure)
            answers.add(got)
    assert len(answers) == 2  # both answers occur: the comparison is not between constant strings


def test_normalize_ws_collapses_what_the_regex_did() -> None:
    """normalize_ws splits with str.split(): the same characters as the regex ``\\s`` it replaced."""
    every = "".join(map(chr, range(sys.maxunicode + 1)))
    assert set(re.findall(r"\s", every)) == {c for c in every if c.isspace()}
    rnd = random.Random(0)
    spaces = sorted({c for c in every if c.isspace()})
    for _ in range(2000):
        text = "".join(rnd.choice(spaces + list("ab. \n")) for _ in range(rnd.randint(0, 12)))
        assert normalize_ws(text) == re.sub(r"\s+", " ", text).strip()
