"""failed_attempts asks whether a reply says an attempt failed once per text
(reading.extract._says_failed, remembered by value): the same answer as the search it replaces
(the oracle), and the same attempts listed, for any texts, asked once or again."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from pytest_ctxeval.core.messages import AssistantMessage, TextBlock, UserMessage
from pytest_ctxeval.reading import extract
from pytest_ctxeval.reading.summary import normalize_ws

_words = st.sampled_from(["did not", "DIDN'T", "work", "fix", "not the", "cause", "reverted", "revert", "still",
                          "failing", "dead end", "ruled out", "x", "no effect", "undo that", "rolled back", "é",
                          "  ", "\n", "."])
_texts = st.lists(_words, max_size=8).map(" ".join)


def before(messages, limit: int = 400) -> list[str]:
    out: dict[str, None] = {}
    for message in messages:
        if isinstance(message, AssistantMessage):
            text = normalize_ws(extract.text_of(message.content))
            if text and extract.FAILED_ATTEMPT.search(text):
                out.setdefault(text if len(text) <= limit else text[: limit - 1] + "…")
    return list(out)


@settings(deadline=None)  # examples: the profile's (conftest.py: 50 in the suite, 1,000 in .ci/soak)
@given(_texts)
def test_the_answer_is_the_searchs(text: str) -> None:
    for _ in range(2):
        assert extract._says_failed(text) is (extract.FAILED_ATTEMPT.search(text) is not None)


@settings(deadline=None)  # examples: the profile's (conftest.py: 50 in the suite, 1,000 in .ci/soak)
@given(st.lists(st.tuples(st.booleans(), _texts), max_size=8), st.integers(3, 40))
def test_failed_attempts_are_those_listed_before(said, limit: int) -> None:
    history = [AssistantMessage(uuid=f"a{n}", content=[TextBlock(text=t)]) if mine
               else UserMessage(uuid=f"u{n}", content=t or "x") for n, (mine, t) in enumerate(said)]
    assert extract.failed_attempts(history, limit) == before(history, limit)
    assert extract.failed_attempts(history + history, limit) == before(history + history, limit)


def test_a_failed_attempt_is_found_and_a_plain_reply_is_not() -> None:
    history = [AssistantMessage(uuid="a", content=[TextBlock(text="Reverting: that did not fix it.")]),
               AssistantMessage(uuid="b", content=[TextBlock(text="Reading the module.")])]
    assert extract.failed_attempts(history) == ["Reverting: that did not fix it."]
