"""Round 9's edits of the labelled real summaries (see ``edited_summaries.py``, which runs them).

Defects a careful reader of each session finds a summariser making that rounds 6-8 did not edit:
messages run together or cut in section 6, a rule weakened or a negation dropped, a value of the
session told wrong (a PR number, a commit, a branch, a version, a dated path, a count of tests, an
exit code), an option the person did not pick told as their choice, a file the session wrote called
deleted, an error called re-run and passing that nothing ran again, a finished step proposed next…;
and harmless rewrites (section 6 in block quotes or curly quotes, sections shortened or reordered,
a value restated, a re-run that happened said). Like the earlier rounds, an edit reads the session
only to find what to change and copies no transcript text into this repository.
"""

from __future__ import annotations

import re

from edited_summaries import _base, _body, _in_section, _lines, _top_items

Q = re.compile(r'"([^"\n]{12,})"')

def _quoted_items(body):
    lines = _lines(body)
    return [(i, l) for i, l in enumerate(lines) if Q.search(l)]

def _ask_answers(case):
    """(chosen, other option) label pairs of AskUserQuestion calls."""
    from pytest_ctxeval.core.messages import tool_uses, ToolResultBlock, UserMessage
    out = []
    calls = {}
    for m in case.history:
        for u in tool_uses(m):
            if u.name == "AskUserQuestion":
                calls[u.id] = u.input
        if isinstance(m, UserMessage) and isinstance(m.content, list):
            for b in m.content:
                if isinstance(b, ToolResultBlock) and b.tool_use_id in calls:
                    txt = b.content if isinstance(b.content, str) else " ".join(x.get("text", "") for x in b.content if isinstance(x, dict))
                    for q in calls[b.tool_use_id].get("questions", []):
                        labels = [o.get("label", "") for o in q.get("options", [])]
                        for lab in labels:
                            if lab and f'="{lab}"' in txt:
                                others = [x for x in labels if x and x != lab]
                                if others:
                                    out.append((lab, others[0]))
    return out

# ---------------------------------------------------------------- defects
def user_messages_merged(case, s):
    """Section 6 runs two consecutive person messages together into one quoted item."""
    body = _body(case, "user_messages")
    lines = _lines(body)
    qi = [(i, l) for i, l in enumerate(lines) if re.match(r'^\s*[-*]\s+"[^"]+"\s*$', l)]
    for (a, la), (b, lb) in zip(qi, qi[1:]):
        if b == a + 1:
            ma, mb = re.search(r'"([^"]+)"', la), re.search(r'"([^"]+)"', lb)
            lines[a] = la[:ma.start()] + '"' + ma.group(1).rstrip() + " " + mb.group(1) + '"'
            del lines[b]
            return _in_section(s, case, "user_messages", "\n".join(lines))
    return None

def user_message_cut_clause(case, s):
    """Section 6 quotes a message cut at a clause boundary, the closing quote kept (no ellipsis)."""
    body = _body(case, "user_messages")
    lines = _lines(body)
    for i, l in enumerate(lines):
        m = re.search(r'"([^"]{30,400})"', l)
        if not m:
            continue
        q = m.group(1)
        cut = re.search(r"(,| but | and | then | so | - )", q[12:])
        if cut and len(q) - (12 + cut.start()) > 12:
            lines[i] = l[:m.start(1)] + q[:12 + cut.start()] + l[m.end(1):]
            return _in_section(s, case, "user_messages", "\n".join(lines))
    return None

def user_message_cut_ellipsis(case, s):
    """Section 6 quotes a short message's head and an ellipsis, dropping its second half."""
    body = _body(case, "user_messages")
    lines = _lines(body)
    for i, l in enumerate(lines):
        m = re.search(r'"([^"]{40,300})"', l)
        if not m or "..." in m.group(1) or "…" in m.group(1):
            continue
        q = m.group(1)
        half = q.rfind(" ", 0, len(q) // 2)
        if half > 15:
            lines[i] = l[:m.start(1)] + q[:half] + "..." + l[m.end(1):]
            return _in_section(s, case, "user_messages", "\n".join(lines))
    return None

def question_made_statement(case, s):
    """Section 6 quotes the person's question as a statement ('…, right?' -> '….')."""
    body = _body(case, "user_messages")
    lines = _lines(body)
    for i, l in enumerate(lines):
        m = re.search(r'"([^"]{15,300}?)(,? right\?|\?)"', l)
        if m:
            lines[i] = l[:m.start(2)] + "." + l[m.end(2):]
            return _in_section(s, case, "user_messages", "\n".join(lines))
    return None

_MODAL = [(r"\bmust\b", "should"), (r"\bMUST\b", "SHOULD"), (r"\balways\b", "usually"), (r"\bnever\b", "rarely"),
          (r"\bonly\b", "mainly"), (r"\bexplicitly\b", "loosely"), (r"\brequired\b", "optional"), (r"\bdon't\b", "prefer not to")]

def constraint_weakened(case, s):
    """Section 1 weakens a rule: 'must' -> 'should', 'never' -> 'rarely', 'only' -> 'mainly', …"""
    body = _body(case, "request")
    for pat, new in _MODAL:
        if re.search(pat, body):
            return _in_section(s, case, "request", re.sub(pat, new, body, count=1))
    return None

def negation_dropped(case, s):
    """Sections 1 or 7 drop a negation the summary wrote ('NOT be created' -> 'be created')."""
    for kind in ("request", "pending", "concepts"):
        body = _body(case, kind)
        m = re.search(r"\b(should|must|do|does|did|will|can|is|are)\s+(NOT|not)\b\s*", body)
        if m:
            return _in_section(s, case, kind, body[:m.start(2)] + body[m.end(2):].lstrip())
        m = re.search(r"\b(don't|do not|never)\s+", body)
        if m:
            return _in_section(s, case, kind, body[:m.start()] + body[m.end():])
    return None

def number_in_quote_changed(case, s):
    """Section 6 quotes a message with one of its numbers changed (#293 -> #294)."""
    body = _body(case, "user_messages")
    lines = _lines(body)
    for i, l in enumerate(lines):
        for m in re.finditer(r'"([^"]+)"', l):
            d = re.search(r"\d+", m.group(1))
            if d:
                at = m.start(1) + d.start()
                lines[i] = l[:at] + str(int(d.group(0)) + 1) + l[at + len(d.group(0)):]
                return _in_section(s, case, "user_messages", "\n".join(lines))
    return None

_COUNT = re.compile(r"\b(\d+)(\s+(?:tests?|specs?)\s+(?:pass|passed|passing|fail|failed|failing)|\s+(?:passed|failed|failing|errors?)\b)", re.I)

def test_count_changed(case, s):
    """A count of tests passed or failed told with another number (26 tests pass -> 25)."""
    for kind in ("current", "problem", "errors", "files"):
        body = _body(case, kind)
        m = next((x for x in _COUNT.finditer(body) if not re.search(r"(?i)\b(?:line|phase|step)\s*$", body[:x.start()])), None)
        if m and m.group(1) != "0":
            n = int(m.group(1))
            return _in_section(s, case, kind, body[:m.start(1)] + str(n + 2) + body[m.end(1):])
    return None

def pr_number_changed(case, s):
    """An issue or pull-request number (#41) in sections 1, 3, 8 or 9 told as another one."""
    for kind in ("request", "current", "next", "files", "problem"):
        body = _body(case, kind)
        for m in re.finditer(r"(?<![\w&])#(\d{2,5})\b", body):
            n = int(m.group(1)) + 7
            if f"#{n}" in case.history_text:
                continue
            return _in_section(s, case, kind, body.replace(m.group(0), f"#{n}"))
    return None

def branch_changed(case, s):
    """A branch name the summary names (`phase0-workspace-cleanup`) told with a word changed."""
    for kind in ("request", "current", "next", "problem", "concepts"):
        body = _body(case, kind)
        for m in re.finditer(r"branch\s+`([\w./-]+)`|`([\w./-]+)`\s+branch", body):
            name = m.group(1) or m.group(2)
            if "-" not in name and "/" not in name:
                continue
            new = re.sub(r"[\w]+$", lambda w: w.group(0) + "s" if not w.group(0).endswith("s") else w.group(0)[:-1], name)
            return _in_section(s, case, kind, body.replace(f"`{name}`", f"`{new}`"))
    return None

def version_changed(case, s):
    """A version the session used (ratatui 0.29, vitest@^4) told with another number in sections 2-3."""
    for kind in ("concepts", "files"):
        body = _body(case, kind)
        for m in re.finditer(r"(?<![\w.])(\d+)\.(\d+)(?:\.(\d+))?(?![\w.])", body):
            ver = m.group(0)
            if ver not in case.history_text:
                continue
            parts = ver.split(".")
            parts[-1] = str(int(parts[-1]) + 1)
            new = ".".join(parts)
            if new in case.history_text:
                continue
            return _in_section(s, case, kind, body[:m.start()] + new + body[m.end():])
    return None

def percentage_changed(case, s):
    """A measured figure (38.75%) told as another."""
    for kind in ("current", "problem", "errors", "concepts", "files"):
        body = _body(case, kind)
        m = re.search(r"(?<![\w.])(\d+\.\d+)%", body)
        if m:
            v = m.group(1)
            new = str(int(v.split(".")[0]) + 10) + "." + v.split(".")[1]
            return _in_section(s, case, kind, body[:m.start(1)] + new + body[m.end(1):])
    return None

def code_value_changed(case, s):
    """A code block in section 3 shows a line the session wrote, with a number or string changed."""
    body = _body(case, "files")
    lines = _lines(body)
    inside = False
    for i, l in enumerate(lines):
        if l.strip().startswith("```"):
            inside = not inside
            continue
        if not inside or len(l.strip()) < 15 or l.strip() not in case.history_text:
            continue
        m = re.search(r'(?<![\w.])(\d+)(?![\w])|"([a-z][\w-]{2,})"', l)
        if m:
            if m.group(1):
                new = l[:m.start(1)] + str(int(m.group(1)) + 1) + l[m.end(1):]
            else:
                new = l[:m.start(2)] + m.group(2) + "x" + l[m.end(2):]
            if new.strip() in case.history_text:
                continue
            lines[i] = new
            return _in_section(s, case, "files", "\n".join(lines))
    return None

def code_snippet_wrong_file(case, s):
    """Two files' code blocks in section 3 swapped: each file's item shows the other's code."""
    body = _body(case, "files")
    blocks = list(re.finditer(r"```[\w-]*\n.*?\n\s*```", body, re.S))
    if len(blocks) < 2:
        return None
    a, b = blocks[0], blocks[1]
    if a.group(0) == b.group(0):
        return None
    new = body[:a.start()] + b.group(0) + body[a.end():b.start()] + a.group(0) + body[b.end():]
    return _in_section(s, case, "files", new)

def flag_changed(case, s):
    """A command in section 9 (or 8) with a flag changed (`--coverage` -> `--no-coverage`)."""
    for kind in ("next", "current", "pending"):
        body = _body(case, kind)
        for m in re.finditer(r"`([^`\n]*?\s)(--?[a-zA-Z][\w-]*)([^`\n]*)`", body):
            flag = m.group(2)
            new = ("--no-" + flag[2:]) if flag.startswith("--") else flag.upper() if flag[1:].islower() else flag.lower()
            if new == flag:
                continue
            return _in_section(s, case, kind, body[:m.start(2)] + new + body[m.end(2):])
    return None

def answer_swapped(case, s):
    """The summary tells an AskUserQuestion choice as another option of the same question."""
    for chosen, other in _ask_answers(case):
        if chosen in s and len(chosen) > 4:
            i = s.index(chosen)
            return s[:i] + other + s[i + len(chosen):]
    return None

def all_tasks_complete(case, s):
    """Section 7 says nothing is left to do while todos or tasks are open."""
    from pytest_ctxeval.reading.extract import open_todos
    if not open_todos(case.history):
        return None
    return _in_section(s, case, "pending", "   None — all tasks are complete.")

def open_task_ticked(case, s):
    """Section 7 marks a pending (not started) todo's item done ('✅ done')."""
    from pytest_ctxeval.reading.extract import latest_todos
    from pytest_ctxeval.reading.tasks import task_in_item
    todos = [t["content"] for t in (latest_todos(case.history) or []) if t.get("status") == "pending"]
    body = _body(case, "pending")
    lines = _lines(body)
    for t in todos:
        for i, l in enumerate(lines):
            if re.match(r"^\s*(?:[-*]|\d+[.)])\s+", l) and task_in_item(t, l, 0.6):
                l = re.sub(r"(?i)\s*[—-]*\s*\(?(pending|in progress|not started|todo)\)?", "", l)
                lines[i] = l.rstrip() + " — ✅ done"
                return _in_section(s, case, "pending", "\n".join(lines))
    return None

def finished_step_as_next(case, s):
    """Section 9 proposes a step already done (a completed todo) instead of the one in progress."""
    from pytest_ctxeval.reading.extract import latest_todos
    todos = latest_todos(case.history) or []
    done = [t["content"] for t in todos if t.get("status") == "completed" and t.get("content")]
    if not done:
        return None
    body = _body(case, "next")
    return _in_section(s, case, "next", f"   Next: {done[0]}.\n" + body)

def current_work_is_first_task(case, s):
    """Section 8 describes the first request's work as the current work."""
    req = _body(case, "request")
    first = next((l.strip(" -*") for l in _lines(req) if len(l.strip()) > 40), None)
    if not first:
        return None
    return _in_section(s, case, "current", "   Working on the initial request: " + first)

def steps_swapped_in_next(case, s):
    """Section 9's steps reordered so the later step comes first ('Then X' before 'Y')."""
    body = _body(case, "next")
    sents = re.split(r"(?<=[.!?])\s+", body.strip())
    sents = [x for x in sents if x]
    if len(sents) < 3:
        return None
    sents[0], sents[-1] = sents[-1], sents[0]
    return _in_section(s, case, "next", "   " + " ".join(sents))

def _rerun_said(case, s, *, ran_again):
    """Section 4's item of the latest failing command (no test run) whose tool did (``ran_again``) or
    did not run again without failing, said to be re-run and succeeding now."""
    from pytest_ctxeval.reading.extract import failing_results
    from pytest_ctxeval.reading.session_facts import error_kept
    from pytest_ctxeval.reading.rerun_claims import _runs, _tool
    runs = _runs(case.summarized)
    body = _body(case, "errors")
    lines = _lines(body)
    for f in reversed(failing_results(case.summarized)):
        cmd = f.input.get("command")
        if not isinstance(cmd, str) or f.tests:
            continue
        tool = _tool(cmd)
        later = [(t, bad) for i, t, bad in runs if i > f.index]
        if ran_again != any(t == tool and not bad for t, bad in later):
            continue
        if not ran_again and any(not t for t, _ in later):
            continue
        for i, l in enumerate(lines):
            if l.strip() and error_kept(f.key_line, f.text, cmd, l)[0]:
                lines[i] = l.rstrip() + " — resolved; re-ran it and it now succeeds"
                return _in_section(s, case, "errors", "\n".join(lines))
    return None


def fixed_error_still_failing(case, s):
    """Section 4 says a failing command's error was re-run and now succeeds, when nothing ran that tool again."""
    return _rerun_said(case, s, ran_again=False)


def fixed_error_rerun_true(case, s):
    """Harmless twin: an error whose tool ran again without failing, said to succeed now."""
    return _rerun_said(case, s, ran_again=True)


def fixed_error_hedged(case, s):
    """Harmless twin: an error said fixed but not re-run yet."""
    from pytest_ctxeval.reading.extract import failing_results
    from pytest_ctxeval.reading.session_facts import error_kept
    body = _body(case, "errors")
    lines = _lines(body)
    for f in reversed(failing_results(case.summarized)):
        cmd = str(f.input.get("command", ""))
        for i, l in enumerate(lines):
            if l.strip() and error_kept(f.key_line, f.text, cmd, l)[0]:
                lines[i] = l.rstrip() + " — fix applied; not re-run yet"
                return _in_section(s, case, "errors", "\n".join(lines))
    return None


def exit_code_changed(case, s):
    """An exit code or HTTP status in section 4 told as another (exit code 1 -> 2, 500 -> 502)."""
    body = _body(case, "errors")
    m = re.search(r"(?i)(exit(?:ed)?(?: code| with)?\s*)(\d+)|\b(4\d\d|5\d\d)\b(?=\s*(?:error|status|Internal|Bad|Not))", body)
    if not m:
        return None
    g = 2 if m.group(2) else 3
    v = m.group(g)
    return _in_section(s, case, "errors", body[:m.start(g)] + str(int(v) + 2) + body[m.end(g):])

def file_said_deleted(case, s):
    """Section 3's item for a file the session wrote or edited (and kept) says it was deleted."""
    from pytest_ctxeval.reading.extract import file_mentioned, file_ledger
    body = _body(case, "files")
    lines = _lines(body)
    changed = file_ledger(case.history).changed()
    for path in changed:
        if "/.claude/" in path:
            continue
        hits = [i for i, l in enumerate(lines) if file_mentioned(path, l)]
        if len(hits) != 1:
            continue
        i = hits[0]
        m = re.match(r"^(\s*(?:[-*]|\d+[.)])\s+)(.*)$", lines[i])
        if not m or not file_mentioned(path, m.group(2)[:120]):
            continue
        lines[i] = m.group(1) + f"`{_base(path)}` — deleted (removed from the repository)"
        # its sub-lines (the change told) go too
        j = i + 1
        ind = len(m.group(1)) - len(m.group(1).lstrip())
        while j < len(lines) and (not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > ind):
            j += 1
        del lines[i + 1:j]
        return _in_section(s, case, "files", "\n".join(lines))
    return None

def person_said_assistant(case, s):
    """Section 6 drops the person's latest message and section 8 tells it as the assistant's own idea."""
    from pytest_ctxeval.reading.extract import person_messages
    ps = person_messages(case.history)
    if not ps:
        return None
    last = ps[-1].text.strip()
    body = _body(case, "user_messages")
    lines = _lines(body)
    keep = [l for l in lines if last[:25] not in l]
    if len(keep) == len(lines):
        return None
    out = _in_section(s, case, "user_messages", "\n".join(keep))
    return out

def date_in_path_changed(case, s):
    """A dated path (history/2026-02-23_x) told with another date."""
    for kind in ("files", "request", "pending", "current"):
        body = _body(case, kind)
        m = re.search(r"(20\d\d-\d\d-)(\d\d)", body)
        if m:
            nd = f"{(int(m.group(2)) % 27) + 1:02d}"
            return _in_section(s, case, kind, body[:m.start(2)] + nd + body[m.end(2):])
    return None

def rejected_option_chosen_prose(case, s):
    """Section 1/5 says the person chose an option they did not (AskUserQuestion), named in prose."""
    answers = _ask_answers(case)
    if not answers:
        return None
    answers = [(c, o) for c, o in answers if len(o.split()) >= 2 or len(o) >= 8]
    if not answers:
        return None
    chosen, other = answers[-1]
    body = _body(case, "request")
    return _in_section(s, case, "request", body.rstrip() + f'\n   The user chose "{other}".')

DEFECTS = {k: globals()[k] for k in """user_messages_merged user_message_cut_clause user_message_cut_ellipsis question_made_statement
constraint_weakened negation_dropped number_in_quote_changed test_count_changed pr_number_changed branch_changed
version_changed percentage_changed code_value_changed code_snippet_wrong_file flag_changed answer_swapped
all_tasks_complete open_task_ticked finished_step_as_next current_work_is_first_task steps_swapped_in_next
fixed_error_still_failing exit_code_changed file_said_deleted person_said_assistant date_in_path_changed
rejected_option_chosen_prose""".split()}

# ---------------------------------------------------------------- harmless
def section6_blockquotes(case, s):
    body = _body(case, "user_messages")
    new = re.sub(r'(?m)^(\s*)[-*]\s+"([^"\n]+)"\s*$', r"\1> \2", body)
    return _in_section(s, case, "user_messages", new)

def section6_curly(case, s):
    body = _body(case, "user_messages")
    new = re.sub(r'"([^"\n]+)"', "“\\1”", body)
    return _in_section(s, case, "user_messages", new)

def section1_reworded(case, s):
    body = _body(case, "request")
    new = re.sub(r"\bThe user\b", "The person", body)
    new = re.sub(r"\bwants\b", "would like", new).replace("asked to", "requested to")
    return _in_section(s, case, "request", new)

def concepts_shortened(case, s):
    body = _body(case, "concepts")
    lines = [l for l in _lines(body) if l.strip()]
    if len(lines) < 4:
        return None
    return _in_section(s, case, "concepts", "\n".join(lines[: len(lines) // 2]))

def problem_shortened(case, s):
    body = _body(case, "problem")
    lines = [l for l in _lines(body) if l.strip()]
    if len(lines) < 3:
        return None
    return _in_section(s, case, "problem", "\n".join(lines[:1]))

def pending_reversed(case, s):
    split = _top_items(_body(case, "pending"))
    if not split:
        return None
    head, items, _ = split
    return _in_section(s, case, "pending", head + ("\n" if head else "") + "\n".join(i.rstrip("\n") for i in reversed(items)))

def errors_reversed(case, s):
    split = _top_items(_body(case, "errors"))
    if not split:
        return None
    head, items, _ = split
    return _in_section(s, case, "errors", head + ("\n" if head else "") + "\n".join(i.rstrip("\n") for i in reversed(items)))

def code_blocks_dropped(case, s):
    body = _body(case, "files")
    new = re.sub(r"\n\s*```[\w-]*\n.*?\n\s*```", "", body, flags=re.S)
    return _in_section(s, case, "files", new)

def pr_number_restated(case, s):
    for m in re.finditer(r"(?<![\w&])#(\d{2,5})\b", case.history_text):
        body = _body(case, "current")
        return _in_section(s, case, "current", body.rstrip() + f"\n   (For reference: #{m.group(1)}.)")
    return None

def test_count_restated(case, s):
    body = _body(case, "current")
    m = re.search(r"\b(\d+) (passed|failed)\b", case.history_text)
    if not m:
        return None
    return _in_section(s, case, "current", body.rstrip() + f"\n   (A run of the session reported {m.group(1)} {m.group(2)}.)")

def percentage_restated(case, s):
    for kind in ("current", "problem"):
        body = _body(case, kind)
        m = re.search(r"(?<![\w.])(\d+\.\d+)%", body)
        if m:
            return _in_section(s, case, kind, body.rstrip() + f"\n   (Measured: {m.group(1)} percent.)")
    return None

def next_step_shortened(case, s):
    body = _body(case, "next")
    paras = [p for p in re.split(r"\n\s*\n", body) if p.strip()]
    trailer = [p for p in paras if re.match(r"\s*(If you need|Please continue|Continue the conversation)", p)]
    paras = [p for p in paras if p not in trailer]
    if len(paras) < 2:
        return None
    return _in_section(s, case, "next", "\n\n".join(paras[:1] + [p for p in paras[1:] if '"' in p][:1] + trailer))

def answer_reworded(case, s):
    for chosen, _other in _ask_answers(case):
        if chosen in s and len(chosen) > 4:
            i = s.index(chosen) + len(chosen)
            while i < len(s) and s[i] in "\"'”*`":
                i += 1
            return s[:i] + " (picked in the question dialog)" + s[i:]
    return None

def modal_kept_strong(case, s):
    body = _body(case, "request")
    m = re.search(r"\bshould\b", body)
    if not m:
        return None
    return _in_section(s, case, "request", body.rstrip() + "\n   (Where this says should, the person's own word was kept.)")

def branch_restated(case, s):
    for kind in ("current", "request"):
        body = _body(case, kind)
        m = re.search(r"branch\s+`([\w./-]+)`", body)
        if m:
            return _in_section(s, case, kind, body.rstrip() + f"\n   (Still on `{m.group(1)}`.)")
    return None

def version_restated(case, s):
    body = _body(case, "concepts")
    for m in re.finditer(r"(?<![\w.])(\d+\.\d+(?:\.\d+)?)(?![\w.])", body):
        if m.group(0) in case.history_text:
            return _in_section(s, case, "concepts", body.rstrip() + f"\n   - Version in use: {m.group(0)}")
    return None

HARMLESS = {k: globals()[k] for k in """section6_blockquotes section6_curly section1_reworded concepts_shortened
problem_shortened pending_reversed errors_reversed code_blocks_dropped pr_number_restated test_count_restated
percentage_restated next_step_shortened answer_reworded modal_kept_strong branch_restated version_restated
fixed_error_rerun_true fixed_error_hedged""".split()}
