"""Defective and harmless edits of the labelled real summaries (not a test): misses and false alarms.

    CTXEVAL_SHARED=../shared python benchmarks/edited_summaries.py [--kind NAME] [-v]

Each *defect* kind edits the summary the way a careless summariser gets it wrong (an error told
against the wrong file, a constraint of the person's contradicted in sections 1-2, a test that still
fails called passing, ...); each *harmless* kind rewrites it the way a careful one may (items
reordered, other list markers, a correct detail added, ...). An edit is applied to every labelled
compaction of ``tests/validity/labels.yaml`` where it finds what it edits, and the edited summary is
graded by the rule graders (round 9's kinds live in ``edited_summaries_round9.py``):

* a defect is *caught* when some grader fails that did not fail the real summary, or fails it with a
  reason it did not give;
* a harmless rewrite is a *false alarm* when it does the same.

The edits read the session (its failing results, its files, the person's messages) only to find
what to change; they never copy transcript text into this repository.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _corpus() -> Path:
    shared = os.environ.get("CTXEVAL_SHARED")
    for c in ([Path(shared)] if shared else []) + [ROOT.parent / "shared"]:
        if (c / "corpus").is_dir():
            return c / "corpus"
    sys.exit("edited_summaries: no corpus found; set CTXEVAL_SHARED to the folder holding corpus/")


def labelled_cases(labels: Path, corpus: Path) -> list[tuple[str, object]]:
    from pytest_ctxeval.grading.registry import cases_from_transcript
    from pytest_ctxeval.grading.validity import load_labels
    from pytest_ctxeval.transcript import read_transcript

    out = []
    for item in load_labels(labels):
        transcript = read_transcript(corpus / item.file)
        comps = {c.boundary_line or c.summary_line: c for c in transcript.compactions}
        comp = comps.get(item.boundary_line)
        case = next((c for c in cases_from_transcript(transcript) if comp and c.index == comp.index), None)
        if case is not None:
            out.append((item.name, case))
    return out


# -- helpers -------------------------------------------------------------------------------------------

def _span(case, summary: str, kind: str) -> tuple[int, int] | None:
    """The lines (start, end) of ``kind``'s body in the summary as written (not dedented)."""
    secs = [s for s in case.sections.sections if s.kind]
    lines = summary.split("\n")
    for i, s in enumerate(secs):
        if s.kind != kind:
            continue
        start = s.line  # the header's 1-based line: the body starts on the next line
        end = secs[i + 1].line - 1 if i + 1 < len(secs) else len(lines)
        if s.kind in ("current", "next") and i + 1 < len(secs) and secs[i + 1].line == s.line:
            return None
        return start, end
    return None


def _body(case, kind: str) -> str:
    span = _span(case, case.summary, kind)
    if span is None:
        return ""
    return "\n".join(case.summary.split("\n")[span[0]:span[1]]).rstrip("\n")


def _in_section(summary: str, case, kind: str, new_body: str) -> str | None:
    span = _span(case, summary, kind)
    body = _body(case, kind)
    if span is None or not body.strip() or new_body == body:
        return None
    lines = summary.split("\n")
    tail = lines[span[0] + len(body.split("\n")):]
    return "\n".join(lines[:span[0]] + new_body.split("\n") + tail)


def _lines(text: str) -> list[str]:
    return text.split("\n")


_BULLET = re.compile(r"^(\s*)([-*•]|\d+[.)])\s+")


def _base(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def _session_files(case) -> list[tuple[str, str]]:
    from pytest_ctxeval.reading.extract import touched_files
    return [(p, how) for p, how in touched_files(case.history) if "/.claude/" not in p]


def _person(case) -> list:
    from pytest_ctxeval.reading.extract import person_messages
    return person_messages(case.history)


def _word_sub(text: str, old: str, new: str) -> str:
    return re.sub(rf"(?<![\w.-]){re.escape(old)}(?![\w-])", new, text)


# -- defects -------------------------------------------------------------------------------------------

def _placed(line: str, name: str) -> str:
    """``line`` with " in `name`" after its lead (``- **Ruff UP038** in `x.py`: …``), before the fix."""
    m = re.match(r"^(\s*(?:[-*]|\d+[.)])\s+\*\*[^*]+?)(:?)\*\*", line) or re.match(r"^(\s*(?:[-*]|\d+[.)])\s+[^:.;]+?)()(?=[:.;])", line)
    if not m:
        return line.rstrip() + f" (in `{name}`)"
    return line[:m.end(1)] + f" in `{name}`" + line[m.end(1):]


def wrong_file_error(case, summary: str) -> str | None:
    """Section 4 tells an error against another file of the session than the one its output names."""
    from pytest_ctxeval.reading.extract import failing_results
    from pytest_ctxeval.reading.session_facts import error_kept

    files = list(dict.fromkeys(_base(p) for p, _ in _session_files(case)))
    body = _body(case, "errors")
    if not body:
        return None
    for f in failing_results(case.summarized):
        if not f.key_line:
            continue
        own = [b for b in files if b in f.text]
        others = [b for b in files if b not in f.text and len(b) > 3]
        if not own or not others:
            continue
        ext = own[0].rsplit(".", 1)[-1]
        other = next((b for b in others if b.endswith("." + ext)), others[0])
        lines = _lines(body)
        command = str(f.input.get("command", ""))
        for i, line in enumerate(lines):   # the item that tells the error: its file swapped, or one added
            if line.strip() and error_kept(f.key_line, f.text, command, line)[0]:
                b = next((b for b in own if b in line), None)
                lines[i] = line.replace(b, other) if b else _placed(line, other)
                return _in_section(summary, case, "errors", "\n".join(lines))
        for i, line in enumerate(lines):   # an item naming the error's file
            if any(b in line for b in own):
                b = next(b for b in own if b in line)
                lines[i] = line.replace(b, other)
                return _in_section(summary, case, "errors", "\n".join(lines))
    return None


def right_file_error(case, summary: str) -> str | None:
    """Harmless twin: section 4 adds the file the error's output names to the item telling it."""
    from pytest_ctxeval.reading.extract import failing_results
    from pytest_ctxeval.reading.session_facts import error_kept

    from pytest_ctxeval.reading.error_location import located_lines

    body = _body(case, "errors")
    for f in failing_results(case.summarized):
        located = located_lines(f.text)
        at = next((loc for loc in located if f.key_line.strip() in loc.line), located[0] if located else None)
        own = [_base(at.path)] if at else []
        if not f.key_line or not own:
            continue
        lines = _lines(body)
        command = str(f.input.get("command", ""))
        for i, line in enumerate(lines):
            if line.strip() and error_kept(f.key_line, f.text, command, line)[0]:
                lines[i] = _placed(line, own[0])
                return _in_section(summary, case, "errors", "\n".join(lines))
    return None


SWAPS = {"SQLite": "Postgres", "Postgres": "SQLite", "PostgreSQL": "MySQL", "master": "develop", "main": "develop",
         "npm": "yarn", "pnpm": "yarn", "React": "Vue", "TDD": "BDD", "Docker": "Podman", "docker": "podman",
         "left": "right", "right": "left", "top": "bottom", "bottom": "top", "CLI": "web UI", "Rust": "Go",
         "README.md": "CHANGELOG.md", "ruff": "flake8", "pyrefly": "mypy", "Tree": "Grid", "tree": "grid",
         "router": "switch", "session_character": "session_mood", "Default": "Clone", "default()": "clone()",
         "NPC": "player", "registry": "mirror", "agent": "worker", "Agent": "Worker", "gitignore": "gitattributes"}


def _value_tokens(text: str) -> list[str]:
    toks = re.findall(r"(?<![\w.#/-])(?:\d{2,}|[A-Za-z_][\w.()-]*[\w)])(?![\w-])", text)
    return [t for t in dict.fromkeys(toks) if t in SWAPS or re.fullmatch(r"\d{2,}", t)]


def constraint_contradicted(case, summary: str) -> str | None:
    """Sections 1-2 restate a value the person set with another value (section 6 still quotes them)."""
    request = _body(case, "request")
    if not request:
        return None
    for p in _person(case):
        for tok in _value_tokens(p.text):
            if not re.search(rf"(?<![\w.#/-]){re.escape(tok)}(?![\w-])", request):
                continue
            new = str(int(tok) + 1) if tok.isdigit() else SWAPS[tok]
            out = _in_section(summary, case, "request", _word_sub(request, tok, new))
            concepts = _body(case, "concepts")
            if out and concepts and _word_sub(concepts, tok, new) != concepts:
                out = out.replace(concepts, _word_sub(concepts, tok, new), 1)
            if out:
                return out
    return None


def constraint_restated(case, summary: str) -> str | None:
    """Harmless twin: section 1 restates a person's value again, unchanged."""
    request = _body(case, "request")
    for p in _person(case):
        for tok in _value_tokens(p.text):
            if re.search(rf"(?<![\w.#/-]){re.escape(tok)}(?![\w-])", request):
                return _in_section(summary, case, "request", request.rstrip() + f"\n   - (as the person set it: {tok})")
    return None


def _failing_tests(case) -> list[tuple[object, tuple[str, str]]]:
    from pytest_ctxeval.reading.extract import failing_results
    out = []
    for f in failing_results(case.summarized):
        for t in f.tests:
            out.append((f, t))
    return out


def test_called_passing(case, summary: str) -> str | None:
    """Section 4 (or 8) calls a test that failed on its last run fixed and passing."""
    from pytest_ctxeval.reading.session_facts import failing_test_told
    tests = _failing_tests(case)
    if not tests:
        return None
    last_f = tests[-1][0]
    for kind in ("errors", "current"):
        lines = _lines(_body(case, kind))
        for _f, t in reversed([x for x in tests if x[0] is last_f]):
            for i, line in enumerate(lines):
                if line.strip() and failing_test_told([t], line, errors_section=kind == "errors"):
                    lines[i] = line.rstrip() + " — fixed, now passing ✅"
                    return _in_section(summary, case, kind, "\n".join(lines))
    return None


def all_tests_pass(case, summary: str) -> str | None:
    """Section 8 says the whole suite passes when the last test run of the span failed tests."""
    if not _failing_tests(case):
        return None
    body = _body(case, "current")
    return _in_section(summary, case, "current", body.rstrip() + "\n   All e2e tests now pass.")


def test_still_failing(case, summary: str) -> str | None:
    """Harmless twin: the item of a test that failed on its last run says it still fails."""
    from pytest_ctxeval.reading.session_facts import failing_test_told
    tests = _failing_tests(case)
    lines = _lines(_body(case, "errors"))
    for _f, t in reversed(tests):
        for i, line in enumerate(lines):
            if line.strip() and failing_test_told([t], line, errors_section=True):
                lines[i] = line.rstrip() + " — still failing on the last run"
                return _in_section(summary, case, "errors", "\n".join(lines))
    return None


def push_never_run(case, summary: str) -> str | None:
    """Section 8 says the work was committed and pushed in a session that never ran git push."""
    if re.search(r"git\s+push|gh\s+pr\s+(?:create|merge)", case.history_text):
        return None
    body = _body(case, "current")
    return _in_section(summary, case, "current", body.rstrip() + "\n   All changes are committed and pushed to origin (`git push`).")


_HASH = re.compile(r"(?<![\w/])[0-9a-f]{7,12}(?![\w/])")


def hash_changed(case, summary: str) -> str | None:
    """A commit id in sections 3, 4 or 8 told with another id (one digit changed)."""
    for kind in ("files", "errors", "current"):
        body = _body(case, kind)
        for m in _HASH.finditer(body):
            h = m.group(0)
            if not re.search(r"\d", h) or not re.search(r"[a-f]", h):
                continue
            last = h[-1]
            new = h[:-1] + ("0" if last != "0" else "1")
            return _in_section(summary, case, kind, body.replace(h, new))
    return None


def read_said_created(case, summary: str) -> str | None:
    """Section 3 says a file the session only read was created (NEW)."""
    from pytest_ctxeval.reading.extract import file_mentioned
    body = _body(case, "files")
    if not body:
        return None
    lines = _lines(body)
    from pytest_ctxeval.reading.extract import file_ledger
    changed = set(file_ledger(case.history).changed())
    for path, how in _session_files(case):
        if how != "Read" or path in changed:
            continue
        name = _base(path)
        for i, line in enumerate(lines):
            if _BULLET.match(line) and file_mentioned(path, line) and name in line \
                    and not re.search(r"\bnew\b|created", line, re.I):
                at = line.index(name) + len(name)
                at += len(re.match(r"[`*_]*", line[at:]).group(0))
                lines[i] = line[:at] + " (NEW)" + line[at:]
                return _in_section(summary, case, "files", "\n".join(lines))
    return None


def written_said_created(case, summary: str) -> str | None:
    """Harmless twin: section 3 marks a file the session wrote new (never read before) as NEW."""
    from pytest_ctxeval.reading.extract import file_mentioned
    body = _body(case, "files")
    lines = _lines(body)
    for path, how in _session_files(case):
        if how != "Write":
            continue
        for i, line in enumerate(lines):
            if _BULLET.match(line) and file_mentioned(path, line) and not re.search(r"\bnew\b|created", line, re.I):
                lines[i] = line.rstrip() + " (written by the session)"
                return _in_section(summary, case, "files", "\n".join(lines))
    return None


def earlier_request_as_next(case, summary: str) -> str | None:
    """Section 9 quotes an earlier request of the person as the step to take now."""
    people = [p for p in _person(case) if len(p.text.split()) >= 5]
    if len(people) < 2:
        return None
    first = people[0].text.split("\n")[0][:200]
    return _in_section(summary, case, "next", f'   Continue with what the user asked: "{first}"')


def rejected_as_plan(case, summary: str) -> str | None:
    """Section 7 plans what the person ruled out in words ("No MVP terminology" -> "use MVP terminology")."""
    for p in _person(case):
        m = re.search(r"\b(?:no|don't|do not|never|stop)\s+((?:[A-Za-z_][\w-]*\s+){0,3}[A-Za-z_][\w-]*)\s*(?:in|for|[.,;!]|$)",
                      p.text, re.I | re.M)
        if m and len(m.group(1)) > 6:
            body = _body(case, "pending")
            return _in_section(summary, case, "pending", body.rstrip() + f"\n   - Use {m.group(1)} throughout")
    return None


def open_task_said_done(case, summary: str) -> str | None:
    """Section 8 says an open todo of the session is complete (section 7 not touched)."""
    from pytest_ctxeval.reading.extract import open_todos
    todos = open_todos(case.history)
    if not todos:
        return None
    body = _body(case, "current")
    return _in_section(summary, case, "current", body.rstrip() + f"\n   Completed: {todos[0]}.")


# -- harmless rewrites ------------------------------------------------------------------------------

def _top_items(body: str) -> tuple[str, list[str], str] | None:
    """A body split into its lead, top-level list items (with their sub-lines) and tail."""
    lines = _lines(body)
    tops = [i for i, line in enumerate(lines) if _BULLET.match(line)]
    if len(tops) < 2:
        return None
    indent = len(_BULLET.match(lines[tops[0]]).group(1))
    tops = [i for i in tops if len(_BULLET.match(lines[i]).group(1)) == indent]
    if len(tops) < 2:
        return None
    head = "\n".join(lines[:tops[0]])
    items = ["\n".join(lines[a:b]) for a, b in zip(tops, tops[1:] + [len(lines)])]
    return head, items, ""


def reorder_files(case, summary: str) -> str | None:
    split = _top_items(_body(case, "files"))
    if not split:
        return None
    head, items, _ = split
    items = [i.rstrip("\n") for i in items]
    return _in_section(summary, case, "files", head + ("\n" if head else "") + "\n".join(reversed(items)))


def star_bullets(case, summary: str) -> str | None:
    out = summary
    for kind in ("errors", "problem", "pending"):
        body = _body(case, kind)
        if body and body in out:
            out = out.replace(body, re.sub(r"(?m)^(\s*)- ", r"\1* ", body), 1)
    return out if out != summary else None


def merge_error_bullets(case, summary: str) -> str | None:
    body = _body(case, "errors")
    lines = _lines(body)
    tops = [i for i, line in enumerate(lines) if re.match(r"^\s*- ", line)]
    for a, b in zip(tops, tops[1:]):
        if b == a + 1:
            lines[a] = lines[a].rstrip() + " Also: " + re.sub(r"^\s*- ", "", lines[b])
            del lines[b]
            return _in_section(summary, case, "errors", "\n".join(lines))
    return None


def reword_narration(case, summary: str) -> str | None:
    out = summary
    for kind in ("problem", "current"):
        body = _body(case, kind)
        new = re.sub(r"\bI (then )?(\w+ed)\b", lambda m: f"The assistant {m.group(1) or ''}{m.group(2)}", body)
        new = re.sub(r"\bSuccessfully\b", "Successfully", new).replace("Currently", "At this point")
        if body and body in out and new != body:
            out = out.replace(body, new, 1)
    return out if out != summary else None


def read_file_added(case, summary: str) -> str | None:
    """A correct extra detail: a file the session read, named in section 3 as read for reference."""
    from pytest_ctxeval.reading.extract import file_mentioned
    body = _body(case, "files")
    for path, how in _session_files(case):
        if how == "Read" and not file_mentioned(path, body):
            return _in_section(summary, case, "files", body.rstrip() + f"\n   - `{path}` (read for reference, not changed)")
    return None


def unbold(case, summary: str) -> str | None:
    out = summary
    for kind in ("errors", "problem", "files"):
        body = _body(case, kind)
        if body and body in out:
            out = out.replace(body, re.sub(r"\*\*([^*\n]+)\*\*", r"\1", body), 1)
    return out if out != summary else None


def numbered_pending(case, summary: str) -> str | None:
    body = _body(case, "pending")
    n = iter(range(1, 100))
    new = re.sub(r"(?m)^(\s*)- ", lambda m: f"{m.group(1)}{next(n)}. ", body)
    return _in_section(summary, case, "pending", new)


def spaced_current(case, summary: str) -> str | None:
    body = _body(case, "current")
    new = re.sub(r"\n(\s*- )", r"\n\n\1", body)
    return _in_section(summary, case, "current", new)


def extra_correct_error_note(case, summary: str) -> str | None:
    """A correct extra detail in section 4: the error's key line quoted again in backticks."""
    from pytest_ctxeval.reading.extract import failing_results
    fs = [f for f in failing_results(case.summarized) if f.key_line]
    body = _body(case, "errors")
    if not fs or not body:
        return None
    return _in_section(summary, case, "errors", body.rstrip() + f"\n   - (as the tool printed it: `{fs[-1].key_line[:120]}`)")


def pending_done_note(case, summary: str) -> str | None:
    """Section 8 says what was finished, correctly: a completed todo of the latest list."""
    from pytest_ctxeval.reading.extract import latest_todos
    todos = latest_todos(case.history) or []
    done = [t.get("content") for t in todos if t.get("status") == "completed" and t.get("content")]
    if not done:
        return None
    body = _body(case, "current")
    return _in_section(summary, case, "current", body.rstrip() + f"\n   Completed earlier: {done[0]}.")


def fix_file_named(case, summary: str) -> str | None:
    """An error item goes on to say which other file of the session the fix went into."""
    from pytest_ctxeval.reading.extract import failing_results
    from pytest_ctxeval.reading.session_facts import error_kept

    files = list(dict.fromkeys(_base(p) for p, _ in _session_files(case)))
    body = _body(case, "errors")
    lines = _lines(body)
    for f in failing_results(case.summarized):
        others = [b for b in files if b not in f.text and len(b) > 3]
        if not f.key_line or not others:
            continue
        command = str(f.input.get("command", ""))
        for i, line in enumerate(lines):
            if line.strip() and error_kept(f.key_line, f.text, command, line)[0]:
                lines[i] = line.rstrip() + f" Fixed by a change in `{others[0]}`."
                return _in_section(summary, case, "errors", "\n".join(lines))
    return None


def request_paraphrased(case, summary: str) -> str | None:
    """Section 1 restates the latest request in the person's words, one plain word changed."""
    people = [p for p in _person(case) if 6 <= len(p.text.split()) <= 60 and "\n" not in p.text.strip()]
    if not people:
        return None
    words = people[-1].text.split()
    for i, w in enumerate(words[1:-1], start=1):
        if w.islower() and w.isalpha() and len(w) > 3:
            words[i] = "basically " + w
            break
    body = _body(case, "request")
    return _in_section(summary, case, "request", body.rstrip() + "\n   - Roughly, in their words: " + " ".join(words))


def backed_commit_claim(case, summary: str) -> str | None:
    """Section 8 says the work was committed, in a session that ran git commit."""
    if not re.search(r"\bgit\b[^\n;|&]*\bcommit\b", case.history_text):
        return None
    body = _body(case, "current")
    return _in_section(summary, case, "current", body.rstrip() + "\n   The work so far was committed.")


def rule_kept_in_pending(case, summary: str) -> str | None:
    """Section 7 repeats, as a rule, what the person ruled out ("Keep to: no MVP terminology")."""
    for p in _person(case):
        m = re.search(r"\b(?:no|don't|do not|never|stop)\s+((?:[A-Za-z_][\w-]*\s+){0,3}[A-Za-z_][\w-]*)\s*(?:in|for|[.,;!]|$)",
                      p.text, re.I | re.M)
        if m and len(m.group(1)) > 6:
            body = _body(case, "pending")
            return _in_section(summary, case, "pending", body.rstrip() + f"\n   - Keep to the rule: no {m.group(1)}")
    return None


DEFECTS: dict[str, Callable] = {
    "wrong_file_error": wrong_file_error,
    "constraint_contradicted": constraint_contradicted,
    "test_called_passing": test_called_passing,
    "all_tests_pass": all_tests_pass,
    "push_never_run": push_never_run,
    "hash_changed": hash_changed,
    "read_said_created": read_said_created,
    "earlier_request_as_next": earlier_request_as_next,
    "rejected_as_plan": rejected_as_plan,
    "open_task_said_done": open_task_said_done,
}
HARMLESS: dict[str, Callable] = {
    "right_file_error": right_file_error,
    "constraint_restated": constraint_restated,
    "test_still_failing": test_still_failing,
    "written_said_created": written_said_created,
    "reorder_files": reorder_files,
    "star_bullets": star_bullets,
    "merge_error_bullets": merge_error_bullets,
    "reword_narration": reword_narration,
    "read_file_added": read_file_added,
    "unbold": unbold,
    "numbered_pending": numbered_pending,
    "spaced_current": spaced_current,
    "extra_correct_error_note": extra_correct_error_note,
    "pending_done_note": pending_done_note,
    "fix_file_named": fix_file_named,
    "request_paraphrased": request_paraphrased,
    "backed_commit_claim": backed_commit_claim,
    "rule_kept_in_pending": rule_kept_in_pending,
}


def _reasons(verdict) -> set[str]:
    """A verdict's reasons by what they are about: without the line numbers an edit above them
    shifts, and by their first 60 characters (a reason that says more about the same loss, "… it is
    verbatim in section 1", is no new failure)."""
    return {re.sub(r"\blines? \d+(?:[-–]\d+)?|\bL\d+", "line N", r)[:60] for r in verdict.reasons}


def measure(cases, kinds: dict[str, Callable], registry, verbose: bool = False) -> dict[str, tuple[int, int, list[str]]]:
    from pytest_ctxeval.grading.mutants import Mutant

    specs = [s for s in registry if s.kind == "rule"]
    base = {}
    out: dict[str, tuple[int, int, list[str]]] = {}
    for kind, edit in kinds.items():
        applied, flagged, notes = 0, 0, []
        for name, case in cases:
            try:
                edited = edit(case, case.summary)
            except Exception as exc:  # noqa: BLE001 -- an edit that cannot read a case is a bug of the edit, said
                notes.append(f"{name}: edit crashed: {exc!r}")
                continue
            if not edited or edited == case.summary:
                continue
            applied += 1
            if name not in base:
                base[name] = {s.name: v for s, v in zip(specs, registry.run(case, specs))}
            after = {s.name: v for s, v in zip(specs, registry.run(Mutant.of(case, what=kind, summary=edited).case, specs))}
            new = [(g, v) for g, v in after.items() if v.status == "fail"
                   and (base[name][g].status != "fail" or _reasons(v) - _reasons(base[name][g]))]
            if new:
                flagged += 1
                if verbose:
                    notes.append(f"{name}: {new[0][0]}: {' | '.join(_reasons(new[0][1]) - _reasons(base[name][new[0][0]]))[:300]}")
            elif verbose:
                notes.append(f"{name}: nothing failed")
        out[kind] = (applied, flagged, notes)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--labels", type=Path, default=ROOT / "tests" / "validity" / "labels.yaml")
    parser.add_argument("--kind", action="append", default=[])
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    from pytest_ctxeval.grading import load_graders

    registry = load_graders()
    cases = labelled_cases(args.labels, _corpus())
    import edited_summaries_round9 as round9   # round 9's kinds (it imports this module's helpers)

    defects, harmless = {**DEFECTS, **round9.DEFECTS}, {**HARMLESS, **round9.HARMLESS}

    def pick(kinds: dict[str, Callable]) -> dict[str, Callable]:
        return {k: v for k, v in kinds.items() if not args.kind or k in args.kind}

    print(f"{len(cases)} labelled compactions\n")
    print(f"{'defect kind':28} applied  caught  missed")
    for kind, (applied, flagged, notes) in measure(cases, pick(defects), registry, args.verbose).items():
        print(f"{kind:28} {applied:7} {flagged:7} {applied - flagged:7}")
        for n in notes:
            print(f"    {n}")
    print(f"\n{'harmless kind':28} applied  false alarms")
    for kind, (applied, flagged, notes) in measure(cases, pick(harmless), registry, args.verbose).items():
        print(f"{kind:28} {applied:7} {flagged:7}")
        for n in notes:
            print(f"    {n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
