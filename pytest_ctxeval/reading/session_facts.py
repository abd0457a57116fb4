"""Which tool failures are errors, which edits are changes, which tasks are open: as a careful reader
of a real session counts them.

* A failing tool result is one of five kinds (:func:`error_kind`):

  - ``rejected``: the person refused the call ("The user doesn't want to proceed with this tool use",
    a rejected ExitPlanMode, "[Request interrupted by user for tool use]");
  - ``cancelled``: a parallel call cancelled because a sibling failed ("Sibling tool call errored");
  - ``tool_usage``: the tool refused the call as made (input validation, a file too large to read or
    not read before an edit, an edit string not found, an unknown agent type, a harness tool such as
    Skill or SendMessage failing): how the agent called a tool, not how the work went;
  - ``probe``: a lookup that found nothing or a command line the shell would not take (``ls``/``cd``
    of a missing path, a command that is not installed, an unknown flag, a glob with no match) or a
    failure with no output but its exit code: the agent asking the environment a question (unless a
    different command then did the job, ``python`` refused and ``python3`` run: that is an error to
    keep, :mod:`pytest_ctxeval.reading.workarounds`, decided by :func:`~pytest_ctxeval.reading.extract.failing_results`);
  - ``error``: everything else (a failing test, a build or type error, an exception, a refused
    connection): what ``errors_preserved`` asks section 4 to keep.

  Only ``error`` counts as an error; none of the five counts as a change.
* An edit counts as a change when its result did not fail, and the file is the project's: Claude
  Code's own storage (``~/.claude*/plans``, ``projects/<p>/memory``, ``todos``, ...) and scratch
  space (``/tmp``) are not.
* Open tasks: the latest TodoWrite list and the TaskCreate/TaskUpdate tasks (2.1.45+) not completed
  or deleted.
* An error counts as kept (:func:`error_kept`) when its key line is in section 4, or its identifying
  tokens are: test or function names, ``file:line``, exception types, error codes, exit codes, quoted
  names, or the failing command together with a token of its output in one item.
"""

from __future__ import annotations

import functools
import re
from typing import Any
from collections.abc import Iterable

from ..core.messages import AssistantMessage, ToolResultBlock, ToolUseBlock, UserMessage, result_text
from .probes import only_asks
from .error_message import error_message_kept
from .workarounds import MISSING_PATH, REFUSED, refused_tokens, workaround_words

__all__ = ["error_kind", "ERROR_KINDS", "claude_storage", "failed_call_ids", "open_tasks", "error_identifiers",
           "error_kept", "items_about", "error_denied", "command_signature", "runs_tests", "failed_test_run", "runs_build", "failed_build", "build_error_line", "failed_tests", "failing_test_told"]

ERROR_KINDS = ("error", "rejected", "cancelled", "tool_usage", "probe")

_REJECTED = re.compile(r"The user doesn't want to (?:proceed with|take) this (?:tool use|action)|"
                       r"\[Request interrupted by user for tool use\]|\buser (?:rejected|denied|declined)\b|"
                       r"Permission to use \w+ has been denied|User rejected|"
                       # a hook or a permission rule refused it: policy, like a person saying no
                       r"\b(?:Pre|Post)ToolUse:\w+ hook|hook (?:error|blocked)|blocked by (?:a |the )?\w* ?hook|"
                       r"denied by (?:a |the )?(?:permission|policy|rule)", re.IGNORECASE)
_CANCELLED = re.compile(r"Sibling tool call errored|cancelled because (?:a|another) (?:parallel|sibling)|"
                        r"\bwas (?:cancelled|canceled|aborted)\b.*\bsibling\b", re.IGNORECASE)
_TOOL_USAGE = re.compile(
    r"InputValidationError|File has not been read yet|File has been (?:unexpectedly )?modified since read|"
    r"String to replace not found|Found \d+ matches of the string to replace|exceeds maximum allowed "
    r"(?:tokens|size)|File content \([\d,]+ tokens\) exceeds|File does not exist|Agent type '[^']*' not found|"
    r"No such tool available|Unknown tool|cannot be broadcast|Invalid tool parameters|old_string and new_string "
    r"(?:are|must be)|is a directory|Tool permission|tool_use_error>\s*Error: No such", re.IGNORECASE)
#: Tools that drive the harness (plans, questions, skills, teammates), not the project.
_HARNESS_TOOLS = {"ExitPlanMode", "EnterPlanMode", "AskUserQuestion", "Skill", "SendMessage", "TodoWrite",
                  "TaskCreate", "TaskUpdate", "TaskList", "TaskGet", "TaskOutput", "TaskStop", "ToolSearch",
                  "TeamCreate", "TeamDelete", "KillShell", "KillBash", "BashOutput", "ListMcpResourcesTool"}
#: The shell or a CLI refused the command line as typed (whatever the command was for).
_REFUSED_LINE = REFUSED
#: A lookup found nothing (a probe unless the command was a test, check or build).
#: Tools that look something up: their failure is the answer "not there".
_LOOKUP_TOOLS = {"Grep", "Glob", "LS", "WebFetch", "WebSearch", "ListMcpResources", "ReadMcpResource"}
_PROBE_OUTPUT = MISSING_PATH
_ERROR_SIGNAL = re.compile(
    r"\b\w*(?:Error|Exception|Failure|Fault|Panic)\b|\b(?:FAIL|FAILED|ERROR|FATAL)\b|\b(?:error|fatal|panic)"
    r"(?:\[\w+\])?:|\bfailed\b|\bfailing\b|✗|×|\btimed out\b|\brefused\b|\bdenied\b|\bcannot\b|\bcan't\b|"
    r"\bunable to\b|\bnot found\b|\bundefined\b|\bmissing\b|\binvalid\b|\bconflict\b|\bwarning:|"
    r"\bignored by\b|^hint: |\brejected\b|\bnon-zero\b|"
    r"^\s*[\w./\\-]+\.\w+:\d+(?::\d+)?:?\s+(?:[A-Z]{1,4}\d{2,5}\b|error|warning)",   # a linter's file:line: CODE
    re.IGNORECASE | re.MULTILINE)
_EXIT_ONLY = re.compile(r"^\s*(?:<tool_use_error>)?\s*(?:Exit code \d+|Error|exit status \d+)\s*"
                        r"(?:</tool_use_error>)?\s*$", re.IGNORECASE)


def command_signature(command: str) -> list[str]:
    """The program and subcommand a shell command runs, past ``cd x &&``, env settings and runners
    (``npx``, ``uv run``, ``pnpm --filter e2e``): ``["pytest"]``, ``["cargo", "clippy"]``.

    >>> command_signature("cd app && FOO=1 uv run pytest -x tests/")
    ['pytest']
    >>> command_signature("cargo clippy -- -D warnings")
    ['cargo', 'clippy']
    """
    segment = re.split(r"&&|\|\||;|\|", command or "")
    runners = {"npx", "pnpm", "npm", "yarn", "bun", "bunx", "uv", "poetry", "pipenv", "python", "python3",
               "node", "deno", "sudo", "time", "env", "exec", "rtk", "timeout", "nice", "dotnet", "mix", "go",
               "cargo", "gradle", "./gradlew", "mvn", "make", "just", "bundle"}
    keep_sub = {"cargo", "go", "dotnet", "mix", "npm", "pnpm", "yarn", "bun", "git", "gh", "docker", "kubectl",
                "make", "just", "gradle", "./gradlew", "mvn", "bundle"}
    for seg in segment:
        words = [w for w in seg.strip().split() if w]
        while words and (re.match(r"^\w+=", words[0]) or words[0] in ("sudo", "time", "env", "exec", "nice")):
            words = words[1:]
        if not words or words[0] in ("cd", "pushd", "export", "source", ".", "set"):
            continue
        prog = words[0].rsplit("/", 1)[-1]
        rest = [w for w in words[1:] if not w.startswith("-")]
        if prog in ("uv", "poetry", "pipenv", "npx", "bunx", "rtk", "timeout") and rest:
            return command_signature(" ".join(words[1 + (words[1] == "run" if len(words) > 1 else 0):]))
        if prog in ("python", "python3") and len(words) > 2 and words[1] == "-m":
            return [words[2]]
        if prog in keep_sub and rest and re.match(r"^[a-z][\w:-]*$", rest[0]):
            if prog in ("pnpm", "npm", "yarn", "bun") and rest[0] in ("run", "exec", "dlx") and len(rest) > 1:
                return [prog, rest[1]]
            return [prog, rest[0]]
        return [prog] if prog not in runners or not rest else [prog, rest[0]]
    return []


#: What a shell segment may start with before the program it runs: env settings, wrappers and the
#: runners that start a package's binary (``npx``, ``uv run``, ``bundle exec``, ``python -m``).
_TEST_WRAPPER = re.compile(
    r"^(?:\w+=\S*|sudo|time|env|exec|nice|nohup|command|do|then|else|rtk|"
    r"timeout(?:\s+-\S+)*\s+\S+|(?:npx|bunx|pnpx)(?:\s+-\S+)*|"
    r"(?:uv|poetry|pipenv|hatch|pdm|rye)\s+run(?:\s+(?:--(?:directory|project|with|python|package|group|extra|env-file)"
    r"|-[pw])[= ]\S+|\s+-\S+)*|(?:bundle|pnpm|yarn|npm|bun)\s+exec|"
    # a package manager starting a runner's binary (pnpm vitest, yarn jest), a container running it
    r"(?:pnpm|yarn|bun)(?=\s+(?:vitest|jest|mocha|playwright|cypress)\b)|"
    r"(?:docker|podman)(?:\s+compose)?\s+(?:exec|run)(?:\s+(?:-[eMuw]|--(?:env|user|workdir))[= ]\S+|\s+-\S+)*\s+[\w.-]+|"
    r"python[\d.]*\s+-m)\s+")
#: A test runner, as the program of a shell segment (after :data:`_TEST_WRAPPER`).
_TEST_RUNNER = re.compile(
    r"^(?:\S*/)?(?:pytest|py\.test|jest|vitest|mocha|rspec|phpunit|pest|ctest|tox|nox|nosetests|unittest|"
    r"playwright\s+test|cypress\s+run)(?:\s|$)|"
    r"^(?:cargo\s+(?:test|nextest)|go\s+test|dotnet\s+test|mix\s+test|swift\s+test|deno\s+test|"
    r"(?:\./)?gradlew?\s+(?:\S+:)?test|mvn(?:\s+-\S+)*\s+test|make\s+test|just\s+test|"
    r"(?:python[\d.]*\s+)?(?:\S*/)?manage\.py\s+test|(?:\S*/)?rails\s+test|(?:php\s+)?(?:\S*/)?artisan\s+test|"
    r"(?:bundle\s+exec\s+)?rake\s+(?:test|spec))(?:\s|$)|"
    # npm test, pnpm --filter e2e test, yarn run test:unit, bun test
    r"^(?:npm|pnpm|yarn|bun)(?:\s+(?:--(?:filter|prefix|dir|workspace|cwd)[= ]\S+|-[CFw]\s+\S+|workspace\s+\S+|-{1,2}[\w-]+))*"
    r"(?:\s+run)?\s+test(?:[:-][\w:-]*)?(?:\s|$)")
#: A test runner's own report that tests failed (its summary count, or the line of a failing test).
#: A count of 0 is not a failure.
_TESTS_FAILED = re.compile(
    r"^=+ .*\b[1-9]\d* (?:failed|errors?)\b.* =+$|"                    # pytest: "==== 1 failed, 3 passed in 0.2s ===="
    r"^[1-9]\d* failed(?:,[^\n]*)? in [\d.]+m?s\b|"                     # pytest -q: "1 failed, 3 passed in 0.2s"
    r"^(?:FAILED|ERROR) \S+::\S+|"                                      # pytest: "FAILED tests/a.py::test_x - ..."
    r"^\s*[1-9]\d* failed\s*$|"                                        # playwright: "  1 failed"
    r"^\s*Tests?:\s+[1-9]\d* failed|^\s*Test Suites:\s+[1-9]\d* failed|"  # jest
    r"^\s*Tests\s+[1-9]\d* failed|^\s*Test Files\s+[1-9]\d* failed|"   # vitest
    r"^\s*[1-9]\d* failing\s*$|"                                       # mocha
    r"^test result: FAILED|"                                           # cargo test
    r"^--- FAIL: \S|^FAIL\t\S|"                                        # go test
    r"^\s*\d+ examples?, [1-9]\d* failures?|^\d+ (?:tests?|doctests?), [1-9]\d* failures?|"  # rspec, ExUnit
    r"^FAILURES!$|^Tests: \d+, Assertions: \d+, (?:Errors|Failures): [1-9]|"  # phpunit
    r"^FAILED \((?:failures|errors)=[1-9]|"                            # unittest
    r"^\s*Failed!\s+-\s+Failed:\s+[1-9]|"                              # dotnet test
    r"^\[\s+FAILED\s+\]|"                                               # googletest
    r"^\s*✘\s+\d+\s+\[[^\]\n]+\]\s+›|"                                # playwright list: "✘  2 [chromium] › a.spec.ts:3:1 › x"
    r"^\s*FAIL \[\s*[\d.]+m?s\]|^\s*Summary \[.*\b[1-9]\d* failed|"         # cargo nextest
    r"^\d+ runs, \d+ assertions, (?:[1-9]\d* failures|\d+ failures, [1-9]\d* errors)|"  # minitest (rails test)
    r"^\s*[❯›>]\s+\S+\s+\(\d+ tests? \| [1-9]\d* failed\)|"                       # vitest per file
    r"^[1-9]\d* errors? in [\d.]+m?s\b|^Interrupted: [1-9]\d* errors? during collection|^ERROR \S+\.py\b|"  # pytest collection
    r"^\s*[1-9]\d* fail\s*$|^\(fail\) |"                                       # bun test
    r"^FAILED \|.*\b[1-9]\d* failed|"                                            # deno test
    r"\"Action\":\s*\"fail\"",                                                   # go test -json
    re.MULTILINE)
_PLAYWRIGHT_MARK = re.compile(r"^\s*✘\s+\d+\s+\[")
_FLAKY = re.compile(r"^\s*[1-9]\d* flaky\s*$", re.MULTILINE)
_TERM_CODES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\[\d+(?:;\d+)*[A-Za-z]")


def runs_tests(command: str) -> bool:
    """Whether a shell command runs a test runner (in any of its segments: past ``cd x &&``, env
    settings, ``npx``/``uv run``/``python -m``, and through a pipe).

    >>> runs_tests("cd tests/e2e && npx playwright test a.spec.ts 2>&1 | tail -60")
    True
    >>> runs_tests("pnpm --filter @app/e2e test -- --grep 'Sharing'")
    True
    >>> runs_tests("grep -rn FAILED test-results/ | tail -5")
    False
    """
    return _runs(command, _TEST_RUNNER)


def _runs(command: str, program: re.Pattern[str]) -> bool:
    """Whether a segment of ``command`` runs ``program`` (past wrappers), and no later part prints a
    log or file back into the same output."""
    ran = False
    for pipeline in re.split(r"&&|\|\||;|\n", command or ""):
        first = pipeline.split("|", 1)[0].strip()
        if not first or first.startswith("#"):
            continue
        runs = False
        for segment in pipeline.split("|"):
            seg = segment.strip()
            while (m := _TEST_WRAPPER.match(seg)) is not None:
                seg = seg[m.end():]
            if program.match(seg) and not _NOT_A_RUN.search(seg):
                runs = True
        if runs:
            ran = True
        elif ran and _READS_BACK.match(first):
            return False   # "pytest -q | tail -1; cat ci.log | grep FAILED": the output is not the run's alone
    return ran


#: A runner asked to list, not run (``pytest --collect-only``, ``jest --listTests``, ``--help``).
_NOT_A_RUN = re.compile(r"\s(?:--collect-only|--co|--listTests|--list(?:-tests)?|--help|-h|--version)(?:\s|$)")
#: A program that prints what was written before (a log, a file) rather than running anything.
_READS_BACK = re.compile(r"^(?:cat|grep|rg|ag|tail|head|less|more|jq|awk|sed|tac|bat|zcat)\b")


def failed_test_run(command: str, text: str) -> bool:
    """Whether a command's output, read as a test run, reports failing tests: the command runs a test
    runner (:func:`runs_tests`) and the output holds that runner's own failure report (pytest's
    ``N failed`` or ``FAILED a.py::test_x``, Playwright's ``✘`` or ``N failed``, jest's
    ``Tests: N failed``, cargo's ``test result: FAILED``, go's ``--- FAIL:``, ...). A run piped
    through ``tail`` exits 0, so its result is not marked as an error; it still failed. A count of 0,
    or a Playwright test that failed once and passed on retry (``N flaky``), is not a failure; nor is
    a grep or a log that merely holds the word "failed".

    >>> failed_test_run("uv run pytest -q | tail -3", "FAILED tests/a.py::test_x - assert 1 == 2\\n1 failed in 0.1s")
    True
    >>> failed_test_run("uv run pytest -q | tail -3", "3 passed, 0 failed in 0.1s")
    False
    >>> failed_test_run("cat run.log", "FAILED tests/a.py::test_x")
    False
    """
    if not runs_tests(command):
        return False
    text = _TERM_CODES.sub("", text)
    found = [m.group(0) for m in _TESTS_FAILED.finditer(text)]
    if found and all(_PLAYWRIGHT_MARK.match(f) for f in found) and _FLAKY.search(text):
        return False  # failed, then passed on retry: the run reports it flaky, not failed
    return bool(found)


#: A build or a compiler (run on its own or by a package manager's script).
_BUILD = re.compile(
    r"^(?:\S*/)?(?:dotnet\s+(?:build|publish|run)|msbuild|tsc|cargo\s+(?:build|check|clippy|run)|gcc|g\+\+|"
    r"clang(?:\+\+)?|javac|make|cmake\s+--build|swift\s+build|mvn|gradle|gradlew|"
    r"(?:npm|pnpm|yarn|bun)(?:\s+--?\S+(?:\s+\S+)?)*\s+(?:run\s+)?(?:build|typecheck|tsc))(?:\s|$)")
#: A compiler's own error line: MSBuild and tsc (``a.cs(115,39): error CS1736:``,
#: ``a.ts:3:7 - error TS2322:``), gcc, clang, swift and javac (``a.c:3:7: error:``), rustc
#: (``error[E0308]:``, ``error: could not compile``), MSBuild's own (``error MSB3073:``).
_COMPILE_ERROR = re.compile(
    r"\(\d+,\d+\): (?:fatal )?error [A-Z]{2,}\d+:|:\d+:\d+ - error TS\d+:|:\d+(?::\d+)?: (?:fatal )?error: |"
    r"^error(?:\[E\d+\])?: |\berror MSB\d+:", re.MULTILINE)


def runs_build(command: str) -> bool:
    """Whether a shell command runs a build or a compiler (:func:`runs_tests`' reading of segments).

    >>> runs_build("cd app && dotnet build App.csproj -v q 2>&1 | tail -25")
    True
    >>> runs_build("pnpm --filter web build 2>&1 | tail -40")
    True
    >>> runs_build("grep -rn 'error CS' build.log")
    False
    """
    return _runs(command, _BUILD)


def failed_build(command: str, text: str) -> bool:
    """Whether a command's output, read as a build, holds a compiler's own error line
    (:data:`_COMPILE_ERROR`). A build piped through ``tail`` exits 0, so its result is not marked as
    an error (review 7, A2: ``dotnet build … | tail -25`` printing ``error CS1736`` and "Build
    FAILED"); it still failed. A warning is not an error, nor is a log that merely holds the word.

    >>> failed_build("dotnet build -v q 2>&1 | tail -5", "Ui.cs(115,39): error CS1736: not a constant")
    True
    >>> failed_build("dotnet build -v q 2>&1 | tail -5", "Ui.cs(12,3): warning CS0168: unused\\n0 Error(s)")
    False
    >>> failed_build("cat build.log", "Ui.cs(115,39): error CS1736: not a constant")
    False
    """
    return runs_build(command) and bool(_COMPILE_ERROR.search(_TERM_CODES.sub("", text)))


def build_error_line(text: str) -> str:
    """The first compiler error line of a build's output (:data:`_COMPILE_ERROR`), preferring one
    with the compiler's own code to a build system's wrapper (``error MSB3073: the command exited
    with code 1`` follows the C# errors that caused it); ``""`` when there is none."""
    lines = [line.strip() for line in _TERM_CODES.sub("", text).splitlines() if _COMPILE_ERROR.search(line)]
    return next((line for line in lines if "error MSB" not in line), lines[0] if lines else "")


#: How a runner names a failing test: the file it is in (when it says) and its name, a function
#: (``test_upload``, ``TestRender``) or a title path (``Sharing Workflow › 7.2 Charlie sees the file``).
_FAILED_TEST = re.compile(
    r"^(?:FAILED|ERROR) (?P<f1>[^\s:]+)::(?P<n1>\S+)|"                         # pytest
    r"^(?:FAIL|ERROR): (?P<n2>\w+) \((?P<f2>[\w.]+)\)|"                         # unittest
    r"^\s*(?:✘\s+\d+\s+|\d+\)\s+)?\[[^\]\n]+\]\s+›\s+(?P<f3>[^\s:]+):\d+(?::\d+)?\s+›\s+"
    r"(?P<n3>[^\n]+?)\s*(?:\(\d[\d.]*m?s\))?\s*$|"                               # playwright
    r"^\s*●\s+(?P<n4>(?!Console\b)[^\n]+?)\s*$|"                                # jest
    r"^\s*(?:FAIL|×|✗)\s+(?P<f5>\S+\.\w+)\s+>\s+(?P<n5>[^\n]+?)\s*$|"            # vitest
    r"^\s*--- FAIL: (?P<n6>\S+)|"                                                # go test
    r"^test (?P<n7>\S+) \.\.\. FAILED|"                                           # cargo test
    r"^rspec (?P<f8>\./\S+?):\d+ # (?P<n8>[^\n]+?)\s*$",                          # rspec
    re.MULTILINE)


def failed_tests(text: str) -> list[tuple[str, str]]:
    """The failing tests a test run's output names, as ``(file, name)`` (``file`` empty when the
    runner does not say): the last part of a title path (``Suite › 7.2 Charlie sees the file`` →
    ``7.2 Charlie sees the file``) or of a node id (``tests/a.py::TestX::test_y[1]`` → ``test_y``).

    >>> failed_tests("FAILED tests/test_api.py::TestUpload::test_big[2] - assert 1 == 2")
    [('tests/test_api.py', 'test_big')]
    >>> failed_tests("  1 failed\\n    [chromium] › tests/share.spec.ts:401:3 › Sharing › 7.2 Charlie sees the file ")
    [('tests/share.spec.ts', '7.2 Charlie sees the file')]
    """
    out: list[tuple[str, str]] = []
    for m in _FAILED_TEST.finditer(_TERM_CODES.sub("", text)):
        groups = {k[0]: v for k, v in m.groupdict().items() if v}
        name = re.split(r"\s+[›>]\s+", groups.get("n", ""))[-1].strip()
        name = re.sub(r"\[[^\]]*\]$", "", name.rsplit("::", 1)[-1]).strip()
        if name and (found := (groups.get("f", ""), name)) not in out:
            out.append(found)
    return out[:20]


def error_kind(tool: str, text: str, tool_input: dict[str, Any] | None = None) -> str:
    """The kind of a failing tool result (see the module docstring)."""
    command = str((tool_input or {}).get("command", "")) if tool == "Bash" else ""
    if len(text) <= _REMEMBERED_CHARS:  # the same failure is read again and again: by every compaction
        return _remembered_kind(tool, text, command)  # that sees it, by each grader and section
    return _error_kind(tool, text, command)


#: Texts up to this long have their kind remembered (:data:`_REMEMBERED` of them, the oldest dropped).
_REMEMBERED_CHARS = 20_000
_REMEMBERED = 2_048


def _error_kind(tool: str, text: str, command: str) -> str:
    """:func:`error_kind`, given the command a Bash call ran ("" for other tools)."""
    head = text[:2000]
    if _REJECTED.search(head):
        return "rejected"
    if _CANCELLED.search(head):
        return "cancelled"
    if _TOOL_USAGE.search(head) or tool in _HARNESS_TOOLS:
        return "tool_usage"
    if tool in _LOOKUP_TOOLS:  # a search or a fetch that found nothing
        return "probe"
    if _EXIT_ONLY.match(text.strip()) or (not _ERROR_SIGNAL.search(head) and not text.strip().startswith("<")):
        return "probe"  # no output but an exit code, or output that says nothing failed (gh pr view: exit 1)
    # only lookups and existence checks, answered "not there" (reading/probes.py)
    if command and only_asks(command, text) and not re.search(r"\b(?:test|spec|check|build)\b", command):
        return "probe"
    lines = [l for l in re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", head).splitlines()
             if l.strip() and not re.match(r"^\s*Exit code \d+\s*$", l)]
    # The shell refused the command line, or a lookup found nothing: its first words say so.
    if lines and (_REFUSED_LINE.search(lines[0]) or (_PROBE_OUTPUT.search(lines[0])
                  and not re.search(r"\b(?:test|spec|check|build|lint)\b", command))):
        return "probe"
    return "error"


_remembered_kind = functools.lru_cache(maxsize=_REMEMBERED)(_error_kind)


#: Claude Code's own storage under its config folder (``~/.claude``, ``~/.claude-personal``, ...):
#: plan files, per-project memory and transcripts, todos. Not the project's files.
_CLAUDE_STORAGE = re.compile(r"(?:^|/)\.claude[\w.-]*/(?:plans|projects|todos|usage-data|shell-snapshots|"
                             r"image-cache|session-env|file-history|paste-cache|statsig|ide)(?:/|$)")


#: Scratch space: a script the agent wrote to /tmp to try something is not a project file.
_SCRATCH = re.compile(r"^(?:/tmp/|/private/tmp/|/var/tmp/|/private/var/folders/|/var/folders/|/dev/shm/)|"
                      r"/AppData/Local/Temp/", re.IGNORECASE)


def claude_storage(path: str) -> bool:
    """Whether ``path`` is Claude Code's own storage or scratch space, not a project file.

    >>> claude_storage("/Users/me/.claude/plans/zany-strolling-eich.md")
    True
    >>> claude_storage("/tmp/try_regex.py")
    True
    >>> claude_storage("/repo/.claude/skills/simplify/SKILL.md")
    False
    """
    path = path.replace("\\", "/")
    return bool(_CLAUDE_STORAGE.search(path) or _SCRATCH.search(path))


def failed_call_ids(messages: Iterable[Any]) -> set[str]:
    """The ids of tool calls whose result failed (``is_error``): rejected, refused or erroring."""
    out: set[str] = set()
    for message in messages:
        if isinstance(message, UserMessage) and not isinstance(message.content, str):
            for block in message.content:
                if isinstance(block, ToolResultBlock) and block.is_error:
                    out.add(block.tool_use_id)
    return out


_CREATED = re.compile(r"Task #?(\w+) created", re.IGNORECASE)


def open_tasks(messages: Iterable[Any]) -> list[str]:
    """Subjects of the TaskCreate tasks not completed or deleted by a later TaskUpdate, in creation
    order (Claude Code 2.1.45+ tracks work with these instead of TodoWrite)."""
    messages = list(messages)
    results: dict[str, str] = {}
    for message in messages:
        if isinstance(message, UserMessage) and not isinstance(message.content, str):
            for block in message.content:
                if isinstance(block, ToolResultBlock):
                    results[block.tool_use_id] = result_text(block) if not block.is_error else "\x00error"
    tasks: dict[str, dict[str, str]] = {}
    counter = 0
    for message in messages:
        if not isinstance(message, AssistantMessage):
            continue
        for use in message.content:
            if not isinstance(use, ToolUseBlock):
                continue
            result = results.get(use.id, "")
            if result == "\x00error":
                continue
            if use.name == "TaskCreate":
                subject = str(use.input.get("subject") or use.input.get("description") or "").strip()
                counter += 1
                m = _CREATED.search(result)
                tid = m.group(1) if m else str(counter)
                if subject:
                    tasks[tid] = {"subject": subject, "status": "pending"}
            elif use.name == "TaskUpdate":
                tid = str(use.input.get("taskId", "")).lstrip("#")
                task = tasks.get(tid)
                if task is None:
                    continue
                if isinstance(use.input.get("status"), str):
                    task["status"] = use.input["status"]
                if isinstance(use.input.get("subject"), str) and use.input["subject"].strip():
                    task["subject"] = use.input["subject"].strip()
    return [t["subject"] for t in tasks.values() if t["status"] not in ("completed", "deleted", "cancelled")]


# ---------------------------------------------------------------------------------------------
# Identifying tokens of an error

_FILE_LINE = re.compile(r"([\w.@/-]*?([\w.-]+\.[A-Za-z]{1,6})):(\d+)")
_EXC_TYPE = re.compile(r"\b([A-Z][\w.]*(?:Error|Exception|Failure|Fault|Panic|Exit|Violation))\b")
_ERR_CODE = re.compile(r"\b([A-Z]{1,4}\d{3,5}|E\d{4}|TS\d{4}|CS\d{4})\b")
_TEST_NAME = re.compile(r"\b(test_\w+|Test[A-Z]\w+|\w+_test\b|\w+Test\b)")
_QUOTED = re.compile(r"[`'\"“‘]([^`'\"”’\n]{3,60})[`'\"”’]")
_IDENT = re.compile(r"\b([A-Za-z_]\w*(?:[._:]\w+)+|[a-z]+[A-Z]\w*|[A-Z][a-z]+[A-Z]\w*|\w*\d\w*[A-Za-z]\w*|"
                    r"[A-Za-z]\w*-\w[\w-]*)\b")
#: An HTTP status an error reports ("status code 500", "HTTP 404", "500 Internal Server Error"): one
#: of the error's names ("Upload 500 error" tells "Upload failed: Request failed with status code 500").
_HTTP_STATUS = re.compile(r"\b(?:status(?:\s+code)?|HTTP(?:/[\d.]+)?)\s*:?\s*([1-5]\d\d)\b|"
                          r"\b([45]\d\d)\s+(?:Internal Server Error|Not Found|Bad Request|Unauthori[sz]ed|Forbidden|"
                          r"Conflict|Bad Gateway|Service Unavailable|Gateway Time-?out|Unprocessable)", re.IGNORECASE)
_EXIT = re.compile(r"Exit code (\d+)")
_GENERIC = {"error", "exception", "failed", "failure", "typeerror", "valueerror", "file", "line", "code",
            "exit", "exitcode", "node", "main", "index", "src", "test", "tests", "true", "false", "none", "null",
            "http", "https", "localhost", "usr", "bin", "users", "home", "utf-8", "e.g", "i.e"}


def error_identifiers(text: str, key_line: str) -> list[str]:
    """The tokens that identify an error in its key line (and the first lines of its output):
    ``file.py:135``, exception types, error codes, test and function names, quoted names.

    >>> error_identifiers("", "src/app.py:135:16: UP038 Use `X | Y` in `isinstance` call")
    ['app.py:135', 'UP038', 'isinstance']
    """
    return list(_identifiers(text, key_line))


@functools.lru_cache(maxsize=_REMEMBERED)
def _identifiers(text: str, key_line: str) -> tuple[str, ...]:
    """:func:`error_identifiers`, remembered: every summary item is asked about the same errors."""
    out: list[str] = []
    sources = [key_line] + [l for l in text.splitlines()[:8] if l.strip() and l.strip() != key_line][:4]
    for n, src in enumerate(sources):
        found = [f"{m.group(2)}:{m.group(3)}" for m in _FILE_LINE.finditer(src)]
        found += _EXC_TYPE.findall(src) + _ERR_CODE.findall(src) + _TEST_NAME.findall(src)
        found += [a or b for a, b in _HTTP_STATUS.findall(src)]
        found += [q.strip() for q in _QUOTED.findall(src) if re.fullmatch(r"[\w.:/@#<>-]{3,}", q.strip())]
        if n == 0:
            found += [t for t in _IDENT.findall(src) if len(t) >= 4 and not re.search(r"\.\w+:\d", t)]
            tail = re.search(r":\s+([A-Za-z_][\w.-]{2,})\s*$", src)   # "no such table: sessions"
            if (tail and not re.fullmatch(r"[a-z]+", tail.group(1))) or (tail and len(src.split()) <= 8):
                found.append(tail.group(1))
        for token in found:
            if token.lower() not in _GENERIC and token not in out and len(token) >= 3:
                out.append(token)
    return tuple(out[:12])


#: Words every HTTP error says: not what tells one apart from another.
_STATUS_WORDS = {"status", "request", "response", "with", "code", "http", "https", "returned", "server", "internal",
                 "found", "alert", "fetch"}


def _token_in(token: str, text_low: str) -> bool:
    low = token.lower()
    if ":" in low and re.match(r"[\w.-]+:\d+$", low):   # file:line: the file and the line near each other
        name, line = low.rsplit(":", 1)
        for m in re.finditer(re.escape(name), text_low):
            if re.search(rf"(?<!\d){line}(?!\d)", text_low[m.end(): m.end() + 40]):
                return True
            # or the line named first: "line 171 of row_view.ex", "at line 171 in row_view.ex"
            if re.search(rf"\blines?\s+{line}(?!\d)[^\n\d]{{0,25}}$", text_low[max(m.start() - 45, 0): m.start()]):
                return True
        return False
    if low.isdigit():   # an HTTP status: the number whole ("500", not "15000")
        return re.search(rf"(?<![\d.]){low}(?![\d.])", text_low) is not None
    # a name whole: "lint" is not told by "linter", nor "page" by "pages" (a substring scan first)
    return low in text_low and _whole_word(low).search(text_low) is not None


@functools.lru_cache(maxsize=4096)
def _whole_word(token: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![A-Za-z0-9_]){re.escape(token)}(?![A-Za-z0-9_])")


def _overlap(line: str, region: str) -> float:
    """The best share of ``line``'s words found in one item of ``region``."""
    tokens = {t.lower() for t in re.findall(r"[A-Za-z_][\w.-]{2,}|\d+", line)} - _GENERIC
    if not tokens:
        return 0.0
    best = 0.0
    for item in _ITEM.split(region):
        have = {t.lower() for t in re.findall(r"[A-Za-z_][\w.-]{2,}|\d+", item)}
        best = max(best, len(tokens & have) / len(tokens))
    return best


_ITEM = re.compile(r"\n(?=\s{0,6}(?:[-*•]|\d+[.)]|#{1,4})\s)|\n\s*\n")


#: Words that say an item is about something going wrong (or being fixed): an error told outside
#: section 4 is told by an item like these, not by any mention of a name it holds. An error code
#: (``UP038``) is one of the error's names, not a word about it.
_ERROR_CUE = re.compile(
    r"\b(?:errors?|fail\w*|exceptions?|tracebacks?|cannot|can't|could ?n[o']t|missing|not found|undefined|"
    r"unresolved|crash\w*|broke\w*|bugs?|fix\w*|denied|refused|timed? ?out|panic\w*|warnings?|invalid|"
    r"rejected|wrong|red|break(?:s|ing)?)\b", re.IGNORECASE)
#: A cue said not to apply: "no error", "without errors", "0 failures", "error-free".
_NO_CUE_BEFORE = re.compile(r"(?:\bno|\bwithout|\bzero|\b0|\bnon|\bfree of|\bnever)[\s-]+(?:\w+[\s-]+)?$", re.IGNORECASE)
_NO_CUE_AFTER = re.compile(r"^[\s-]*free\b|^s?\s+(?:remain|left)\b.*\bno\b", re.IGNORECASE)


@functools.lru_cache(maxsize=_REMEMBERED)
def _speaks_of_error(item: str) -> bool:
    """Whether ``item`` says something went wrong or was fixed (a cue not said not to apply)."""
    for m in _ERROR_CUE.finditer(item):
        if _NO_CUE_BEFORE.search(item[max(0, m.start() - 24):m.start()]) or _NO_CUE_AFTER.match(item[m.end():m.end() + 30]):
            continue
        return True
    return False


def error_told_as_error(key_line: str, text: str, command: str, region: str, *,
                        workaround: str = "") -> tuple[bool, str]:
    """:func:`error_kept` for a region that is not section 4 (problem solving, current work): the
    error's identifying tokens or command must be in one item that speaks of something going wrong
    or being fixed, and that names one of the key line's own identifiers when it has some.
    ``RawEntry`` in "can derive Default: RawEntry" does not keep ``error[E0425]: cannot find type
    RawEntry``, nor does an item about another lint of the same ``cargo clippy`` run."""
    own = error_identifiers("", key_line)  # what the key line names (a code, a type, a test, a file)
    for item in _ITEM.split(region):
        if not (item.strip() and _speaks_of_error(item)):
            continue
        if own and not any(_token_in(t, item.lower()) for t in own):
            continue  # an item about another error of the same command (cargo clippy's other lints)
        kept, why = error_kept(key_line, text, command, item, workaround=workaround)
        if kept:
            return kept, why
    return False, ""


@functools.lru_cache(maxsize=_REMEMBERED)
def _denies_error(item: str) -> bool:
    """Whether ``item`` says an error did not happen: an error cue said not to apply ("No ruff
    errors", "never failed") and no cue that applies. Words of a check going well alone ("ruff
    passes now") do not deny: an item telling the fix often ends with them.

    >>> _denies_error("- No ruff errors: `ruff check` passed cleanly (UP038 rule not triggered)")
    True
    >>> _denies_error("- Lint: `bun run lint` never failed in this session (exit code 0)")
    True
    >>> _denies_error("- Ruff UP038 on line 135: fixed; no errors remain")
    False
    >>> _denies_error("- **Ruff UP038**: `isinstance(x, (A, B))` → `isinstance(x, A | B)`; ruff passes cleanly now")
    False
    """
    item = re.sub(r"`[^`\n]*`", "``", item)  # a command's words (`ruff check --fix`) say nothing of how it went
    if _speaks_of_error(item) or _names_error(item):
        return False
    negated = any(_NO_CUE_BEFORE.search(item[max(0, m.start() - 24):m.start()]) or
                  _NO_CUE_AFTER.match(item[m.end():m.end() + 30]) for m in _ERROR_CUE.finditer(item))
    return negated or _names_error(item, negated=True)


#: After an error's name: it is said not to have happened ("UP038 rule not triggered").
_NAME_NEGATED_AFTER = re.compile(r"^\W*(?:rule\s+|error\s+|issue\s+|warning\s+)?(?:was\s+|is\s+|has\s+)?"
                                 r"(?:not|never|did\s+not|didn't|does\s+not|doesn't)\b", re.IGNORECASE)


def _names_error(item: str, *, negated: bool = False) -> bool:
    """Whether ``item`` names an exception type or an error code as something that happened (a
    "KeyError in the loader … no exceptions since" tells the KeyError and its fix), or with
    ``negated``, as something that did not ("No UP038 issue", "UP038 rule not triggered", "UP038 did
    not occur")."""
    for m in list(_EXC_TYPE.finditer(item)) + list(_ERR_CODE.finditer(item)):
        said_not = bool(_NO_CUE_BEFORE.search(item[max(0, m.start() - 24):m.start()]) or
                        _NAME_NEGATED_AFTER.match(item[m.end():m.end() + 30]))
        if said_not == negated:
            return True
    return False


def _other_code(item: str, codes: list[str]) -> bool:
    """Whether ``item`` names an error code of the same kind as one of ``codes`` (the same letters:
    ``UP037`` for ``UP038``, ``TS2322`` for ``TS2345``) and none of ``codes`` themselves: it tells
    another error."""
    if not codes:
        return False
    named = {c.upper() for c in _ERR_CODE.findall(item)}
    if not named or any(c.upper() in named for c in codes):
        return False
    kinds = {re.match(r"[A-Z]*", c.upper()).group(0) for c in codes}  # type: ignore[union-attr]  # matches ""
    return any(re.match(r"[A-Z]*", n).group(0) in kinds for n in named)  # type: ignore[union-attr]


@functools.lru_cache(maxsize=_REMEMBERED)  # a region's text: the same for every mutant that leaves it be
def items_about(region: str, key_line: str) -> str:
    """``region`` without the items that cannot tell the error of ``key_line``: items that say no
    error happened (:func:`_denies_error`) and items that name another code of its kind
    (:func:`_other_code`). The same text when no item is dropped."""
    items = _ITEM.split(region)
    kept = [i for i in items if not (i.strip() and _not_about(i, key_line))]
    return region if len(kept) == len(items) else "\n\n".join(kept)


def _not_about(item: str, key_line: str) -> str:
    """Why ``item`` cannot tell the error of ``key_line`` ("says it did not happen", "names UP037,
    another code of its kind"), or ``""``."""
    if _denies_error(item):
        return "says it did not happen"
    codes = [t for t in error_identifiers("", key_line) if _ERR_CODE.fullmatch(t)]
    if _other_code(item, codes):
        return f"names {', '.join(dict.fromkeys(_ERR_CODE.findall(item)))}, not {', '.join(codes)}"
    return ""


def error_denied(key_line: str, text: str, command: str, region: str) -> str:
    """For an error ``region`` does not keep: an item that would have kept it but says it did not
    happen or names another code of its kind, with why (for the reason), or ``""``."""
    for item in _ITEM.split(region):
        why = _not_about(item, key_line) if item.strip() else ""
        if why and (error_kept(key_line, text, command, item, read_all=True)[0] or
                    _overlap(key_line, item) >= 0.5):
            return f"{why}: \"{' '.join(item.split())[:90]}\""
    return ""


def error_kept(key_line: str, text: str, command: str, region: str, *, read_all: bool = False,
               workaround: str = "") -> tuple[bool, str]:
    """Whether section 4 (``region``) keeps this error, and how: its identifying tokens (at least
    half of them, and at least one), or the failing command with a token of its output in one item.
    An item that says no error happened ("No ruff errors: ... passed cleanly", "never failed") or
    that names another code of the error's kind (``UP037`` for ``UP038``) keeps nothing.
    The key line's own presence is checked by the caller (``read_all``: every item counts, for
    :func:`error_denied`)."""
    if not read_all:
        region = items_about(region, key_line)
    if error_message_kept(key_line, region):   # the runner's frame dropped, the message verbatim (reading/error_message.py)
        return True, "its message verbatim"
    if refused := refused_tokens(key_line, command):
        # a command line refused, then worked around: its lesson is the program or flag refused, told
        # as refused or with what worked instead ("python: command not found", "used python3")
        for item in _ITEM.split(region):
            low = item.lower()
            if all(_token_in(t, low) for t in refused) and (_REFUSAL_WORDS.search(low) or any(
                    _token_in(t, low) for t in workaround_words(command, workaround))):
                return True, "the refused " + " and ".join(f"'{t}'" for t in refused)
        return False, ""
    own = error_identifiers("", key_line)           # what the key line itself names
    low = region.lower()
    context = [t for t in error_identifiers(text, key_line) if t not in own]
    if own and all(t.isdigit() for t in own):
        # Only an HTTP status: many errors share one ("Login returned 500" is not "Upload failed:
        # status code 500"), so one item must hold it with another word of the error ("Upload 500 error").
        words = {w for w in re.findall(r"[a-z]{4,}", key_line.lower())} - _GENERIC - _STATUS_WORDS
        for item in _ITEM.split(region):
            item_low = item.lower()
            if any(_token_in(t, item_low) for t in own) and any(re.search(rf"\b{w}", item_low) for w in words):
                return True, "its status " + ", ".join(own) + " and what failed"
        own = []
    if own:
        have = [t for t in own if _token_in(t, low)]
        # All of them; or half, one of them a name (not only the exception type or error code, which
        # many errors share): the missing table, the module, the test, the file:line.
        # (a file named without its line is shared by every error in that file: not a name here)
        names = [t for t in have if not _EXC_TYPE.fullmatch(t.rsplit(".", 1)[-1]) and not _ERR_CODE.fullmatch(t)
                 and not (re.search(r"[/\\]|\.[A-Za-z]{1,5}$", t) and not re.search(r":\d+$", t))]
        if names and len(have) * 2 >= len(own):
            return True, "its identifying tokens " + ", ".join(have[:4])
        if have and len(have) == len(own) and _overlap(key_line, region) >= 0.5:
            # Only a type or a code (many errors share one): half its words must be told with it.
            return True, "its type " + ", ".join(have[:2]) + " and what it said"
    elif context:
        have = [t for t in context if _token_in(t, low)]
        if have and len(have) * 2 >= len(context):
            return True, "its identifying tokens " + ", ".join(have[:4])
    signature = command_signature(command)
    if signature:
        name = signature[-1].lower()
        # Distinctive words of the output only: names (a digit, a dot, a slash, an underscore, camelCase)
        # or long words; "error" or "test" alone would tie any item about the same tool to this error.
        words = {w.lower() for w in re.findall(r"[A-Za-z_][\w./-]{3,}", key_line + "\n" + "\n".join(
            text.splitlines()[:10])) if re.search(r"[\d./_]|[a-z][A-Z]", w) or len(w) >= 7} - _GENERIC - _MESSAGE_WORDS - {name}
        words |= {w.rstrip("/").rsplit("/", 1)[-1] for w in words if "/" in w} - {""}  # a path by its file name
        subject = _subject_words(key_line, command) - {name}
        for item in _ITEM.split(region):
            item_low = item.lower()
            if re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", item_low) and (
                    any(w in item_low for w in words) or any(_whole_word(w).search(item_low) for w in subject)):
                return True, f"the failing {' '.join(signature)} and its output"
    return False, ""


#: An item that tells a command line was refused (not only that something changed).
_REFUSAL_WORDS = re.compile(
    r"not found|not installed|not (?:available|on (?:the )?path)|unavailable|missing|(?:does ?n[o']t|did ?n[o']t) "
    r"(?:exist|support|accept|take|know|have|work)|no such|unknown|unrecogni[sz]ed|unsupported|not supported|"
    r"invalid|fail|error|refus|reject|exit(?: code)? 12[67]|\bwrong\b|\bisn't\b|\bis not\b")


#: Words any error message may say: not what tells one error from another ("retry" in "TypeError:
#: retry is not a function" does; "function" does not).
_MESSAGE_WORDS = frozenset("""
about above after again against also argument arguments assert assertion attribute because been before being
call callable called calling cannot column command could defined does doesn't done during each else empty
equal equals error errors exception exist exists expected fail failed failing failure false file found from
function given have having instance into invalid item items line missing module must need needs none
null number object occurred only other passed property read reading received required result return returned
should some string such than that their them then there these they this those type undefined unexpected
unknown value values were what when where which while will with within without would wrong your
table field method class variable name import path directory option index keyword token scope package symbol
member identifier
""".split())


def _subject_words(key_line: str, command: str) -> set[str]:
    """The plain words of an error's message that name what it is about (``retry`` in ``TypeError:
    retry is not a function``, ``sessions`` in ``no such table: sessions``): four letters or more,
    not a word any error message says (:data:`_MESSAGE_WORDS`) nor one of the command's own words
    (``orders`` in ``npm test -- orders``: the command names it already)."""
    message = re.sub(r"^\s*[\w.]*(?:Error|Exception)\b:?", "", key_line)   # the exception type: its own rule
    said = {w.lower() for w in re.findall(r"[A-Za-z_][\w-]*", command)}
    return {w for w in (m.lower() for m in re.findall(r"(?<![\w.-])[A-Za-z][a-z]{3,}(?![\w.-])", message))
            if w not in _MESSAGE_WORDS and w not in _GENERIC and w not in said}


_ID_TOKEN = re.compile(r"[\w.-]*\d[\w.-]*")


def failing_test_told(tests: Iterable[tuple[str, str]], region: str, *, errors_section: bool = False) -> str:
    """How ``region`` tells one of a run's failing tests (:func:`failed_tests`), or ``""``: an item
    that says something went wrong or was fixed (:func:`_speaks_of_error`; in section 4, the errors
    section, ``errors_section``, any item that does not say the test passes: "`test_upload` got 413"
    tells it there, "Test 6.1 passes now" or "was renamed" does not) and names the test by its function name (``test_big``), by most
    of its title's words (every number of the title among them: "7.2" tells test 7.2 from test 7.3),
    or by the title's leading id (``6.1``, ``TC-12``: "Test 6.1", "step 6.1 fails", "(#6.1) is red";
    a bare number only as "test 12"). A plain one-word name ("works") is too common a word to tell
    it.

    >>> failing_test_told([("tests/share.spec.ts", "7.2 Charlie sees the newly added file")],
    ...           "- Test 7.2 \\"Charlie sees the newly added file\\" still fails")
    "its failing test '7.2 Charlie sees the newly added file'"
    >>> failing_test_told([("", "test_big")], "- test_small fails on CI")
    ''
    >>> failing_test_told([("", "6.1 Alice revokes Bob's access")], "- Test 6.1 passes now")
    ''
    """
    for item in _ITEM.split(region):
        if not item.strip():
            continue
        if not _speaks_of_error(item) and (not errors_section or _SAYS_PASSING.search(item)):
            continue
        if found := names_failing_test(tests, item):
            return found
    return ""


def names_failing_test(tests: Iterable[tuple[str, str]], item: str) -> str:
    """How ``item`` names one of ``tests`` (``(file, name)``, :func:`failed_tests`), or ``""``: by its
    function name, by most of its title's words with every number of the title, or by the title's
    leading id (the rules of :func:`failing_test_told`, which also asks the item to speak of an error)."""
    low = item.lower()
    for _file, name in tests:
        if " " not in name.strip():
            if re.search(r"[_\d]|[a-z][A-Z]|^[Tt]est", name) and \
                    re.search(rf"(?<![\w.-]){re.escape(name.lower())}(?![\w-])", low):
                return f"its failing test {name}"
            continue
        tokens = [t for t in _significant_words(name)]
        numbers = [t for t in tokens if re.fullmatch(r"[\d.]+", t)]
        have = [t for t in tokens if re.search(rf"(?<![\w.]){re.escape(t)}" + (r"(?![\w])" if t in numbers else ""), low)]
        if tokens and len(have) >= 0.6 * len(tokens) and all(n in have for n in numbers):
            return f"its failing test '{name}'"
        lead = name.split()[0].lower()
        if not _ID_TOKEN.fullmatch(lead):
            continue
        if re.search(r"[.-]", lead) or not lead.isdigit():   # 6.1, TC-12: an id of its own
            # named as a test ("step 6.1", "test (#6.1)") or said to fail in its clause ("6.1) breaks"),
            # not in passing ("Test 7.2 failure … needs a run after 6.1 is resolved")
            at = rf"(?<![\w.]){re.escape(lead)}(?![\w]|\.\d)"
            if re.search(rf"\b(?:tests?|specs?|steps?|cases?|scenarios?)\W{{0,4}}{at}", low) or \
                    re.search(rf"{at}[^.;\n]{{0,60}}?{_ERROR_CUE.pattern}", low, re.IGNORECASE):
                return f"its failing test '{name}'"
        elif re.search(rf"\btests?\s+(?:#|no\.?\s*)?{re.escape(lead)}(?![\w.])", low):
            return f"its failing test '{name}'"
    return ""


#: An item that says a test is fine now, or was changed without failing.
_SAYS_PASSING = re.compile(r"\b(?:pass(?:es|ed|ing)?|green|succeed\w*|renamed|skipped)\b", re.IGNORECASE)


def _significant_words(title: str) -> list[str]:
    """A test title's words that tell it apart: numbers and ids whole, words of 3+ letters."""
    return [t.lower() for t in re.findall(r"\d+(?:\.\d+)*|[A-Za-z][\w'-]{2,}", title)
            if t.lower() not in {"the", "and", "for", "with", "that", "this", "from", "when", "should", "test"}]
