"""A word limit is met the way a writer short of room meets it (second fresh review, F29): code
snippets and repeated lines go first, the changed files' names stay; a limit the summary fits
changes nothing."""

from __future__ import annotations

from pytest_ctxeval.llm.rewording import trim_to_limit

ERR = "- Bash (pytest tests/x.py::test_{n} -q) failed: KeyError: 'coupon:SUMMER24' — fixed: a later call succeeded"
SECTIONS = [
    ("3. Files and Code Sections:", ["- tests/test_checkout.py — read", "- src/checkout/service.py — edited",
                                     "  changed `a = 1` to `a = 2` " + "x " * 40, "- src/cache/keys.py — edited",
                                     "  changed `key` to `key.upper()` " + "y " * 40, "- CHANGELOG.md — edited"]),
    ("4. Errors and fixes:", [ERR.format(n=n) for n in range(5)] + ["- Bash (ruff) failed: E501 line too long — still open"]),
    ("5. Problem Solving:", ["Ran 15 tool calls; 5 failed."] + [f"- finding number {n}: " + "z " * 12 for n in range(6)]),
]


def _words(parts: list[tuple[str, list[str]]]) -> int:
    return len("\n".join(h + "\n" + "\n".join(ls) for h, ls in parts).split())


def test_snippets_and_repeats_go_before_the_changed_files() -> None:
    total = _words(SECTIONS)
    out = dict(trim_to_limit(SECTIONS, total - 100, "words"))
    files = out["3. Files and Code Sections:"]
    assert all("changed `" not in l for l in files)  # the snippets went first
    assert {"- src/cache/keys.py — edited", "- CHANGELOG.md — edited", "- src/checkout/service.py — edited"} <= set(files)
    errors = out["4. Errors and fixes:"]
    assert sum("KeyError" in l for l in errors) == 1 and any("E501" in l for l in errors)  # five of one error are one
    assert _words(list(out.items())) <= total - 100


def test_under_a_tight_limit_a_file_only_read_goes_before_a_changed_one() -> None:
    out = dict(trim_to_limit(SECTIONS, 60, "words"))
    files = out["3. Files and Code Sections:"]
    assert "- tests/test_checkout.py — read" not in files or len(files) == 4
    assert "- src/cache/keys.py — edited" in files or len(files) == 1


def test_a_limit_the_summary_fits_changes_nothing() -> None:
    assert trim_to_limit(SECTIONS, _words(SECTIONS), "words") == [(h, list(ls)) for h, ls in SECTIONS]


def test_a_language_is_marked_not_seen_offline() -> None:
    """Second review, F2: 'Write the whole summary in French' was 'read' though only boilerplate moved."""
    from prompt_variants import builtin_source

    from pytest_ctxeval.reporting.prompt_coverage import coverage_note, format_coverage

    text = builtin_source().replace("Your summary should include the following sections:",
                                    "Write the whole summary in French.\n\nYour summary should include the following sections:")
    from pytest_ctxeval.engine.prompt import PromptSet
    import tempfile
    from pathlib import Path

    path = Path(tempfile.mkdtemp()) / "compact.j2"
    path.write_text(text, encoding="utf-8")
    note = coverage_note(PromptSet(path).render_compact())
    assert note is not None and note["unseen"] == 1
    out = "\n".join(format_coverage(note))
    assert "NOT SEEN OFFLINE Write the whole summary in French." in out and "a language (french)" in out
    assert "advice:" in out
