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

import json
import random

__all__ = ["FILLERS", "python_file", "log", "grep_hits", "test_output", "json_response",
           "stack_trace", "lorem", "typescript_file", "todo_status"]

_WORDS = ("request session token user handler config cache retry payload schema migration "
          "index query record batch worker queue buffer stream parser client server route model "
          "field value result status metric event window budget limit offset cursor").split()
_MODULES = ("auth", "billing", "sessions", "users", "orders", "api", "storage", "search", "jobs", "events")


def _rng(seed: int | str, salt: str) -> random.Random:
    return random.Random(f"{salt}:{seed}")


def lorem(words: int = 50, seed: int | str = 0) -> str:
    """``words`` pseudo-technical words, as one paragraph."""
    r = _rng(seed, "lorem")
    return " ".join(r.choice(_WORDS) for _ in range(max(0, words))).capitalize() + "."


def python_file(lines: int = 200, seed: int | str = 0, name: str = "module") -> str:
    """A plausible Python module of exactly ``lines`` lines, numbered like Claude Code's Read
    output (``     1→...``) is *not* applied: this is file content."""
    r = _rng(seed, "py")
    out = [f'"""{name}: {lorem(8, seed)}"""', "", "from __future__ import annotations", "", "import logging", "",
           "log = logging.getLogger(__name__)", ""]
    n = 0
    while len(out) < lines:
        n += 1
        fn = f"{r.choice(_WORDS)}_{r.choice(_WORDS)}_{n}"
        args = ", ".join(sorted({r.choice(_WORDS) for _ in range(r.randint(1, 3))}))
        out += ["", f"def {fn}({args}):", f'    """{lorem(r.randint(4, 10), f"{seed}-{n}")}"""']
        for k in range(r.randint(2, 8)):
            w = r.choice(_WORDS)
            out.append(f"    {w}_{k} = {r.choice(_WORDS)}.get({r.randint(0, 999)!r})")
        out.append(f"    return {r.choice(_WORDS)}")
    return "\n".join(out[:lines])


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


def log(lines: int = 1000, seed: int | str = 0, error: str | None = None, error_at: int | None = None,
        service: str = "api") -> str:
    """``lines`` log lines with timestamps; ``error`` (if given) is line ``error_at`` (default: the
    middle) at level ERROR, so a probe can ask for it."""
    r = _rng(seed, "log")
    at = (lines // 2 if error_at is None else error_at) if error else -1
    out = []
    for i in range(lines):
        ts = f"2026-01-05T09:{(i // 60) % 60:02d}:{i % 60:02d}.{r.randint(0, 999):03d}Z"
        if i == at:
            out.append(f"{ts} ERROR [{service}] {error}")
            continue
        level = r.choice(("INFO", "INFO", "INFO", "DEBUG", "WARN"))
        out.append(f"{ts} {level} [{service}] {r.choice(_WORDS)} {r.choice(_WORDS)} "
                   f"id={r.randint(1000, 99999)} took={r.randint(1, 900)}ms")
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


def stack_trace(exc: str = "KeyError: 'user_id'", depth: int = 6, seed: int | str = 0) -> str:
    """A Python traceback ending in ``exc``."""
    r = _rng(seed, "trace")
    out = ["Traceback (most recent call last):"]
    for _ in range(depth):
        mod = r.choice(_MODULES)
        out += [f'  File "src/{mod}/{r.choice(_WORDS)}.py", line {r.randint(10, 600)}, in {r.choice(_WORDS)}',
                f"    {r.choice(_WORDS)} = {r.choice(_WORDS)}[{r.choice(_WORDS)!r}]"]
    out.append(exc)
    return "\n".join(out)


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
FILLERS = {f.__name__: f for f in (lorem, python_file, typescript_file, log, grep_hits, test_output,
                                    json_response, stack_trace, todo_status)}
