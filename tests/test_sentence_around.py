"""``clauses.sentence_around`` reads a message's sentence ends once (a long pasted message has
thousands of clauses, and scanning it again for each was quadratic): it answers as the direct
definition does, for every position of any text."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from pytest_ctxeval.reading.clauses import _SENTENCE_END, sentence_around


def _direct(message: str, at: int) -> tuple[str, str]:
    """The definition: the sentence ends found in ``message[:at]``, and those from ``at`` on."""
    start = max((m.end() for m in _SENTENCE_END.finditer(message, 0, at)), default=0)
    ends = [m.end() for m in _SENTENCE_END.finditer(message, at)]
    return message[start:at], message[start:ends[1] if len(ends) > 1 else len(message)]


@settings(deadline=None)
@given(st.text(st.sampled_from("ab .!?\n\tx"), max_size=30), st.data())
def test_sentence_around_is_the_direct_definition(message: str, data: st.DataObject) -> None:
    at = data.draw(st.integers(0, len(message)))
    assert sentence_around(message, at) == _direct(message, at)


def test_a_mark_right_before_the_position_ends_the_sentence_before_it() -> None:
    # "foo.bar": read up to the clause after the mark, the mark ends a sentence there
    assert sentence_around("foo.bar", 4) == ("", "bar")
    assert sentence_around("One. Two. Three.", 5) == (" ", " Two. Three.")  # the sentence and the next
