"""pytest_ctxeval.reporting.report: the HTML page and the Markdown summary, on hostile content (a transcript
holding <script> tags, {{ }} and </html>). The same page in a real browser: test_report_browser.py."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from pytest_ctxeval.cli import main
from pytest_ctxeval.reporting.report import md, render_html, render_markdown

HOSTILE = Path(__file__).resolve().parent / "fixtures" / "hostile_content.yaml"
NASTY = ["<script>document.title='PWNED';alert(1)</script>", "{{ 7*7 }}", "</html>", "\"><img src=x onerror=alert(1)>"]


class Page(HTMLParser):
    """Tags, attributes, ids and text of a page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str, str | None]] = []
        self.ids: set[str] = set()
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for name, value in attrs:
            self.attrs.append((tag, name, value))
            if name == "id" and value:
                self.ids.add(value)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


@pytest.fixture(scope="module")
def hostile_doc(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("hostile") / "results.json"
    assert main(["run", str(HOSTILE), "--json", str(out)]) == 0  # errors_preserved is a declared known failure
    return json.loads(out.read_text(encoding="utf-8"))


def test_results_carry_the_lost_facts_and_their_messages(hostile_doc: dict) -> None:
    scenario = hostile_doc["scenarios"][0]
    lost = scenario["compactions"][0]["lost"]
    assert lost["errors"] == [{"text": "EACCES: permission denied, open 'src/render.py'", "message": 5}]
    assert scenario["messages"]["5"]["role"] == "tool result"
    assert "<script>document.title='PWNED'</script>" in scenario["messages"]["5"]["excerpt"]


def test_html_escapes_hostile_content_everywhere(hostile_doc: dict) -> None:
    html = render_html(hostile_doc)
    page = Page()
    page.feed(html)
    assert "<script" not in html.lower() and html.count("</html>") == 1 and "onerror=alert" not in html.replace(
        "onerror=alert(1)&gt;", "")
    # The charts are inline SVG made of lines, shapes and text only (issue 19): nothing that loads,
    # links or runs anything.
    assert not {"script", "img", "iframe", "object", "embed", "link", "base", "form", "math", "foreignobject",
                "use", "image", "animate", "set"} & set(page.tags)
    assert {"svg", "polyline", "line", "text", "title"} <= set(page.tags)
    assert not [a for a in page.attrs if a[1].startswith("on") or a[1] in ("src", "srcdoc", "formaction")]
    text = "".join(page.text)
    for s in NASTY:
        assert s in text, s  # shown, as text
    assert "49" not in text.replace("1,049", "")  # {{ 7*7 }} was never rendered as a template


def test_html_is_self_contained_and_its_links_resolve(hostile_doc: dict) -> None:
    html = render_html(hostile_doc)
    page = Page()
    page.feed(html)
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    hrefs = [v for tag, name, v in page.attrs if name == "href"]
    assert hrefs and all(h and h.startswith("#") for h in hrefs)
    assert {h[1:] for h in hrefs} <= page.ids
    assert "http://" not in html and "https://" not in html


def test_html_shows_timeline_sections_verdicts_and_what_was_lost(hostile_doc: dict) -> None:
    html = render_html(hostile_doc)
    page = Page()
    page.feed(html)
    text = " ".join("".join(page.text).split())
    assert "Timeline" in text and "microcompact" in text and "full_compaction" in text
    assert "Compaction 1: full, manual, turn" in text
    for title in ("1. Primary Request and Intent", "6. All user messages", "9. Optional Next Step"):
        assert title in text
    assert "What was lost (1)" in text and "error lines (1)" in text
    assert "EACCES: permission denied, open 'src/render.py' · message 5" in text
    assert "hostile-content-m5" in page.ids
    assert "known failure: The idle gap clears" in text
    assert "errors_preserved" in text and "xfail" in text


def test_markdown_is_inert() -> None:
    assert md("<script>alert(1)</script>") == "\\<script\\>alert\\(1\\)\\</script\\>"
    assert md("a | b [x](http://evil) @team `code` *em*") == \
        "a \\| b \\[x\\]\\(http:&#47;&#47;evil\\) &#64;team \\`code\\` \\*em\\*"
    assert md("x" * 300, limit=10) == "x" * 10 + "…"
    assert md("two\nlines") == "two lines"


def test_markdown_summary_of_a_hostile_failure(hostile_doc: dict) -> None:
    doc = json.loads(json.dumps(hostile_doc))
    row = doc["scenarios"][0]["graders"]["verbatim_user_messages"]
    row.update(status="fail", score=0.5, reasons=['user message 1 is not verbatim: "<script>alert(1)</script> |"'])
    text = render_markdown(doc)
    assert text.startswith("### ctxeval: FAILED")
    assert "| hostile\\_content | 1 |" in text
    assert "- **hostile\\_content** · verbatim\\_user\\_messages (0.50): user message 1 is not verbatim: " \
           "\"\\<script\\>alert\\(1\\)\\</script\\> \\|\"" in text
    prose = "\n".join(line for line in text.splitlines() if not line.startswith("|"))  # tables: checked above
    assert re.search(r"(?<!\\)[<>\[\]|`]", prose) is None
    assert "http" not in text
    assert "- **hostile\\_content** compaction 1: error lines: 1" in text


def test_a_results_file_without_prompt_events_or_lost_renders() -> None:
    """``ctxeval grade --json`` of a real transcript: no prompt, no events, summaries at file lines;
    an older results file has no ``lost``."""
    doc = {"format": "pytest-ctxeval/results", "version": 1, "backend": "offline", "model": None, "judge": None,
           "prompt": None, "usage": {"api_calls": 0, "input_tokens": 0, "output_tokens": 0},
           "scenarios": [{"name": "s.jsonl", "source": "/x/s.jsonl", "kind": "transcript", "context_window": None,
                          "error": None, "graders": {"nine_sections": {"kind": "rule", "status": "pass", "score": 1.0,
                                                                        "reasons": ["ok"]}},
                          "compactions": [{"index": 1, "kind": "transcript", "trigger": "manual", "turn": None,
                                           "line": 12, "pre_tokens": 900, "post_tokens": 100,
                                           "summary": "no sections here", "verdicts": []}]}]}
    html = render_html(doc)
    assert "Compaction 1: transcript, manual, line 12" in html and "real transcript" in html
    assert "What was lost" not in html  # not recorded: no claim either way
    assert render_markdown(doc).startswith("### ctxeval: passed")


def test_markdown_lists_each_reason_of_a_failure_on_its_own_line(hostile_doc: dict) -> None:
    """A real session's grader may give six reasons, each a file to find: the report listed them
    joined on one line cut at 240 characters, so only the first could be read (review 7, C3)."""
    doc = json.loads(json.dumps(hostile_doc))
    row = doc["scenarios"][0]["graders"]["files_preserved"]
    reasons = [f"src/module_{n}.py was changed but is not named in section 3 <b>|</b>" for n in range(35)]
    row.update(status="fail", score=0.2, reasons=reasons)
    text = render_markdown(doc)
    assert "- **hostile\\_content** · files\\_preserved (0.20): 35 reasons" in text
    listed = [line for line in text.splitlines() if line.startswith("  - src/module\\_")]
    assert len(listed) == 30 and listed[0] == "  - src/module\\_0.py was changed but is not named in section 3 \\<b\\>\\|\\</b\\>"
    assert "  - … and 5 more" in text
    prose = "\n".join(line for line in text.splitlines() if not line.startswith("|"))
    assert re.search(r"(?<!\\)[<>\[\]|`]", prose) is None   # still inert
