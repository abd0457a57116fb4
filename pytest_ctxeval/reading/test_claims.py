"""A summary that calls a test passing when the session's last run of it failed.

After a compaction the next context window believes what the summary says: "Test 7.2 — fixed, now
passing ✅" or "All e2e tests now pass" sends it on to the next task while the test is still red.
Only what the transcript leaves no doubt about is judged:

* :func:`last_test_run` is the last shell command of the span that ran a test runner
  (:func:`~pytest_ctxeval.reading.session_facts.runs_tests`), with the tests its output reports
  failing (:func:`~pytest_ctxeval.reading.session_facts.failed_tests`); nothing is judged when it
  passed or names no failing test, and a test that failed in an earlier run only is not judged (a
  later run may have passed it);
* :func:`passing_claims` reads the sentences of a summary's sections that say, in the present, that a
  test passes: one naming a failing test of that run (by the rules of ``failing_test_told``) with
  "passes", "is passing", "now green", "✅"; or "all (the) tests pass" whose qualifier words are
  the run's own ("all e2e tests" for a run under ``tests/e2e`` or of a browser runner such as
  Playwright; "all unit tests" is about another suite). A sentence that hedges or looks ahead ("should pass once…", "to make it pass", "until"),
  negates ("not", "still failing") or speaks of the past ("passed before the change") claims
  nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..core.messages import AssistantMessage, result_text, text_of
from .session_facts import failed_test_run, failed_tests, names_failing_test, runs_tests

__all__ = ["LastRun", "PassingClaim", "TOOLS_THAT_CANNOT_RUN_TESTS", "last_test_run", "passing_claims"]


@dataclass(frozen=True)
class LastRun:
    command: str
    failing: tuple[tuple[str, str], ...]   # (file, name) as the runner names them
    evidence: str                          # the output line that reports the first failing test


@dataclass(frozen=True)
class PassingClaim:
    sentence: str
    test: str      # the failing test it calls passing (as names_failing_test names it), or "" for "all tests pass"


def last_test_run(messages: list[Any]) -> LastRun | None:
    """The span's last test run, when its output reports failing tests (else None)."""
    from .extract import tool_results, tool_uses   # extract imports this package's modules

    calls: dict[str, Any] = {}
    last: tuple[str, str] | None = None
    after: list[str] = []     # what the assistant said after the last run
    unsure = False            # a later command that may have run the tests another way
    for message in messages:
        for use in tool_uses(message):
            command = str(use.input.get("command", "")) if use.name == "Bash" else ""
            if command and runs_tests(command):
                calls[use.id] = use
                unsure = last is not None   # until its result is read (a run with no result: unsure)
            elif last is not None and ((use.name != "Bash" and use.name not in TOOLS_THAT_CANNOT_RUN_TESTS)
                                       or _MAY_RUN_TESTS.search(command)):
                unsure = True
        for res in tool_results(message):
            if (call := calls.get(res.tool_use_id)) is not None:
                last, after, unsure = (str(call.input.get("command", "")), result_text(res)), [], False
        if last is not None and isinstance(message, AssistantMessage):
            after.append(text_of(message.content))
    if last is None or unsure:
        return None
    command, text = last
    failing = failed_tests(text)
    if not failing or not failed_test_run(command, text):
        return None
    name = failing[0][1]
    evidence = next((line.strip() for line in text.split("\n") if name in line), name)
    run = LastRun(command, tuple(failing), evidence)
    # The session's own words after the run say the tests pass (a run the transcript does not show, or
    # a runner read as another command): a summary repeating them is faithful to the session.
    if passing_claims("\n".join(after), run):
        return None
    return run


#: Tools that cannot run tests (reading, searching, editing, planning): a later call of any other tool
#: (a subagent, an MCP tool), or a shell command that may run them another way (its command decides:
#: :data:`_MAY_RUN_TESTS`), leaves the last test run's outcome unsure.
TOOLS_THAT_CANNOT_RUN_TESTS = frozenset({
    "Read", "Grep", "Glob", "LS", "TodoWrite", "TaskCreate", "TaskUpdate", "TaskList", "WebFetch", "WebSearch", "Edit",
    "Write", "MultiEdit", "NotebookEdit", "AskUserQuestion", "ExitPlanMode"})
_MAY_RUN_TESTS = re.compile(r"\b(?:make|just|tox|nox|npm|pnpm|yarn|bun|npx|cargo|go|gradle|mvn|bazel|ctest|rake|"
                            r"mix|dotnet|ci|check|verify|validate)\b|(?:^|\s)\./|\.sh\b", re.IGNORECASE)


_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_PASSES = re.compile(r"\b(?:now\s+)?(?:pass(?:es)?|passing|are\s+green|is\s+green|now\s+green|succeeds?)\b|✅|✓",
                     re.IGNORECASE)
#: A sentence that hedges, negates, looks ahead or back: it does not say the test passes now.
_NOT_A_CLAIM = re.compile(
    r"\b(?:not|never|no\s+longer|still|fail\w*|red|until|once|should|would|could|will|expect\w*|if|when|"
    r"after|before|verify|check|confirm|ensure|make|get|to\s+pass|need\w*|until|previously|earlier|"
    r"used\s+to|was|were|flaky|skip\w*|hope\w*|might|may|whether|try\w*|attempt\w*|except|apart\s+from|"
    r"other\s+than|besides|save\s+for|but)\b|n't\b|\?",
    re.IGNORECASE)
_ALL_TESTS = re.compile(r"\ball\s+(?P<q>(?:[\w-]+\s+){0,3}?)(?:tests?|specs?)\s+(?:now\s+)?"
                        r"(?:pass(?:es)?|are\s+passing|are\s+green)\b", re.IGNORECASE)
_BROWSER_RUNNER = re.compile(r"\b(?:playwright|cypress|e2e|puppeteer|webdriver|selenium)\b")
_PLAIN = frozenset({"the", "of", "our", "remaining", "now", "these", "its", "their"})


def _qualifiers_agree(words: str, command: str) -> bool:
    """"all e2e tests" agrees with a run of ``tests/e2e``; a count ("all 23 tests") with any run."""
    low = command.lower()
    for w in words.lower().split():
        if w in _PLAIN or w.isdigit():
            continue
        if w in ("e2e", "end-to-end") and _BROWSER_RUNNER.search(low):
            continue
        if w not in low:
            return False
    return True


_CLAUSE = re.compile(r"\s[—–-]\s|[,:()]|\s(?:->|→)\s|\s(?:but|while|whereas|and)\s")
#: In the clauses before the claim, the failure may be named as a noun ("Test 6.1 failure — fixed,
#: now passing"); any other hedge, negation or verb of failing there ("6.1 fails, 6.2 passes") leaves it.
_NOUN_FAILURE = re.compile(r"\bfailures?\b", re.IGNORECASE)


def passing_claims(text: str, run: LastRun) -> list[PassingClaim]:
    """Sentences of ``text`` that say a test of ``run`` (the last run, which failed) passes now: the
    clause with the claim neither hedges, negates nor looks ahead or back, nor does any clause before
    it (but for "failure" as a noun), and the test is named in it or before it."""
    out = []
    for sentence in _SENTENCE.split(text):
        if not sentence.strip() or not _PASSES.search(sentence):
            continue
        clauses = _CLAUSE.split(sentence)
        at = next((i for i, c in enumerate(clauses) if _PASSES.search(c)), None)
        if at is None or _NOT_A_CLAIM.search(clauses[at]) or \
                any(_NOT_A_CLAIM.search(_NOUN_FAILURE.sub("", c)) for c in clauses[:at]):
            continue
        head = " ".join(clauses[:at + 1])
        if (m := _ALL_TESTS.search(head)) and _qualifiers_agree(m.group("q"), run.command):
            out.append(PassingClaim(sentence.strip(), ""))
            continue
        if found := names_failing_test(run.failing, head):
            out.append(PassingClaim(sentence.strip(), found.removeprefix("its failing test ")))
    return out
