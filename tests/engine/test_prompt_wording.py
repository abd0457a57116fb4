"""The compaction prompts' wording pinned against the seeds (issue 20, item 8).

Each pinned text is written here as the seed gives it (whitespace folded), checked against the
*rendered* prompts (``compact.j2``, ``partial_compact.j2``, ``continuation.j2`` through
:class:`PromptSet`, whatever the templates' layout), and checked to be the seed's wording when the
seeds are present."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from pytest_ctxeval.engine.prompt import PromptSet

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for shared_paths when run alone
from shared_paths import SEEDS_DIR as SEEDS

#: 003:189-197, 004:591-607 (the order matters).
TITLES = ["Primary Request and Intent", "Key Technical Concepts", "Files and Code Sections", "Errors and fixes",
          "Problem Solving", "All user messages", "Pending Tasks", "Current Work", "Optional Next Step"]
#: 003:203-206 (the seed elides the middle with "..."; both ends are pinned).
DIRECTLY = ["IMPORTANT: ensure that this step is DIRECTLY in line with the user's most recent explicit requests",
            "Do not start on tangential requests or really old requests that were already completed without "
            "confirming with the user first."]
#: 003:208-211, 003:572-575.
QUOTES = ("If there is a next step, include direct quotes from the most recent conversation showing exactly what "
          "task you were working on and where you left off. This should be verbatim to ensure there's no drift in "
          "task interpretation.")
#: 003:273-276, 003:583-586.
CONTINUE = ("Continue the conversation from where it left off without asking the user any further questions. "
            "Resume directly — do not acknowledge the summary, do not recap what was happening, do not preface "
            "with \"I'll continue\" or similar. Pick up the last task as if the break never happened.")
#: 003:326-328, 003:614-616, 004:609.
TRANSCRIPT = ("If you need specific details from before compaction (like exact code snippets, error messages, or "
              "content you generated), read the full transcript at:")
#: 004:588.
OPENING = ("This session is being continued from a previous conversation that ran out of context. The summary "
           "below covers the earlier portion of the conversation.")

PROMPTS = PromptSet()
RENDERED = {
    "compact": PROMPTS.render_compact(),
    "compact+instructions": PROMPTS.render_compact("focus on the parser"),
    "partial up_to": PROMPTS.render_partial("up_to"),
    "partial from": PROMPTS.render_partial("from", "focus on the parser"),
}


def fold(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@pytest.mark.parametrize("name", RENDERED)
def test_003_189_the_nine_titles_in_order(name):
    text = fold(RENDERED[name])
    positions = [text.find(f"{i}. {title}:") for i, title in enumerate(TITLES, 1)]
    assert -1 not in positions, [t for t, p in zip(TITLES, positions) if p == -1]
    assert positions == sorted(positions)


@pytest.mark.parametrize("name", RENDERED)
def test_003_203_next_step_directly_in_line_with_the_most_recent_requests(name):
    text = fold(RENDERED[name])
    for sentence in DIRECTLY:
        assert sentence in text
    section9 = text[text.find("9. Optional Next Step:"):]
    assert DIRECTLY[0] in section9, "the rule belongs to section 9"


@pytest.mark.parametrize("name", RENDERED)
def test_003_208_direct_quotes_verbatim(name):
    text = fold(RENDERED[name])
    assert QUOTES in text
    assert text.find(QUOTES) > text.find("9. Optional Next Step:")


@pytest.mark.parametrize("name", RENDERED)
def test_004_479_no_tools_preamble_first_and_trailer_last(name):
    """004:479-482: [NO_TOOLS_PREAMBLE][BASE_COMPACT_PROMPT][Additional Instructions][NO_TOOLS_TRAILER]:
    both forbid tool calls and ask for an <analysis> block and a <summary> block."""
    paragraphs = [p for p in re.split(r"\n\s*\n", RENDERED[name]) if p.strip()]
    first, last = paragraphs[0], paragraphs[-1]
    for part in (first, last):
        assert re.search(r"do not call any tools", part, re.IGNORECASE), part
        assert "<analysis>" in part and "<summary>" in part, part
    text = fold(RENDERED[name])
    if "instructions" in name or "from" in name:
        extra = text.find("Additional Instructions: focus on the parser")
        assert text.find("9. Optional Next Step:") < extra < text.find(fold(last)), "instructions before the trailer"


@pytest.mark.parametrize("auto", [True, False])
def test_003_273_continuation_and_transcript_path_texts(auto):
    message = PROMPTS.render_continuation("1. Primary Request and Intent: x", "~/.claude/projects/p/s.jsonl", auto=auto)
    text = fold(message)
    assert text.startswith(OPENING + " Summary: 1. Primary Request and Intent: x")
    assert f"{TRANSCRIPT} ~/.claude/projects/p/s.jsonl" in text
    assert (CONTINUE in text) is auto, "the continuation instruction ends an automatic compaction's message"
    if auto:
        assert text.endswith(CONTINUE)


def test_the_partial_from_summary_says_recent_portion():
    text = fold(PROMPTS.render_continuation("s", "t.jsonl", auto=False, portion="recent"))
    assert text.startswith(OPENING.replace("earlier portion", "recent portion"))


@pytest.mark.skipif(not SEEDS.is_dir(), reason="the seeds are not available (set CTXEVAL_SHARED)")
@pytest.mark.parametrize("pinned", [*DIRECTLY, QUOTES, CONTINUE, TRANSCRIPT, OPENING, *TITLES],
                         ids=lambda p: p[:40])
def test_pinned_texts_are_the_seeds_wording(pinned):
    seeds = fold(" ".join(p.read_text(encoding="utf-8") for p in SEEDS.glob("0*.txt")))
    assert fold(pinned).rstrip("`") in seeds.replace("`", "")
