"""What the person typed and what a summary quotes, as a second fresh reviewer found it, each class
shown on the good and the bad side:

* words typed right after a pasted log (no blank line), or fewer than 8 of them, are the person's:
  a summary that keeps the lead and drops them lost the instruction; a log's own last line is not;
* a long message of the person's own prose is kept in full, never by its head and tail; a long
  paste may be, and the reason says "head and tail only";
* a fenced code block kept as an inline code span, and an ``@path`` mention without its ``@``, are
  formatting, not changes;
* section 9 quoting a verbatim scrap too short to show the task ("same limits", "On it.") fails
  with a reason that says so, never "not verbatim";
* "100% similar" never stands next to a difference, however far into the message it is;
* a summary's one-letter inflection of a word ("merge" -> "merged") is not a typo fixed.
"""

from __future__ import annotations

import pytest

from pytest_ctxeval.reading.extract import message_fragments
from pytest_ctxeval.reading.pasted import mostly_prose
from pytest_ctxeval.reading.verbatim import find, typed_tail


def _s(kit, **bodies: str) -> str:
    base = {k: "x" for k in kit.SECTION_KINDS}
    base.update(bodies)
    return kit.summary(base)


LEAD = "the sync job keeps dying overnight, this is what the log says:"
LOG = "\n".join(f"2026-03-04 02:1{i}:00 ERROR sync[{i}] upstream timed out after 30s (attempt {i})" for i in range(10))


# ---------------------------------------------------------------------------------------------
# F5: typed words after a pasted log


@pytest.mark.parametrize("typed", [
    "look into it, but do NOT change the retry policy and leave the cron schedule as it is",
    "don't touch prod",
    "don't touch the read-only replica, it's live",
    "but not on the main branch",
    "why does it only happen at night?",
    "fix it",
])
@pytest.mark.parametrize("gap", ["\n", "\n\n"], ids=["no-blank-line", "blank-line"])
def test_words_typed_right_after_a_pasted_log_are_the_persons(grade, kit, typed, gap):
    message = f"{LEAD}\n{LOG}{gap}{typed}"
    assert typed_tail(message) == typed
    messages = [kit.user(message)]
    dropped = _s(kit, user_messages=f'- "{LEAD} [10 lines of timeouts]"')
    for name in ("verbatim_user_messages", "last_request_intact"):
        verdict = grade(name, kit.case(messages, dropped))
        assert verdict.status == "fail", (name, typed)
        assert "typed after the paste is not there" in verdict.reasons[0] and typed[:20] in verdict.reasons[0]
    kept = _s(kit, user_messages=f'- "{LEAD} [10 lines of timeouts] {typed}"')
    for name in ("verbatim_user_messages", "last_request_intact"):
        assert grade(name, kit.case(messages, kept)).status == "pass", (name, typed)


@pytest.mark.parametrize("own_end", [
    "Analyzed 0 sessions.", "webpack compiled with 2 warnings", "Process finished with exit code 1",
    "Run `npm audit fix` for details", "Understand this error", "thanks!", "Do you want to continue? [Y/n]",
    "Search for the keywords to learn more about each warning.", "Try again later.", "Not Found",
])
def test_a_logs_own_last_line_is_still_the_paste(grade, kit, own_end):
    message = f"{LEAD}\n{LOG}\n{own_end}"
    assert typed_tail(message) == ""
    messages = [kit.user(message)]
    summarised = _s(kit, user_messages=f'- "{LEAD} [10 lines of timeouts]"')
    for name in ("verbatim_user_messages", "last_request_intact"):
        assert grade(name, kit.case(messages, summarised)).status == "pass", (name, own_end)


def test_only_the_typed_line_after_a_logs_last_line_is_the_persons(kit):
    message = f"{LEAD}\n{LOG}\nAnalyzed 0 sessions.\nstill the same issue?"
    assert typed_tail(message) == "still the same issue?"
    assert find(message, f"{LEAD} [log] still the same issue?")
    assert not find(message, f"{LEAD} [log]")


# ---------------------------------------------------------------------------------------------
# F14: a long message: the person's prose in full, a paste by its head and tail

SPEC = ("I want an export feature for the reports page. "
        + " ".join(f"Requirement {i}: the export must handle case {i} of the layout and keep the column order."
                   for i in range(1, 14))
        + " IMPORTANT: never write the export files to the shared mount under /mnt/shared, use the local tmp dir. "
        + " ".join(f"Detail {i}: past {i * 100} rows, page the query and stream the rows to the file." for i in range(1, 14))
        + " Start with the CSV exporter.")
DOC = "here is the design doc the team wrote, follow it:\n" + "\n".join(
    f"## Part {i}\n- **Step {i}.** Read the input table and write the report row {i}.\n| col {i} | type |" for i in range(40))


def test_long_prose_the_person_typed_is_kept_in_full(grade, kit):
    assert len(SPEC) > 2_000 and mostly_prose(SPEC) and message_fragments(SPEC) == [SPEC]
    messages = [kit.user(SPEC)]
    ends = _s(kit, user_messages=f'- "{SPEC[:320]} [...] {SPEC[-320:]}"')
    for name in ("verbatim_user_messages", "last_request_intact"):
        verdict = grade(name, kit.case(messages, ends))
        assert verdict.status == "fail" and "own prose, which must be kept in full" in verdict.reasons[0], name
    full = _s(kit, user_messages=f'- "{SPEC}"')
    for name in ("verbatim_user_messages", "last_request_intact"):
        assert grade(name, kit.case(messages, full)).status == "pass", name


def test_a_log_inside_long_prose_may_be_summarised_but_not_the_prose(grade, kit):
    log = "\n".join(f"2026-03-04 02:1{i}:00 ERROR export[{i}] disk quota exceeded on /mnt/shared" for i in range(5))
    first, rest = SPEC.split(" IMPORTANT:", 1)
    typed = f"{first}\nthe last run logged:\n{log}\nIMPORTANT:{rest}"
    assert len(typed) > 2_000 and mostly_prose(typed) and message_fragments(typed) == [" ".join(typed.split())]
    messages = [kit.user(typed)]
    summarised = _s(kit, user_messages=f'- "{first} the last run logged: [5 quota errors] IMPORTANT:{rest}"')
    for name in ("verbatim_user_messages", "last_request_intact"):
        verdict = grade(name, kit.case(messages, summarised))
        assert verdict.status == "pass" and "summarised" in verdict.reasons[0], (name, verdict.reasons)
    cut = summarised.replace(" IMPORTANT: never write the export files to the shared mount under /mnt/shared,", "")
    for name in ("verbatim_user_messages", "last_request_intact"):
        assert grade(name, kit.case(messages, cut)).status == "fail", name


def test_long_prose_in_a_script_without_spaces_is_the_persons_too(grade, kit):
    typed = "".join(f"第{i}条：导出必须保持列的顺序，并且正确处理报表第{i}种布局。" for i in range(1, 60)) + \
        "重要：绝对不要把导出文件写到共享目录。" + "".join(f"细节{i}：超过{i}百行时分页查询。" for i in range(1, 40))
    assert len(typed) > 2_000 and message_fragments(typed) == [typed]
    ends = _s(kit, user_messages=f'- "{typed[:320]} […] {typed[-320:]}"')
    assert grade("last_request_intact", kit.case([kit.user(typed)], ends)).status == "fail"
    full = _s(kit, user_messages=f'- "{typed}"')
    assert grade("last_request_intact", kit.case([kit.user(typed)], full)).status == "pass"


def test_a_long_paste_is_kept_by_its_head_and_tail_and_says_so(grade, kit):
    assert len(DOC) > 2_000 and not mostly_prose(DOC) and len(message_fragments(DOC)) == 2
    head, tail = message_fragments(DOC)
    messages = [kit.user(DOC)]
    ends = _s(kit, user_messages=f'- "{head} […] {tail}"')
    verdict = grade("last_request_intact", kit.case(messages, ends))
    assert verdict.status == "pass" and "head and tail only" in verdict.reasons[0]
    assert "is verbatim" not in verdict.reasons[0]
    verdict = grade("verbatim_user_messages", kit.case(messages, ends))
    assert verdict.status == "pass" and "head and tail only" in verdict.reasons[0]
    head_only = _s(kit, user_messages=f'- "{head} […]"')
    assert grade("last_request_intact", kit.case(messages, head_only)).status == "fail"


# ---------------------------------------------------------------------------------------------
# F9 and F33: a code fence and an @-mention are formatting

FENCED = "swap the call in the client for this:\n```python\nclient.get(url, timeout=5)\n```\nand keep retries at 3"


@pytest.mark.parametrize("set_as", [
    "swap the call in the client for this: `client.get(url, timeout=5)` and keep retries at 3",
    "swap the call in the client for this: client.get(url, timeout=5) and keep retries at 3",
    "swap the call in the client for this: ```python client.get(url, timeout=5)``` and keep retries at 3",
])
def test_a_fenced_block_kept_as_inline_code_is_verbatim(grade, kit, set_as):
    messages = [kit.user(FENCED)]
    for name in ("verbatim_user_messages", "last_request_intact"):
        verdict = grade(name, kit.case(messages, _s(kit, user_messages=f'- "{set_as}"')))
        assert verdict.status == "pass", (name, verdict.reasons)
    changed = set_as.replace("timeout=5", "timeout=50")
    for name in ("verbatim_user_messages", "last_request_intact"):
        verdict = grade(name, kit.case(messages, _s(kit, user_messages=f'- "{changed}"')))
        assert verdict.status == "fail" and "timeout=5" in verdict.reasons[0], name


def test_a_fenced_block_kept_as_a_fenced_block_in_section_9_is_quoted(grade, kit):
    messages = [kit.user(FENCED)]
    nine = 'Next: "swap the call in the client for this: client.get(url, timeout=5)"'
    verdict = grade("next_step_quote", kit.case(messages, _s(kit, user_messages=f'- "{FENCED}"', next=nine)))
    assert verdict.status == "pass", verdict.reasons


@pytest.mark.parametrize("typed, named", [
    ("@src/app/main.py", "src/app/main.py"), ("@src/app/main.py", "`src/app/main.py`"),
    ("@src/app/main.py", "@src/app/main.py"), ("@./src/app/main.py", "./src/app/main.py"),
])
def test_a_file_mention_without_its_at_sign_is_verbatim(grade, kit, typed, named):
    messages = [kit.user(f"look at {typed} and fix the crash on startup")]
    kept = _s(kit, user_messages=f'- "look at {named} and fix the crash on startup"')
    assert grade("verbatim_user_messages", kit.case(messages, kept)).status == "pass"
    other = _s(kit, user_messages='- "look at src/app/cli.py and fix the crash on startup"')
    verdict = grade("verbatim_user_messages", kit.case(messages, other))
    assert verdict.status == "fail" and "cli.py" in verdict.reasons[0]


def test_an_email_address_keeps_its_at_sign():
    assert not find("mail ops@example.com about it", "mail opsexample.com about it")


# ---------------------------------------------------------------------------------------------
# F31 and F12: next_step_quote's shortest quote

REQUEST = "now do the same for fetch_invoices and fetch_refunds, same limits"


def _quoting(kit, nine: str, reply: str = "On it."):
    messages = [kit.user("add retries to fetch_orders, at most 3"), kit.say("Done."), kit.user(REQUEST),
                kit.say(reply)]
    return kit.case(messages, _s(kit, user_messages=f'- "add retries to fetch_orders, at most 3"\n- "{REQUEST}"',
                                 next=nine))


@pytest.mark.parametrize("scrap", ["same limits", "On it."])
def test_a_verbatim_scrap_too_short_to_show_the_task_fails_as_such(grade, kit, scrap):
    verdict = grade("next_step_quote", _quoting(kit, f'Apply the retry to invoices and refunds: "{scrap}".'))
    assert verdict.status == "fail"
    assert "too little to show the task" in verdict.reasons[0] and "not verbatim" not in verdict.reasons[0]
    assert f"({len(scrap)} characters)" in verdict.reasons[0]


@pytest.mark.parametrize("quote", ["fetch_invoices and fetch_refunds, same limits", REQUEST])
def test_a_quote_long_enough_to_show_the_task_passes(grade, kit, quote):
    assert grade("next_step_quote", _quoting(kit, f'Next: "{quote}".')).status == "pass"


def test_a_short_request_quoted_whole_is_the_task(grade, kit):
    messages = [kit.user("add retries to fetch_orders, at most 3"), kit.say("Done."), kit.user("bump to 3.12"),
                kit.say("Bumping.")]
    case = kit.case(messages, _s(kit, user_messages='- "add retries to fetch_orders, at most 3"\n- "bump to 3.12"',
                                 next='The user asked: "bump to 3.12". Next: edit pyproject.toml.'))
    assert grade("next_step_quote", case).status == "pass"


def test_a_short_misquote_is_still_not_verbatim(grade, kit):
    verdict = grade("next_step_quote", _quoting(kit, 'Next: "same limts".'))
    assert verdict.status == "fail" and "not verbatim" in verdict.reasons[0]


# ---------------------------------------------------------------------------------------------
# F15: the similarity figure


def test_a_cut_past_the_first_300_characters_is_never_100_percent_similar(grade, kit):
    message = ("I want a CSV export. " + " ".join(f"Rule {i}: keep column {i} where it is." for i in range(30))
               + " Start with the header row.")
    assert 800 < len(message) < 2_000
    cut = message[:400] + " [...] " + message[-100:]
    verdict = grade("verbatim_user_messages", kit.case([kit.user(message)], _s(kit, user_messages=f'- "{cut}"')))
    assert verdict.status == "fail" and "similar" in verdict.reasons[0]
    assert "100% similar" not in verdict.reasons[0]


# ---------------------------------------------------------------------------------------------
# F6: a word's other form is not a typo fixed


@pytest.mark.parametrize("typed, summarised", [
    ("please do not merge the feature branch into main yet", "please do not merged the feature branch into main yet"),
    ("add the regression test for the parser before the release", "add the regression tests for the parser before the release"),
])
def test_a_words_other_form_is_not_a_typo_fixed(grade, kit, typed, summarised):
    messages = [kit.user(typed)]
    verdict = grade("verbatim_user_messages", kit.case(messages, _s(kit, user_messages=f'- "{summarised}"')))
    assert verdict.status == "fail" and "differences" in verdict.reasons[0]
    assert grade("verbatim_user_messages", kit.case(messages, _s(kit, user_messages=f'- "{typed}"'))).status == "pass"


@pytest.mark.parametrize("typed, fixed", [
    ("please creat the parser module and wire it into the cli", "please create the parser module and wire it into the cli"),
    ("the proces hangs after the first request, look at the worker", "the process hangs after the first request, look at the worker"),
])
def test_a_dropped_letter_is_still_a_typo_fixed(grade, kit, typed, fixed):
    verdict = grade("verbatim_user_messages", kit.case([kit.user(typed)], _s(kit, user_messages=f'- "{fixed}"')))
    assert verdict.status == "pass" and "typo fixed" in verdict.reasons[0]
