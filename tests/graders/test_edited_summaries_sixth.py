"""Classes a sixth reviewer found by editing real corpus summaries (harmless edits that failed, and
defects that passed), each shown on the good and the bad side.

* Emphasis written with underscores (``__Ruff UP038__``, ``__api.go__``) is read as Markdown renders
  it: the code and the file are named (``UP038__`` was no code).
* A copy of a message that goes on with words the person did not type (a sentence added inside its
  quote, a URL or name run on: ``pages`` -> ``pages-v2``) does not keep it, in section 6 or as the last
  request; a copy quoted alone, or with a note outside its quote, does.
* A changed file is not named by a longer name (``hello_world.pyi``, ``app.tsx`` for ``app.ts``) nor
  by the same path under another folder's name (``mylib/x.py`` for ``lib/x.py``), and not by a mention
  that calls it unchanged ("(read-only reference)", "READ, not modified", "left untouched").
* A section whose body says nothing (a lone "-", "...", "[to be filled in]", "TBD") is empty; "None."
  and "N/A" say there is nothing of the kind.
* Section headers written ``Section 6: All user messages``, or titled in the person's language
  (``6. 모든 사용자 메시지:``, a heading or a title ending in a colon) are the sections of their numbers.
* A task stamped "(merged in #87)", "— closed", "— landed in main", "(removed from scope)", "— no
  longer planned" is not open; the same words inside the task's own sentence ("closed connections",
  "once the PR is merged") are no stamp.
"""

from __future__ import annotations

import pytest

from pytest_ctxeval.reading.extract import file_mentioned, said_unchanged_removed
from pytest_ctxeval.reading.summary import parse_summary, plain_emphasis


def _s(kit, **bodies: str) -> str:
    base = {k: "x" for k in kit.SECTION_KINDS}
    base.update(bodies)
    return kit.summary(base)


LINT = "src/pkg/analyzer.py:135:16: UP038 Use `X | Y` in `isinstance` call instead of `(X, Y)`"


def _lint_session(kit):
    return [kit.user("make ruff pass"),
            *kit.tool("Bash", {"command": "ruff check src"}, f"{LINT}\nFound 1 error.", is_error=True)]


@pytest.mark.parametrize("item", [
    "- __Ruff UP038__: `isinstance(x, (A, B))` -> `isinstance(x, A | B)`",
    "- _Ruff UP038 in analyzer.py_: use `A | B` in isinstance",
])
def test_underscore_emphasis_names_the_error(grade, kit, item):
    case = kit.case(_lint_session(kit), _s(kit, errors=item))
    assert grade("errors_preserved", case).status == "pass"


def test_underscore_emphasis_is_no_excuse_for_another_code(grade, kit):
    case = kit.case(_lint_session(kit), _s(kit, errors="- __Ruff UP037__: quoted annotation removed"))
    verdict = grade("errors_preserved", case)
    assert verdict.status == "fail" and "UP038" in verdict.reasons[0]


def test_underscore_emphasis_names_the_file(grade, kit):
    messages = [kit.user("add the flag"),
                *kit.tool("Edit", {"file_path": "/repo/internal/commands/api.go", "old_string": "a", "new_string": "b"})]
    assert grade("files_preserved", kit.case(messages, _s(kit, files="- __api.go__: added the --raw flag"))).status == "pass"
    verdict = grade("files_preserved", kit.case(messages, _s(kit, files="- __apis.go__: added the --raw flag")))
    assert verdict.status == "fail" and "api.go" in verdict.reasons[0]


def test_identifiers_between_underscores_stay_code():
    assert plain_emphasis("fixed __init__.py, __main__ and my_var_name") == "fixed __init__.py, __main__ and my_var_name"
    assert plain_emphasis("__Upload 500 error__ and _api.go_") == "Upload 500 error and api.go"


ASK = "Plan the update of the api command. https://docs.port.io/api-reference/pages"


@pytest.mark.parametrize("listed", [
    f'- "{ASK}"', f'- "{ASK}" (the first request)', f'- [first request] “{ASK}”', f"> {ASK}",
    f'- "{ASK}"\n   - "{ASK} Also cover the agents."',     # a longer copy beside a copy of its own
])
def test_a_message_quoted_alone_is_kept(grade, kit, listed):
    case = kit.case([kit.user(ASK)], _s(kit, user_messages=listed))
    assert grade("verbatim_user_messages", case).status == "pass"
    assert grade("last_request_intact", case).status == "pass"


@pytest.mark.parametrize("listed, added", [
    (f'- "{ASK} Also delete the old migration files."', "also delete the old migration files"),
    (f'- "{ASK}-v2"', "-v2"),
    (f'- "{ASK}/agents" (the first request)', "/agents"),
])
def test_a_copy_with_words_added_does_not_keep_the_message(grade, kit, listed, added):
    case = kit.case([kit.user(ASK)], _s(kit, user_messages=listed))
    verdict = grade("verbatim_user_messages", case)
    assert verdict.status == "fail" and "user message 1 of 1" in verdict.reasons[0]
    verdict = grade("last_request_intact", case)
    assert verdict.status == "fail" and "words the person did not type" in verdict.reasons[0]
    assert added in verdict.reasons[0]


def test_a_message_with_quotes_of_its_own_is_not_read_as_a_longer_quote(grade, kit):
    typed = 'Make these two button "List / Tree" more visible, on the left side'
    case = kit.case([kit.user(typed)], _s(kit, user_messages=f'- "{typed}"\n   - "1" (chose the first option)'))
    assert grade("verbatim_user_messages", case).status == "pass"
    assert grade("last_request_intact", case).status == "pass"


def _edit(kit, path: str) -> list:
    return [kit.user("go"), *kit.tool("Edit", {"file_path": path, "old_string": "a", "new_string": "b"})]


@pytest.mark.parametrize("path, told", [
    ("/workspace/hello_world.py", "- Created `/workspace/hello_world.py` with a print."),
    ("/workspace/hello_world.py", "- /workspace/hello_world.py:3 prints the greeting"),
    ("/repo/web/src/app.ts", "- `src/app.ts` (modified), beside `src/app.tsx`"),
    ("/repo/src/lib/x.py", "- /home/me/repo/src/lib/x.py: added the helper"),
])
def test_a_path_written_whole_names_the_file(grade, kit, path, told):
    assert file_mentioned(path, told)
    assert grade("files_preserved", kit.case(_edit(kit, path), _s(kit, files=told))).status == "pass"


@pytest.mark.parametrize("path, told", [
    ("/workspace/hello_world.py", "- Created `/workspace/hello_world.pyi` with a print."),
    ("/repo/web/src/app.ts", "- `web/src/app.tsx`: added the route"),
    ("/repo/src/lib/x.py", "- `src/mylib/x.py`: added the helper"),
])
def test_a_longer_name_or_another_folder_does_not_name_the_file(grade, kit, path, told):
    assert not file_mentioned(path, told)
    verdict = grade("files_preserved", kit.case(_edit(kit, path), _s(kit, files=told)))
    assert verdict.status == "fail" and path in verdict.reasons[0]


@pytest.mark.parametrize("told", [
    "- **`internal/commands/api.go`** (read-only reference)",
    "- `internal/commands/api.go` (READ, not modified)",
    "- No changes to `internal/commands/api.go` (left untouched).",
])
def test_a_changed_file_named_only_as_unchanged_is_not_told(grade, kit, told):
    case = kit.case(_edit(kit, "/repo/internal/commands/api.go"), _s(kit, files=told))
    verdict = grade("files_preserved", case)
    assert verdict.status == "fail" and "named only as not changed" in verdict.reasons[0]


@pytest.mark.parametrize("told", [
    "- `internal/commands/api.go` (modified; `internal/api/requests.go` read-only reference)",
    "- `internal/commands/api.go`: added --raw\n- `internal/api/requests.go` (read-only reference)",
    "- `internal/commands/api.go`: the helpers kept unchanged, a new --raw flag added",
])
def test_a_changed_file_beside_an_unchanged_one_is_told(grade, kit, told):
    case = kit.case(_edit(kit, "/repo/internal/commands/api.go"), _s(kit, files=told))
    assert grade("files_preserved", case).status == "pass"
    assert "internal/commands/api.go" in said_unchanged_removed(told)


@pytest.mark.parametrize("body", ["-", "...", "[to be filled in]", "TBD", "<…>"])
def test_a_section_that_says_nothing_is_empty(grade, kit, body):
    verdict = grade("nine_sections", kit.case([kit.user("go")], _s(kit, problem=body)))
    assert verdict.status == "fail" and "'Problem Solving'" in verdict.reasons[0]
    assert "says nothing" in verdict.reasons[0]


@pytest.mark.parametrize("body", ["None.", "N/A", "- None: nothing failed", "TODO: add the retry test"])
def test_a_section_saying_there_is_none_is_not_empty(grade, kit, body):
    assert grade("nine_sections", kit.case([kit.user("go")], _s(kit, problem=body))).status == "pass"


KO = {"request": "주요 요청 및 의도", "concepts": "핵심 기술 개념", "files": "파일 및 코드 섹션", "errors": "오류 및 수정",
      "problem": "문제 해결", "user_messages": "모든 사용자 메시지", "pending": "대기 중인 작업", "current": "현재 작업",
      "next": "다음 단계"}


@pytest.mark.parametrize("style", ["colon", "md", "section"])
def test_headers_in_another_script_or_with_the_word_section_are_headers(grade, kit, style):
    text = _s(kit, user_messages='- "요청을 처리해 줘"', files="- `src/app.py`: added main()")
    for n, kind in enumerate(kit.SECTION_KINDS, start=1):
        title = kit.SECTION_TITLES[kind]
        new = {"colon": f"{n}. {KO[kind]}:", "md": f"## {n}. {KO[kind]}", "section": f"Section {n}: {title}"}[style]
        text = text.replace(f"{n}. {title}:", new)
    assert parse_summary(text).kinds == list(kit.SECTION_KINDS)
    case = kit.case(_edit(kit, "/repo/src/app.py")[1:] + [kit.user("요청을 처리해 줘")], text)
    for name in ("nine_sections", "verbatim_user_messages", "files_preserved"):
        assert grade(name, case).status == "pass", name


def test_a_numbered_item_in_another_script_is_not_a_header():
    text = "1. Primary Request and Intent:\n   x\n6. All user messages:\n   8. 항목: 내용\n   - \"a\"\n8. Current Work:\n   y"
    parsed = parse_summary(text)
    assert [s.kind for s in parsed.sections] == ["request", "user_messages", "current"]
    assert parsed.get("current").line == 6


def test_a_section_moved_or_dropped_in_another_script_still_fails(grade, kit):
    text = _s(kit)
    for n, kind in enumerate(kit.SECTION_KINDS, start=1):
        text = text.replace(f"{n}. {kit.SECTION_TITLES[kind]}:", f"{n}. {KO[kind]}:")
    dropped = text.replace("5. 문제 해결:\n   x\n\n", "")
    verdict = grade("nine_sections", kit.case([kit.user("go")], dropped))
    assert verdict.status == "fail" and "Problem Solving" in verdict.reasons[0]


TASKS = [("Design the block.json manifest schema", "completed"),
         ("Author all 15 block.json manifests under registry/", "pending")]


@pytest.mark.parametrize("stamp", [" (merged in #87)", " — closed", " — landed in main", " (removed from scope)",
                                   " — no longer planned", ": out of scope"])
def test_a_task_stamped_merged_or_closed_is_not_open(grade, kit, stamp):
    item = f"- Task #7: Author all 15 block.json manifests under registry/{stamp}"
    verdict = grade("pending_tasks", kit.case([kit.user("go"), *kit.todo(*TASKS)], _s(kit, pending=item)))
    assert verdict.status == "fail" and "marked as done" in verdict.reasons[0]


@pytest.mark.parametrize("item", [
    "- Task #7: Author all 15 block.json manifests under registry/ (merge once PR #86 is merged)",
    "- Task #7: Author all 15 block.json manifests under registry/: closed enums validated by the schema",
    "- Task #7: Author all 15 block.json manifests under registry/ (the PR #85 merged; rebase first)",
])
def test_stamp_words_in_the_task_sentence_leave_it_open(grade, kit, item):
    # the session shows the pull requests the items name (a number it never showed is misremembered)
    prs = kit.tool("Bash", {"command": "gh pr list"}, "86\tRegistry manifests\tfeat/registry\tOPEN\n"
                                                     "85\tManifest schema\tfeat/schema\tMERGED")
    verdict = grade("pending_tasks", kit.case([kit.user("go"), *prs, *kit.todo(*TASKS)], _s(kit, pending=item)))
    assert verdict.status == "pass", verdict.reasons
