"""relied._Index.first_mention against its definition: the message of the first statement that holds
the key's first 80 characters or whose first 60 characters the key holds. The index looks statements
under 16 characters up in one of two ways, whichever is cheaper (the short statements one by one, or
every window of the key); both must give the definition's answer, including for a key shorter than
some short statements and for a key that holds none."""

from __future__ import annotations

import pytest

from pytest_ctxeval.core.messages import AssistantMessage, TextBlock, UserMessage
from pytest_ctxeval.llm import relied


def definition(history: list, key: str) -> int:
    return next((i for i, s in relied._statements(history)
                 if key[:80] in s.lower() or s.lower()[:60] in key), -1)


def history_of(texts: list[str]) -> list:
    out: list = []
    for n, text in enumerate(texts):
        if n % 2:
            out.append(AssistantMessage(uuid=f"a{n}", content=[TextBlock(text=text)]))
        else:
            out.append(UserMessage(uuid=f"u{n}", content=text))
    return out


# Many distinct short statements of many lengths: a short key has fewer windows than there are
# short statements, so the index tries the key's windows.
SHORT = [f"ok {n}." for n in range(40)] + ["yes.", "done now.", "fine, go on.", "ship it today."]
LONG = ["The billing service listens on port 8080 behind the gateway.",
        "Set TIMEOUT_SEARCH to 30 in config/search.yaml before the release."]


@pytest.mark.parametrize("key", ["ok 7", "yes", "ship it", "ok 12.", "zzz"])
def test_a_short_key_among_many_short_statements(key: str) -> None:
    history = history_of(SHORT + LONG)
    index = relied._Index(history)
    assert len(index.short) >= len(key) * len(index.short_lengths)  # the key's windows
    assert index.first_mention(key) == definition(history, key)


@pytest.mark.parametrize("key", ["ok 12. and done now.", "nothing here at all",
                                 "the billing service listens on port 8080 behind the gateway. fine, go on.",
                                 "set timeout_search to 30 in config/search.yaml before the release. ok 3."])
def test_a_long_key(key: str) -> None:
    history = history_of(SHORT + LONG)
    index = relied._Index(history)
    assert len(index.short) < len(key) * len(index.short_lengths)  # the short statements one by one
    assert index.first_mention(key) == definition(history, key)


def test_the_definition_finds_what_the_cases_expect() -> None:
    history = history_of(SHORT + LONG)
    assert definition(history, "ok 12. and done now.") == 12  # "ok 1." is not in it
    assert definition(history, "yes") == 40
    assert definition(history, "nothing here at all") == definition(history, "zzz") == -1
    assert definition(history, LONG[0].lower() + " fine, go on.") == 42  # "fine, go on." comes first
