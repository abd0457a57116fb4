"""Finding a compactor by name: a built-in, or your own by dotted path, with options.

A spec is one of::

    codex                                   a built-in compactor
    observation_masking(keep=5)             with options (int, float, true/false, or text)
    gemini_cli(verify=false, tiers=none)
    mypkg.compaction:MyCompactor             a class (instantiated with the options) or an instance
    mypkg.compaction:make_compactor(level=2) a factory returning a compactor
    mypkg.compaction:compact                a plain function compact(messages, *, instructions=None)
                                            returning the summary text or the new messages (compaction/function.py)

(quote a spec with parentheses in a shell). A bad spec is a :class:`~pytest_ctxeval.errors.UsageError`
that names it and says how to fix it.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from pathlib import Path
from typing import Any
from collections.abc import Iterator

from ..errors import UsageError
from .base import Compactor

__all__ = ["BUILTIN", "load_compactor", "parse_spec", "split_specs", "builtin_summary_format"]

#: Built-in compactors by name: module and class (imported on first use).
BUILTIN: dict[str, tuple[str, str]] = {
    "claude_code": ("claude_code", "ClaudeCode"),
    "codex": ("codex", "Codex"),
    "gemini_cli": ("gemini_cli", "GeminiCli"),
    "opencode": ("opencode", "Opencode"),
    "observation_masking": ("masking", "ObservationMasking"),
    "anthropic_server": ("anthropic_server", "AnthropicServer"),
}

_SPEC = re.compile(r"^\s*(?P<target>[A-Za-z_][\w.]*(?::[A-Za-z_][\w.]*)?)\s*(?:\((?P<args>.*)\))?\s*$", re.DOTALL)
_HINT = ("use a built-in name (" + ", ".join(BUILTIN) + ") or a dotted path 'package.module:Name', "
         "optionally with options: 'observation_masking(keep=5)'")


def split_specs(text: str) -> list[str]:
    """Comma-separated specs, commas inside parentheses or quoted values kept.

    >>> split_specs("codex, observation_masking(keep=5, every_round=true),gemini_cli")
    ['codex', 'observation_masking(keep=5, every_round=true)', 'gemini_cli']
    >>> split_specs('instructions="keep a, b", trigger=9')
    ['instructions="keep a, b"', 'trigger=9']
    >>> split_specs("codex, anthropic_server(instructions=the user's words), gemini_cli")
    ['codex', "anthropic_server(instructions=the user's words)", 'gemini_cli']
    """
    out, cur = [], ""
    for ch, depth, quoted, _ in _scan(text):
        if ch == "," and depth == 0 and not quoted:
            out.append(cur.strip())
            cur = ""
            continue
        cur += ch
    out.append(cur.strip())
    return [s for s in out if s]


def _scan(text: str) -> Iterator[tuple[str, int, bool, bool]]:
    """Each character with the parenthesis depth, whether it belongs to a quoted value, and
    whether a quoted value is still open after it. A quote opens a value only right after ``=``
    (spaces allowed), so an apostrophe in plain text (``instructions=the user's words``) is just a
    character."""
    depth, quote, last = 0, "", ""
    for ch in text:
        if quote:
            if ch == quote:
                quote = ""
            yield ch, depth, True, bool(quote)
            continue
        if ch in "'\"" and last == "=":
            quote = ch
            yield ch, depth, True, True
            continue
        if ch in "()":
            depth += 1 if ch == "(" else -1
        if not ch.isspace():
            last = ch
        yield ch, depth, False, False


def _balanced(text: str) -> bool:
    """Parentheses outside quoted values balance, and quoted values close."""
    depth, still_open = 0, False
    for _, depth, _, still_open in _scan(text):  # noqa: B007 - the last values are read after the loop
        if depth < 0:
            return False
    return depth == 0 and not still_open


def _value(text: str) -> Any:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]  # quoted: text as written ("5" stays text)
    low = text.lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    if low in ("none", "null"):
        return None
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``(target, options)`` of a spec.

    >>> parse_spec("observation_masking(keep=5, every_round=true)")
    ('observation_masking', {'keep': 5, 'every_round': True})
    """
    match = _SPEC.match(spec or "")
    if not match:
        raise UsageError(f"compactor {spec!r}: not a compactor spec; {_HINT}")
    options: dict[str, Any] = {}
    args = match.group("args")
    if args is not None and not _balanced(args):
        raise UsageError(f"compactor {spec!r}: unbalanced parentheses or quotes in its options "
                         "(e.g. 'observation_masking(keep=5)', text in quotes: 'anthropic_server(instructions=\"a, b\")')")
    if args is not None and args.strip():
        for part in split_specs(args):
            key, eq, value = part.partition("=")
            if not eq or not key.strip().isidentifier():
                raise UsageError(f"compactor {spec!r}: option {part!r} is not name=value "
                                 "(e.g. 'observation_masking(keep=5)')")
            options[key.strip()] = _value(value)
    return match.group("target"), options


def _builtin(name: str) -> Any:
    module, cls = BUILTIN[name]
    return getattr(importlib.import_module(f"{__package__}.{module}"), cls)


def builtin_summary_format(name: str) -> Any:
    """The :class:`~pytest_ctxeval.compaction.formats.SummaryFormat` a built-in compactor asks its
    model for, or None (an unknown name, or a compactor with no format of its own)."""
    return getattr(_builtin(name), "summary_format", None) if name in BUILTIN else None


def _import_module(name: str) -> Any:
    """``importlib.import_module``, also looking in the current folder, as ``python -m pytest`` does
    and the ``pytest`` and ``ctxeval`` scripts do not: a compactor written next to the scenarios
    is found from there. The folder goes last on ``sys.path``, so it shadows nothing installed."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        here = os.getcwd()
        if exc.name != name.split(".")[0] or here in sys.path or "" in sys.path:
            raise
        sys.path.append(here)
        return importlib.import_module(name)


def _import(target: str, spec: str) -> Any:
    module_name, _, attr = target.partition(":")
    if not attr:
        near = [n for n in BUILTIN if n.startswith(target[:3])]
        raise UsageError(f"compactor {spec!r}: unknown compactor {target!r}"
                         + (f" (did you mean {near[0]!r}?)" if near else "") + f"; {_HINT}")
    try:
        module = _import_module(module_name)
    except ModuleNotFoundError as exc:
        raise UsageError(f"compactor {spec!r}: cannot import module {module_name!r} ({exc}); install it, or run "
                         f"from the folder that holds {module_name.split('.')[0]!r} (or add that folder to "
                         "PYTHONPATH)") from None
    except Exception as exc:  # noqa: BLE001 - the user's module failed to import: say so, with the cause
        raise UsageError(f"compactor {spec!r}: importing {module_name!r} failed: {type(exc).__name__}: {exc}") from None
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            names = sorted(n for n in vars(module) if not n.startswith("_"))[:12]
            top = module_name.split(".")[0]
            local = Path.cwd() / f"{top}.py"
            shadowed = (f"; {local} is not the module imported ({getattr(module, '__file__', None) or 'built in'}): "
                        f"an installed module named {top!r} comes first, rename yours"
                        if local.is_file() and Path(getattr(module, "__file__", "") or "").resolve() != local.resolve()
                        else "")
            raise UsageError(f"compactor {spec!r}: module {module_name!r} has no attribute {attr!r} "
                             f"(it defines: {', '.join(names) or 'nothing public'}){shadowed}")
        obj = getattr(obj, part)
    return obj


def load_compactor(spec: str | Any) -> Compactor:
    """The compactor a spec names (see the module docstring); a compactor object is returned as is.

    >>> load_compactor("codex").name
    'codex'
    >>> load_compactor("observation_masking(keep=3)").keep
    3
    """
    from .function import FunctionCompactor, is_compact_function

    if not isinstance(spec, str):
        if is_compact_function(spec):
            return FunctionCompactor(spec)
        _check(spec, repr(spec))
        return spec
    target, options = parse_spec(spec)
    obj = _builtin(target) if target in BUILTIN else _import(target, spec)

    if is_compact_function(obj):  # a plain compact(messages, *, instructions=None) function
        compactor = FunctionCompactor(obj, **options)
    elif isinstance(obj, type) or (callable(obj) and not isinstance(obj, Compactor)):
        try:
            compactor = obj(**options)
        except UsageError:
            raise
        except (TypeError, ValueError) as exc:
            raise UsageError(f"compactor {spec!r}: {exc}") from None
    else:
        if options:
            raise UsageError(f"compactor {spec!r}: {target} is an instance, it takes no options")
        compactor = obj
    _check(compactor, spec)
    return compactor


def _check(compactor: Any, spec: str) -> None:
    missing = [n for n in ("name", "should_compact", "compact") if not hasattr(compactor, n)]
    if missing:
        raise UsageError(f"compactor {spec!r}: {type(compactor).__name__} is not a compactor: it lacks "
                         f"{', '.join(missing)} (see pytest_ctxeval.compaction.Compactor)")
    name = compactor.name
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][\w.-]*", name):
        raise UsageError(f"compactor {spec!r}: its name must be letters, digits, '_', '.' or '-'; got {name!r}")
