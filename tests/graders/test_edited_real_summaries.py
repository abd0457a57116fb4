"""Classes a fresh reviewer found by editing real corpus summaries (harmless edits that failed, and
defects that passed), each shown on the good and the bad side.

* Headers in italics (``6. *All user messages*:``), bold italics, with an emoji before the number, or
  with CRLF line ends are headers (the section was "missing").
* Single emphasis (``*small*``, ``_small_``) and a URL written as an autolink are not changes to a
  quoted message; ``hello\\_world.py`` names ``hello_world.py``.
* A short message ("1", "2") is kept only as words of its own in section 6, or as the person's message
  among the kept ones: not inside ``pull/81``, not inside a tool's output kept after the summary.
* A "typo fix" is never a negation ("want" -> "won't") and never a word the session uses elsewhere.
"""

from __future__ import annotations

import pytest

from pytest_ctxeval.reading.extract import file_mentioned
from pytest_ctxeval.reading.summary import analysis_span, parse_summary
from pytest_ctxeval.reading.verbatim import find, normalize


def _s(kit, **bodies: str) -> str:
    base = {k: "x" for k in kit.SECTION_KINDS}
    base.update(bodies)
    return kit.summary(base)


@pytest.mark.parametrize("header", [
    "6. *All user messages*:", "6. _All user messages_:", "***6. All user messages***:", "*6. All user messages:*",
    "## 📌 6. All user messages:", "6. All user messages:\r",
])
def test_headers_in_other_markup_are_headers(grade, kit, header):
    text = _s(kit, user_messages='- "fix the login bug"').replace("6. All user messages:", header)
    assert "user_messages" in parse_summary(text).kinds
    case = kit.case([kit.user("fix the login bug")], text)
    assert grade("verbatim_user_messages", case).status == "pass"
    assert grade("nine_sections", case).status == "pass"


def test_a_list_item_is_not_a_header():
    text = "1. Primary Request and Intent:\n   x\n   - 6. All user messages: see below\n7. Pending Tasks:\n   y"
    assert "user_messages" not in parse_summary(text).kinds


def test_crlf_does_not_hide_a_kept_analysis_part():
    lf = "Analysis:\nthinking\n\nSummary:\n1. Primary Request and Intent:\n   x\n"
    crlf = lf.replace("\n", "\r\n")
    assert analysis_span(lf) == (0, lf.index("Summary:"))
    assert analysis_span(crlf) == (0, crlf.index("Summary:"))
    assert parse_summary(crlf).kinds == parse_summary(lf).kinds == ["request"]


@pytest.mark.parametrize("typed, listed", [
    ("make it small and natural", "make it *small* and natural"),
    ("make it small and natural", "make it _small_ and natural"),
    ("see https://docs.port.io/x for the spec", "see <https://docs.port.io/x> for the spec"),
    ("see https://a.b/c now", "see [https://a.b/c](https://a.b/c) now"),
])
def test_emphasis_and_autolinks_are_not_changes(typed, listed):
    assert find(typed, listed)


@pytest.mark.parametrize("typed, listed", [
    ("rename my_var_name", "rename myvarname"),          # snake_case keeps its underscores
    ("glob *.py and *.js", "glob .py and .js"),           # a glob is not emphasis
])
def test_underscores_and_globs_are_kept(typed, listed):
    assert not find(typed, listed)
    assert normalize("a_b_c") == "a_b_c"


def test_an_escaped_underscore_names_the_file(grade, kit):
    assert file_mentioned("/home/dev/app/hello_world.py", "- hello\\_world.py: added main()")
    assert file_mentioned("C:\\work\\app.py", "- C:\\work\\app.py")     # a Windows path stays one
    assert not file_mentioned("/home/dev/app/hello_world.py", "- hello\\_there.py")


def test_a_short_message_is_kept_only_as_words_of_its_own(grade, kit):
    messages = [kit.user("open the PR for the exporter"), kit.say("Option 1 or 2?"), kit.user("1"),
                kit.say("Done: https://github.com/o/r/pull/81")]
    listed = '- "open the PR for the exporter"\n   - "1"'
    assert grade("verbatim_user_messages", kit.case(messages, _s(kit, user_messages=listed))).status == "pass"
    as_item = '- "open the PR for the exporter"\n   - 1 (chose the first option)'
    assert grade("verbatim_user_messages", kit.case(messages, _s(kit, user_messages=as_item))).status == "pass"
    # dropped: "1" is only inside a URL in section 6
    dropped = '- "open the PR for the exporter" (https://github.com/o/r/pull/81)'
    verdict = grade("verbatim_user_messages", kit.case(messages, _s(kit, user_messages=dropped)))
    assert verdict.status == "fail" and 'user message 2 of 2 is not verbatim in section 6' in verdict.reasons[0]
    # nor does a tool's output among the kept messages keep it
    kept = [*kit.tool("Bash", {"command": "gh pr list"}, "1\tfeat: exporter\topen")]
    case = kit.case(messages, _s(kit, user_messages='- "open the PR for the exporter"'), post_messages=kept)
    assert grade("verbatim_user_messages", case).status == "fail"


def test_a_typo_fix_is_never_a_negation_nor_a_word_the_session_uses(grade, kit):
    assert find("I still dotn understand the flow", "I still don't understand the flow").how == "typo"
    said = "I also want the 2 suggestions from round 1 review to be addressed"
    messages = [kit.user(said), kit.say("I want to check the review first; you want both fixed?"),
                kit.user("why is it so slow, pythin is fast"), kit.say("By pythin you mean Python?")]
    good = _s(kit, user_messages=f'- "{said}"\n   - "why is it so slow, python is fast"')
    verdict = grade("verbatim_user_messages", kit.case(messages, good))
    assert verdict.status == "pass" and "typo fixed" in verdict.reasons[0]
    for changed in ("I also won't the 2 suggestions from round 1 review to be addressed",   # a negation
                    "I also went the 2 suggestions from round 1 review to be addressed"):   # "want" is a word here
        # (the session says "want" three times; "pythin" twice, once as the assistant's echo)
        bad = _s(kit, user_messages=f'- "{changed}"\n   - "why is it so slow, python is fast"')
        verdict = grade("verbatim_user_messages", kit.case(messages, bad))
        assert verdict.status == "fail" and "user message 1 of 2" in verdict.reasons[0], changed


LOG = "\n".join(f"Warning: Encountered two children with the same key, `{i}` at src/List.tsx:{i}:7" for i in range(40))


def test_what_the_person_typed_after_a_pasted_log_is_theirs(grade, kit):
    lead = "Seems to work but I've plenty of warnings in the console:"
    tail = "Also, do NOT use Chakra at all any more: remove @chakra-ui/react from the dependencies."
    typed = f"{lead}\n{LOG}\n\n{tail}"
    messages = [kit.user(typed)]
    summarised = _s(kit, user_messages=f'- "{lead}" [console warnings pasted]')
    verdict = grade("verbatim_user_messages", kit.case(messages, summarised))
    assert verdict.status == "fail" and "user message 1 of 1" in verdict.reasons[0]
    kept = _s(kit, user_messages=f'- "{lead}" [console warnings pasted] "{tail}"')
    assert grade("verbatim_user_messages", kit.case(messages, kept)).status == "pass"
    # a log alone after the lead (its last line is the log's own) is still summarised by the lead
    only_log = [kit.user(f"{lead}\n{LOG}\nwebpack compiled with 2 warnings")]
    assert grade("verbatim_user_messages", kit.case(only_log, summarised)).status == "pass"


def test_a_file_named_under_other_folders_is_not_named():
    path = "/repo/port-cli/internal/commands/api.go"
    for told in ("- api.go: added the --raw flag", "- `internal/commands/api.go`", "- ./api.go", "- commands/api.go"):
        assert file_mentioned(path, told), told
    # the folders it is written under are not its own: the next model opens internal/api/api.go
    for wrong in ("- internal/api/api.go: added the --raw flag", "- web/api.go"):
        assert not file_mentioned(path, wrong), wrong
    # folders dropped from the middle still name it
    assert file_mentioned("/u/p/packages/web/src/App.tsx", "- web/App.tsx")


def test_a_reason_shows_the_change_not_the_differences_it_tolerates(grade, kit):
    # code-insights 2.1.87: the summary drops the inner quotes (tolerated) and changes seek -> skip
    typed = 'yes, plan it out and seek approval from @"technical-architect (agent)" and then start'
    listed = "yes, plan it out and skip approval from @technical-architect (agent) and then start"
    verdict = grade("verbatim_user_messages", kit.case([kit.user(typed)], _s(kit, user_messages=f'- "{listed}"')))
    assert verdict.status == "fail"
    assert "[-seek-]{+skip+}" in verdict.reasons[0]
    assert '[-@"technical-architect' not in verdict.reasons[0]


def test_quote_marks_inside_code_are_code_not_a_quote(grade, kit):
    # M-Claude 2.0.60: section 9 holds `ssh root@host "<command>"`; a step without a quote was
    # reported as quoting "<command>"
    messages = [kit.user("check service status"), kit.say("dockerd is running.")]
    body = 'Next, I will reboot the router.\n   - SSH command format: `ssh -o ConnectTimeout=10 root@host "<command>"`'
    verdict = grade("next_step_quote", kit.case(messages, _s(kit, next=body)))
    assert verdict.status == "fail" and "quotes nothing" in verdict.reasons[0]


def test_short_answers_written_as_options_count_and_list_numbers_do_not(grade, kit):
    messages = [kit.user("open the PR for the exporter"), kit.say("Option 1 or 2?"), kit.user("1"),
                kit.say("And the reviewer: 1 or 2?"), kit.user("2")]
    hashed = '- "open the PR for the exporter"\n   - Option #1 (add to the PR)\n   - choice #2'
    assert grade("verbatim_user_messages", kit.case(messages, _s(kit, user_messages=hashed))).status == "pass"
    numbered = '1. "open the PR for the exporter"\n   2. (the person answered the option prompts)'
    verdict = grade("verbatim_user_messages", kit.case(messages, _s(kit, user_messages=numbered)))
    assert verdict.status == "fail" and "user message 2 of 3" in verdict.reasons[0]


@pytest.mark.parametrize("log_end", [
    "npm ERR! code ELIFECYCLE\nnpm ERR! errno 1\nnpm ERR! A complete log of this run can be found in:",
    "error: Your local changes to the following files would be overwritten by merge:\n\tsrc/a.ts\n"
    "Please commit your changes or stash them before you merge.\nAborting",
    "error: aborting due to previous error\n\nFor more information about this error, try `rustc --explain E0308`.",
])
def test_a_logs_own_last_lines_are_not_typed(grade, kit, log_end):
    lead = "Seems to work but I've plenty of warnings in the console:"
    messages = [kit.user(f"{lead}\n{LOG}\n{log_end}")]
    # a summarised paste tells its error line (git's "would be overwritten by merge"); the tools'
    # closing lines ("aborting due to previous error", npm's ERR! block) are no such line
    told = " ending in: Your local changes would be overwritten by merge" if "merge" in log_end else ""
    summarised = _s(kit, user_messages=f'- "{lead}" [console output pasted{told}]')
    assert grade("verbatim_user_messages", kit.case(messages, summarised)).status == "pass"


def test_an_instruction_before_a_sign_off_is_still_typed(grade, kit):
    lead = "Seems to work but I've plenty of warnings in the console:"
    tail = "Also, do NOT use Chakra at all any more: remove @chakra-ui/react from the dependencies."
    messages = [kit.user(f"{lead}\n{LOG}\n\n{tail}\n\nthanks!")]
    summarised = _s(kit, user_messages=f'- "{lead}" [console output pasted]')
    assert grade("verbatim_user_messages", kit.case(messages, summarised)).status == "fail"


@pytest.mark.parametrize("item", ["• 1. Next steps: wire the exporter", "✅ 1. Current work compiles", "→ 6. All user messages"])
def test_a_symbol_bulleted_item_is_not_a_header(kit, item):
    text = _s(kit, pending=f"- a\n   {item}")
    assert parse_summary(text).kinds == list(kit.SECTION_KINDS)


@pytest.mark.parametrize("path, told", [
    ("/Users/me/Mobile Documents/notes.md", "Updated `~/Mobile\\ Documents/notes.md`"),
    ("/Users/me/My Project/app.py", "Updated `/Users/me/My%20Project/app.py`"),
    ("/u/proj/web/src/App.tsx", "Edited `web/src/components/../App.tsx`"),
    ("/u/proj/packages/web/src/App.tsx", "Edited `@acme/web/App.tsx`"),
    ("/u/port-cli/internal/commands/api.go", "Edited `Internal/Commands/api.go`"),
])
def test_harmless_spellings_of_a_folder_still_name_the_file(path, told):
    assert file_mentioned(path, told)
