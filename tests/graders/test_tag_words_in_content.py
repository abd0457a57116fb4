"""``<summary>`` and ``<analysis>`` as words in a summary's content are content, not markup.

Summaries quote code and people verbatim: a C# ``/// <summary>`` doc comment in section 3, an HTML
``<details><summary>`` block, a person asking for "an <analysis> block followed by a <summary> block"
(Claude Code 2.1.261's own summary of such a session, found by a fresh reviewer). Read as markup, a
pair inside the content became "the whole summary" (all nine sections "missing") and any mention
failed ``analysis_stripped``. A tag is markup only where the reply's structure has it: at the start of
a line, outside code fences, an opening tag before the first section (reading.summary.wrapper_tags).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pytest_ctxeval.grading.mutants import Mutant
from pytest_ctxeval.grading.registry import cases_from_transcript
from pytest_ctxeval.reading.summary import parse_summary, wrapper_tags
from pytest_ctxeval.transcript import read_transcript

from shared_paths import CORPUS

DOC_COMMENT = ("   - `src/Api/Uploads.cs`: added the size check\n"
               "     /// <summary>\n     /// Rejects uploads over the limit.\n     /// </summary>\n"
               "     public void Check(long size) { ... }\n")
DETAILS = "   - README.md: the usage block\n     <details><summary>Usage</summary> run `app --help` </details>\n"
QUOTE = ('   - "Your entire response must be plain text: an <analysis> block followed by a <summary> block."\n')
FENCED = "   ```xml\n<summary>\n  Rejects uploads.\n</summary>\n   ```\n"


def _summary(kit, files: str = "- src/app.py: edited", users: str = '- "fix the upload"') -> str:
    bodies = {k: "x" for k in kit.SECTION_KINDS}
    bodies.update(files=files, user_messages=users)
    return kit.summary(bodies)


@pytest.mark.parametrize("files, users", [
    (DOC_COMMENT, '- "fix the upload"'),
    (DETAILS, '- "fix the upload"'),
    ("- src/app.py: edited", QUOTE),
    (FENCED, '- "fix the upload"'),
    (DOC_COMMENT + DETAILS + FENCED, QUOTE),
])
def test_tag_words_in_the_content_are_content(grade, kit, files, users):
    text = _summary(kit, files, users)
    assert wrapper_tags(text).summary_tags == 0 and wrapper_tags(text).analysis is None
    assert parse_summary(text).kinds == list(kit.SECTION_KINDS)
    case = kit.case([kit.user("fix the upload")], text)
    for name in ("nine_sections", "analysis_stripped"):
        verdict = grade(name, case)
        assert verdict.status == "pass", (name, verdict.reasons)


def test_the_tags_left_as_markup_still_fail(grade, kit):
    body = _summary(kit, DOC_COMMENT)
    # the scratchpad before the summary
    kept = grade("analysis_stripped", kit.case([kit.user("go")], "<analysis>\nthe user asked ...\n</analysis>\n\n" + body))
    assert kept.status == "fail" and "analysis scratchpad (line 1" in kept.reasons[0]
    # the wrapper left around a summary whose content holds a doc comment: the sections are read
    # inside the wrapper, up to its own (last) closing tag, and the two wrapper tags are reported
    wrapped = "<summary>\n" + body + "\n</summary>"
    tags = wrapper_tags(wrapped)
    assert tags.summary_open == (0, 9) and tags.summary_close == (len(wrapped) - 10, len(wrapped))
    assert parse_summary(wrapped).kinds == list(kit.SECTION_KINDS)
    verdict = grade("analysis_stripped", kit.case([kit.user("go")], wrapped))
    assert verdict.status == "fail" and "(2 tags left)" in verdict.reasons[0]
    # a closing tag left alone on its line
    lone = grade("analysis_stripped", kit.case([kit.user("go")], body + "\n</summary>\n"))
    assert lone.status == "fail" and "(1 tag left)" in lone.reasons[0]
    # an unclosed scratchpad (a reply cut off) is scratchpad to the end
    cut = "<analysis>\nLet me go through the conversation"
    assert wrapper_tags(cut).analysis == (0, len(cut))


_WORDS = st.sampled_from(["<summary>", "</summary>", "<analysis>", "</analysis>", "<Summary>", "/// <summary>",
                          "<details><summary>x</summary>", "`<analysis>`"])


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=st.lists(st.tuples(st.integers(0, 8), _WORDS), min_size=1, max_size=4))
def test_tag_words_inside_any_item_change_no_section(kit, words):
    """Any of the tag words, inside an item of any section, leaves the nine sections as they were."""
    bodies = {k: f"- item of {k}" for k in kit.SECTION_KINDS}
    for index, word in words:
        kind = kit.SECTION_KINDS[index]
        bodies[kind] += f"\n- a line with {word} inside it"
    text = kit.summary(bodies)
    parsed = parse_summary(text)
    assert parsed.kinds == list(kit.SECTION_KINDS)
    for kind in kit.SECTION_KINDS:
        assert parsed.get(kind).body.startswith(f"- item of {kind}")
    assert wrapper_tags(text) == wrapper_tags("")


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not present (set CTXEVAL_SHARED)")
def test_a_real_summary_with_a_doc_comment_and_a_quoted_prompt_keeps_every_verdict(registry):
    """fasthooks 2.0.76 (its one compaction passes every applicable grader): the same summary with a
    C# doc comment in section 3 and tag words quoted in section 6 gets the same verdicts."""
    (case,) = cases_from_transcript(read_transcript(CORPUS / "oneryalcin__fasthooks__sample_main_transcript.jsonl"))
    summary = case.summary
    files_at = summary.index("\n", summary.index("3. Files and Code Sections")) + 1
    users_at = summary.index("\n", summary.index("6. All user messages" if "6. All user messages" in summary
                                                  else "6. All User Messages")) + 1
    edited = summary[:files_at] + DOC_COMMENT + summary[files_at:users_at] + QUOTE.replace(
        '   - "', "   - (quoted in a file) \"") + summary[users_at:]
    mutant = Mutant.of(case, what="tag words in the content", summary=edited).case
    specs = list(registry)
    before = {v.grader: v.status for v in registry.run(case, specs)}
    after = {v.grader: v.status for v in registry.run(mutant, specs)}
    assert after == before
    assert "fail" not in before.values() or before == after


@pytest.mark.parametrize("edit", [
    lambda b: "Summary: <summary>\n" + b + "</summary>",                   # the wrapper left, mid-line
    lambda b: "Here is the summary. <summary>\n" + b + "\n</summary>",
    lambda b: b + " <analysis>Let me double-check the files and errors.</analysis>",   # after section 9
    lambda b: b.replace("1. Primary Request and Intent:\n", "1. Primary Request and Intent: <analysis>Let me go "
                        "through the conversation.</analysis>\n"),
])
def test_markup_left_mid_line_still_fails(grade, kit, edit):
    text = edit(_summary(kit))
    verdict = grade("analysis_stripped", kit.case([kit.user("fix the upload")], text))
    assert verdict.status == "fail", text


@pytest.mark.parametrize("files", [
    "   <details>\n<summary>\nEndpoints\n</summary>\n   </details>\n",       # a multi-line <details> at the margin
    "   ````md\n   ```\n<analysis>\n   ```\n   ````\n",                     # a fence inside a longer fence
])
def test_content_at_the_margin_stays_content(grade, kit, files):
    text = _summary(kit, files)
    assert grade("analysis_stripped", kit.case([kit.user("fix the upload")], text)).status == "pass"
