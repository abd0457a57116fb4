"""Issue 23, Hypothesis fuzz targets for the crash classes: YAML with anchors, aliases, duplicate
keys, tags and deep nesting; results/baseline documents with any value in any field; cassette
files; templates built from the sandbox's operators and filters; and redaction of cut tokens. The
only exceptions that may escape are the documented ones (profile: 50 examples, 200 with CI=1)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import jinja2
from hypothesis import HealthCheck, given, settings, strategies as st

from pytest_ctxeval.cli import main
from pytest_ctxeval.errors import CtxEvalError, ScenarioError
from pytest_ctxeval.core.redact import excerpt, scrub_output
from pytest_ctxeval.scenario.sandbox import BoundedSandbox
from pytest_ctxeval.core.yaml_safe import BadYAML, load_yaml

FUZZ = settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture], deadline=None)

# --- YAML ---------------------------------------------------------------------------------------

_scalars = st.sampled_from(["1", "x", "1e999", ".inf", ".nan", "9999-12-31T23:59:59-23:59", "2026-01-05", "~",
                            "'q'", "!!python/object:os.system x", "!!binary AAAA", "&a 1", "*a", "*b", "<<: *a"])


@st.composite
def yaml_texts(draw: st.DrawFn) -> str:
    """YAML built from lines: mappings with repeated keys, anchors on collections, aliases (also
    to themselves), flow nesting, tags."""
    lines = []
    for _i in range(draw(st.integers(1, 12))):
        key = draw(st.sampled_from(["turns", "vars", "a", "b", "user", "expect", "name"]))
        kind = draw(st.integers(0, 5))
        if kind == 0:
            lines.append(f"{key}: {draw(_scalars)}")
        elif kind == 1:
            anchor = draw(st.sampled_from(["a", "b", "c"]))
            inner = ", ".join(draw(st.lists(st.sampled_from(["x", "*a", "*b", "*c", "1"]), max_size=6)))
            lines.append(f"{key}: &{anchor} [{inner}]")
        elif kind == 2:
            depth = draw(st.integers(1, 140))
            lines.append(f"{key}: " + "[" * depth + "]" * depth)
        elif kind == 3:
            lines.append(f"{key}:\n  - user: {draw(_scalars)}\n    user: twice")
        elif kind == 4:
            lines.append(f"{key}: {{k: *{draw(st.sampled_from(['a', 'b']))}, k2: [*a, *a]}}")
        else:
            lines.append(draw(st.text(max_size=20)))
    return "\n".join(lines) + "\n"


@FUZZ
@given(text=yaml_texts())
def test_yaml_reader_raises_only_bad_yaml(text: str) -> None:
    try:
        load_yaml(text)
    except BadYAML as exc:
        assert exc.message and "\n" not in exc.message


@FUZZ
@given(text=yaml_texts())
def test_scenario_loader_and_lint_raise_only_named_errors(text: str) -> None:
    from pytest_ctxeval.scenario.lint import lint_file
    from pytest_ctxeval.scenario.schema import load_scenario

    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "s.yaml"
        p.write_bytes(text.encode("utf-8", "replace"))
        try:
            load_scenario(p)
        except CtxEvalError as exc:
            assert str(exc).startswith(str(p))
        for problem in lint_file(p):
            assert str(problem).startswith(str(p))


# --- results and baselines ----------------------------------------------------------------------

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**30, 10**30) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20) | st.sampled_from(["pass", "fail", "Pass", "n/a", "ungraded"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=10)

RESULTS = {"format": "pytest-ctxeval/results", "version": 1, "backend": "offline", "model": "m",
           "scenarios": [{"name": "s", "graders": {"g": {"status": "pass", "score": 1.0, "reasons": ["r"]}},
                          "events": [{"tier": "autocompact", "action": "full_compaction"}],
                          "compactions": [{"index": 1, "kind": "full", "summary": "1. Primary Request:\n x",
                                           "pre_tokens": 10, "post_tokens": 5,
                                           "verdicts": [{"grader": "g", "status": "pass", "score": 1.0}],
                                           "lost": {"files": [{"text": "a.py", "message": 1}]}}],
                          "messages": {"1": {"role": "user", "excerpt": "hi"}}}]}


def _paths(value: object, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, prefix + (i,))
    return out


@FUZZ
@given(data=st.data())
def test_report_and_diff_accept_or_name_the_field(data: st.DataObject) -> None:
    doc = json.loads(json.dumps(RESULTS))
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(_paths(doc)[1:]))
        cur = doc
        for key in path[:-1]:
            cur = cur[key]
        cur[path[-1]] = data.draw(_json_values)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "r.json"
        src.write_text(json.dumps(doc))
        for argv in (["report", str(src), "-o", f"{tmp}/o.html", "-o", f"{tmp}/o.md", "-o", f"{tmp}/o.json"],
                     ["diff", str(src), str(src)]):
            assert main(argv) in (0, 1, 2)
        written = Path(tmp) / "o.json"
        if written.exists():  # strict JSON: no NaN/Infinity
            json.loads(written.read_text(), parse_constant=lambda name: (_ for _ in ()).throw(ValueError(name)))


# --- cassettes ------------------------------------------------------------------------------------

@FUZZ
@given(content=st.one_of(st.binary(max_size=60), _json_values.map(json.dumps),
                         st.builds(lambda v: json.dumps({"response": {"status": 200, "json": v}}), _json_values)))
def test_a_cassette_file_is_a_record_or_a_named_error(content: bytes | str) -> None:
    from pytest_ctxeval.llm.cassettes import BadCassette, CassetteStore

    with tempfile.TemporaryDirectory() as tmp:
        store = CassetteStore(tmp)
        key = "ab" + "0" * 62
        p = store.path(key)
        p.parent.mkdir(parents=True)
        p.write_bytes(content if isinstance(content, bytes) else content.encode())
        try:
            record = store.get(key)
        except BadCassette as exc:
            assert str(exc).startswith(str(p))
        else:
            assert isinstance(record["response"]["json"], dict)


# --- templates ------------------------------------------------------------------------------------

_pieces = st.sampled_from([
    "{{ 'ab' * %d }}", "{{ 'x'|center(%d) }}", "{{ 'x'|indent(%d) }}", "{{ '%%%ds' %% 'x' }}", "{{ '{:>%d}'.format(1) }}",
    "{%% for i in range(%d) %%}{%% for j in range(%d) %%}{%% endfor %%}{%% endfor %%}", "{{ lorem(words=%d) }}",
    "{{ (['ab'] * %d)|join }}", "{{ ('a' * %d).replace('a', 'bbbb') }}", "{{ 2 ** %d }}", "{{ log(lines=%d) }}",
])


@FUZZ
@given(piece=_pieces, n=st.one_of(st.integers(0, 2000), st.integers(10**5, 10**12)))
def test_templates_stay_bounded(piece: str, n: int) -> None:
    from pytest_ctxeval.scenario.fillers import FILLERS

    env = BoundedSandbox(undefined=jinja2.StrictUndefined)
    env.globals.update(FILLERS)
    source = piece % ((n,) * piece.count("%d"))
    try:
        out = env.from_string(source).render()
    except (ScenarioError, ValueError, TypeError, OverflowError, jinja2.exceptions.SecurityError):
        return
    assert len(out) <= 64 * 1024 * 1024


# --- redaction of cut tokens ----------------------------------------------------------------------

_secrets = st.sampled_from(["ghp_" + "A1b2C3d4" * 5, "sk-ant-api03-" + "Zx9_" * 8, "AKIAABCDEFGHIJKLMNOP",
                            "xoxb-1234567890-abcdefghij", "glpat-abcdefghij0123456789", "AIza" + "B1" * 17 + "C"])


@FUZZ
@given(secret=_secrets, before=st.text(alphabet=" abc./_", max_size=20), cut=st.integers(8, 60),
       limit=st.integers(1, 80))
def test_no_cut_keeps_eight_characters_of_a_token(secret: str, before: str, cut: int, limit: int) -> None:
    text = f"{before} {secret} tail"
    shown = scrub_output(text[: len(before) + 1 + cut] + "…")
    assert secret[:cut] not in shown or _benign(secret, cut)
    assert secret[:8] not in excerpt(text, limit)


_PREFIX = {"ghp_": 4, "sk-ant-api03-": 13, "AKIA": 4, "xoxb-": 5, "glpat-": 6, "AIza": 4}


def _benign(secret: str, cut: int) -> bool:
    """Fewer than four characters past the fixed prefix (``xoxb-123…``) reveal nothing."""
    prefix = next(n for p, n in _PREFIX.items() if secret.startswith(p))
    return cut < prefix + 4
