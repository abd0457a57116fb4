"""A session file saved with a UTF-8 byte-order mark (PowerShell's ``Out-File``, some Windows editors)
is read whole (review finding F30): its first record, the session's main request, is not lost, and the
grade counts it. CRLF line ends are read alike."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from session_kit import Session

from pytest_ctxeval.grading import load_graders
from pytest_ctxeval.grading.registry import cases_from_transcript
from pytest_ctxeval.transcript import read_transcript

FIRST = "The order sync drops orders on a 503. Make fetch_orders retry three times."
LAST = "looks good. now do the same for fetch_invoices"


def _session(tmp_path: Path, *, bom: bool, crlf: bool = False, keep_first: bool = True) -> Path:
    s = Session()
    s.user(FIRST)
    s.assistant(text="Reading it.")
    s.user(LAST)
    s.assistant(text="On it.")
    first = f'   - "{FIRST}"\n' if keep_first else ""
    s.compact("Summary:\n1. Primary Request and Intent:\n   Retries for the order and invoice sync.\n"
              f"6. All user messages:\n{first}   - \"{LAST}\"\n9. Optional Next Step:\n   \"{LAST}\"\n", trigger="auto")
    path = s.write(tmp_path / "s.jsonl")
    data = path.read_bytes()
    if crlf:
        data = data.replace(b"\n", b"\r\n")
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + data)
    return path


def _verdict(path: Path):
    registry = load_graders()
    (case,) = cases_from_transcript(read_transcript(path))
    (verdict,) = registry.run(case, [registry.get("verbatim_user_messages")])
    return verdict


def test_a_leading_byte_order_mark_loses_no_record(tmp_path):
    plain, marked = read_transcript(_session(tmp_path, bom=False)), read_transcript(_session(tmp_path, bom=True, crlf=True))
    assert [m.uuid for m in marked.messages] == [m.uuid for m in plain.messages]
    assert marked.problems == plain.problems == []
    assert marked.messages[0].content == FIRST


def test_the_main_request_of_a_marked_file_is_graded(tmp_path):
    verdict = _verdict(_session(tmp_path, bom=True, crlf=True))
    assert verdict.status == "pass" and "all 2 person-typed messages" in verdict.reasons[0], verdict.reasons
    # the summary dropping the first request fails: the record is read, so it is missed
    verdict = _verdict(_session(tmp_path, bom=True, crlf=True, keep_first=False))
    assert verdict.status == "fail"
    assert any(FIRST[:40] in r for r in verdict.reasons), verdict.reasons
