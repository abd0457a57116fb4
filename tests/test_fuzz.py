"""Fuzzing the three input parsers with Hypothesis. The only exceptions that may escape are the
documented CtxEvalError subclasses, and they must name the file (and line or field)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from pytest_ctxeval.errors import CtxEvalError, ScenarioError, TranscriptError
from pytest_ctxeval.grading import CompactionCase, load_graders
from pytest_ctxeval.core.messages import AssistantMessage, TextBlock, ToolResultBlock, ToolUseBlock, UserMessage
from pytest_ctxeval.scenario.expansion import expand
from pytest_ctxeval.scenario.schema import load_scenario
from pytest_ctxeval.reading.summary import SECTION_TITLES, format_compact_summary, parse_summary
from pytest_ctxeval.transcript import read_transcript

from shared_paths import CORPUS

REPO = Path(__file__).resolve().parents[1]
VALID = yaml.safe_load((REPO / "scenarios" / "debug_failing_test.yaml").read_text())
FASTHOOKS = (CORPUS / "oneryalcin__fasthooks__sample_main_transcript.jsonl").read_bytes().splitlines()
REGISTRY = load_graders()
RULES = REGISTRY.select(kinds=["rule"])
FUZZ = settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture], deadline=None)

# --- values that break things ---------------------------------------------------------------------

nasty_text = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["{{ 7*7 }}", "{% for x in range(10**9) %}x{% endfor %}", "{{ ''.__class__.__mro__ }}",
                     "{{ undefined_helper() }}", "{{ 'x' * 10**12 }}", "\x00", "\ud800", "../../etc/passwd",
                     "-1", "1e400", "!!python/object:os.system", "&a", "*a", "null", "~", "[", "{", "\u202e",
                     "99999999999999d", "1e308h", "nan"]),
)
# Keys that mean something where they land (a config override, a turn kind, a tool field), so an
# inserted key reaches validation paths, not only "unknown field".
schema_keys = st.sampled_from(["context_window", "microcompact_profile", "session_memory_enabled", "sm_keep_min_tokens",
                               "tool_result_chars", "user", "assistant", "after", "compact", "repeat", "in_flight",
                               "id", "max_result_chars", "partial", "messages", "at", "meta", "templates"])
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False) | nasty_text,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(nasty_text, children, max_size=4),
    max_leaves=12,
)


def _paths(data, prefix=()):
    yield prefix
    if isinstance(data, dict):
        for k, v in data.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            yield from _paths(v, prefix + (i,))


ALL_PATHS = list(_paths(VALID))


@st.composite
def mutated_scenarios(draw):
    data = json.loads(json.dumps(VALID))
    for _ in range(draw(st.integers(1, 4))):
        path = draw(st.sampled_from(ALL_PATHS[1:]))
        parent = data
        try:
            for key in path[:-1]:
                parent = parent[key]
        except (KeyError, IndexError, TypeError):
            continue
        action = draw(st.sampled_from(["replace", "delete", "insert", "nest"]))
        last = path[-1]
        try:
            if action == "replace":
                parent[last] = draw(json_values)
            elif action == "delete":
                del parent[last]
            elif action == "insert" and isinstance(parent, dict):
                parent[draw(st.one_of(nasty_text, schema_keys))] = draw(json_values)
            elif action == "nest":
                node = parent[last]
                for _ in range(draw(st.integers(1, 60))):
                    node = [node] if draw(st.booleans()) else {"k": node}
                parent[last] = node
        except (KeyError, IndexError, TypeError):
            continue
    return data


def _check_error(exc: CtxEvalError, path: Path) -> None:
    assert isinstance(exc, CtxEvalError)
    message = str(exc)
    assert str(path) in message, f"the error does not name the file: {message}"
    assert "\n" not in message.strip() or message.count("\n") < 3, "not a short message"


@FUZZ
@given(mutated_scenarios())
def test_scenario_loader_survives_mutations(data: object) -> None:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "mutant.yaml"
        try:
            path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8", errors="surrogatepass")
        except (UnicodeEncodeError, yaml.YAMLError, RecursionError):
            return
        try:
            expand(load_scenario(path))
        except ScenarioError as exc:
            _check_error(exc, path)
        except CtxEvalError as exc:  # e.g. a config override error
            _check_error(exc, path)


@FUZZ
@given(st.binary(max_size=300), st.integers(0, 5000))
def test_scenario_loader_survives_byte_splices(junk: bytes, at: int) -> None:
    text = (REPO / "scenarios" / "idle_gap.yaml").read_bytes()
    at = min(at, len(text))
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "spliced.yaml"
        path.write_bytes(text[:at] + junk + text[at:])
        try:
            expand(load_scenario(path))
        except CtxEvalError as exc:
            _check_error(exc, path)


# --- transcripts ------------------------------------------------------------------------------------

line_mutations = st.sampled_from(["truncate", "wrong_type", "deep", "huge", "bad_utf8", "nul", "junk", "drop_key"])


@st.composite
def mutated_transcripts(draw):
    lines = list(FASTHOOKS)
    for _ in range(draw(st.integers(1, 6))):
        i = draw(st.integers(0, len(lines) - 1))
        kind = draw(line_mutations)
        line = lines[i]
        if kind == "truncate":
            lines[i] = line[: draw(st.integers(0, max(0, len(line) - 1)))]
        elif kind == "bad_utf8":
            lines[i] = line[:10] + b"\xff\xfe\xc3" + line[10:]
        elif kind == "nul":
            lines[i] = line.replace(b'"', b'"\x00', 1)
        elif kind == "junk":
            lines[i] = draw(st.binary(max_size=80))
        else:
            try:
                record = json.loads(line)
            except (ValueError, RecursionError):  # an earlier mutation already broke this line
                continue
            if not isinstance(record, dict):  # or replaced it with a scalar
                continue
            keys = sorted(record) or ["type"]
            key = draw(st.sampled_from(keys))
            if kind == "wrong_type":
                record[key] = draw(json_values)
            elif kind == "deep":
                node: object = record.get(key)
                for _ in range(draw(st.integers(100, 3000))):
                    node = [node]
                record[key] = node
            elif kind == "huge":
                record[key] = "x" * draw(st.integers(10_000, 2_000_000))
            elif kind == "drop_key":
                record.pop(key, None)
            try:
                lines[i] = json.dumps(record).encode()
            except (RecursionError, ValueError):
                lines[i] = b"[" * 5000
    return b"\n".join(lines) + b"\n"


@FUZZ
@given(mutated_transcripts())
def test_transcript_reader_survives_mutations(content: bytes) -> None:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "mutant.jsonl"
        path.write_bytes(content)
        try:
            transcript = read_transcript(path)
        except TranscriptError as exc:
            _check_error(exc, path)
            return
        for problem in transcript.problems:
            assert problem.line >= 1 and problem.message
        # and whatever was read can be graded without a grader crashing
        from pytest_ctxeval.grading.registry import cases_from_transcript
        for case in cases_from_transcript(transcript):
            for v in REGISTRY.run(case, RULES):
                assert v.status != "error", v.reasons


# --- summaries ---------------------------------------------------------------------------------------

header = st.builds(lambda n, t, style: style.format(n=n, t=t),
                   st.integers(0, 12), st.sampled_from(list(SECTION_TITLES.values()) + ["Errors", "Next Steps", "??"]),
                   st.sampled_from(["{n}. {t}:", "## {n}. {t}", "**{n}. {t}:**", "{n}) {t}", "{t}:", "# {t}"]))
summary_text = st.lists(st.one_of(header, st.text(max_size=60), st.sampled_from(
    ["<analysis>", "</analysis>", "<summary>", "</summary>", "Analysis:", "Summary:", '- "quote', '"', "[END DATA]"])),
    max_size=40).map("\n".join)


def _case(summary: str) -> CompactionCase:
    history = [UserMessage(uuid="u1", content="Fix src/app.py please"),
               AssistantMessage(uuid="a1", content=[TextBlock(text="ok"), ToolUseBlock(id="t1", name="Edit",
                                input={"file_path": "src/app.py", "old_string": "a", "new_string": "b"})]),
               UserMessage(uuid="r1", content=[ToolResultBlock(tool_use_id="t1", content="boom", is_error=True)])]
    return CompactionCase(source="fuzz", index=1, kind="full", trigger="auto", summary=summary,
                          summary_message=summary, summarized=history, history=history,
                          post_messages=[UserMessage(uuid="s", content=summary or "x", is_compact_summary=True)])


@FUZZ
@given(summary_text)
def test_summary_parser_and_graders_survive_random_text(text: str) -> None:
    format_compact_summary(text)
    parsed = parse_summary(text)
    assert all(s.kind for s in parsed.sections)
    for v in REGISTRY.run(_case(text), RULES):
        assert v.status in ("pass", "fail", "n/a"), (v.grader, v.reasons)
