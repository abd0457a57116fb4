"""The work's trail: the files the session changed (section 3) and the errors it hit (section 4).

* ``files_preserved``: every file edited or written in the session so far (across earlier
  compactions: the artifact trail) is named in section 3, and section 3 does not call a file new,
  deleted, pre-existing or unchanged against what the session did, nor show code under the wrong file.
* ``errors_preserved``: the key line of every failing tool result is in section 4, and section 4
  does not place an error in the wrong file, nor call a failing test passing or a fix re-run when
  nothing ran it.

Expectations (``expect.files``, ``expect.errors``) are required of a compaction once the session has reached them: an entry
that first comes up after a compaction is not held against that compaction's summary.

Other compactors (:mod:`pytest_ctxeval.compaction`): a fact is looked for in the section of its kind
when the compactor's summary format has one (opencode's "Relevant Files" for files), else in the whole post-compact context
(summary and kept messages).

What several rule graders share (the place a reason names, a missing section, a summary read
whole, a key line kept in one item) is in :mod:`pytest_ctxeval.grading.section_reasons` and
:mod:`pytest_ctxeval.reading.key_lines`: grader modules are loaded by file path and do not import
each other.
"""

from __future__ import annotations
from collections import Counter

import re

from pytest_ctxeval.core.words import all_of, plural
from pytest_ctxeval.reading.extract import (
    FailingResult, failing_results, file_ledger, file_mentioned, person_messages, said_unchanged_removed, same_name,
    touched_files,
)
from pytest_ctxeval.grading import CompactionCase, Verdict, grader
from pytest_ctxeval.core.messages import tool_uses
from pytest_ctxeval.reading.person_quotes import person_quotes_removed
from pytest_ctxeval.reading.error_location import misplaced_errors
from pytest_ctxeval.reading.code_attribution import file_texts, misattributed_code
from pytest_ctxeval.reading.file_claims import deleted_claims, new_claims, only_read, removal_named, state_claims
from pytest_ctxeval.reading.file_changes import FileLedger
from pytest_ctxeval.reading.workarounds import not_counted, refused_part
from pytest_ctxeval.reading.rerun_claims import unverified_reruns
from pytest_ctxeval.reading.test_claims import last_test_run, passing_claims
from pytest_ctxeval.reading.leave_out import leave_out, left_out, with_leave_out
from pytest_ctxeval.reading.quoting import whole_context as _whole
from pytest_ctxeval.reading.session_facts import error_kept, error_told_as_error, failing_test_told, items_about, error_denied
from pytest_ctxeval.reading.summary import plain_emphasis
from pytest_ctxeval.grading.section_reasons import (
    free_form_place as _free_where, free_form_why as _free_form, line_of as _line_of,
    section_missing as _section_missing, section_place as _where, short as _short, unseen_in as _unseen,
    whole_region as _whole_region,
)
from pytest_ctxeval.reading.key_lines import present_in_section as _present, section_items as _items


def _not_told_note(f: str, files: list[str], said: str, own: str, whole: str) -> str:
    """Why a changed file named somewhere in the summary is not told as changed there."""
    if file_mentioned(f, own, files):
        return (" as changed (it is named only as not changed: read-only, unmodified, untouched, no edits "
                "needed)")
    if file_mentioned(f, said, files):
        return (" as changed (it is named only in the person's own words, section 6 or a quote of their "
                "message, which tell what was asked, not that the file was changed)")
    return _unnamed_note(f, whole, files)


@grader("files_preserved", kind="rule")
def files_preserved(case: CompactionCase) -> Verdict:
    """Every file edited or written in the session so far (and expect.files) is named in section 3.

    A file moved counts at its new place. A rejected or failed edit changed nothing, an edit undone or
    reverted with git (``git checkout --``, ``git restore``, ``git stash``, ``git reset --hard``) is no
    change (pytest_ctxeval.reading.file_changes), and Claude Code's own storage (plan files, memory) is
    not a project file (pytest_ctxeval.reading.session_facts). A file named in another part of the
    summary was not dropped; one named only as unchanged ("no edits needed") or only in the person's
    words (section 6, a quote of their message) is not told as changed. Files written or moved
    through MCP tools count (pytest_ctxeval.reading.mcp_writes)."""
    # The artifact trail of the whole session, not only of this span: a second summary that drops
    # the files changed before the first compaction has lost them.
    ledger = case.shared_view("file_ledger", lambda: file_ledger(case.history), case.history)
    changed, moved = ledger.changed(), ledger.moved_from
    files = list(dict.fromkeys(changed + case.reached(case.expect.files)))
    # A file the session only read, called new beside its name (pytest_ctxeval.reading.file_claims).
    called_new = _called_new(case, [*changed, *moved.values()])
    # A value section 3 tells that the session never showed (a dated path, a version, a commit id
    # misremembered: pytest_ctxeval.reading.unseen_values).
    called_new += _unseen(case, "files")
    # A file the session wrote and kept, called deleted (pytest_ctxeval.reading.file_claims).
    deleted = _called_deleted(case, changed, ledger.how)
    called_new += deleted
    # Code shown under one file that the session wrote into another (reading.code_attribution).
    called_new += _misattributed_code(case)
    if not files and called_new:
        return Verdict.failed(*called_new)
    if not files:
        return Verdict.not_applicable("no project file was changed (rejected or failed edits and Claude Code's own "
                                      "plan/memory files do not count), and no file of expect.files has come up yet")
    region = case.region("files")
    where = _where(case, "files", 3)
    free = _free_form(case, "files")
    if region is None and free:
        region, where = _whole_region(case), _free_where(case, "files", 3, free)
    if region is None:
        return _section_missing(case, "files", 3, f"the {len(files)} changed files (latest first)",
                                list(reversed(files)))
    # ``__api.go__`` names api.go; "`api.go` (read-only reference)" does not tell it as changed
    said = plain_emphasis(_whole(case).text)
    # what the summary says in its own words: not the person's messages (section 6) or quotes of them,
    # which name a file as what was asked, not as changed (pytest_ctxeval.reading.person_quotes)
    people = [p.text for p in case.person_messages()]
    listed = case.sections.get("user_messages")
    listed_body = plain_emphasis(listed.body) if listed else ""
    own = person_quotes_removed(said, people, listed_body)
    region = said_unchanged_removed(person_quotes_removed(plain_emphasis(region), people, listed_body))
    whole = said_unchanged_removed(own)
    elsewhere = [f for f in files if not file_mentioned(f, region, files) and file_mentioned(f, whole, files)]
    missing = [f for f in files if not file_mentioned(f, region, files) and f not in elsewhere]
    # /compact "leave out X": the person's own instruction wins (as for messages and errors)
    asked = leave_out(case.compact_args)
    excused = [(f, why) for f in missing if (why := left_out(asked, "files", f)) is not None]
    missing = [f for f in missing if f not in dict(excused)]
    reasons = [f"{f} was {_how_changed(f, changed, moved, ledger.how)} but is not named "
               + (f"anywhere in {where}" if free else f"in {where} nor anywhere else in the summary")
               + _not_told_note(f, files, said, own, whole) for f in missing]
    ok = f"{all_of(len(files), 'changed file')} named in {where}" + (
        f" ({len(elsewhere)} of them only in another section)" if elsewhere else "")
    ok, reasons = with_leave_out(ok, reasons, [w for _, w in excused], len(files), "changed files", case.compact_args,
                                  asked)
    called_new += _called_gone(case, ledger, told=deleted)
    return Verdict.from_fraction(len(files) - len(missing), len(files), reasons + called_new, ok, missing=missing)


def _only_read(history: list, changed: list[str]) -> tuple[dict[str, str], list[str]]:
    """The files the session only read whose name no other file of it has, and every path it touched."""
    read = only_read(history, changed)
    all_paths = [p for p, _ in touched_files(history)] if read else []
    bases = Counter(p.replace("\\", "/").rsplit("/", 1)[-1] for p in all_paths)
    return {p: e for p, e in read.items() if bases[p.replace("\\", "/").rsplit("/", 1)[-1]] == 1}, all_paths


def _called_new(case: CompactionCase, changed: list[str]) -> list[str]:
    """Reasons for lines of section 3 that call a file new which the session only read."""
    section = case.sections.get("files")
    if section is None:
        return []
    read, all_paths = case.shared_view("only_read", lambda: _only_read(case.history, changed), case.history)
    if not read:
        return []
    lines = case.summary.split("\n")
    out = []
    for claim in new_claims(plain_emphasis(section.body), read):
        if not file_mentioned(claim.path, claim.line, all_paths):
            continue
        at = _line_of(lines, section, claim.line)
        out.append(f"section 3 (line {at}) calls {claim.path} new: \"{_short(claim.line, 100)}\"; but the session read "
                   f"it before any command or subagent could have made it (its Read returned \"{_short(claim.evidence, 60)}\") "
                   "and no edit of the session wrote or moved it")
    return out


def _called_gone(case: CompactionCase, ledger: FileLedger, told: list[str]) -> list[str]:
    """Reasons for lines of section 3 that call a file the session changed deleted (no command or
    subagent could have deleted it), pre-existing (its Write created it) or unchanged
    (pytest_ctxeval.reading.file_claims.state_claims): the mirror of a file only read called new."""
    section = case.sections.get("files")
    changed = [p for p in ledger.changed() if not ledger.how.get(p, "").startswith("deleted")]
    if section is None or not changed:
        return []
    def facts() -> tuple[dict[str, tuple[bool, bool]], list[str], dict[str, str]]:
        shell = [str(u.input.get("command", "")) for m in case.history for u in tool_uses(m) if u.name == "Bash"]
        delegated = any(u.name in ("Task", "Agent") for m in case.history for u in tool_uses(m))
        touched = dict(touched_files(case.history))
        names = {p: p.replace("\\", "/").rsplit("/", 1)[-1] for p in changed}
        return ({p: (ledger.state[p].created if p in ledger.state else False,
                     delegated or p in ledger.moved_from or any(names[p] in c for c in shell)
                     or removal_named(p, case.history)) for p in changed},
                list(touched), touched)
    files, all_paths, touched = case.shared_view("state_claim_facts", facts, case.history)
    lines = case.summary.split("\n")
    out = []
    for claim in state_claims(plain_emphasis(section.body), files):
        # a file _called_deleted already reported (``told``) gets one reason
        if claim.claim == "deleted" and any(f"calls {claim.path} deleted" in r for r in told):
            continue
        if not file_mentioned(claim.path, claim.line, all_paths):
            continue
        at = _line_of(lines, section, claim.line)
        tool = ledger.how.get(claim.path) or f"with {touched.get(claim.path, 'an edit tool')}"
        fact = {"deleted": f"no command or subagent of the session deleted it (it was changed {tool} and no shell "
                           "command names it)",
                "pre-existing": f"the session created it (its {touched.get(claim.path, 'Write')} returned \"File created\")",
                "unchanged": f"the session changed it ({tool})"}[claim.claim]
        out.append(f"section 3 (line {at}) calls {claim.path} {claim.claim}: \"{_short(claim.line, 100)}\"; but {fact}")
    return out


def _called_deleted(case: CompactionCase, changed: list[str], how: dict[str, str]) -> list[str]:
    """Reasons for lines of section 3 that call a file deleted which the session changed and kept."""
    section = case.sections.get("files")
    if section is None or not changed or case.summary_format is not None:
        return []
    lines = case.summary.split("\n")
    out = []
    for claim in deleted_claims(plain_emphasis(section.body), changed, how, case.history,
                                lambda p, t: file_mentioned(p, t, changed)):
        at = _line_of(lines, section, claim.line)
        out.append(f"section 3 (line {at}) calls {claim.path} deleted: \"{_short(claim.line, 100)}\"; but the session "
                   f"{how.get(claim.path, 'changed')} it and no command or tool of the session removed it: the file is "
                   "there, and the next context window will not look for it")
    return out


def _misattributed_code(case: CompactionCase) -> list[str]:
    """Reasons for code blocks of section 3 shown under a file whose text the session never showed
    them in, while another file of it holds them."""
    section = case.sections.get("files")
    if section is None or case.summary_format is not None or "```" not in section.body:
        return []
    texts = case.shared_view("file_texts", lambda: file_texts(case.history), case.history)
    paths = list(texts.text)
    lines = case.summary.split("\n")
    out = []
    for bad in misattributed_code(section.body, texts, lambda p, t: file_mentioned(p, plain_emphasis(t), paths)):
        at = _line_of(lines, section, bad.item)
        out.append(f"section 3 (line {at}) shows under {bad.told} code the session wrote or read in {bad.shown}, none of "
                   f"it in {bad.told}: \"{_short(bad.lines[0], 80)}\" (the snippet is attributed to the wrong file)")
    return out


def _how_changed(path: str, changed: list[str], moved: dict[str, str], how: dict[str, str]) -> str:
    if path not in changed:
        return "expected"
    return f"moved here from {moved[path]}" if path in moved else how.get(path, "changed")


def _unnamed_note(path: str, text: str, files: list[str]) -> str:
    """What the summary does say about a file it does not name: its bare file name, which other
    changed files share (so it does not tell which), or only the folder it is in."""
    norm = path.replace("\\", "/").rstrip("/")
    base = norm.rsplit("/", 1)[-1]
    flat = text.replace("\\", "/")
    namesakes = same_name(path, files)
    if namesakes and re.search(rf"(?<![\w./-]){re.escape(base)}(?![\w-]|\.\w)", flat):
        return f" (the summary says only '{base}', the name of {len(namesakes) + 1} changed files)"
    if span := _in_named_range(base, flat):
        return f" (named only as part of a range: '{span}')"
    folder = norm.rsplit("/", 1)[0]
    parts = [p for p in folder.split("/") if p]
    for k in range(min(len(parts), 3), 0, -1):
        tail = "/".join(parts[-k:])
        if re.search(rf"(?<![\w.-]){re.escape(tail)}/?(?![\w./-])", flat) and (k > 1 or len(tail) >= 8):
            return f" (only its folder '{tail}/' is named)"
    return ""


#: A range of numbered names: "00_overview through 08_cleanup-docs", "01-setup.md to 05-deploy.md".
_NAMED_RANGE = re.compile(r"(?<![\w.-])(?P<a>(?P<na>\d+)[\w.-]*)\s*(?:through|thru|to|until|[-–—]|\.\.\.?)\s*"
                          r"(?P<b>(?P<nb>\d+)[\w.-]*)")


def _in_named_range(base: str, text: str) -> str:
    """The range of numbered names in ``text`` whose numbers hold the number ``base`` starts with
    ("02_data-layer.md" in "00_overview through 08_cleanup-docs"), or ``""``. A range tells a reader the
    file is among those, not which of them changed: the file is still not named, the reason says so."""
    own = re.match(r"\d+(?=[_.-])", base)
    if own is None:
        return ""
    for m in _NAMED_RANGE.finditer(text):
        if len(m.group("na")) == len(m.group("nb")) == len(own.group()) and \
                int(m.group("na")) <= int(own.group()) <= int(m.group("nb")) and not m.group("a").replace(".", "").isdigit():
            return m.group(0)
    return ""


def _what_ran(tool_input: dict[str, object], key_line: str = "") -> str:
    """Where a reader finds a failing call in the transcript: its command (or the file, path, URL or
    pattern it was given), shortened, as `` of `rtk bun run test` ``; "" when its input names none.
    A long command line is shown from the part that names a word of the error line (``--stat`` of
    "unknown flag: --stat" in ``gh pr view 3 && … && gh pr diff 3 --stat``), when an earlier part would
    fill the 60 characters."""
    for key in ("command", "file_path", "notebook_path", "path", "url", "pattern"):
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            if key == "command":   # `cd /long/project/path && rtk bun run test`: the command is what tells it
                value = _LEADING_CD.sub("", value, count=1) or value
                if len(" ".join(value.split())) > 60 and (part := refused_part(value, key_line)) != value:
                    value = "… " + part
            return f" of `{_short(value, 60).replace('`', chr(39))}`"
    return ""


#: A leading change of folder, ``cd "/a b/c" && ``, ``cd web; `` or a script's ``cd web`` line, before
#: the command proper.
_LEADING_CD = re.compile(r"""^\s*cd\s+(?:"[^"\n]*"|'[^'\n]*'|\S+)[ \t]*(?:&&|;|\n)\s*""")


@grader("errors_preserved", kind="rule")
def errors_preserved(case: CompactionCase) -> Verdict:
    """Every error of the summarised span (and every expect.errors line) is in section 4: its key
    line, or its identifying tokens (test or function name, file:line, exception type, error code,
    exit code, HTTP status), or the failing command with its output, or the failing test it belongs to.
    A test run whose tests failed is an error even when it exited 0 (``pytest | tail``), and so is a
    build that printed compile errors (``dotnet build | tail``).

    Rejected calls, calls cancelled with a failing sibling, calls the tool refused as made and probes
    that found nothing are not errors (pytest_ctxeval.reading.session_facts.error_kind)."""
    wanted: dict[str, tuple[str, FailingResult | None]] = {}
    # the summarised span's errors: the same for every mutant of a compaction (a shared view)
    for f in case.shared_view("failing_results", lambda: failing_results(case.summarized), case.summarized):
        if f.key_line:
            label = f"{f.tool} result{_what_ran(f.input, f.key_line)}"
            if f.build:     # `dotnet build | tail` exits 0: its compile errors are the error
                label = f"{f.tool} build{_what_ran(f.input, f.key_line)} (it exited 0, its output reports compile errors)"
            elif f.exit_ok:   # `pytest | tail` exits 0: say why a result not marked as an error counts
                label = (f"{f.tool} test run{_what_ran(f.input, f.key_line)} (it exited 0, its output reports "
                         "failing tests: "
                         f"{f.tests[0][1] if f.tests else 'see the run'})")
            wanted.setdefault(f.key_line, (label, f))
    for line in case.reached(case.expect.errors):
        wanted.setdefault(line, ("expect.errors", None))
    unseen = _unseen(case, "errors")   # an exit code, a count, a commit id the session never showed
    if not wanted and unseen:
        return Verdict.failed(*unseen)
    if not wanted:
        others = case.shared_view("other_failures", lambda: failing_results(
            case.summarized, kinds=("rejected", "cancelled", "tool_usage", "probe")), case.summarized)
        told = not_counted(others, [p.text for p in person_messages(case.summarized)])
        what = (f"no tool result failed with an error in the summarised span ({told}; an error is a failure "
                "of the work, or a refused command line worked around another way)") if told else (
            "no tool result failed in the summarised span")
        return Verdict.not_applicable(f"{what}, and no line of expect.errors has come up yet")
    region = case.region("errors")
    where = _where(case, "errors", 4)
    if region is None and (why := _free_form(case, "errors")):
        region, where = _whole_region(case), _free_where(case, "errors", 4, why)
    if region is None:
        return _section_missing(case, "errors", 4, f"the {plural(len(wanted), 'error line')}", list(wanted))
    # Where else an error is told: the problem-solving and current-work sections (by its identifying
    # tokens only in an item that speaks of an error: not by any mention of a name it holds). Words in
    # underscore emphasis are read as rendered (``__Ruff UP038__`` names UP038).
    region = plain_emphasis(region)
    others = plain_emphasis(case.sections.body("problem", "current"))
    wider = region + "\n" + others
    missing, how, elsewhere = [], [], 0
    asked, excused = leave_out(case.compact_args), []   # /compact "leave out X": the person's own instruction wins
    for key, (_, res) in wanted.items():
        # an item that says the error did not happen, or names another code of its kind, keeps nothing
        if _present(key, items_about(region, key)):
            continue
        # told in section 4 by its tokens counts for section 4, even when section 8 also quotes it
        kept_here = error_kept(key, res.text, str(res.input.get("command", "")), region,
                               workaround=res.workaround) if res else (False, "")
        if kept_here[0]:
            how.append(kept_here[1])
            continue
        if _present(key, items_about(wider, key)):
            elsewhere += 1
            continue
        if res is not None:
            command = str(res.input.get("command", ""))
            kept, why = error_kept(key, res.text, command, region, workaround=res.workaround)
            if not kept and res.tests:
                why = failing_test_told(res.tests, region, errors_section=True)
                kept = bool(why)
            if not kept and others:
                kept, why = error_told_as_error(key, res.text, command, others, workaround=res.workaround)
                if not kept and res.tests:
                    why = failing_test_told(res.tests, others)
                    kept = bool(why)
                elsewhere += kept
            if kept:
                how.append(why)
                continue
        told = key if res is None else "\n".join((key, str(res.input.get("command", "")), res.text[:2000]))
        if (asked_for := left_out(asked, "errors", told)) is not None:
            excused.append(asked_for)
            continue
        missing.append(key)
    def _nor_test(k: str) -> str:
        res = wanted[k][1]
        note = f" (nor is its failing test '{_short(res.tests[0][1], 60)}')" if res is not None and res.tests else ""
        denied = error_denied(k, res.text if res else "", str(res.input.get("command", "")) if res else "", region)
        return note + (f"; an item of the section {denied}" if denied else "")
    reasons = [f"error line from a failing {wanted[k][0]} is not in {where}: \"{_short(k, 100)}\"{_nor_test(k)}"
               for k in missing]
    # An error told against another file than the one its output places it in (the next context
    # window opens the wrong file): pytest_ctxeval.reading.error_location.
    misplaced = _misplaced_errors(case, [r for _, r in wanted.values() if r is not None])
    # A test the span's last run still fails, called passing (pytest_ctxeval.reading.test_claims).
    misplaced += _passing_claims(case)
    # An error called re-run or passing that nothing ran again (pytest_ctxeval.reading.rerun_claims).
    misplaced += _unverified_reruns(case, [r for _, r in wanted.values() if r is not None])
    misplaced += unseen
    reasons += misplaced
    by_test = sum(w.startswith("its failing test") for w in how)
    by = [f"{len(how) - by_test} by their identifying tokens" if len(how) > by_test else "",
          f"{by_test} by a failing test they belong to" if by_test else ""]
    tokens = f" ({', '.join(b for b in by if b)})" if how else ""
    if elsewhere:
        ok = (f"{all_of(len(wanted), 'error line')} kept: {len(wanted) - elsewhere} in {where}, {elsewhere} in the "
              f"problem-solving or current-work section{tokens}")
    else:
        ok = f"{all_of(len(wanted), 'error line')} in {where}{tokens}"
    ok, reasons = with_leave_out(ok, reasons, excused, len(wanted), "error lines", case.compact_args, asked)
    return Verdict.from_fraction(max(len(wanted) - len(missing) - len(misplaced), 0), len(wanted), reasons, ok,
                                 missing=missing)


def _misplaced_errors(case: CompactionCase, results: list[FailingResult]) -> list[str]:
    """Reasons for items of section 4 that place an error of a failing result in a file its output
    does not name, while the output places it in one other file (reading.error_location)."""
    section = case.sections.get("errors")
    if section is None or not results:
        return []
    files = case.shared_view("touched_names", lambda: {p.replace("\\", "/").rsplit("/", 1)[-1]
                                                        for p, _ in touched_files(case.history)}, case.history)
    items = _items(plain_emphasis(section.body))
    lines = case.summary.split("\n")
    out, seen = [], set()
    for res in results:
        command = str(res.input.get("command", ""))
        def tells(item: str, res: FailingResult = res, command: str = command) -> bool:
            return error_kept(res.key_line, res.text, command, item)[0]

        for bad in misplaced_errors(items, res.text, files, tells, res.key_line):
            if (bad.item, bad.mark) in seen:
                continue
            seen.add((bad.item, bad.mark))
            at = _line_of(lines, section, bad.item)
            shown = _short(command, 60)
            mark = bad.mark if len(bad.mark) < 40 else f'"{_short(bad.mark, 60)}"'
            out.append(f"section 4 (line {at}) tells {mark} in `{bad.told}`: \"{_short(bad.item, 110)}\"; but the "
                       f"failing {res.tool} result" + (f" of `{shown}`" if shown else "") +
                       f" places it in {bad.path}: \"{_short(bad.evidence, 110)}\" (the error is told against the wrong file)")
    return out


def _unverified_reruns(case: CompactionCase, results: list[FailingResult]) -> list[str]:
    """Reasons for items of section 4 that call a failing command's error re-run or passing when
    nothing ran its tool again after the failure (pytest_ctxeval.reading.rerun_claims)."""
    section = case.sections.get("errors")
    if section is None or not results or case.summary_format is not None:
        return []
    lines = case.summary.split("\n")

    def tells(res: FailingResult, item: str) -> bool:
        return error_kept(res.key_line, res.text, str(res.input.get("command", "")), item)[0]

    out = []
    for claim in unverified_reruns(_items(plain_emphasis(section.body)), results, case.summarized, tells):
        at = _line_of(lines, section, claim.item)
        out.append(f"section 4 (line {at}) says \"{_short(claim.claim, 90)}\" of the error of `{_short(claim.command, 60)}`: "
                   f"\"{_short(claim.item, 100)}\"; but no command after the failure ran it again without failing (nor did a "
                   "subagent run): a fix called verified that was never run")
    return out


def _passing_claims(case: CompactionCase) -> list[str]:
    """Reasons for sentences of sections 4, 5 and 8 that call a test passing which the span's last
    test run still fails (pytest_ctxeval.reading.test_claims)."""
    run = case.shared_view("last_test_run", lambda: last_test_run(case.summarized), case.summarized)
    if run is None:
        return []
    lines = case.summary.split("\n")
    out = []
    for kind, number in (("errors", 4), ("problem", 5), ("current", 8)):
        section = case.sections.get(kind)
        if section is None:
            continue
        for claim in passing_claims(plain_emphasis(section.body), run):
            at = _line_of(lines, section, claim.sentence)
            what = (f"still fails the test {claim.test}" if claim.test else
                    f"fails {len(run.failing)} test{'s' if len(run.failing) > 1 else ''}")
            out.append(f"section {number} (line {at}) says \"{_short(claim.sentence, 110)}\", but the last test run of "
                       f"the span (`{_short(run.command, 60)}`) {what}: \"{_short(run.evidence, 110)}\"")
    return out
