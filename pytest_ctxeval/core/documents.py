"""Reading and writing the JSON files ctxeval exchanges: results, baselines, cassettes.

Reading (:func:`loads_strict`, :func:`check_results`, :func:`check_baseline`): a file may come from
an older or newer ctxeval, a hand edit or an attacker, so it is parsed strictly and checked field by
field before anything renders or compares it. JSON that Python's parser would accept but cannot be
written back (``NaN``, ``Infinity``, ``1e999``) is refused with its line; nesting is bounded
(:data:`~pytest_ctxeval.core.limits.MAX_NESTING`); a value of the wrong type or outside its range (a score
of ``NaN`` or ``1.7``, a status ``"Pass"``) is refused naming its field path, e.g.
``scenarios.auth.compactions[0].graders.nine_sections.score``.

Writing (:func:`dumps_finite`): never ``NaN``/``Infinity`` (not JSON; most parsers refuse them): a
non-finite number is written as ``null``.
"""

from __future__ import annotations

import json
import math
from typing import Any

from .limits import MAX_NESTING

__all__ = ["BadDocument", "loads_strict", "parse_record", "dumps_finite", "finite", "check_depth", "check_results",
           "check_baseline", "STATUSES"]

#: The verdict statuses a results or baseline file may hold (``Verdict.status``).
STATUSES = ("pass", "fail", "n/a", "ungraded")


class BadDocument(ValueError):
    """A refused JSON document: ``where`` is ``line N`` or a field path."""

    def __init__(self, where: str, message: str):
        super().__init__(f"{where}: {message}" if where else message)
        self.where, self.message = where, message


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:40]} is out of range for a number (JSON cannot carry infinity)")
    return value


# One decoder, made once: json.loads(..., parse_float=...) builds a new one on every call.
_DECODER = json.JSONDecoder(parse_constant=_constant, parse_float=_float)


def loads_strict(text: str) -> Any:
    """``json.loads`` refusing ``NaN``/``Infinity``/overflowing numbers and nesting over the limit.

    >>> loads_strict('{"a": [1, 2.5]}')
    {'a': [1, 2.5]}
    >>> loads_strict('{"score": NaN}')
    Traceback (most recent call last):
    ...
    pytest_ctxeval.core.documents.BadDocument: line 1: NaN is not a JSON number
    """
    try:
        value = _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        raise BadDocument(f"line {exc.lineno}", f"invalid JSON: {exc.msg}") from None
    except ValueError as exc:  # from the hooks; the decoder gives no position, find the line
        raise BadDocument(f"line {_line_of(text, exc)}", str(exc)) from None
    except RecursionError:
        raise BadDocument("", f"nested more than {MAX_NESTING} levels deep (limits.MAX_NESTING)") from None
    check_depth(value)
    return value


def parse_record(text: str) -> Any:
    """One JSON line of a transcript: ``json.loads`` refusing what JSON cannot carry back
    (``NaN``, ``Infinity``, ``1e999``) and nesting over the limit, as :class:`BadDocument`; other
    syntax errors stay ``json.JSONDecodeError``. The depth walk runs only when the line has more
    brackets than the limit (it cannot nest deeper otherwise), so ordinary records pay nothing."""
    try:
        value = _DECODER.decode(text)
    except json.JSONDecodeError:
        raise
    except ValueError as exc:
        raise BadDocument("", str(exc)) from None
    if text.count("{") + text.count("[") > MAX_NESTING:
        check_depth(value)
    return value


def _line_of(text: str, exc: ValueError) -> int:
    import re

    match = re.search(r"(?<![\w\"])(NaN|-?Infinity|-?\d+(?:\.\d+)?[eE][+-]?\d{3,})", text)
    return text.count("\n", 0, match.start()) + 1 if match else 1


def check_depth(value: Any, limit: int = MAX_NESTING) -> None:
    """Raise :class:`BadDocument` when lists/dicts in ``value`` nest deeper than ``limit`` (a stack,
    not recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (list, dict)):
            if depth > limit:
                raise BadDocument("", f"nested more than {limit} levels deep (limits.MAX_NESTING)")
            stack.extend((v, depth + 1) for v in (item.values() if isinstance(item, dict) else item))


def finite(value: Any) -> Any:
    """``value`` with every non-finite float replaced by ``None`` (iteratively)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if not isinstance(value, (list, dict)):
        return value
    root: Any = [value]
    stack = [root]
    while stack:
        item = stack.pop()
        keys = range(len(item)) if isinstance(item, list) else list(item)
        for k in keys:
            v = item[k]
            if isinstance(v, float) and not math.isfinite(v):
                item[k] = None
            elif isinstance(v, dict):
                item[k] = dict(v)
                stack.append(item[k])
            elif isinstance(v, (list, tuple)):
                item[k] = list(v)
                stack.append(item[k])
    return root[0]


def dumps_finite(doc: Any, **kwargs: Any) -> str:
    """``json.dumps(doc, **kwargs)`` that never writes ``NaN``/``Infinity`` (they become ``null``)."""
    try:
        return json.dumps(doc, allow_nan=False, **kwargs)
    except ValueError:
        return json.dumps(finite(doc), allow_nan=False, **kwargs)


# ---------------------------------------------------------------------------------------------
# Field checks


def _path(parts: tuple[Any, ...]) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _want(cond: bool, parts: tuple[Any, ...], message: str) -> None:
    if not cond:
        raise BadDocument(_path(parts), message)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _opt(v: Any, types: tuple[type, ...]) -> bool:
    return v is None or (isinstance(v, types) and not isinstance(v, bool))


def _verdict(v: Any, parts: tuple[Any, ...]) -> None:
    _want(isinstance(v, dict), parts, "expected an object with status and score")
    for key in ("kind", "known_failure", "expectation", "grader"):
        _want(_opt(v.get(key), (str,)), parts + (key,), "expected a string")
    _want(v.get("status") in STATUSES, parts + ("status",),
          f"{v.get('status')!r} is not a status (one of {', '.join(STATUSES)})")
    score = v.get("score", 0.0)
    _want(isinstance(score, (int, float)) and not isinstance(score, bool) and math.isfinite(score)
          and 0.0 <= score <= 1.0, parts + ("score",), f"{score!r} is not a score (a number from 0 to 1)")
    for key in ("reasons", "missing", "superseded"):
        items = v.get(key)
        _want(items is None or (isinstance(items, list) and all(isinstance(r, str) for r in items)),
              parts + (key,), "expected a list of strings")


def _compaction_fields(c: Any, parts: tuple[Any, ...]) -> None:
    _want(isinstance(c, dict), parts, "expected an object (one compaction)")
    _want(_is_int(c.get("index")), parts + ("index",), f"{c.get('index')!r} is not a compaction number")
    for key in ("pre_tokens", "post_tokens", "turn", "line"):
        _want(_opt(c.get(key), (int,)), parts + (key,), f"{c.get(key)!r} is not a whole number")
    _want(_opt(c.get("summary"), (str,)), parts + ("summary",), "expected a string")
    for key in ("kind", "trigger"):
        _want(_opt(c.get(key), (str,)), parts + (key,), "expected a string")


def check_results(doc: Any, *, version: int = 1) -> None:
    """Raise :class:`BadDocument` naming the first field of a results document that the report,
    ``diff`` and the baseline code cannot use."""
    _want(isinstance(doc, dict), (), "expected a JSON object")
    got = doc.get("version")
    _want(got == version, ("version",), f"results version {got!r} is not supported: this ctxeval reads version "
          f"{version}; render it with the ctxeval that wrote it, or rerun to write version {version}")
    for key in ("backend", "model", "judge"):
        _want(_opt(doc.get(key), (str,)), (key,), "expected a string")
    _want(_opt(doc.get("prompt"), (dict,)), ("prompt",), "expected an object")
    for key, value in (doc.get("prompt") or {}).items():
        _want(_opt(value, (str,)), ("prompt", key), "expected a string")
    _want(_opt(doc.get("usage"), (dict,)), ("usage",), "expected an object")
    for key, value in (doc.get("usage") or {}).items():
        if key == "unpriced":  # the models the price table did not know (llm/usage.py)
            _want(_opt(value, (list,)) and all(isinstance(m, str) for m in value or []),
                  ("usage", key), "expected a list of model names")
            continue
        _want(value is None or (isinstance(value, (int, float, dict)) and not isinstance(value, bool)),
              ("usage", key), "expected a number")
    scenarios = doc.get("scenarios", [])
    _want(isinstance(scenarios, list), ("scenarios",), "expected a list of scenario results")
    for i, s in enumerate(scenarios):
        at = ("scenarios", i)
        _want(isinstance(s, dict), at, "expected an object (one scenario's results)")
        _want(isinstance(s.get("name"), str), at + ("name",), "expected the scenario's name")
        for key in ("source", "error", "kind", "description", "compactor", "skipped"):
            _want(_opt(s.get(key), (str,)), at + (key,), "expected a string")
        _want(_opt(s.get("context_window"), (int,)), at + ("context_window",), "expected a whole number")
        graders = s.get("graders", {})
        _want(isinstance(graders, dict), at + ("graders",), "expected an object of grader verdicts")
        for g, row in graders.items():
            _verdict(row, at + ("graders", g))
        for key in ("events", "notes"):
            _want(isinstance(s.get(key, []), list), at + (key,), "expected a list")
        for j, ev in enumerate(s.get("events", [])):
            _want(isinstance(ev, dict), at + ("events", j), "expected an object (one engine event)")
            for key in ("tier", "action", "detail"):
                _want(_opt(ev.get(key), (str,)), at + ("events", j, key), "expected a string")
            for key in ("turn", "tokens_before", "tokens_after"):
                _want(_opt(ev.get(key), (int,)), at + ("events", j, key), "expected a whole number")
            _want(_opt(ev.get("ids"), (list,)), at + ("events", j, "ids"), "expected a list")
        for j, note in enumerate(s.get("notes", [])):
            _want(isinstance(note, str), at + ("notes", j), "expected a string")
        messages = s.get("messages", {})
        _want(isinstance(messages, dict), at + ("messages",), "expected an object")
        for k, ref in messages.items():
            _want(k.isdigit() and k.isascii(), at + ("messages", k), "expected a message number as the key")
            _want(isinstance(ref, dict), at + ("messages", k), "expected an object with role and excerpt")
            for key in ("role", "excerpt", "at"):
                _want(_opt(ref.get(key), (str,)), at + ("messages", k, key), "expected a string")
        comps = s.get("compactions", [])
        _want(isinstance(comps, list), at + ("compactions",), "expected a list")
        for j, c in enumerate(comps):
            cat = at + ("compactions", j)
            _compaction_fields(c, cat)
            verdicts = c.get("verdicts", [])
            _want(isinstance(verdicts, list), cat + ("verdicts",), "expected a list")
            for k, v in enumerate(verdicts):
                _verdict(v, cat + ("verdicts", k))
                _want(isinstance(v.get("grader"), str), cat + ("verdicts", k, "grader"), "expected the grader's name")
            lost = c.get("lost") or {}
            _want(isinstance(lost, dict), cat + ("lost",), "expected an object")
            for key, items in lost.items():
                if key == "identifiers_total":
                    _want(_is_int(items), cat + ("lost", key), "expected a whole number")
                    continue
                _want(isinstance(items, list), cat + ("lost", key), "expected a list")
                for n, item in enumerate(items):
                    _want(isinstance(item, str) or (isinstance(item, dict) and isinstance(item.get("text"), str)),
                          cat + ("lost", key, n), "expected a string or an object with 'text'")
                    if isinstance(item, dict):
                        _want(_opt(item.get("message"), (int,)), cat + ("lost", key, n, "message"),
                              "expected a message number")
                        _want(_opt(item.get("context"), (str,)), cat + ("lost", key, n, "context"),
                              "expected a string")


def check_baseline(doc: Any) -> None:
    """Raise :class:`BadDocument` naming the first field of a baseline that :func:`compare` cannot use."""
    _want(isinstance(doc, dict), (), "expected a JSON object")
    scenarios = doc.get("scenarios")
    _want(isinstance(scenarios, dict), ("scenarios",), "missing or not an object of scenario name -> verdicts "
          "(write a baseline with pytest --ctxeval --ctxeval-save-baseline PATH)")
    for name, s in scenarios.items():
        at = ("scenarios", name)
        _want(isinstance(s, dict), at, "expected an object (one scenario)")
        _want(_opt(s.get("error"), (str,)), at + ("error",), "expected a string")
        graders = s.get("graders", {})
        _want(isinstance(graders, dict), at + ("graders",), "expected an object of grader verdicts")
        for g, row in graders.items():
            _verdict(row, at + ("graders", g))
        comps = s.get("compactions", [])
        _want(isinstance(comps, list), at + ("compactions",), "expected a list")
        for j, c in enumerate(comps):
            cat = at + ("compactions", j)
            _compaction_fields(c, cat)
            cg = c.get("graders", {})
            _want(isinstance(cg, dict), cat + ("graders",), "expected an object of grader verdicts")
            for g, row in cg.items():
                _verdict(row, cat + ("graders", g))
            _want(isinstance(c.get("lost", {}), dict), cat + ("lost",), "expected an object")
