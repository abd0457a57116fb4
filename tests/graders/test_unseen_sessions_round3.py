"""Grader classes found on more real Claude Code summaries the project had not seen (round 3: a
Japanese session exported as a markdown dev log, compacted three times in a row, each summary
written from a session resumed from the one before), graded with ``ctxeval grade -v`` and read by
hand. Each test is a hand-built case of the class, in words written for the test: the good summary
passes, the defective one fails with a reason that names what is wrong."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from graders.judge import is_bare_reply
from pytest_ctxeval.grading.judging import Judge
from pytest_ctxeval.grading.registry import cases_from_transcript
from pytest_ctxeval.llm import make_llm
from pytest_ctxeval.transcript.jsonl import read_transcript

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: transcript_builder
from transcript_builder import Builder, summary_text

REQUEST = "Make the log viewer's filter buttons the same width and add a tooltip to the entry counter"


def _drift(registry, tmp_path: Path, opening: str, request: str, keeps: bool):
    """A transcript that opens with ``opening`` (what a transcript that starts mid-work opens with),
    then asks ``request``, compacted three times; each summary's request and next step keep the
    request (``keeps``) or turn to an unrelated task."""
    b = Builder("2.1.1")
    b.typed(opening)
    b.reply(text="Glad it works.")
    for n in range(3):
        b.typed(request if n == 0 else f"also check the counter tooltip wording, round {n}")
        b.reply(text=f"Done, round {n}.")
        b.boundary("auto", 150_000)
        ask = request if keeps else "Migrate the billing service to the new payments API"
        b.summary(summary_text("2.1.1", ask))
    path = tmp_path / "session.jsonl"
    b.write(path)
    cases = cases_from_transcript(read_transcript(path))
    last = cases[-1]
    last.judge = Judge(make_llm("offline"))
    (verdict,) = registry.run(last, [registry.get("drift")])
    return verdict


@pytest.mark.parametrize("opening", ["OK, that worked.", "continue", "はい。", "OKでした。"])
def test_drift_holds_generations_to_the_first_request_not_an_opening_acknowledgement(registry, tmp_path, opening):
    """A real Japanese session's exported log starts mid-work with "that was OK" (the work before it is
    in another file). Drift took that acknowledgement as the first request: a generation that kept
    the whole request and quoted the latest one held a third of the "original intent" and drifted,
    offline (2/5). The first request is the first message that asks for something."""
    good = _drift(registry, tmp_path, opening, REQUEST, keeps=True)
    assert good.status == "pass", good.reasons
    bad = _drift(registry, tmp_path, opening, REQUEST, keeps=False)
    assert bad.status == "fail", bad.reasons
    assert "generation 1" in bad.reasons[0], bad.reasons


def test_a_message_that_asks_for_something_is_not_a_bare_reply():
    """The other side: a reply word that opens a request, a short request, or one that names a file
    or a number is the person's intent, and stays the first request."""
    for text in ("ok thanks", "yes, please do", "continue", "OKでした。", "はい。", "ありがとうございます", "Danke!", "да"):
        assert is_bare_reply(text), text
    for text in ("ok, now delete the old parser", "fix it", "yesterday the build broke", "ok fix v2",
                 "好，把这个函数删掉", "okapi tests are slow", "Weitermachen bitte mit dem Parser", REQUEST):
        assert not is_bare_reply(text), text


# --- pending tasks: where a pass found each task ----------------------------------------------------

def _pending_case(kit, pending: str, current: str):
    msgs = [kit.user("drop the legacy export checkbox and always trim the marked segments"),
            *kit.todo(("Remove the trim checkbox from the export dialog", "in_progress"),
                      ("Make load_export_settings always return trim=True", "pending")),
            kit.say("Removing the checkbox first.")]
    base = {k: "x" for k in kit.SECTION_KINDS}
    base.update(pending=pending, current=current)
    return kit.case(msgs, kit.summary(base))


def test_a_pass_says_which_open_tasks_only_sections_8_9_tell(grade, kit):
    """A real summary listed two of three open todos in section 7 and told the one in progress only in
    section 8 ("Removing the checkbox from the dialog ... still need to ..."); the pass said "all 3 open
    tasks in section 7", and with section 7 emptied it said the same. A pass names where it found them."""
    good = _pending_case(kit, "- Make `load_export_settings` always return trim=True",
                         "Removing the trim checkbox from the export dialog: the widget is gone, its saved setting is next.")
    verdict = grade("pending_tasks", good)
    assert verdict.status == "pass", verdict.reasons
    assert "1 in section 7" in verdict.reasons[0] and "1 told only in sections 8-9" in verdict.reasons[0], verdict.reasons
    assert "Remove the trim checkbox" in verdict.reasons[0]
    # both in section 7: the plain reason
    both = _pending_case(kit, "- Remove the trim checkbox from the export dialog\n"
                              "- Make `load_export_settings` always return trim=True", "Editing the dialog.")
    verdict = grade("pending_tasks", both)
    assert verdict.status == "pass" and "told only" not in verdict.reasons[0], verdict.reasons
    # in neither: a failure that names the lost task
    bad = _pending_case(kit, "- Make `load_export_settings` always return trim=True", "Editing the dialog styles.")
    verdict = grade("pending_tasks", bad)
    assert verdict.status == "fail", verdict.reasons
    assert "Remove the trim checkbox from the export dialog" in verdict.reasons[0], verdict.reasons


# --- next_step_quote: quote marks inside a fenced code block are code ------------------------------

GUIDE = "now write a second guide, for the desktop pages this time, in the same style"


def _guide_case(kit, next_step: str):
    msgs = [kit.user("write a guide for the mobile layout"), kit.say("Written."), kit.user(GUIDE),
            *kit.tool("Write", {"file_path": "docs/DESKTOP_GUIDE.md", "content": "x"}, "File created"),
            kit.say("The desktop guide is written.")]
    return kit.case(msgs, _s(kit, current=f'The user\'s exact request: "{GUIDE}"', next=next_step))


def _s(kit, **bodies: str) -> str:
    base = {k: "x" for k in kit.SECTION_KINDS}
    base.update(bodies)
    return kit.summary(base)


COMMIT = 'Commit the new guide:\n   ```bash\n   git add docs && git commit -m "docs: add the desktop guide"\n   ```'


def test_a_commit_message_in_a_fenced_command_is_not_a_misquote(grade, kit):
    """A real Korean 2.0.x session's section 9 proposed ``git commit -m "docs: …"`` in a fenced bash
    block and quoted nothing else; the grader read the commit message as a quote of the conversation
    and failed the step for "quoting" words nobody said. It fails (the step quotes nothing), with that
    reason, and names where section 8 quotes the request."""
    verdict = grade("next_step_quote", _guide_case(kit, COMMIT + "\n   This follows the request for a desktop guide."))
    assert verdict.status == "fail"
    assert "quotes nothing" in verdict.reasons[0] and "docs: add the desktop guide" not in verdict.reasons[0], verdict.reasons
    assert "section 8 quotes it" in verdict.reasons[0], verdict.reasons


def test_a_fenced_command_beside_a_quote_of_the_request_passes_on_the_quote(grade, kit):
    good = grade("next_step_quote", _guide_case(kit, COMMIT + f'\n   As asked: "{GUIDE}"'))
    assert good.status == "pass" and GUIDE[:40] in good.reasons[0], good.reasons
    # the person's words in quote marks inside a fence are still a quote of them
    fenced = grade("next_step_quote", _guide_case(kit, f'Commit the guide.\n   ```\n   User: "{GUIDE}"\n   ```'))
    assert fenced.status == "pass" and GUIDE[:40] in fenced.reasons[0], fenced.reasons
    # and a misquote outside the fence is still one
    bad = grade("next_step_quote", _guide_case(kit, COMMIT + '\n   As asked: "now write a second guide for the tablet pages"'))
    assert bad.status == "fail" and "tablet" in bad.reasons[0], bad.reasons
