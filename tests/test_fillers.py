"""The filler helpers: deterministic (the same arguments give the same bytes, in this process and
in a fresh one), realistic in shape, and usable from a scenario template."""

from __future__ import annotations

import base64
import json
import struct
import subprocess
import sys
import zlib

import pytest

from pytest_ctxeval.scenario import fillers
from pytest_ctxeval.scenario.fillers import (
    FILLERS, api_response, go_file, javascript_file, pdf, png, python_file, sql_file, stack_trace,
    typescript_file,
)

CALLS = {
    "lorem": dict(words=30),
    "python_file": dict(lines=40),
    "typescript_file": dict(lines=40),
    "go_file": dict(lines=40),
    "javascript_file": dict(lines=40),
    "sql_file": dict(lines=30),
    "log": dict(lines=30, error="boom", error_at=7),
    "grep_hits": dict(n=10, pattern="TODO"),
    "test_output": dict(passed=5, failed=["tests/test_a.py::test_b"]),
    "json_response": dict(items=3),
    "api_response": dict(resource="orders", items=3),
    "stack_trace": dict(exc="KeyError: 'x'", depth=3),
    "png": dict(width=8, height=4),
    "pdf": dict(pages=2),
}


def test_every_filler_is_covered_here() -> None:
    assert set(FILLERS) - {"todo_status"} == set(CALLS)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_the_same_seed_gives_the_same_bytes(name: str) -> None:
    fn = FILLERS[name]
    a, b = fn(seed="s1", **CALLS[name]), fn(seed="s1", **CALLS[name])
    assert a == b and isinstance(a, str) and a
    assert fn(seed="s2", **CALLS[name]) != a, "another seed gives other content"


def test_the_same_bytes_in_a_fresh_interpreter() -> None:
    """No dependence on hash randomisation or process state."""
    # The module is loaded by path: it needs only the standard library (and the package's import
    # of the SDK would dominate the test's time).
    code = ("import hashlib, json, importlib.util as u; s = u.spec_from_file_location('f', %r); m = u.module_from_spec(s); "
            "s.loader.exec_module(m); calls = json.loads(%r); "
            "print(json.dumps({n: hashlib.sha256(m.FILLERS[n](seed='s1', **kw).encode()).hexdigest() "
            "for n, kw in sorted(calls.items())}))") % (fillers.__file__, json.dumps(CALLS))
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={"PYTHONHASHSEED": seed, "PATH": ""}).stdout for seed in ("1", "2")]
    assert runs[0] == runs[1]
    import hashlib
    here = {n: hashlib.sha256(FILLERS[n](seed="s1", **kw).encode()).hexdigest() for n, kw in sorted(CALLS.items())}
    assert json.loads(runs[0]) == here


@pytest.mark.parametrize("fn", [python_file, typescript_file, go_file, javascript_file, sql_file])
@pytest.mark.parametrize("lines", [1, 17, 250])
def test_source_files_have_exactly_the_lines_asked_for(fn, lines: int) -> None:
    assert len(fn(lines=lines, seed=3).split("\n")) == lines


def test_source_files_look_like_their_language() -> None:
    go = go_file(lines=30, seed=1, name="billing")
    assert go.splitlines()[1] == "package billing" and "func " in go and "ctx context.Context" in go
    js = javascript_file(lines=30, seed=1)
    assert "import express from 'express';" in js and "router." in js
    sql = sql_file(lines=30, seed=1, table="invoices")
    assert "CREATE TABLE IF NOT EXISTS invoices (" in sql and sql.rstrip().endswith("COMMIT;")


def test_api_response_is_an_http_response_with_a_json_body() -> None:
    text = api_response("orders", items=2, seed=1)
    head, body = text.split("\n\n", 1)
    assert head.splitlines()[0] == "HTTP/1.1 200 OK"
    data = json.loads(body)
    assert len(data["data"]) == 2 and data["data"][0]["type"] == "order" and "next" in data["links"]
    error = api_response("orders", seed=1, status=403, error="token lacks scope orders:write")
    head, body = error.split("\n\n", 1)
    assert head.startswith("HTTP/1.1 403 Forbidden")
    assert json.loads(body)["error"] == {"type": "forbidden", "status": 403, "message": "token lacks scope orders:write",
                                         "request_id": json.loads(body)["error"]["request_id"]}


@pytest.mark.parametrize(("lang", "first", "last"), [
    ("python", "Traceback (most recent call last):", "ValueError: bad"),
    ("java", 'Exception in thread "main" ValueError: bad', None),
    ("go", "panic: ValueError: bad", "exit status 2"),
    ("node", "ValueError: bad", "    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)"),
    ("rust", None, "note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace."),
])
def test_stack_traces_in_several_languages(lang: str, first: str | None, last: str | None) -> None:
    lines = stack_trace("ValueError: bad", depth=4, seed=2, lang=lang).splitlines()
    if first:
        assert lines[0] == first
    if last:
        assert lines[-1] == last
    assert "ValueError: bad" in "\n".join(lines)


def test_python_traces_keep_their_old_bytes() -> None:
    """Scenarios written before the lang parameter render exactly as before."""
    assert stack_trace("KeyError: 'x'", depth=2, seed=1) == stack_trace("KeyError: 'x'", depth=2, seed=1, lang="python")
    assert stack_trace("KeyError: 'x'", depth=1, seed=0).splitlines()[0] == "Traceback (most recent call last):"


def test_an_unknown_trace_language_is_refused() -> None:
    with pytest.raises(ValueError, match="lang must be one of python, java, go, node, rust"):
        stack_trace(lang="cobol")


def _png_chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    out, i = [], 8
    while i < len(data):
        (n,) = struct.unpack(">I", data[i:i + 4])
        kind, body = data[i + 4:i + 8], data[i + 8:i + 8 + n]
        (crc,) = struct.unpack(">I", data[i + 8 + n:i + 12 + n])
        assert zlib.crc32(kind + body) & 0xFFFFFFFF == crc
        out.append((kind, body))
        i += 12 + n
    return out


def test_png_is_a_valid_image_of_the_size_asked_for() -> None:
    chunks = _png_chunks(base64.b64decode(png(seed="shot", width=12, height=5)))
    assert [k for k, _ in chunks] == [b"IHDR", b"IDAT", b"IEND"]
    width, height, depth, colour = struct.unpack(">IIBB", chunks[0][1][:10])
    assert (width, height, depth, colour) == (12, 5, 8, 2)
    assert len(zlib.decompress(chunks[1][1])) == (12 * 3 + 1) * 5
    with pytest.raises(ValueError):
        png(width=0)


def test_pdf_is_a_valid_document_with_its_text() -> None:
    data = base64.b64decode(pdf(seed="spec", text="Popups are rejected (PSP-4012)", pages=3))
    assert data.startswith(b"%PDF-1.4\n") and data.rstrip().endswith(b"%%EOF")
    assert data.count(b"/Type /Page ") == 3
    assert b"(Popups are rejected \\(PSP-4012\\)) Tj" in data
    xref = int(data.rsplit(b"startxref\n", 1)[1].split(b"\n")[0])
    assert data[xref:].startswith(b"xref\n")


def test_media_fillers_render_inside_image_and_document_blocks(tmp_path) -> None:
    from pytest_ctxeval.scenario.expansion import expand
    from pytest_ctxeval.scenario.schema import load_scenario

    path = tmp_path / "m.yaml"
    path.write_text(
        "turns:\n  - user:\n      - {type: text, text: 'see {{ 1 + 1 }}'}\n"
        "      - type: image\n        source: {type: base64, media_type: image/png, data: \"{{ png(seed=1) }}\"}\n"
        "      - type: document\n        source: {type: base64, media_type: application/pdf, data: \"{{ pdf(seed=1) }}\"}\n")
    (step,) = expand(load_scenario(path)).steps
    text, image, document = step.content
    assert text.text == "see 2"
    assert image.source["data"] == png(seed=1) and document.source["data"] == pdf(seed=1)


def test_the_module_lists_what_it_exports() -> None:
    assert set(fillers.__all__) >= set(FILLERS) | {"FILLERS"}


@pytest.mark.parametrize("seed", ["py:0", "log:7", "grep:auth-3", "json:41"])
def test_the_fast_random_draws_what_random_random_draws(seed: str) -> None:
    """Filler bytes must not depend on the faster ``choice``/``randint``: over thousands of mixed
    draws (sequence lengths and ranges that are and are not powers of two, so rejection happens),
    both generators give the same values and end in the same state."""
    fast, std = fillers._Random(seed), __import__("random").Random(seed)
    words = tuple("abcdefghijklmnopq")
    for i in range(5_000):
        n = 1 + i % 37
        assert fast.choice(words[: 1 + i % 17]) == std.choice(words[: 1 + i % 17])
        assert fast.randint(i % 5, i % 5 + n) == std.randint(i % 5, i % 5 + n)
        assert fast.randint(1000, 99999) == std.randint(1000, 99999)
    assert fast.getstate() == std.getstate()
    with pytest.raises(IndexError):
        fast.choice(())
    with pytest.raises(ValueError, match="empty range"):
        fast.randint(3, 2)
    with pytest.raises(TypeError):
        fast.randint(1.5, 3)


def test_fillers_remember_small_results_but_not_large_or_unhashable_ones() -> None:
    """Templates call a filler with the same arguments many times: the same string comes back
    (not recomputed); a large result or a call with a list argument is computed each time, with
    the same bytes."""
    grep = FILLERS["grep_hits"]
    assert grep(n=5, seed="memo") is grep(n=5, seed="memo")
    assert grep(n=5, seed="memo") == fillers.grep_hits(n=5, seed="memo")
    big = FILLERS["log"](lines=2_000, seed="memo")
    assert len(big) > fillers._MEMO_CHARS
    assert FILLERS["log"](lines=2_000, seed="memo") is not big and FILLERS["log"](lines=2_000, seed="memo") == big
    failed = ["tests/test_a.py::test_b"]
    assert FILLERS["test_output"](failed=failed) == fillers.test_output(failed=failed)
    with pytest.raises(TypeError, match="unexpected keyword"):
        grep(n=5, colour="red")


def test_remembered_results_do_not_mix_equal_arguments_of_other_types() -> None:
    """``1``, ``1.0`` and ``True`` are equal dict keys but seed differently: each gets its own
    bytes, whatever was called first, and a float word count still fails as it would uncached."""
    lorem = FILLERS["lorem"]
    for seed in (1, 1.0, True):
        assert lorem(words=5, seed=seed) == fillers.lorem(words=5, seed=seed)
    assert lorem(words=5, seed=1) != lorem(words=5, seed=1.0)
    lorem(words=3, seed=0)
    with pytest.raises(TypeError):
        lorem(words=3.0, seed=0)
