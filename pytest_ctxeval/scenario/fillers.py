"""Deterministic filler content for scenario templates.

Scenario scripts stay short while sessions get long: a tool result can be
``{{ python_file(lines=400, seed=3) }}`` or ``{{ log(lines=3000, error="OOMKilled", error_at=2200) }}``.
The same arguments always give the same bytes (a seeded ``random.Random``), so runs are
reproducible and baselines stable.

>>> python_file(lines=5, seed=1) == python_file(lines=5, seed=1)
True
>>> len(log(lines=10).splitlines())
10
"""

from __future__ import annotations

import base64
import functools
import inspect
import json
import operator
import random
import struct
import zlib
from typing import Any
from collections.abc import Callable

__all__ = ["FILLERS", "python_file", "log", "grep_hits", "test_output", "json_response",
           "stack_trace", "lorem", "typescript_file", "todo_status", "go_file", "javascript_file",
           "sql_file", "api_response", "png", "pdf"]

_WORDS = ("request session token user handler config cache retry payload schema migration "
          "index query record batch worker queue buffer stream parser client server route model "
          "field value result status metric event window budget limit offset cursor").split()
_MODULES = ("auth", "billing", "sessions", "users", "orders", "api", "storage", "search", "jobs", "events")


class _Random(random.Random):
    """``random.Random`` whose ``choice`` and ``randint`` give the same values as the standard
    ones (the same ``getrandbits`` rejection sampling, CPython 3.11-3.13 ``_randbelow``) with fewer
    Python calls: fillers draw millions of them in a long scenario. ``tests/test_fillers.py``
    checks that both draw the same sequences, so filler output does not depend on this class."""

    def choice(self, seq: Any) -> Any:
        n = len(seq)
        if not n:
            raise IndexError("Cannot choose from an empty sequence")
        k = n.bit_length()
        r = self.getrandbits(k)
        while r >= n:
            r = self.getrandbits(k)
        return seq[r]

    def randint(self, a: int, b: int) -> int:
        a, n = operator.index(a), operator.index(b) + 1 - operator.index(a)
        if n <= 0:
            raise ValueError(f"empty range for randint({a}, {b})")
        k = n.bit_length()
        r = self.getrandbits(k)
        while r >= n:
            r = self.getrandbits(k)
        return a + r


def _rng(seed: int | str, salt: str) -> random.Random:
    return _Random(f"{salt}:{seed}")


def _pick(r: random.Random, seq: Any) -> Callable[[], Any]:
    """``r.choice(seq)`` as a closure over its fixed length: the same draws, without the method
    call and the length arithmetic each time (the fillers pick words hundreds of thousands of times)."""
    n = len(seq)
    k = n.bit_length()
    bits = r.getrandbits

    def pick() -> Any:
        x = bits(k)
        while x >= n:
            x = bits(k)
        return seq[x]

    return pick


def _ranged(r: random.Random, a: int, b: int) -> Callable[[], int]:
    """``r.randint(a, b)`` as a closure over its fixed range (the same draws, as :func:`_pick`)."""
    n = b + 1 - a
    k = n.bit_length()
    bits = r.getrandbits

    def draw() -> int:
        x = bits(k)
        while x >= n:
            x = bits(k)
        return a + x

    return draw


def lorem(words: int = 50, seed: int | str = 0) -> str:
    """``words`` pseudo-technical words, as one paragraph."""
    word = _pick(_rng(seed, "lorem"), _WORDS)
    return " ".join([word() for _ in range(max(0, words))]).capitalize() + "."


def python_file(lines: int = 200, seed: int | str = 0, name: str = "module") -> str:
    """A plausible Python module of exactly ``lines`` lines, numbered like Claude Code's Read
    output (``     1→...``) is *not* applied: this is file content."""
    head = f'"""{name}: {lorem(8, seed)}"""'
    try:
        rest = _python_rest(lines, seed)
    except TypeError:  # an unhashable seed (a list) is not remembered
        rest = _python_rest.__wrapped__(lines, seed)
    if lines < 2:
        return "\n".join([head, *rest][:lines])
    return head + "\n" + rest[0]


@functools.lru_cache(maxsize=64, typed=True)
def _python_rest(lines: int, seed: int | str) -> tuple[str, ...]:
    """What :func:`python_file` writes after its first line (which alone holds ``name``): templates
    read one seed's module under several names (``python_file(seed=r, name=mod)``), so it is made
    once. For two lines or more, the rest as one string; else the lines it is cut from."""
    r = _rng(seed, "py")
    word, n_args, n_words, n_lines = _pick(r, _WORDS), _ranged(r, 1, 3), _ranged(r, 4, 10), _ranged(r, 2, 8)
    bits, words, nw, kw = r.getrandbits, _WORDS, len(_WORDS), len(_WORDS).bit_length()
    out = ["", "from __future__ import annotations", "", "import logging", "",
           "log = logging.getLogger(__name__)", ""]
    n = 0
    while len(out) + 1 < lines:
        n += 1
        fn = f"{word()}_{word()}_{n}"
        args = ", ".join(sorted({word() for _ in range(n_args())}))
        out += ["", f"def {fn}({args}):", f'    """{lorem(n_words(), f"{seed}-{n}")}"""']
        for k in range(n_lines()):  # word(), word(), key() inlined (the same draws: see _pick)
            x = bits(kw)
            while x >= nw:
                x = bits(kw)
            y = bits(kw)
            while y >= nw:
                y = bits(kw)
            z = bits(10)
            while z >= 1000:
                z = bits(10)
            out.append(f"    {words[x]}_{k} = {words[y]}.get({z})")
        out.append(f"    return {word()}")
    if lines < 2:
        return tuple(out)
    return ("\n".join(out[:lines - 1]),)


def typescript_file(lines: int = 200, seed: int | str = 0, name: str = "module") -> str:
    """A plausible TypeScript module of exactly ``lines`` lines."""
    r = _rng(seed, "ts")
    out = [f"// {name}: {lorem(8, seed)}", "import { z } from 'zod';", ""]
    n = 0
    while len(out) < lines:
        n += 1
        out += ["", f"export function {r.choice(_WORDS)}{n}(input: string): number {{"]
        for k in range(r.randint(2, 6)):
            out.append(f"  const {r.choice(_WORDS)}{k} = input.length * {r.randint(1, 99)};")
        out.append("  return 0;")
        out.append("}")
    return "\n".join(out[:lines])


#: A log line's clock up to its milliseconds (line ``i`` is at ``_LOG_CLOCK[i % 3600]``) and the
#: milliseconds with the ``Z``: :func:`log` writes tens of thousands of lines.
_LOG_CLOCK = tuple(f"2026-01-05T09:{m:02d}:{s:02d}." for m in range(60) for s in range(60))
_LOG_MILLIS = tuple(f"{x:03d}Z" for x in range(1000))
_LOG_LEVELS = ("INFO", "INFO", "INFO", "DEBUG", "WARN")


def log(lines: int = 1000, seed: int | str = 0, error: str | None = None, error_at: int | None = None,
        service: str = "api") -> str:
    """``lines`` log lines with timestamps; ``error`` (if given) is line ``error_at`` (default: the
    middle) at level ERROR, so a probe can ask for it."""
    # The draws of r.randint(0, 999), r.choice(levels), r.choice(_WORDS) twice, r.randint(1000,
    # 99999) and r.randint(1, 900) per line, inlined (see _pick: the same values, in this order).
    bits = _rng(seed, "log").getrandbits
    words, nw, kw = _WORDS, len(_WORDS), len(_WORDS).bit_length()
    clock, millis, levels, tag = _LOG_CLOCK, _LOG_MILLIS, _LOG_LEVELS, f" [{service}] "
    at = (lines // 2 if error_at is None else error_at) if error else -1
    out = []
    for i in range(lines):
        x = bits(10)
        while x >= 1000:
            x = bits(10)
        ts = clock[i % 3600] + millis[x]
        if i == at:
            out.append(f"{ts} ERROR{tag}{error}")
            continue
        lv = bits(3)
        while lv >= 5:
            lv = bits(3)
        w1 = bits(kw)
        while w1 >= nw:
            w1 = bits(kw)
        w2 = bits(kw)
        while w2 >= nw:
            w2 = bits(kw)
        rid = bits(17)
        while rid >= 99000:
            rid = bits(17)
        took = bits(10)
        while took >= 900:
            took = bits(10)
        out.append(f"{ts} {levels[lv]}{tag}{words[w1]} {words[w2]} id={rid + 1000} took={took + 1}ms")
    return "\n".join(out)


def grep_hits(n: int = 40, pattern: str = "TODO", seed: int | str = 0) -> str:
    """``n`` grep hits ``path:line:content`` mentioning ``pattern``."""
    r = _rng(seed, "grep")
    return "\n".join(
        f"src/{r.choice(_MODULES)}/{r.choice(_WORDS)}.py:{r.randint(1, 900)}:    # {pattern}: "
        f"{lorem(r.randint(3, 9), f'{seed}-{i}').lower()}"
        for i in range(n))


def test_output(passed: int = 20, failed: list[str] | tuple[str, ...] = (), seed: int | str = 0,
                error: str = "AssertionError") -> str:
    """pytest-style output with ``passed`` passing tests and the named failing ones."""
    r = _rng(seed, "tests")
    out = ["============================= test session starts ==============================",
           f"collected {passed + len(failed)} items", ""]
    for name in failed:
        out += [f"____________________ {name.split('::')[-1]} ____________________", "",
                f"    def {name.split('::')[-1]}():", f">       assert {r.choice(_WORDS)} == {r.randint(1, 9)}",
                f"E       {error}", ""]
    summary = ", ".join(x for x in (f"{len(failed)} failed" if failed else "", f"{passed} passed") if x)
    out += [f"FAILED {name} - {error}" for name in failed]
    out.append(f"========================= {summary} in {r.randint(1, 30)}.{r.randint(10, 99)}s =========================")
    return "\n".join(out)


def json_response(items: int = 10, seed: int | str = 0) -> str:
    """A JSON API response with ``items`` records."""
    r = _rng(seed, "json")
    data = {"data": [{"id": r.randint(1, 10**6), "name": f"{r.choice(_WORDS)}-{i}",
                      "status": r.choice(("active", "pending", "failed"))} for i in range(items)],
            "page": 1, "total": items}
    return json.dumps(data, indent=2)


_TRACE_LANGS = ("python", "java", "go", "node", "rust")


def stack_trace(exc: str = "KeyError: 'user_id'", depth: int = 6, seed: int | str = 0, lang: str = "python") -> str:
    """A stack trace of ``depth`` frames for ``exc``, in the shape ``lang`` prints it: ``python``
    (traceback, ``exc`` last), ``java`` (``Exception in thread "main" exc`` then ``at`` frames),
    ``go`` (``panic: exc`` and goroutine frames), ``node`` (``exc`` then ``at`` frames) or ``rust``
    (``thread 'main' panicked at``)."""
    if lang not in _TRACE_LANGS:
        raise ValueError(f"stack_trace: lang must be one of {', '.join(_TRACE_LANGS)}, not {lang!r}")
    r = _rng(seed, f"trace-{lang}" if lang != "python" else "trace")
    frames = [(r.choice(_MODULES), r.choice(_WORDS), r.choice(_WORDS), r.randint(10, 600)) for _ in range(depth)]
    if lang == "python":
        out = ["Traceback (most recent call last):"]
        for mod, file, fn, line in frames:
            out += [f'  File "src/{mod}/{file}.py", line {line}, in {fn}',
                    f"    {r.choice(_WORDS)} = {r.choice(_WORDS)}[{r.choice(_WORDS)!r}]"]
        out.append(exc)
    elif lang == "java":
        out = [f'Exception in thread "main" {exc}']
        out += [f"\tat com.acme.{mod}.{file.capitalize()}Service.{fn}({file.capitalize()}Service.java:{line})"
                for mod, file, fn, line in frames]
    elif lang == "go":
        out = [f"panic: {exc}", "", f"goroutine {r.randint(1, 99)} [running]:"]
        for mod, file, fn, line in frames:
            out += [f"github.com/acme/app/internal/{mod}.{fn.capitalize()}(0x{r.randint(0, 2**32):x})",
                    f"\t/src/app/internal/{mod}/{file}.go:{line} +0x{r.randint(16, 4095):x}"]
        out.append("exit status 2")
    elif lang == "node":
        out = [exc]
        out += [f"    at {fn}{mod.capitalize()} (/srv/app/src/{mod}/{file}.js:{line}:{r.randint(1, 80)})"
                for mod, file, fn, line in frames]
        out.append("    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)")
    else:
        out = [f"thread 'main' panicked at src/{frames[0][0]}/{frames[0][1]}.rs:{frames[0][3]}:{r.randint(1, 60)}:",
               exc, "stack backtrace:"]
        out += [f"  {i}: app::{mod}::{fn}\n             at ./src/{mod}/{file}.rs:{line}:{r.randint(1, 60)}"
                for i, (mod, file, fn, line) in enumerate(frames)]
        out.append("note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.")
    return "\n".join(out)


def go_file(lines: int = 200, seed: int | str = 0, name: str = "service") -> str:
    """A plausible Go source file (package ``name``) of exactly ``lines`` lines."""
    r = _rng(seed, "go")
    pkg = "".join(c for c in name.lower() if c.isalnum()) or "service"
    out = [f"// Package {pkg}: {lorem(8, seed)}", f"package {pkg}", "", "import (", '\t"context"', '\t"errors"',
           '\t"fmt"', ")", ""]
    n = 0
    while len(out) < lines:
        n += 1
        typ = f"{r.choice(_WORDS).capitalize()}{r.choice(_WORDS).capitalize()}"
        out += ["", f"// {typ}{n} {lorem(r.randint(4, 9), f'{seed}-go-{n}').lower()}",
                f"func {typ}{n}(ctx context.Context, {r.choice(_WORDS)} string) (int, error) {{"]
        for k in range(r.randint(2, 6)):
            out.append(f"\t{r.choice(_WORDS)}{k} := len({r.choice(_WORDS)}) * {r.randint(1, 99)}")
        out += [f'\tif {r.choice(_WORDS)} == "" {{', f'\t\treturn 0, errors.New("{r.choice(_WORDS)} is empty")',
                "\t}", f'\treturn 0, fmt.Errorf("{r.choice(_WORDS)}: %w", ctx.Err())', "}"]
    return "\n".join(out[:lines])


def javascript_file(lines: int = 200, seed: int | str = 0, name: str = "module") -> str:
    """A plausible JavaScript (ES module) file of exactly ``lines`` lines."""
    r = _rng(seed, "js")
    out = [f"// {name}: {lorem(8, seed)}", "import express from 'express';", "", "const router = express.Router();",
           ""]
    n = 0
    while len(out) < lines:
        n += 1
        route = f"/{r.choice(_WORDS)}s/:{r.choice(_WORDS)}Id"
        out += ["", f"router.{r.choice(('get', 'post', 'put', 'delete'))}('{route}', async (req, res) => {{"]
        for k in range(r.randint(2, 5)):
            out.append(f"  const {r.choice(_WORDS)}{k} = await req.app.locals.{r.choice(_WORDS)}.find({r.randint(1, 99)});")
        out += [f"  res.status({r.choice((200, 201, 204))}).json({{ ok: true }});", "});"]
    out.append("export default router;")
    return "\n".join(out[:lines])


def sql_file(lines: int = 60, seed: int | str = 0, table: str = "records") -> str:
    """A plausible SQL migration of exactly ``lines`` lines creating and altering ``table``."""
    r = _rng(seed, "sql")
    out = [f"-- migration: {lorem(6, seed).lower()}", "BEGIN;", "", f"CREATE TABLE IF NOT EXISTS {table} (",
           "    id BIGSERIAL PRIMARY KEY,"]
    types = ("TEXT NOT NULL", "INTEGER NOT NULL DEFAULT 0", "TIMESTAMPTZ NOT NULL DEFAULT now()", "JSONB",
             "BOOLEAN NOT NULL DEFAULT false", "NUMERIC(12, 2)")
    for k in range(r.randint(4, 9)):
        out.append(f"    {r.choice(_WORDS)}_{k} {r.choice(types)},")
    out += ["    created_at TIMESTAMPTZ NOT NULL DEFAULT now()", ");", ""]
    n = 0
    while len(out) < lines - 1:
        n += 1
        col = f"{r.choice(_WORDS)}_{r.choice(_WORDS)}_{n}"
        out.append(r.choice((
            f"CREATE INDEX IF NOT EXISTS idx_{table}_{col} ON {table} ({col});",
            f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS {col} {r.choice(types)};",
            f"UPDATE {table} SET {col} = {r.randint(0, 99)} WHERE {col} IS NULL;",
            f"COMMENT ON COLUMN {table}.{col} IS '{lorem(5, f'{seed}-{n}').lower()}';")))
    out.append("COMMIT;")
    return "\n".join(out[:lines])


def api_response(resource: str = "users", items: int = 5, seed: int | str = 0, status: int = 200,
                 error: str | None = None) -> str:
    """An HTTP JSON API response (``curl -i`` style: status line, headers, body): ``items`` records
    of ``resource`` with pagination, or, with ``error`` (or a 4xx/5xx ``status``), an error body."""
    r = _rng(seed, f"api-{resource}")
    reason = {200: "OK", 201: "Created", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden",
              404: "Not Found", 409: "Conflict", 422: "Unprocessable Entity", 429: "Too Many Requests",
              500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable"}.get(status, "")
    request_id = f"req_{r.getrandbits(64):016x}"
    if error is not None or status >= 400:
        body: dict = {"error": {"type": reason.lower().replace(" ", "_") or "error", "status": status,
                                "message": error or reason, "request_id": request_id}}
    else:
        body = {"data": [{"id": f"{resource[:3]}_{r.getrandbits(40):010x}", "type": resource.rstrip("s"),
                          "attributes": {"name": f"{r.choice(_WORDS)}-{i}", "status": r.choice(("active", "pending", "disabled")),
                                         "created_at": f"2026-01-{r.randint(1, 28):02d}T{r.randint(0, 23):02d}:"
                                                       f"{r.randint(0, 59):02d}:00Z",
                                         "score": r.randint(0, 1000)}} for i in range(items)],
                "meta": {"page": 1, "per_page": items, "total": items + r.randint(0, 500)},
                "links": {"next": f"/v1/{resource}?cursor={r.getrandbits(48):012x}"}}
    head = [f"HTTP/1.1 {status} {reason}".rstrip(), "content-type: application/json", f"x-request-id: {request_id}", ""]
    return "\n".join(head) + "\n" + json.dumps(body, indent=2)


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png(seed: int | str = 0, width: int = 16, height: int = 12) -> str:
    """A small valid PNG (RGB, seeded pixels), base64-encoded for an ``image`` block's ``source.data``."""
    if not (1 <= width <= 512 and 1 <= height <= 512):
        raise ValueError("png: width and height must be between 1 and 512")
    r = _rng(seed, "png")
    rows = b"".join(b"\x00" + bytes(r.randrange(256) for _ in range(width * 3)) for _ in range(height))
    data = (b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + _png_chunk(b"IDAT", zlib.compress(rows, 9)) + _png_chunk(b"IEND", b""))
    return base64.b64encode(data).decode("ascii")


def pdf(seed: int | str = 0, text: str | None = None, pages: int = 1) -> str:
    """A small valid PDF (``pages`` pages, each showing one line: ``text`` or seeded words),
    base64-encoded for a ``document`` block's ``source.data``."""
    if not 1 <= pages <= 20:
        raise ValueError("pdf: pages must be between 1 and 20")
    objects = ["<< /Type /Catalog /Pages 2 0 R >>",
               "<< /Type /Pages /Kids [" + " ".join(f"{3 + 2 * i} 0 R" for i in range(pages)) + f"] /Count {pages} >>"]
    font = 3 + 2 * pages
    for i in range(pages):
        line = (text if text is not None else lorem(8, f"{seed}-{i}")).replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        stream = f"BT /F1 12 Tf 72 720 Td ({line}) Tj ET"
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {4 + 2 * i} 0 R "
                       f"/Resources << /Font << /F1 {font} 0 R >> >> >>")
        objects.append(f"<< /Length {len(stream.encode('latin-1', 'replace'))} >>\nstream\n{stream}\nendstream")
    objects.append("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = b"%PDF-1.4\n"
    offsets = []
    for n, obj in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{n} 0 obj\n{obj}\nendobj\n".encode("latin-1", "replace")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return base64.b64encode(out).decode("ascii")


def todo_status(position: int, done: int) -> str:
    """TodoWrite status of the ``position``-th item (1-based) once ``done`` items are finished:
    ``completed``, ``in_progress`` for the next one, else ``pending``.

    >>> [todo_status(p, done=1) for p in (1, 2, 3)]
    ['completed', 'in_progress', 'pending']
    """
    if position <= done:
        return "completed"
    return "in_progress" if position == done + 1 else "pending"


#: The helpers scenario templates can call.
def _memo(f: Callable[..., str]) -> Callable[..., str]:
    """``f`` remembering its recent small results: templates call a filler with the same arguments
    again and again (``grep_hits(seed=k)`` in a ``repeat``), and the same arguments give the same
    bytes anyway. At most :data:`_MEMO_ENTRIES` results of up to :data:`_MEMO_CHARS` chars each
    (oldest dropped first); calls with unhashable arguments (a list) are not remembered."""
    memo: dict[Any, str] = {}

    @functools.wraps(f)
    def filler(*args: Any, **kwargs: Any) -> str:
        try:
            # Types are part of the key: 1, 1.0 and True are equal keys but seed differently.
            key = (tuple((type(a), a) for a in args), tuple((k, type(v), v) for k, v in sorted(kwargs.items())))
            hit = memo.get(key)
        except TypeError:  # an unhashable argument
            return f(*args, **kwargs)
        if hit is None:
            hit = f(*args, **kwargs)
            if len(hit) <= _MEMO_CHARS:
                if len(memo) >= _MEMO_ENTRIES:
                    del memo[next(iter(memo))]
                memo[key] = hit
        return hit

    return filler


_MEMO_ENTRIES = 2_048
_MEMO_CHARS = 32_000

def _bounded(f: Callable[..., str]) -> Callable[..., str]:
    """``f`` refusing integer arguments outside :data:`~pytest_ctxeval.core.limits.FILLER_RANGES` before
    any work (``lorem(words=1e9)`` is an error naming the limit, not minutes and gigabytes)."""
    signature = inspect.signature(f)

    @functools.wraps(f)
    def filler(*args: Any, **kwargs: Any) -> str:
        # Absolute and lazy: this file also loads on its own (tests compare its bytes in a fresh
        # interpreter), outside the package.
        from pytest_ctxeval.core.limits import FILLER_RANGES, check_range, check_text

        ranges = FILLER_RANGES.get(f.__name__, {})
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"{f.__name__}: {exc}") from None
        for name, value in bound.arguments.items():
            if name in ranges and not (name == "error_at" and value is None):
                check_range(f.__name__, name, value)
            else:
                check_text(f.__name__, name, value)
        return f(*args, **kwargs)

    return filler


#: The fillers as scenario templates see them (arguments bounded, recent results remembered).
FILLERS = {f.__name__: _memo(_bounded(f)) for f in (lorem, python_file, typescript_file, go_file, javascript_file, sql_file,
                                          log, grep_hits, test_output, json_response, api_response, stack_trace,
                                          todo_status, png, pdf)}
