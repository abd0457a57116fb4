"""A length limit offline is met the way a writer short of room meets it (second fresh review, F29,
left partly fixed): the user's requests, the latest request, the errors, the changed files and the
open tasks are kept to the end; the file list only read, the tool list, the narration and the facts
go first, so only a real loss is a regression."""

from __future__ import annotations

from pathlib import Path

from pytest_ctxeval.cli import main
from pytest_ctxeval.llm.length_budget import fit_to_limit
from pytest_ctxeval.llm.rewording import size_of

ROOT = Path(__file__).resolve().parents[2]
BUILTIN = (ROOT / "pytest_ctxeval" / "prompts" / "compact.j2").read_text(encoding="utf-8")
ANCHOR = "Your summary should include the following sections:"

MESSAGES = ['- "Harden the reports service: read the ops notes, then work through the open todos."',
            '- "Next, module 3: tighten its error handling and add tests."',
            '- "Next, module 4: tighten its error handling and add tests."']
KEEP = {
    "request": ["The user's first request: \"Harden the reports service: read the ops notes, then work through "
                "the open todos.\""],
    "files": ["- src/svc/module_3.py — edited", "- src/svc/module_4.py — edited", "- tests/test_module_4.py — written"],
    "errors": ["- Bash (pytest tests/test_module_4.py -q) failed: KeyError: 'retry' — fixed: a later call succeeded"],
    "user_messages": MESSAGES,
    "pending": ["- Harden module 5", "- Harden module 6", "- Harden module 7"],
    "next": ['Continue with the most recent request, quoted verbatim: "Next, module 4: tighten its error handling '
             'and add tests."'],
}
SECTIONS = [
    ("1. Primary Request and Intent:", KEEP["request"] + ["Later requests and corrections, oldest first:"]
     + MESSAGES[1:]),
    ("2. Key Technical Concepts:", ["- Tools used: Bash x9, Edit x6, Read x14, TodoWrite x3",
                                    "- File types: .py, .md, .toml"]),
    ("3. Files and Code Sections:", [f"- docs/notes/ops-{n}.md — read" for n in range(1, 9)] + KEEP["files"]),
    ("4. Errors and fixes:", KEEP["errors"] * 3),
    ("5. Problem Solving:", ["Ran 40 tool calls; 3 failed. The last failure was Bash: KeyError — work continued "
                             "after it.", "Findings along the way (the assistant's own words):"]
     + [f"- Reading the {w} module page by page to see where the retry loop starts and what it calls "
        f"before it gives up on the upstream service" for w in ("first", "second", "third", "fourth", "fifth")]
     + ["- The trace ends in src/svc/module_4.py, where the retry loop has no upper bound."]
     + ["Facts from tool results the work relied on (as written):"]
     + [f"- The service {n} listens on port 70{n}0 in staging." for n in range(10)]),
    ("6. All user messages:", MESSAGES),
    ("7. Pending Tasks:", KEEP["pending"]),
    ("8. Current Work:", ['Last assistant message: "' + "Module 4 is done and tested; moving to module 5 next "
                          "after a look at the notes " * 3 + '"', "Last tool calls: TodoWrite()"]),
    ("9. Optional Next Step:", KEEP["next"]),
]
KINDS = ["request", "concepts", "files", "errors", "problem", "user_messages", "pending", "current", "next"]


def _words(parts: list[tuple[str, list[str]]]) -> int:
    return size_of("\n".join(h + "\n" + "\n".join(ls) for h, ls in parts), "words")


def test_under_a_limit_what_the_next_turn_needs_stays_and_narration_goes_first() -> None:
    total = _words(SECTIONS)
    budget = total // 2
    out = fit_to_limit(SECTIONS, KINDS, budget, "words")
    assert _words(out) <= budget
    by_kind = dict(zip(KINDS, (ls for _, ls in out)))
    for kind, lines in KEEP.items():
        for line in lines:
            assert line in by_kind[kind], (kind, line)
    assert len(by_kind["pending"]) == 3  # three open tasks that differ by a number are three tasks
    assert sum("KeyError" in l for l in by_kind["errors"]) == 1  # three failures of one error are one
    # What went: the files only read, the tool list, the narration, before any fact of a tool result.
    assert not any(l.endswith(" — read") for l in by_kind["files"])
    assert len(by_kind["concepts"]) == 1
    assert not any(l.startswith("- Reading the") for l in by_kind["problem"])
    # A finding that names a file is a fact: it outlives the narration.
    assert "- The trace ends in src/svc/module_4.py, where the retry loop has no upper bound." in by_kind["problem"]


def test_under_a_tight_limit_the_facts_go_and_the_latest_request_stays() -> None:
    tight = fit_to_limit(SECTIONS, KINDS, 150, "words")
    by_kind = dict(zip(KINDS, (ls for _, ls in tight)))
    assert not any("listens on port" in l for l in by_kind["problem"])
    assert MESSAGES[-1] in by_kind["user_messages"] and KEEP["next"][0] in by_kind["next"]
    assert every_section_keeps_a_line(tight)


def every_section_keeps_a_line(parts: list[tuple[str, list[str]]]) -> bool:
    return all(ls for _, ls in parts)


def test_a_limit_the_summary_fits_changes_nothing() -> None:
    assert fit_to_limit(SECTIONS, KINDS, _words(SECTIONS), "words") == [(h, list(ls)) for h, ls in SECTIONS]


def _prompt(folder: Path, line: str) -> Path:
    for inc in (ROOT / "pytest_ctxeval" / "prompts").glob("_*.j2"):
        (folder / inc.name).write_text(inc.read_text(encoding="utf-8"), encoding="utf-8")
    p = folder / "compact.j2"
    p.write_text(BUILTIN.replace(ANCHOR, f"{line}\n{ANCHOR}"), encoding="utf-8")
    return p


def test_a_500_word_limit_keeps_the_open_tasks_files_and_messages_of_a_long_session(tmp_path, capsys) -> None:
    """facts_in_tool_results at 500 words: the offline model used to drop open tasks ("Harden
    module 3" read as a repeat of "Harden module 2"), changed files and user messages while it kept
    the narration; pending_tasks, files_preserved and verbatim_user_messages failed."""
    prompt = _prompt(tmp_path, "Keep the entire summary under 500 words.")
    scenario = ROOT / "scenarios" / "facts_in_tool_results.yaml"
    main(["run", str(scenario), "--prompt", str(prompt), "--graders",
          "pending_tasks,files_preserved,verbatim_user_messages,last_request_intact", "-v"])
    out = capsys.readouterr().out
    row = next(l for l in out.splitlines() if l.startswith("facts_in_tool_results "))
    assert row.split()[-5:] == ["4", "0", "0", "compact", "5"], row  # 4 graders passed on 5 compactions
    assert "FAIL" not in out, out[-3000:]
