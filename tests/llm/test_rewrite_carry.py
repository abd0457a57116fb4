"""What a model re-summarising its own summary keeps (a third fresh review, F16 and F12).

Deleting section 6 from the prompt regresses the two graders that look for it, and nothing else: at
the second compaction the earlier summary no longer lists the messages, and a model carries the
requests and their constraints forward from its section 1. Deleting section 1 too leaves them
nowhere, and the constraints are lost. Section 6 "in your own words" regresses verbatim only: the
rewording is a complete sentence with the message's values and names, history like a quote.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from prompt_variants import S6, builtin_source, edited
from test_prompt_regression import run_offline
from pytest_ctxeval.llm.reference import write_summary
from pytest_ctxeval.reading.summary import parse_summary
from pytest_ctxeval.reporting.baseline import diff_runs, format_run_diff

SCENARIOS = ["auth_refactor", "migrations_constraint", "multi_part_request", "facts_updated_values"]
GRADERS = ["nine_sections", "verbatim_user_messages", "constraints_preserved", "drift", "probes", "facts_survive",
           "last_request_intact", "stale_values"]

pytestmark = pytest.mark.xdist_group("rewrite_carry_builtin_run")


@pytest.fixture(scope="module")
def builtin_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return run_offline(tmp_path_factory.mktemp("builtin"), "builtin", SCENARIOS, GRADERS)


def without_sections(numbers: set[int]) -> str:
    """The built-in prompt with the numbered entries ``numbers`` deleted and the rest renumbered."""
    out, n = [], 0
    for line in builtin_source().split("\n"):
        m = re.match(r"^(\d)\. (.*)$", line)
        if m and int(m.group(1)) in numbers:
            continue
        if m:
            n += 1
            line = f"{n}. {m.group(2)}"
        out.append(line)
    return "\n".join(out)


def _run(tmp_path: Path, name: str, text: str, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    prompt = tmp_path / "compact.j2"
    prompt.write_text(text, encoding="utf-8")
    return run_offline(tmp_path, name, SCENARIOS, GRADERS, prompt, capsys)


def test_deleting_section_6_regresses_only_the_graders_of_section_6(builtin_run: dict[str, Any], tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    doc = _run(tmp_path, "no6", without_sections({6}), capsys)
    cmp = diff_runs(builtin_run, doc)
    assert {c.grader for c in cmp.regressions} == {"nine_sections", "verbatim_user_messages"}, format_run_diff(cmp)
    # compaction 2 of auth_refactor: section 1 still opens with the session's first request and its constraint
    second = next(s for s in doc["scenarios"] if s["name"] == "auth_refactor")["compactions"][1]["summary"]
    request = parse_summary(second).get("request")
    assert request is not None and "All user messages" not in second
    assert request.body.lstrip().startswith("The user's first request: \"Refactor the session handling in src/auth/")
    assert "Keep the public API of src/auth/service.py unchanged." in request.body
    assert "don't use JWT" in request.body


def test_deleting_sections_1_and_6_still_loses_the_constraints(builtin_run: dict[str, Any], tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    doc = _run(tmp_path, "no1no6", without_sections({1, 6}), capsys)
    cmp = diff_runs(builtin_run, doc)
    lost = {c.scenario for c in cmp.regressions if c.grader == "constraints_preserved"}
    assert {"auth_refactor", "migrations_constraint"} <= lost, format_run_diff(cmp)
    assert all(c.reason for c in cmp.regressions)


def test_section_6_in_your_own_words_regresses_verbatim_only(builtin_run: dict[str, Any], tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    own = "List ALL user messages that are not tool results, in your own words, one per item."
    doc = _run(tmp_path, "own_words", edited([(S6, own)]), capsys)
    cmp = diff_runs(builtin_run, doc)
    assert {c.grader for c in cmp.regressions} == {"verbatim_user_messages"}, format_run_diff(cmp)
    assert {c.scenario for c in cmp.regressions} == set(SCENARIOS)


# -- the same at the level of one reply -----------------------------------------------------------

FIRST = "Refactor the billing export in src/billing/export.py. Never touch the ledger_v2 table."
LATER = "Now add a CSV header row to the export."


def _prompt(numbers: set[int]) -> str:
    from pytest_ctxeval.engine.prompt import PromptSet

    path = Path(__file__).parent / "_carry_prompt.j2"
    try:
        path.write_text(without_sections(numbers), encoding="utf-8")
        return PromptSet(str(path)).render_compact()
    finally:
        path.unlink()


def _reply(prompt: str, earlier: str | None) -> str:
    messages: list[dict[str, Any]] = []
    if earlier is None:
        messages.append({"role": "user", "content": FIRST})
        messages.append({"role": "assistant", "content": "Looking at src/billing/export.py."})
    else:
        messages.append({"role": "user", "content": "This session is being continued from a previous conversation "
                                                    "that ran out of context. Summary:\n" + earlier})
    messages.append({"role": "user", "content": LATER})
    messages.append({"role": "assistant", "content": "Adding the header row."})
    messages.append({"role": "user", "content": prompt})
    return write_summary(messages)


@pytest.mark.parametrize("drop", [set(), {6}], ids=["nine_sections", "no_section_6"])
def test_a_second_summary_carries_the_first_request_from_section_1(drop: set[int]) -> None:
    prompt = _prompt(drop)
    first = _reply(prompt, None).split("<summary>")[1].split("</summary>")[0]
    second = _reply(prompt, first)
    request = parse_summary(second.split("<summary>")[1]).get("request")
    assert request is not None
    assert request.body.lstrip().startswith(f'The user\'s first request: "{FIRST}"')
    assert LATER in request.body


def test_without_section_1_nothing_carries_the_first_request() -> None:
    prompt = _prompt({1, 6})
    first = _reply(prompt, None).split("<summary>")[1].split("</summary>")[0]
    second = _reply(prompt, first)
    assert "ledger_v2" not in second  # the constraint lived in no section of the earlier summary


# -- section 6 in the writer's own words ------------------------------------------------------------

def _person_messages() -> list[str]:
    import yaml

    from test_prompt_regression import SCENARIOS as FOLDER

    out: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "user" and isinstance(value, str) and "{{" not in value and "<system-reminder>" not in value:
                    out.append(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    for path in sorted(FOLDER.glob("*.yaml")):
        walk(yaml.safe_load(path.read_text(encoding="utf-8")).get("turns", []))
    return list(dict.fromkeys(out))


#: What a paraphrase must keep: numbers, paths, snake_case and dotted names, calls, upper-case codes.
_FACT = re.compile(r"\b\d+(?:[.,:]\d+)*\b|(?:[\w.-]+/)+[\w.-]*|\b[a-z]+(?:_[a-z0-9]+)+\b|\b\w+\.\w+\b|\b(?!OK\b)[A-Z]{2,}\b")


def test_the_paraphrase_is_a_sentence_that_keeps_every_value_and_name() -> None:
    from pytest_ctxeval.llm.rewording import paraphrase
    from pytest_ctxeval.reading.verbatim import find

    messages = _person_messages()
    assert len(messages) > 40
    reworded = 0
    for message in messages:
        said = paraphrase(message)
        assert said.startswith(("The user asked", "The user said", "The user wanted to know")), said
        assert said.endswith(".") and "…" not in said, said  # a whole sentence, not a cut
        assert "asked about:" not in said and "asked to change of" not in said, said
        for fact in _FACT.findall(message):
            assert fact.rstrip(".,:") in said, (fact, said)
        reworded += not find(message, said)
    assert reworded >= 0.8 * len(messages)  # in other words, not a copy behind a prefix


def test_an_old_value_in_a_reworded_message_reads_as_history() -> None:
    from pytest_ctxeval.llm.rewording import paraphrase

    old = paraphrase("One thing to keep in mind: never run migrations against the kelp_meadow database without "
                     "taking a snapshot first.")
    assert old == ("The user asked the assistant (one thing to keep in mind) never to run migrations against the "
                   "kelp_meadow database without taking a snapshot first.")
    new = paraphrase("Change of plan: the shipping service moved: it listens on port 7469 in staging now, no longer 7113.")
    assert "7469" in new and "no longer 7113" in new and new.startswith("The user said (change of plan) that ")
