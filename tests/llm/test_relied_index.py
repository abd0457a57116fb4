"""mark_replaced reads a span's statements once (llm/relied.py's _Index) instead of searching
every statement for every item: the marks must be exactly those of the direct definition, which
this test spells out pair by pair, on a span with changes, repeats, short statements and carried
items. (The index made the 10,000-turn benchmark's summaries about 6 times faster, byte-identical.)"""

from __future__ import annotations

import random
import re

from hypothesis import given, settings, strategies as st

from pytest_ctxeval.reading.extract import significant_tokens
from pytest_ctxeval.llm import relied, relied_bodies
from pytest_ctxeval.core.messages import AssistantMessage, TextBlock, UserMessage
from pytest_ctxeval.reading.summary import normalize_ws


def direct(items: list[str], history: list) -> list[str]:
    """The definition, one statement at a time (the code before the index)."""
    statements = relied._statements(history)
    out = []
    for item in items:
        words = [w for w in significant_tokens(item) if not re.search(r"\d", w)]
        key, distinct = normalize_ws(item).lower(), relied._distinct(item)
        if relied.REPLACED in item or not words or not distinct:
            out.append(item)
            continue
        start = next((i for i, s in statements if key[:80] in s.lower() or s.lower()[:60] in key), -1)
        newer = None
        for i, s in statements:
            low = s.lower()
            if i <= start or key[:80] in low or low[:60] in key or not relied._CHANGE.search(s):
                continue
            if not distinct & relied._distinct(s):
                continue
            have = set(significant_tokens(s))
            if sum(w in have for w in words) / len(words) >= 0.6:
                newer = s
        out.append(item if newer is None else f"{item}{relied.REPLACED}\"{newer[:200]}\")")
    return out


def span(seed: int) -> tuple[list, list[str]]:
    rnd = random.Random(seed)
    services = ["api", "billing", "search", "auth_service", "queue"]
    said = []
    history: list = []
    for n in range(160):
        svc, port = rnd.choice(services), rnd.choice([8080, 9090, 5433, 6379, 8443])
        pick = rnd.random()
        if pick < 0.3:
            text = f"The {svc} service listens on port {port}."
        elif pick < 0.5:
            text = f"The {svc} service listens on port {port} now, no longer {port + 1}."
        elif pick < 0.6:
            text = rnd.choice(["ok", "Done.", "fine", "Yes"])
        elif pick < 0.8:
            text = f"Set TIMEOUT_{svc.upper()} = {rnd.randint(1, 90)} in config/{svc}.yaml. Renamed it after all."
        else:
            text = f"Reading src/{svc}/core.py again to check the handler."
        said.append(text)
        role = AssistantMessage if n % 2 else UserMessage
        history.append(role(uuid=f"m{n}", content=[TextBlock(text=text)]))
    items = rnd.sample(said, 40) + ["The api service listens on port 8080.", "The queue service listens on port 6379.",
                                    "Set TIMEOUT_SEARCH = 30 in config/search.yaml.", "ok"]
    return history, items


def test_marks_are_those_of_the_direct_definition() -> None:
    marked = 0
    for seed in range(6):
        history, items = span(seed)
        for start in (0, 40, 120):
            got = relied.mark_replaced(items, history[start:])
            assert got == direct(items, history[start:])
            marked += sum(relied.REPLACED in x for x in got)
    assert marked > 50  # the spans do change facts: the comparison is not between unmarked lists


def test_the_index_is_rebuilt_for_another_span() -> None:
    history, items = span(1)
    first = relied.mark_replaced(items, history)
    later = history + [AssistantMessage(uuid="late", content=[TextBlock(
        text="The api service listens on port 7000 now, no longer 8080.")])]
    assert relied.mark_replaced(items, later) == direct(items, later) != first


def direct_statements(history: list) -> list[tuple[int, str]]:
    """The statements of a span as first defined: every text normalised and split on its own."""
    from pytest_ctxeval.core.messages import person_text, result_text, text_of, tool_results

    out = []
    for i, m in enumerate(history):
        texts: list[str] = []
        person = person_text(m)
        if person is not None:
            texts.append(person)
        if isinstance(m, AssistantMessage):
            texts.append(text_of(m.content))
        texts += [line for b in tool_results(m) if not b.is_error for line in result_text(b).splitlines()]
        for t in texts:
            for s in relied._SENTENCE.split(re.sub(r"\s+", " ", t).strip()) if "\n" not in t else [t]:
                if s.strip():
                    out.append((i, s.strip()))
    return out


def tool_span(seed: int) -> list:
    """A span whose tool results repeat their lines (as logs and test runs do) between sentences,
    blank and whitespace-only lines, multi-line texts and unusual whitespace."""
    from pytest_ctxeval.core.messages import ToolResultBlock, ToolUseBlock

    rnd = random.Random(seed)
    lines = ["INFO request served in 12 ms", "port = 5433", "", "   ", "Done. Next one!", "ok?\u00a0Yes. No",
             "The api service listens on port 8080 now.  It moved.", "\tpassed 31\u2003failed 0", "x" * 30]
    history: list = []
    for n in range(60):
        call = f"toolu_{seed}_{n}"
        text = rnd.choice(["Reading src/app.py.", "Fixed it. The port is 9090 now!\nSecond line.", "Why? Because.", ""])
        history.append(AssistantMessage(uuid=f"a{n}", content=[TextBlock(text=text or "…"),
                                                               ToolUseBlock(id=call, name="Bash", input={})]))
        output = "\n".join(rnd.choice(lines) for _ in range(rnd.randint(0, 12)))
        if n % 3 == 0:  # the same whole result again (a test run, a grep), one with a lone carriage return
            output = rnd.choice(["port = 5433\nDone. It listens on 5433 now!", "ok\r\nok", lines[6] + "\n" + lines[1]])
        history.append(UserMessage(uuid=f"u{n}", content=[
            ToolResultBlock(tool_use_id=call, content=output, is_error=rnd.random() < 0.2),
            *([TextBlock(text=rnd.choice(["Keep going.", "Stop. Use port 6379 instead!"]))] if n % 5 == 0 else [])]))
    return history


def test_statements_are_those_of_the_direct_definition() -> None:
    """_statements splits each distinct text once: the rows are those of splitting every one."""
    for seed in range(8):
        history = tool_span(seed)
        assert relied._statements(history) == direct_statements(history)
    assert len({s for _, s in relied._statements(tool_span(0))}) < len(relied._statements(tool_span(0)))


def test_marks_on_repeating_tool_output_are_those_of_the_direct_definition() -> None:
    for seed in range(4):
        history = tool_span(seed)
        items = [s for _, s in direct_statements(history)][:: 3] + ["The api service listens on port 8080."]
        assert relied.mark_replaced(items, history) == direct(items, history)


def test_change_words_cover_every_alternative_of_the_change_regex() -> None:
    """_says_changed skips the regex for an ASCII statement holding none of _CHANGE_WORDS: each
    alternative of _CHANGE must hold one of them (its optional and repeated parts left out)."""
    body = relied._CHANGE.pattern
    assert body.startswith(r"\b(?:") and body.endswith(r")\b")
    for alternative in body[len(r"\b(?:"):-len(r")\b")].split("|"):
        literal = re.sub(r"\\w\*|.\?", "", alternative)
        assert re.fullmatch(r"[a-z ]+", literal), alternative
        assert any(w in literal for w in relied._CHANGE_WORDS), alternative


def test_says_changed_is_the_change_regex() -> None:
    rnd = random.Random(3)
    words = ["Now", "NO LONGER", "instead", "Changed", "moved", "renamed", "After all", "switching", "replaced",
             "retired", "updates", "anymore", "any more", "snow", "nowhere", "ſwitch", "İnstead", "port", "the", "8080",
             "K", "é", "-", ".", ""]
    for _ in range(4000):
        text = " ".join(rnd.choice(words) for _ in range(rnd.randint(1, 5)))
        assert relied._says_changed(text, text.lower()) == bool(relied._CHANGE.search(text)), text


def direct_index(history: list) -> dict:
    """The index as first built: every row of the direct statements read on its own."""
    rows = direct_statements(history)
    lows = [s.lower() for _, s in rows]
    heads: dict = {}
    short: dict = {}
    for row, low in enumerate(lows):
        prefix = low[:60]
        if len(prefix) < relied._HEAD:
            short.setdefault(prefix, row)
        else:
            heads.setdefault(prefix[:relied._HEAD], {}).setdefault(prefix, row)
    return {"messages": [i for i, _ in rows], "joined": "\0".join(lows),
            "changes": [(i, s, low, d) for (i, s), low in zip(rows, lows)
                        if relied._CHANGE.search(s) and (d := relied._distinct(s))],
            "heads": heads, "short": short}


def test_the_index_holds_the_rows_of_the_direct_definition() -> None:
    """Texts and whole results read once: the index must hold every row, in order, with the first
    row of each prefix, as reading every row on its own gives."""
    for seed in range(8):
        history = tool_span(seed)
        index, want = relied._Index(history), direct_index(history)
        assert index.changes and index.heads and index.short
        for name, value in want.items():
            assert getattr(index, name) == value, name
        offsets = [i for i, c in enumerate(index.joined) if c == "\0"]
        assert index.offsets == [0] + [o + 1 for o in offsets]


def test_results_read_by_an_earlier_index_give_the_rows_of_the_direct_definition(monkeypatch) -> None:
    """Tool results are remembered across indexes (the next compaction's span repeats test runs
    and greps): an index built from remembered results, from none, or with remembering off holds
    what reading every row on its own gives, and so do the marks."""
    monkeypatch.setattr(relied_bodies, "_ROWS", relied_bodies._Kept())
    spans = [tool_span(seed) for seed in range(6)]
    cold = [relied._Index(h) for h in spans]
    assert relied_bodies._ROWS.values  # the spans share whole results (tool_span repeats three of them)
    warm = [relied._Index(h) for h in reversed(spans)][::-1]
    monkeypatch.setattr(relied_bodies, "BODY_CHARS", -1)  # nothing remembered
    relied_bodies._ROWS.values.clear()
    off = [relied._Index(h) for h in spans]
    assert not relied_bodies._ROWS.values
    for history, *indexes in zip(spans, cold, warm, off):
        want = direct_index(history)
        for index in indexes:
            for name, value in want.items():
                assert getattr(index, name) == value, name
    items = [s for _, s in direct_statements(spans[2])][::2] + ["The api service listens on port 8080."]
    assert relied.mark_replaced(items, spans[2]) == direct(items, spans[2])


def test_remembered_results_are_bounded(monkeypatch) -> None:
    monkeypatch.setattr(relied_bodies, "_ROWS", relied_bodies._Kept())
    monkeypatch.setattr(relied_bodies, "BODIES_CHARS", 100)
    for n in range(50):
        relied_bodies.remember_body(f"line {n}\n" * 3, ([], []))
    kept = relied_bodies._ROWS.values
    assert 0 < relied_bodies._ROWS.size == sum(map(len, kept)) <= 100
    assert "line 49\n" * 3 in kept and "line 0\n" * 3 not in kept  # the oldest went first
    assert relied_bodies.remembered_body("line 49\n" * 3) == ([], [])
    relied_bodies.remember_body("x" * (relied_bodies.BODY_CHARS + 1), ([], []))
    assert "x" * (relied_bodies.BODY_CHARS + 1) not in kept


def test_changes_with_finds_every_change_sharing_a_value() -> None:
    """mark_replaced looks only at the changes sharing one of an item's values (then at the latest
    first): the lookup must give exactly the changes the pairwise test would keep, in order."""
    for history in [span(seed)[0] for seed in range(3)] + [tool_span(seed) for seed in range(3)]:
        index = relied._Index(history)
        values = sorted({v for change in index.changes for v in change[3]}) + ["no-such-value"]
        assert len(values) > 3
        for n in range(len(values)):
            wanted = set(values[n:n + 2])
            assert index.changes_with(wanted) == [j for j, c in enumerate(index.changes) if wanted & c[3]]
        assert index.changes_with(set()) == []


def test_a_result_without_change_words_has_no_line_that_says_changed() -> None:
    """The index skips the change regex on the lines of a result that, whitespace-normalised and
    lower-cased, holds no change word: then none of its statements may say something changed."""
    rnd = random.Random(5)
    words = ["No", "LONGER", "no\tlonger", "any", "more", "Now", "kNOWn", "switch", "Replaced", "x.", "Done!", "port",
             "8080", "é", "\u2028", "\x1c", "\r", "\n", "\v", "  ", "\u00a0", "after", "all", "mov", "ed", "the"]
    seen = {True: 0, False: 0}
    for _ in range(5000):
        text = " ".join(rnd.choice(words) for _ in range(rnd.randint(1, 8)))
        may = relied_bodies.may_hold_any(text, relied._CHANGE_WORDS)
        seen[may] += 1
        if not may:
            for line in text.splitlines():
                for s in relied._split_statements(line):
                    assert not relied._says_changed(s, s.lower()), (text, s)
    assert seen[True] > 100 and seen[False] > 100


def test_tool_facts_from_kept_results_are_those_of_reading_every_line(monkeypatch) -> None:
    """tool_facts keeps each result's fact lines for the next summary: with them kept, with none
    kept, and with keeping off, the facts are the same."""
    from pytest_ctxeval.core.messages import ToolResultBlock, ToolUseBlock

    rnd = random.Random(11)
    lines = ["port = 5433", "- NOTE: the api must never call billing directly", "TIMEOUT_S: 30", "plain text here",
             "# Never deploy on Fridays", "* Prefer port 6379 for the queue", "x", "[skipped]", "DB_URL = \"pg://x\""]
    spans = []
    for seed in range(4):
        history: list = []
        for n in range(30):
            call = f"t{seed}_{n}"
            history.append(AssistantMessage(uuid=f"a{seed}{n}", content=[ToolUseBlock(id=call, name="Bash", input={})]))
            body = "\n".join(rnd.choice(lines) for _ in range(rnd.randint(0, 12)))
            history.append(UserMessage(uuid=f"u{seed}{n}", content=[ToolResultBlock(tool_use_id=call, content=body)]))
        spans.append(history)
    monkeypatch.setattr(relied_bodies, "_FACTS", relied_bodies._Kept())
    cold = [relied.tool_facts(h, ["TIMEOUT_S: 30"]) for h in spans]
    assert relied_bodies._FACTS.values
    warm = [relied.tool_facts(h, ["TIMEOUT_S: 30"]) for h in spans]
    monkeypatch.setattr(relied_bodies, "BODY_CHARS", -1)
    relied_bodies._FACTS.values.clear()
    off = [relied.tool_facts(h, ["TIMEOUT_S: 30"]) for h in spans]
    assert cold == warm == off and any(len(f) > 3 for f in cold)


def test_results_without_change_words_read_inline_give_the_rows_of_the_direct_definition(monkeypatch) -> None:
    """A result none of whose lines says a change is read inline (relied_bodies.read_plain_lines):
    the index holds what reading it line by line gives, plain lines, sentences and blanks alike."""
    monkeypatch.setattr(relied_bodies, "_ROWS", relied_bodies._Kept())
    from pytest_ctxeval.core.messages import ToolResultBlock, ToolUseBlock

    plain = ["x = 1", "", "  Done. Next one!  Ok? yes", "\tport 5433\x1cserved", "Why? Because. " * 3, "a  b"]
    history: list = []
    for n in range(20):
        call = f"p{n}"
        history.append(AssistantMessage(uuid=f"pa{n}", content=[ToolUseBlock(id=call, name="Bash", input={})]))
        body = "\n".join(plain[(n + j) % len(plain)] for j in range(n % 5 + 1))
        history.append(UserMessage(uuid=f"pu{n}", content=[ToolResultBlock(tool_use_id=call, content=body)]))
    history += tool_span(2)  # results with change words too, read line by line
    inline = relied._Index(history)
    monkeypatch.setattr(relied, "may_hold_any", lambda text, words: True)  # every result line by line
    monkeypatch.setattr(relied_bodies, "_ROWS", relied_bodies._Kept())
    by_line = relied._Index(history)
    for name, value in direct_index(history).items():
        assert getattr(inline, name) == value == getattr(by_line, name), name


_PIECES = ["no", "No", "LONGER", "longer", " ", "  ", "\t", "\n", "\r\n", "\v", "\f", "\x1c", "\x1f", "\x85", "\u2028",
           "\u00a0", "é", "after", "all", "any", "more", "now", "kNOWn", "switch", "replac", "ed", "x", ".", "8080"]


@settings(deadline=None)  # examples: the profile's (conftest.py: 50 in the suite, 1,000 in .ci/soak)
@given(st.lists(st.sampled_from(_PIECES), max_size=12).map("".join),
       st.sampled_from([relied._CHANGE_WORDS, ("no longer",), ("after all", "any more", "now"), ("",), (" no",),
                        ("no  longer",), ("no\tlonger",), ("x",), ()]))
def test_change_words_are_found_as_in_the_normalised_text(text: str, words: tuple[str, ...]) -> None:
    """may_hold_any (words and phrases looked for in the lower-cased text) answers what looking
    for each word in the whole text, whitespace-normalised and lower-cased, answers."""
    assert relied_bodies.may_hold_any(text, words) == relied_bodies.may_hold_any_normalised(text, words)


def _read_plain_lines_as_written(body: str, at: int, split: dict, first: dict) -> list[str]:
    """relied_bodies.read_plain_lines before its path for results without a second sentence."""
    rows: list[str] = []
    for line in body.splitlines():
        got = split.get(line)
        if got is None:
            flat = " ".join(line.split())
            if not flat:
                lows = []
            elif ". " in flat or "! " in flat or "? " in flat:
                lows = [s.lower() for s in relied._split_statements(line)]
            else:
                lows = [flat.lower()]
            got = split[line] = (lows, [])
            row = at + len(rows)
            for n, low in enumerate(lows):
                first.setdefault(low, row + n)
        rows += got[0]
    return rows


_LINE_PIECES = ["Port", "5433", "x", ".", "!", "?", " ", "  ", "\t", "\x1f", "\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c",
                "\x1d", "\x1e", "\x85", "\u2028", "é", "İ", "Done", "ok", "=", "#"]


@settings(deadline=None)  # examples: the profile's (conftest.py: 50 in the suite, 1,000 in .ci/soak)
@given(st.lists(st.lists(st.sampled_from(_LINE_PIECES), max_size=10).map("".join), min_size=1, max_size=3),
       st.integers(0, 50))
def test_plain_results_give_the_rows_of_reading_them_line_by_line(bodies: list[str], at: int) -> None:
    """Rows, first rows and the statements' cache agree with the loop as written, for results read
    one after another into one index (lines shared between them, first rows already set)."""
    split_a: dict = {}
    first_a: dict = {"port": 0}
    split_b: dict = {}
    first_b: dict = {"port": 0}
    for body in bodies + bodies[:1]:
        rows = relied_bodies.read_plain_lines(body, at, split_a, first_a, relied._split_statements)
        assert rows == _read_plain_lines_as_written(body, at, split_b, first_b)
        assert list(first_a.items()) == list(first_b.items())  # the same rows, in the same order
        for line, got in split_a.items():  # what is cached is what the loop caches
            assert split_b[line] == got
        at += len(rows)
