"""Tests for pytest_ctxeval.reading.summary: formatting replies, parsing the nine sections, real summaries."""

from __future__ import annotations

import json

import pytest

from pytest_ctxeval.reading.summary import (
    SECTION_KINDS, SECTION_TITLES, analysis_span, format_compact_summary, normalize_ws, parse_summary,
    section_kind,
)

from shared_paths import CORPUS_DIR as CORPUS, REASON, SHARED
ALL_KINDS = ["request", "concepts", "files", "errors", "problem", "user_messages", "pending", "current", "next"]
TITLES = ["Primary Request and Intent", "Key Technical Concepts", "Files and Code Sections", "Errors and fixes",
          "Problem Solving", "All user messages", "Pending Tasks", "Current Work", "Optional Next Step"]


def build(header, titles=TITLES):
    """A summary with one header per title (``header(n, title)``) and a body 'body n'."""
    lines = []
    for n, title in enumerate(titles, start=1):
        lines.append(header(n, title))
        lines.append(f"   - body {n}")
        lines.append("")
    return "\n".join(lines)


def test_section_vocabulary_constants():
    assert list(SECTION_KINDS) == ALL_KINDS
    assert [SECTION_TITLES[k] for k in SECTION_KINDS] == TITLES


# --- format_compact_summary ------------------------------------------------------------------

@pytest.mark.parametrize("raw,expected", [
    ("<analysis>think hard</analysis>\n<summary>1. Primary Request and Intent:\n x</summary>",
     "1. Primary Request and Intent:\n x"),
    ("<analysis>a</analysis>\n\n<summary>\nS body\n</summary>\ntrailing", "S body"),
    ("<ANALYSIS>a</ANALYSIS><Summary>S</Summary>", "S"),
    ("No tags at all.\n1. Primary Request and Intent: x\n", "No tags at all.\n1. Primary Request and Intent: x"),
    ("<analysis>scratch</analysis>\nPlain summary text", "Plain summary text"),
    ("<analysis>scratch</analysis>\n<summary>\nCut off mid summary", "Cut off mid summary"),
    ("<summary>S</summary>\n<analysis>late scratchpad, never closed", "S"),
    ("Intro text\n<analysis>cut off mid scratchpad 1. Primary Request and Intent: leak", "Intro text"),
    ("<analysis>only scratchpad, never closed", ""),
    ("<analysis>one</analysis><analysis>two</analysis><summary>S</summary>", "S"),
])
def test_format_compact_summary(raw, expected):
    assert format_compact_summary(raw) == expected


def test_format_compact_summary_keeps_inner_structure():
    raw = "<analysis>\n1. Primary Request and Intent: wrong\n</analysis>\n<summary>\n" + build(
        lambda n, t: f"{n}. {t}:") + "</summary>"
    out = format_compact_summary(raw)
    assert "wrong" not in out
    assert out.startswith("1. Primary Request and Intent:")
    assert parse_summary(out).kinds == ALL_KINDS


# --- parse_summary: header styles --------------------------------------------------------------

@pytest.mark.parametrize("style,header", [
    ("canonical", lambda n, t: f"{n}. {t}:"),
    ("markdown", lambda n, t: f"## {n}. {t}"),
    ("markdown-colon", lambda n, t: f"### {n}. {t}:"),
    ("bold-all", lambda n, t: f"**{n}. {t}:**"),
    ("bold-title", lambda n, t: f"{n}. **{t}**:"),
    ("bold-title-colon-inside", lambda n, t: f"{n}. **{t}:**"),
    ("paren", lambda n, t: f"{n}) {t}:"),
    ("title-case", lambda n, t: f"{n}. {t.title()}:"),
])
def test_parse_summary_header_styles(style, header):
    parsed = parse_summary(build(header))
    assert parsed.kinds == ALL_KINDS, style
    assert [s.number for s in parsed.sections] == list(range(1, 10))
    for n, section in enumerate(parsed.sections, start=1):
        assert section.body == f"- body {n}", (style, section)


def test_parse_summary_title_case_variants():
    text = ("1. Primary Request and Intent:\n x\n4. Errors and Fixes:\n e\n6. All User Messages:\n - \"hi\"\n")
    parsed = parse_summary(text)
    assert parsed.kinds == ["request", "errors", "user_messages"]
    assert parsed.get("errors").title == "Errors and Fixes"
    assert parsed.get("user_messages").body == '- "hi"'


def test_parse_summary_line_numbers_and_titles():
    parsed = parse_summary(build(lambda n, t: f"{n}. {t}:"))
    assert [s.line for s in parsed.sections] == [1 + 3 * i for i in range(9)]
    assert [s.title for s in parsed.sections] == TITLES


def test_parse_summary_duplicate_numbering_2_1_39():
    titles = TITLES[:]
    text = "\n".join([
        "1. Primary Request and Intent:", "  r",
        "2. Key Technical Concepts:", "  c",
        "3. Files and Code Sections:", "  f",
        "4. Errors and fixes:", "  e",
        "5. Problem Solving:", "  p",
        "6. All user messages:", "  - \"do it\"",
        "6. Pending Tasks:", "  - task",
        "7. Current Work:", "  w",
        "8. Optional Next Step:", "  n",
    ])
    parsed = parse_summary(text)
    assert parsed.kinds == ALL_KINDS
    assert [s.number for s in parsed.sections] == [1, 2, 3, 4, 5, 6, 6, 7, 8]
    assert parsed.get("user_messages").body == '- "do it"'
    assert parsed.get("pending").body == "- task"
    assert parsed.get("next").body == "n"
    assert titles == TITLES


def test_parse_summary_inline_body():
    parsed = parse_summary("8. Current Work:\n editing a.py\n9. Optional Next Step: run tests")
    assert parsed.get("next").body == "run tests"
    assert parsed.get("current").body == "editing a.py"


def test_parse_summary_inline_body_with_continuation():
    parsed = parse_summary("9. Optional Next Step: run tests\n   then commit")
    body = parsed.get("next").body
    assert body.startswith("run tests\n") and body.endswith("then commit")
    assert normalize_ws(body) == "run tests then commit"


def test_parse_summary_ignores_numbered_lines_in_analysis_part():
    text = "\n".join([
        "This session is being continued from a previous conversation.",
        "Analysis:",
        "1. Primary request: the user wanted X",
        "2. Errors encountered: none",
        "3. Files touched: a.py",
        "",
        "Summary:",
        "1. Primary Request and Intent:",
        "   real request",
        "4. Errors and fixes:",
        "   real errors",
    ])
    parsed = parse_summary(text)
    assert parsed.kinds == ["request", "errors"]
    assert parsed.get("request").body == "real request"
    assert parsed.get("request").line == 8
    assert parsed.get("errors").line == 10
    assert parsed.body("request", "errors") == "real request\nreal errors"
    assert parsed.text == text


def test_parse_summary_searches_inside_summary_tags_only():
    text = "<analysis>\n1. Primary Request and Intent: fake\n</analysis>\n<summary>\n1. Primary Request and Intent: real\n</summary>"
    parsed = parse_summary(text)
    assert [(s.kind, s.body, s.line) for s in parsed.sections] == [("request", "real", 5)]


def test_parse_summary_item_does_not_become_section_4():
    text = "\n".join([
        "1. Primary Request and Intent:",
        "   Add logging.",
        "2. Key Technical Concepts:",
        "   1. Added logging module:",
        "   2. Added error handling:",
        "   3. Retry logic",
        "3. Files and Code Sections:",
        "   - app.py",
        "4. Errors and fixes:",
        "   - KeyError fixed",
        "5. Problem Solving:",
        "   solved",
    ])
    parsed = parse_summary(text)
    assert parsed.kinds == ["request", "concepts", "files", "errors", "problem"]
    errors = parsed.get("errors")
    assert errors.number == 4 and errors.title == "Errors and fixes"
    assert errors.body == "- KeyError fixed"
    assert "2. Added error handling:" in parsed.get("concepts").body
    assert "3. Retry logic" in parsed.get("concepts").body


def test_parse_summary_numbered_user_messages_stay_in_section_6():
    text = "\n".join([
        "6. All user messages:",
        "   1. First user message: \"ssh into my router\"",
        "   2. Second user message: \"docker status\"",
        "7. Pending Tasks:",
        "   none",
    ])
    parsed = parse_summary(text)
    assert parsed.kinds == ["user_messages", "pending"]
    body = parsed.get("user_messages").body
    assert body.splitlines() == ['1. First user message: "ssh into my router"',
                                 '2. Second user message: "docker status"']


def test_parse_summary_loose_titles_via_vocabulary():
    parsed = parse_summary("1. User Intent:\n x\n2. Errors Encountered:\n y\n3. Next Steps:\n z")
    assert parsed.kinds == ["request", "errors", "next"]


def test_parse_summary_unknown_headers_and_no_sections():
    assert parse_summary("1. Lunch plans:\n pizza\n2. Weather:\n sunny").sections == []
    assert parse_summary("").sections == []
    parsed = parse_summary("just prose without headers")
    assert parsed.kinds == [] and parsed.get("request") is None and parsed.body("request") == ""


def test_parse_summary_first_header_of_a_kind_wins():
    parsed = parse_summary("7. Pending Tasks:\n a\n7. Pending Tasks:\n b\n8. Current Work:\n c")
    assert parsed.kinds == ["pending", "current"]
    assert parsed.get("pending").body == "a\n7. Pending Tasks:\n b"


# --- analysis_span -------------------------------------------------------------------------------

def test_analysis_span_element():
    text = "<analysis>abc</analysis>rest"
    assert analysis_span(text) == (0, len("<analysis>abc</analysis>"))


def test_analysis_span_unclosed_element():
    text = "intro <analysis>never closed"
    assert analysis_span(text) == (6, len(text))


def test_analysis_span_analysis_part_before_summary():
    text = "Continued.\nAnalysis:\nthinking\nmore\n\nSummary:\n1. Primary Request and Intent: x"
    start, end = analysis_span(text)
    assert text[start:end] == "Analysis:\nthinking\nmore\n\n"


def test_analysis_span_analysis_without_summary_runs_to_end():
    text = "Analysis:\nonly thinking"
    assert analysis_span(text) == (0, len(text))


def test_analysis_span_none():
    assert analysis_span("1. Primary Request and Intent: x") is None
    assert analysis_span("The analysis: was fine") is None


# --- section_kind ------------------------------------------------------------------------------

@pytest.mark.parametrize("title,kind", [
    ("Primary Request and Intent", "request"), ("Primary Goal", "request"), ("User Intent", "request"),
    ("Objective", "request"), ("Goal", "request"),
    ("Key Technical Concepts", "concepts"), ("Key Knowledge", "concepts"),
    ("Files and Code Sections", "files"), ("Artifacts", "files"), ("Code Section", "files"),
    ("Errors and fixes", "errors"), ("Errors and Fixes", "errors"), ("Failures", "errors"),
    ("**Errors**", "errors"),
    ("Problem Solving", "problem"), ("Troubleshooting", "problem"), ("Problem-solving", "problem"),
    ("All user messages", "user_messages"), ("All User Messages", "user_messages"),
    ("Messages from the user", "user_messages"), ("User's messages", "user_messages"),
    ("Pending Tasks", "pending"), ("TODOs", "pending"), ("Remaining work", "pending"), ("Open tasks", "pending"),
    ("Current Work", "current"), ("Current State", "current"), ("Recent actions", "current"),
    ("Optional Next Step", "next"), ("Next Steps", "next"), ("Next action", "next"),
    ("## `Current   Work`", "current"),
])
def test_section_kind(title, kind):
    assert section_kind(title) == kind


@pytest.mark.parametrize("title", ["Lunch plans", "", "   ", "***", "Weather", "x" * 61 + " errors"])
def test_section_kind_none(title):
    assert section_kind(title) is None


def test_normalize_ws():
    assert normalize_ws("  a \n\t b  c ") == "a b c"


# --- the three real summaries in the corpus ------------------------------------------------------

REAL = [
    ("oneryalcin__fasthooks__sample_main_transcript.jsonl", 60),
    ("M-Thisness__M-Claude__97b0ffde-ece9-4977-91cb-5c8cdeabdf3f.jsonl", 139),
    ("marot__spotter__8463c716-a2ea-4c14-9efa-87158ebd9f20__prefix-715.jsonl", 715),
]


def _summary_text(name: str, line: int) -> str:
    if SHARED is None:
        pytest.skip(REASON)
    with (CORPUS / name).open(encoding="utf-8") as fh:
        for number, raw in enumerate(fh, start=1):
            if number == line:
                record = json.loads(raw)
                break
    assert record["isCompactSummary"] is True
    content = record["message"]["content"]
    return content if isinstance(content, str) else "\n".join(
        b["text"] for b in content if b.get("type") == "text")


@pytest.mark.parametrize("name,line", REAL, ids=["fasthooks", "M-Thisness", "spotter"])
def test_real_summaries_have_all_nine_sections_in_order(name, line):
    text = _summary_text(name, line)
    assert text.startswith("This session is being continued from a previous conversation")
    parsed = parse_summary(text)
    assert parsed.kinds == ALL_KINDS
    assert [s.number for s in parsed.sections] == list(range(1, 10))
    assert all(s.body for s in parsed.sections)
    lines = text.splitlines()
    span = analysis_span(text)
    assert span is not None
    for section in parsed.sections:
        header = lines[section.line - 1]
        assert section.title in header
        # every section header lies after the analysis part
        assert text.index(header) >= span[1]


def test_real_fasthooks_user_messages_section():
    parsed = parse_summary(_summary_text(*REAL[0]))
    body = parsed.get("user_messages").body
    for quote in ["can you run a command ls -la", "can you read it back with Read tool?",
                  "can you run `cat nonexistent.txt`"]:
        assert quote in body
    assert "nonexistent.txt" in parsed.get("errors").body


def test_real_m_thisness_analysis_items_not_sections():
    text = _summary_text(*REAL[1])
    parsed = parse_summary(text)
    # The analysis part numbers the user's messages 1.-4.; they are not section headers.
    request = parsed.get("request")
    assert request.number == 1 and request.title == "Primary Request and Intent"
    assert "ssh into my router" in parsed.get("user_messages").body
