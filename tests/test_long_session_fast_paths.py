"""The shortcuts the long-session benchmark (``benchmarks/long_session.py``) depends on give exactly
what the code they replaced gives: the same uuids, the same JSON text, the same rendered templates."""

from __future__ import annotations

import json
import uuid

from hypothesis import given, settings, strategies as st

from pytest_ctxeval.core import ids, tokens
from pytest_ctxeval.core.config import EngineConfig
from pytest_ctxeval.core.messages import ToolUseBlock
from pytest_ctxeval.llm import reference
from pytest_ctxeval.reading import session_facts
from pytest_ctxeval.scenario import fillers
from pytest_ctxeval.scenario.expansion import _Expander
from pytest_ctxeval.scenario.schema import Scenario
from pytest_ctxeval.transcript import jsonl

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12)


@given(st.text())
def test_uuid5_is_the_standard_librarys(name: str) -> None:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: both refuse it
        return
    assert ids.uuid5(name) == str(uuid.uuid5(ids._NAMESPACE, name))


def test_id_factory_uuids_are_version_5_of_the_namespace() -> None:
    factory = ids.IdFactory("s")
    got = [factory.uuid() for _ in range(3)]
    assert got == [str(uuid.uuid5(ids._NAMESPACE, f"s:uuid:{n}")) for n in (1, 2, 3)]
    assert all(uuid.UUID(u).version == 5 for u in got)


@given(json_values)
def test_the_shared_encoders_write_what_json_dumps_writes(value: object) -> None:
    expected = json.dumps(value, ensure_ascii=False)
    assert tokens._dumps(value) == expected
    assert jsonl._dumps(value) == expected


def _expander() -> _Expander:
    return _Expander(Scenario.model_validate({"name": "t", "vars": {"mods": ["auth", "billing"]},
                                              "turns": [{"user": "hi"}]}))


@given(st.integers(0, 50), st.sampled_from(["{{ k }}-{{ mods[k % 2] }}", "{{ lorem(3, seed=k) }} {{ k0 }}",
                                            "{% for i in range(k % 3) %}{{ i }}{{ mods[0] }}{% endfor %}"]))
def test_a_template_renders_as_a_fresh_jinja_template_would(k: int, text: str) -> None:
    # The expander renders a compiled template many times with its globals as a dict (not jinja's
    # ChainMap); a template made anew each time, as jinja makes it, renders the same text.
    ex = _expander()
    ctx = {"k": k, "k0": k - 1}
    first = ex.render_str(text, ("turns", 0, "user"), ctx)
    again = ex.render_str(text, ("turns", 0, "user"), ctx)  # the cached template
    fresh = ex.env.from_string(text)
    ex.env.loop_steps = 0
    assert first == again == fresh.render(**ctx)
    assert type(ex.cache[text].globals) is dict and ex.cache[text].globals.keys() == fresh.globals.keys()


@given(st.sampled_from(["Bash", "Grep", "Edit", "Read"]),
       st.sampled_from(["ls src/missing", "make build", "pytest -x", "cat notes.txt", ""]),
       st.sampled_from(["ls: cannot access 'src/missing': No such file or directory", "Exit code 1",
                        "FAILED tests/test_a.py::test_x - AssertionError", "String to replace not found in file",
                        "Sibling tool call errored", "all good", "<html>oops</html>", "make: *** [build] Error 2"]))
def test_a_remembered_error_kind_is_the_one_computed_afresh(tool: str, command: str, text: str) -> None:
    # Remembered per (tool, text, command): the same output means a probe after `ls` and an error
    # after `make build`, whichever was seen first.
    tool_input = {"command": command}
    first = session_facts.error_kind(tool, text, tool_input)
    assert first == session_facts.error_kind(tool, text, tool_input)
    assert first == session_facts._error_kind(tool, text, command if tool == "Bash" else "")


def test_error_kinds_of_one_text_differ_by_command() -> None:
    text = "ls: cannot access 'dist/out': No such file or directory"
    assert session_facts.error_kind("Bash", text, {"command": "ls dist/out"}) == "probe"
    assert session_facts.error_kind("Bash", text, {"command": "make build"}) == "error"
    assert session_facts.error_kind("Bash", text, {"command": "ls dist/out"}) == "probe"
    long = "FAILED test_x\n" + "x" * session_facts._REMEMBERED_CHARS  # not remembered, same answer
    assert session_facts.error_kind("Bash", long, {"command": "pytest"}) == "error"


def _python_file_as_written(lines: int, seed: int | str, name: str) -> str:
    """fillers.python_file before its rest was remembered and its ranges made closures."""
    r = fillers._rng(seed, "py")
    word, randint = fillers._pick(r, fillers._WORDS), r.randint
    out = [f'"""{name}: {fillers.lorem(8, seed)}"""', "", "from __future__ import annotations", "", "import logging", "",
           "log = logging.getLogger(__name__)", ""]
    n = 0
    while len(out) < lines:
        n += 1
        fn = f"{word()}_{word()}_{n}"
        args = ", ".join(sorted({word() for _ in range(randint(1, 3))}))
        out += ["", f"def {fn}({args}):", f'    """{fillers.lorem(randint(4, 10), f"{seed}-{n}")}"""']
        for k in range(randint(2, 8)):
            w = word()
            out.append(f"    {w}_{k} = {word()}.get({randint(0, 999)!r})")
        out.append(f"    return {word()}")
    return "\n".join(out[:lines])


def _log_as_written(lines: int, seed: int | str, error: str | None, error_at: int | None, service: str) -> str:
    r = fillers._rng(seed, "log")
    word, level_of, randint = fillers._pick(r, fillers._WORDS), fillers._pick(r, ("INFO", "INFO", "INFO", "DEBUG", "WARN")), r.randint
    at = (lines // 2 if error_at is None else error_at) if error else -1
    out = []
    for i in range(lines):
        ts = f"2026-01-05T09:{(i // 60) % 60:02d}:{i % 60:02d}.{randint(0, 999):03d}Z"
        if i == at:
            out.append(f"{ts} ERROR [{service}] {error}")
            continue
        level = level_of()
        out.append(f"{ts} {level} [{service}] {word()} {word()} "
                   f"id={randint(1000, 99999)} took={randint(1, 900)}ms")
    return "\n".join(out)


seeds = st.integers(-5, 3000) | st.sampled_from(["s1", "api", "1", True, 1.0])


@given(st.integers(-3, 120), seeds, st.sampled_from(["auth", "api", "billing"]))
def test_python_file_writes_what_it_wrote_before(lines: int, seed: int | str, name: str) -> None:
    # Called twice under two names: the second call takes the remembered rest.
    for n in (name, name + "_2", name):
        assert fillers.python_file(lines=lines, seed=seed, name=n) == _python_file_as_written(lines, seed, n)


def test_python_file_takes_an_unhashable_seed_as_before() -> None:
    assert fillers.python_file(lines=30, seed=[1, 2]) == _python_file_as_written(30, [1, 2], "module")  # type: ignore[arg-type]


@given(st.integers(0, 200), seeds, st.none() | st.just("OOMKilled"), st.none() | st.integers(0, 150))
def test_log_writes_what_it_wrote_before(lines: int, seed: int | str, error: str | None, error_at: int | None) -> None:
    assert fillers.log(lines=lines, seed=seed, error=error, error_at=error_at, service="make") == \
        _log_as_written(lines, seed, error, error_at, "make")


def _file_lines_as_written(carried: list[str], touched: list[tuple[str, str]]) -> list[str]:
    """The reference summary's files section as first written: the list filtered for each path."""
    lines = list(carried)
    known = {l.split(" — ")[0].strip() for l in lines}
    for path, line in touched:
        if path in known:
            lines = [l for l in lines if l.split(" — ")[0].strip() != path]
        lines.append(line)
    return lines


paths = st.sampled_from(["a.py", "b.py", " a.py", "src/c — d.py", "e.md"])
hows = st.sampled_from(["read", "edited", "written\n  changed `x` to `y`", ""])


@given(st.lists(st.builds(lambda p, h: f"{p} — {h}" if h else p, paths, hows), max_size=8),
       st.lists(st.tuples(paths, hows), max_size=8))
def test_the_files_section_replaces_lines_as_before(carried: list[str], touched: list[tuple[str, str]]) -> None:
    pairs = [(p, f"{p} — {h}") for p, h in touched]
    assert reference._file_lines(carried, pairs) == _file_lines_as_written(carried, pairs)


tool_inputs = st.dictionaries(st.text(max_size=6), st.text(max_size=12), max_size=4) | st.dictionaries(
    st.sampled_from(["file_path", "command", "pattern"]),
    st.text(alphabet=st.sampled_from(list('ab /."\\\n\t\x00\x7f\x1fé\u2028')), max_size=10), max_size=3) | json_values


@given(tool_inputs, st.sampled_from([EngineConfig(), EngineConfig(json_bytes_per_token=3)]))
def test_a_tool_input_is_estimated_as_its_json_text(value: object, config: EngineConfig) -> None:
    block = ToolUseBlock(id="toolu_1", name="Bash", input=value) if isinstance(value, dict) else None
    want = tokens.estimate_text(json.dumps(value, ensure_ascii=False), config)
    assert tokens._input_tokens(value, config) == want
    if block is not None:
        name = tokens.estimate_text("Bash", config)
        assert tokens.estimate_block(block, config) == name + want
        assert tokens.estimate_block(block.model_dump(), config) == name + want


def test_a_remembered_block_dump_is_the_models_dump() -> None:
    from pytest_ctxeval.core import block_dumps
    from pytest_ctxeval.core.messages import TextBlock, ToolResultBlock, to_api, UserMessage

    blocks = [TextBlock(text="hi"), ToolUseBlock(id="t1", name="Read", input={"file_path": "a.py"}),
              ToolResultBlock(tool_use_id="t1", content=[TextBlock(text="x")], is_error=False)]
    for b in blocks:
        first, again = block_dumps.block_dict(b), block_dumps.block_dict(b)
        assert first == again == b.model_dump(exclude_none=True) and first is not again
        first["type"] = "changed"  # a caller's own dict: the next one is untouched
        assert block_dumps.block_dict(b) == b.model_dump(exclude_none=True)
    # The transcript dumps a message's blocks first; the request then takes them, is_error dropped.
    message = UserMessage(uuid="u", content=[blocks[2]])
    assert to_api([message]) == [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                                               "content": [{"type": "text", "text": "x"}]}]}]
    assert block_dumps.block_dict(blocks[2])["is_error"] is False


def test_remembered_block_dumps_are_bounded(monkeypatch) -> None:
    from pytest_ctxeval.core import block_dumps
    from pytest_ctxeval.core.messages import ThinkingBlock

    monkeypatch.setattr(block_dumps, "_recent", {})
    monkeypatch.setattr(block_dumps, "RECENT", 5)
    # (text blocks are dumped from their fields, never remembered: a block type that is)
    kept = [ThinkingBlock(thinking=str(n)) for n in range(12)]
    assert [block_dumps.block_dict(b)["thinking"] for b in kept] == [str(n) for n in range(12)]
    assert 0 < len(block_dumps._recent) <= 5


@settings(max_examples=15, deadline=None)
@given(st.integers(3500, 7300), seeds, st.none() | st.just("OOMKilled"), st.none() | st.integers(3590, 3610))
def test_a_long_log_writes_what_it_wrote_before(lines: int, seed: int | str, error: str | None,
                                                error_at: int | None) -> None:
    # past an hour of lines, where the clock's minutes wrap
    assert fillers.log(lines=lines, seed=seed, error=error, error_at=error_at, service="api") == \
        _log_as_written(lines, seed, error, error_at, "api")
