"""Tier 1: the tool-result budget (003:30-80, 003:392-470, 004:104-133).

Per-tool thresholds (persist only when ``size > threshold``), the per-message aggregate, frozen
decisions and the prompt-cache stability they buy, exclusive-create files, the 64 MB cap, safe
file names, and the Read tool's own limits.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_ctxeval.core.config import EngineConfig
from pytest_ctxeval.engine.budget import (
    TRUNCATION_MARKER, ContentReplacementState, ToolResultStore, apply_budget, large_result_message,
    read_limit_error, read_line_cap, safe_file_stem,
)
from pytest_ctxeval.engine.pipeline import ToolOutcome
from pytest_ctxeval.core.messages import ImageBlock, TextBlock, ToolResultBlock, UserMessage

from engine_kit import asst, body_results, res, results, use, user

CFG = EngineConfig()  # the 200,000-token window: the seed constants unscaled


class Budget:
    """apply_budget over an evolving message list, with its state and store kept between calls."""

    def __init__(self, tmp_path: Path, config: EngineConfig = CFG):
        self.config = config
        self.session_dir = tmp_path / "session"
        self.state = ContentReplacementState()
        self.store = ToolResultStore(self.session_dir, config)
        self.tools: dict[str, tuple[str, int | None]] = {}
        self.messages: list = [user("u0", "start")]
        self.k = 0

    def add_round(self, *calls: tuple[str, str, str] | tuple[str, str, str, int | None]) -> UserMessage:
        """``(tool_use_id, tool_name, content[, declared])`` per parallel call."""
        self.k += 1
        uses = []
        blocks = []
        for call in calls:
            tid, name, content = call[:3]
            declared = call[3] if len(call) > 3 else None
            self.tools[tid] = (name, declared)
            uses.append(use(tid, name))
            blocks.append(res(tid, content))
        self.messages.append(asst(f"a{self.k}", "calling tools", *uses, mid=f"m{self.k}"))
        msg = results(f"r{self.k}", *blocks)
        self.messages.append(msg)
        return msg

    def run(self):
        return apply_budget(self.messages, config=self.config, state=self.state, store=self.store,
                            tool_name=lambda tid: self.tools.get(tid, ("", None)))

    def path(self, tid: str) -> Path:
        return self.session_dir / "tool-results" / f"{tid}.txt"


def view_results(view) -> dict[str, ToolResultBlock]:
    return {b.tool_use_id: b for m in view if isinstance(m, UserMessage) and not isinstance(m.content, str)
            for b in m.content if isinstance(b, ToolResultBlock)}


def persisted(content) -> bool:
    return isinstance(content, str) and content.startswith("<persisted-output>\n")


# --- level 1: per-tool thresholds ----------------------------------------------------------------

@pytest.mark.parametrize("tool,threshold", [
    ("Bash", 30_000), ("PowerShell", 30_000), ("Grep", 20_000), ("McpAuth", 10_000),
    ("Glob", 50_000), ("WebFetch", 50_000),  # no entry, no declared limit: the 50,000 default
])
@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_per_tool_threshold_persists_only_above(tmp_path, tool, threshold, delta):
    b = Budget(tmp_path)
    content = "x" * (threshold + delta)
    b.add_round(("toolu_a", tool, content))
    view, decisions = b.run()
    block = view_results(view)["toolu_a"]
    if delta > 0:
        assert persisted(block.content)
        assert [(d.tool_use_id, d.reason, d.size) for d in decisions] == [("toolu_a", "tool_threshold", threshold + 1)]
        assert b.path("toolu_a").read_text() == content
    else:
        assert block.content == content
        assert decisions == []
        assert not (b.session_dir / "tool-results").exists()


def test_thresholds_at_the_reference_window_are_the_seed_values():
    assert [CFG.max_result_chars(t) for t in ("Bash", "PowerShell", "Grep", "McpAuth", "Glob", "Read")] == [
        30_000, 30_000, 20_000, 10_000, 50_000, float("inf")]


def test_thresholds_scale_with_the_window_and_overrides_do_not():
    small = EngineConfig.for_window(20_000)
    assert [small.max_result_chars(t) for t in ("Bash", "Grep", "McpAuth", "Glob")] == [3_000, 2_000, 1_000, 5_000]
    assert (small.per_message_result_chars, small.preview_chars) == (20_000, 200)
    assert EngineConfig.for_window(20_000, preview_chars=2_000).preview_chars == 2_000


@pytest.mark.parametrize("declared,size,expected", [
    (1_000, 1_000, False), (1_000, 1_001, True),          # a lower declared limit wins over 50,000
    (80_000, 50_001, False), (80_000, 80_000, False), (80_000, 80_001, True),  # and a higher one too
])
def test_declared_limit_overrides_the_default(tmp_path, declared, size, expected):
    b = Budget(tmp_path)
    b.add_round(("toolu_d", "CustomTool", "y" * size, declared))
    view, decisions = b.run()
    assert persisted(view_results(view)["toolu_d"].content) is expected
    assert len(decisions) == int(expected)


def test_declared_limit_through_tool_outcome(session):
    s = session()
    s.say("run the custom tool")
    small, big = s.tool("CustomTool", "c" * 1_000, declared=1_000), s.tool("CustomTool", "c" * 1_001, declared=1_000)
    s.step("two calls", [small, big])
    assert s.cm.tool_name(big[0].id) == ("CustomTool", 1_000)
    body = s.prepare().body
    got = body_results(body)
    assert got[small[0].id] == "c" * 1_000
    assert persisted(got[big[0].id])
    [event] = s.events("budget", "persisted")
    assert event.ids == [big[0].id] and "tool_threshold: 1,001 chars" in event.detail


def test_read_is_never_persisted(tmp_path):
    b = Budget(tmp_path)
    content = "r" * 150_000  # over every threshold and most of the message aggregate
    b.add_round(("toolu_r", "Read", content))
    view, decisions = b.run()
    assert view_results(view)["toolu_r"].content == content
    assert decisions == []


def test_read_is_not_a_candidate_for_the_message_aggregate(tmp_path):
    b = Budget(tmp_path)
    b.add_round(("toolu_r", "Read", "r" * 150_000), ("toolu_g1", "Glob", "g" * 40_000),
                ("toolu_g2", "Glob", "h" * 30_000))  # 220,000: the Read is largest but exempt
    view, decisions = b.run()
    got = view_results(view)
    assert got["toolu_r"].content == "r" * 150_000
    assert [d.tool_use_id for d in decisions] == ["toolu_g1"]
    assert got["toolu_g2"].content == "h" * 30_000


# --- the file and the replacement message -------------------------------------------------------

def test_file_goes_to_session_tool_results_named_by_id(tmp_path):
    b = Budget(tmp_path)
    content = "".join(f"line {i}\n" for i in range(5_000))  # 43,890 chars > Bash's 30,000
    b.add_round(("toolu_01ABC", "Bash", content))
    _, [decision] = b.run()
    assert decision.path == tmp_path / "session" / "tool-results" / "toolu_01ABC.txt"
    assert decision.path.read_text(encoding="utf-8") == content


def test_replacement_message_has_size_path_and_2000_char_preview(tmp_path):
    b = Budget(tmp_path)
    content = "A" * 2_000 + "B" * 28_001  # 30,001 chars
    b.add_round(("toolu_p", "Bash", content))
    view, _ = b.run()
    text = view_results(view)["toolu_p"].content
    path = b.path("toolu_p")
    assert text == ("<persisted-output>\n"
                    f"Output too large (29KB). Full output saved to: {path}\n"
                    "Preview (first 2000 chars):\n" + "A" * 2_000 + "\n"
                    "[Use the Read tool to see the full output]\n"
                    "</persisted-output>")
    assert "BB" not in text


def test_preview_of_a_short_output_is_the_whole_output(tmp_path):
    cfg = EngineConfig(tool_result_chars={"Bash": 10})
    b = Budget(tmp_path, cfg)
    b.add_round(("toolu_s", "Bash", "0123456789X"))
    view, _ = b.run()
    text = view_results(view)["toolu_s"].content
    assert "Output too large (11 chars)" in text
    assert "Preview (first 11 chars):\n0123456789X\n" in text


def test_exclusive_create_keeps_an_existing_file_and_previews_the_new_content(tmp_path):
    b = Budget(tmp_path)
    path = b.path("toolu_x")
    path.parent.mkdir(parents=True)
    path.write_text("OLD CONTENT FROM AN EARLIER RUN")
    content = "N" * 30_001
    b.add_round(("toolu_x", "Bash", content))
    view, [decision] = b.run()
    assert path.read_text() == "OLD CONTENT FROM AN EARLIER RUN"  # not rewritten
    text = view_results(view)["toolu_x"].content
    assert "Preview (first 2000 chars):\n" + "N" * 2_000 + "\n" in text
    assert "OLD CONTENT" not in text
    again = b.store.persist("toolu_x", content)
    assert again.created is False and again.preview == "N" * 2_000 and again.size == 30_001


def test_store_persist_reports_created_for_a_new_file(tmp_path):
    store = ToolResultStore(tmp_path, CFG)
    first = store.persist("toolu_new", "abc")
    assert (first.created, first.truncated, first.size, first.preview) == (True, False, 3, "abc")


# --- the 64 MB cap -------------------------------------------------------------------------------

def test_disk_cap_is_64_mib_and_does_not_scale():
    assert CFG.persisted_max_bytes == 64 * 1024 * 1024
    assert EngineConfig.for_window(20_000).persisted_max_bytes == 64 * 1024 * 1024


@pytest.mark.parametrize("size,truncated", [(999, False), (1_000, False), (1_001, True)])
def test_cap_boundary(tmp_path, size, truncated):
    store = ToolResultStore(tmp_path, EngineConfig(persisted_max_bytes=1_000))
    saved = store.persist("toolu_cap", "z" * size)
    data = saved.path.read_bytes()
    assert saved.truncated is truncated
    if truncated:
        assert len(data) == 1_000
        kept = data.count(b"z")
        assert data.endswith(TRUNCATION_MARKER.format(limit=1_000, dropped=size - kept).encode())
    else:
        assert data == b"z" * size


def test_cap_truncates_a_persisted_result_with_a_visible_marker(tmp_path):
    cfg = EngineConfig(persisted_max_bytes=5_000)
    b = Budget(tmp_path, cfg)
    content = "q" * 40_000
    b.add_round(("toolu_big", "Bash", content))
    view, [decision] = b.run()
    data = b.path("toolu_big").read_text()
    assert len(data) == 5_000
    assert "[ctxeval: output truncated at 5000 bytes;" in data
    assert data.startswith("q" * 4_000)
    # the model's preview and size still describe the whole output
    assert decision.size == 40_000
    assert "Output too large (39KB)" in view_results(view)["toolu_big"].content


def test_cap_marker_counts_the_bytes_really_dropped(tmp_path):
    store = ToolResultStore(tmp_path, EngineConfig(persisted_max_bytes=1_000))
    saved = store.persist("toolu_m", "z" * 1_500)
    data = saved.path.read_text()
    kept = data.count("z")
    assert f"; {1_500 - kept} bytes not kept]" in data


# --- level 2: the per-message aggregate ------------------------------------------------------

def sizes_round(b: Budget, sizes: list[int], tool: str = "Glob") -> list[str]:
    ids = [f"toolu_{i}" for i in range(len(sizes))]
    b.add_round(*[(tid, tool, chr(ord("a") + i) * n) for i, (tid, n) in enumerate(zip(ids, sizes))])
    return ids


def total_chars(view, ids) -> int:
    got = view_results(view)
    return sum(len(got[i].content) for i in ids)


@pytest.mark.parametrize("sizes,expected", [
    ([40_000] * 5, []),                                   # exactly 200,000: fits
    ([40_000] * 4 + [40_001], ["toolu_4"]),              # 200,001: the largest goes
    ([39_999] * 5, []),
])
def test_message_aggregate_boundary(tmp_path, sizes, expected):
    b = Budget(tmp_path)
    ids = sizes_round(b, sizes)
    view, decisions = b.run()
    assert [d.tool_use_id for d in decisions] == expected
    assert all(d.reason == "message_budget" for d in decisions)
    assert total_chars(view, ids) <= 200_000


def test_message_aggregate_persists_largest_first_until_it_fits(tmp_path):
    b = Budget(tmp_path)
    ids = sizes_round(b, [49_000, 30_000, 49_500, 45_000, 44_000, 40_000])  # 257,500
    view, decisions = b.run()
    assert [d.tool_use_id for d in decisions] == ["toolu_2", "toolu_0"]
    assert total_chars(view, ids) <= 200_000
    for tid in ("toolu_1", "toolu_3", "toolu_4", "toolu_5"):
        assert not persisted(view_results(view)[tid].content)


def test_message_aggregate_ties_go_newest_first(tmp_path):
    b = Budget(tmp_path)
    sizes_round(b, [45_000, 48_000, 48_000, 30_000, 40_000])  # 211,000; two 48,000s
    _, decisions = b.run()
    assert [d.tool_use_id for d in decisions] == ["toolu_2"]


def test_message_aggregate_persists_no_more_than_needed(tmp_path):
    b = Budget(tmp_path)
    ids = sizes_round(b, [40_000] * 10)  # 400,000, all equal: newest first
    view, decisions = b.run()
    chosen = [d.tool_use_id for d in decisions]
    assert chosen == ids[::-1][:len(chosen)]
    assert total_chars(view, ids) <= 200_000
    # one fewer would not have fitted
    replacement = len(view_results(view)[chosen[-1]].content)
    assert total_chars(view, ids) - replacement + 40_000 > 200_000


def test_message_aggregate_is_per_message(tmp_path):
    b = Budget(tmp_path)
    b.add_round(*[(f"toolu_a{i}", "Glob", "a" * 40_000) for i in range(4)])  # 160,000
    b.add_round(*[(f"toolu_b{i}", "Glob", "b" * 40_000) for i in range(4)])  # 160,000
    _, decisions = b.run()
    assert decisions == []


def test_level_one_replacements_count_at_their_new_size_in_the_aggregate(tmp_path):
    b = Budget(tmp_path)
    # 120,000 of Bash output is persisted by its threshold; what is left (~2,2k + 150,000) fits.
    b.add_round(("toolu_bash", "Bash", "b" * 120_000), ("toolu_g1", "Glob", "g" * 50_000),
                ("toolu_g2", "Glob", "h" * 50_000), ("toolu_g3", "Glob", "i" * 50_000))
    _, decisions = b.run()
    assert [(d.tool_use_id, d.reason) for d in decisions] == [("toolu_bash", "tool_threshold")]


def test_results_with_images_are_not_persisted(tmp_path):
    b = Budget(tmp_path)
    img = ImageBlock(source={"type": "base64", "media_type": "image/png", "data": "AAAA"})
    b.add_round(("toolu_t", "Bash", "t"))
    b.messages[-1] = results("r1", res("toolu_t", [TextBlock(text="x" * 40_000), img]))
    view, decisions = b.run()
    assert decisions == []
    assert view_results(view)["toolu_t"].content[1] == img


# --- frozen decisions ----------------------------------------------------------------------------

def test_replaced_when_first_seen_is_re_replaced_byte_identically(tmp_path):
    b = Budget(tmp_path)
    b.add_round(("toolu_big", "Bash", "o" * 35_000))
    view1, d1 = b.run()
    first = view_results(view1)["toolu_big"].content
    b.path("toolu_big").unlink()  # re-application is a map lookup: no I/O, cannot fail
    b.add_round(("toolu_next", "Bash", "small"))
    view2, d2 = b.run()
    view3, d3 = b.run()
    assert len(d1) == 1 and d2 == [] and d3 == []
    assert view_results(view2)["toolu_big"].content == first
    assert view_results(view3)["toolu_big"].content == first
    assert not b.path("toolu_big").exists()


def test_not_replaced_when_first_seen_is_never_replaced_later(tmp_path):
    b = Budget(tmp_path)
    msg = b.add_round(("toolu_old", "BigTool", "o" * 150_000, 10**6))
    view1, d1 = b.run()
    assert d1 == [] and view_results(view1)["toolu_old"].content == "o" * 150_000
    # The same message later holds another result: 250,000 in all. Only the unseen one is a candidate,
    # although the old one is larger.
    b.tools["toolu_new"] = ("BigTool", 10**6)
    grown = msg.model_copy(update={"content": [*msg.content, res("toolu_new", "n" * 100_000)]})
    b.messages[-1] = grown
    b.messages[-2] = b.messages[-2].model_copy(update={"content": [*b.messages[-2].content, use("toolu_new", "BigTool")]})
    view2, d2 = b.run()
    assert [(d.tool_use_id, d.reason) for d in d2] == [("toolu_new", "message_budget")]
    assert view_results(view2)["toolu_old"].content == "o" * 150_000


def test_seen_results_are_not_candidates_even_when_over_threshold_later(tmp_path):
    # A result first judged under a higher threshold stays as it was when the config changes.
    b = Budget(tmp_path, EngineConfig(tool_result_chars={"Bash": 50_000}))
    b.add_round(("toolu_s", "Bash", "s" * 40_000))
    _, d1 = b.run()
    b.config = CFG  # Bash back to 30,000
    view, d2 = b.run()
    assert d1 == [] and d2 == []
    assert view_results(view)["toolu_s"].content == "s" * 40_000
    assert b.state.seen_ids == {"toolu_s"}


def test_prompt_cache_prefix_is_byte_stable_across_rounds(session):
    """Each request's messages serialise byte-identically as the prefix of the next request."""
    s = session(EngineConfig())
    s.say("investigate the failing build")
    for k in range(8):
        calls = [s.tool("Bash", f"out {k} " + "b" * (35_000 if k % 3 == 0 else 500), command=f"make {k}")]
        if k == 4:  # parallel calls over the message aggregate
            calls = [s.tool("Glob", chr(97 + i) * 45_000, pattern=f"*{i}") for i in range(5)]
        if k == 6:
            calls.append(s.tool("Grep", "g" * 20_001, pattern="TODO"))
        s.step(f"round {k}", calls)
    s.prepare()
    assert not s.cm.compactions
    assert s.events("budget", "persisted")  # the budget acted along the way
    bodies = [p.body["messages"] for p in s.prepared]
    for earlier, later in zip(bodies, bodies[1:]):
        assert len(later) > len(earlier)
        for i, message in enumerate(earlier):
            assert json.dumps(message) == json.dumps(later[i]), f"message {i} changed"
    # and the originals are still in the engine's context
    originals = [b for m in s.cm.messages if isinstance(m, UserMessage) and isinstance(m.content, list)
                 for b in m.content if isinstance(b, ToolResultBlock)]
    assert any(isinstance(b.content, str) and len(b.content) >= 35_000 for b in originals)


def test_prompt_cache_prefix_check_can_fail(session):
    """Control: with the frozen state dropped between requests the prefix changes (a stricter Bash
    threshold now replaces a result the earlier request showed in full)."""
    s = session(EngineConfig(tool_result_chars={"Bash": 50_000}))
    s.say("go")
    s.step("r1", [s.tool("Bash", "b" * 40_000, command="make")])
    first = s.prepare().body["messages"]
    s.cm.replacements = ContentReplacementState()
    s.cm.config = s.cm.store.config = EngineConfig()
    second = s.prepare().body["messages"]
    assert json.dumps(first[2]) != json.dumps(second[2])


# --- safe file names --------------------------------------------------------------------------

UNSAFE = ["../../etc/passwd", "/abs", "a\x00b", "..\\win", "..", "", "a" * 129, "toolu.01", "a/b", "C:\\x"]


@pytest.mark.parametrize("tid", UNSAFE)
def test_unsafe_ids_are_hashed(tid):
    stem = safe_file_stem(tid)
    assert stem.startswith("unsafe-") and len(stem) == len("unsafe-") + 32
    assert set(stem[7:]) <= set("0123456789abcdef")


@pytest.mark.parametrize("tid", ["toolu_01ABC", "call-1", "a" * 128, "X"])
def test_safe_ids_are_kept(tid):
    assert safe_file_stem(tid) == tid


def test_unsafe_ids_are_distinct():
    assert len({safe_file_stem(t) for t in UNSAFE}) == len(UNSAFE)


@pytest.mark.parametrize("tid", UNSAFE[:4])
def test_unsafe_ids_never_write_outside_tool_results(tmp_path, tid):
    b = Budget(tmp_path / "deep" / "er")
    b.add_round((tid, "Bash", "p" * 30_001))
    _, [decision] = b.run()
    root = (b.session_dir / "tool-results").resolve()
    assert decision.path.resolve().parent == root
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert files == [decision.path]
    assert decision.path.read_text() == "p" * 30_001


# --- the Read tool's own limits ---------------------------------------------------------------

READ_BYTES = EngineConfig(read_max_tokens=10**9)   # isolate the byte limit


@pytest.mark.parametrize("size,error", [(262_143, False), (262_144, False), (262_145, True)])
def test_read_limit_bytes_boundary(size, error):
    out = read_limit_error("a" * size, READ_BYTES)
    assert (out is not None) is error
    if error:
        assert out.startswith("File content (256KB) exceeds maximum allowed size (256KB).")


def test_read_limit_counts_utf8_bytes_not_chars():
    text = "é" * 131_073  # 262,146 bytes in 131,073 characters
    assert read_limit_error(text, READ_BYTES) is not None
    assert read_limit_error("é" * 131_072, READ_BYTES) is None


@pytest.mark.parametrize("size,tokens,error", [
    (99_998, 25_000, False),   # 24,999.5 rounds half up to 25,000: at the limit
    (100_000, 25_000, False),
    (100_001, 25_000, False),  # 25,000.25 -> 25,000
    (100_002, 25_001, True),   # 25,000.5 -> 25,001: one above
])
def test_read_limit_tokens_boundary(size, tokens, error):
    out = read_limit_error("a" * size, CFG)
    assert (out is not None) is error
    if error:
        assert out.startswith(f"File content ({tokens} tokens) exceeds maximum allowed tokens (25000).")


@pytest.mark.parametrize("lines,capped", [(1_999, False), (2_000, False), (2_001, True)])
def test_read_line_cap_boundary(lines, capped):
    content = "\n".join(f"{i}\tline" for i in range(1, lines + 1))
    out = read_line_cap(content, CFG)
    if capped:
        assert out == "\n".join(f"{i}\tline" for i in range(1, 2_001)) + (
            f"\n[Showing lines 1-2000 of {lines}. Use offset and limit to read the rest.]")
    else:
        assert out == content


def test_read_line_cap_file_ending_in_newline():
    content = "".join(f"{i}\tline\n" for i in range(1, 2_001))  # exactly 2,000 lines
    assert read_line_cap(content, CFG) == content


def test_read_limits_through_tool_results(session):
    s = session(EngineConfig())
    s.say("read the files")
    huge = s.tool("Read", "a" * 100_002, file_path="/big.txt")
    long = s.tool("Read", "\n".join(["l"] * 2_001), file_path="/long.txt")
    ok = s.tool("Read", "fine", file_path="/ok.txt")
    prepared = s.prepare()
    s.reply("reading", [huge[0], long[0], ok[0]], prepared=prepared)
    blocks = s.cm.tool_results([ToolOutcome(u, c) for u, c, _, _ in (huge, long, ok)])
    assert blocks[0].is_error and blocks[0].content.startswith("File content (25001 tokens) exceeds")
    assert not blocks[1].is_error and blocks[1].content.endswith("[Showing lines 1-2000 of 2001. Use offset and limit to read the rest.]")
    assert blocks[2].content == "fine" and not blocks[2].is_error
    [event] = s.events("budget", "read_limit")
    assert event.ids == [huge[0].id] and event.detail == blocks[0].content


def test_large_result_message_sizes():
    from pytest_ctxeval.engine.budget import PersistedResult
    msg = large_result_message(PersistedResult("t", Path("/x/t.txt"), 3 * 1024 * 1024 + 1, "p", True, False))
    assert "Output too large (3.0MB). Full output saved to: /x/t.txt\n" in msg
