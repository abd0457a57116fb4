"""ContextManager._history_uuids keeps the set of the session's message uuids as the history grows
(a compaction asks for it: rebuilding it from 19,000 messages each time cost the long session
~0.1 s); it must always be the set the comprehension gives, whatever happened to the list."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from engine_kit import Session, user

ops = st.lists(st.sampled_from(["append", "append", "ask", "replace_list", "swap_last", "pop", "clear"]), max_size=30)


@settings(deadline=None)  # examples: the profile's (conftest.py: 50 in the suite, 1,000 in .ci/soak)
@given(ops)
def test_the_kept_set_is_the_history_uuids(tmp_path_factory, plan: list[str]) -> None:
    cm = Session(tmp_path_factory.mktemp("s")).cm
    n = 0
    for op in plan:
        n += 1
        if op == "append":
            cm.history.append(user(f"u{n}"))
        elif op == "replace_list":
            cm.history = cm.history[:1] + [user(f"r{n}")]
        elif op == "swap_last" and cm.history:
            cm.history[-1] = user(f"s{n}")
        elif op == "pop" and cm.history:
            cm.history.pop()
        elif op == "clear":
            cm.history.clear()
        elif op == "ask":
            assert cm._history_uuids() == {m.uuid for m in cm.history}
    assert cm._history_uuids() == {m.uuid for m in cm.history}
