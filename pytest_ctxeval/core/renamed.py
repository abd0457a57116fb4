"""Old spellings that still work, with a deprecation warning naming the new one.

Issue 22 renamed the compaction side's "strategy" to **compactor** (``pytest_ctxeval.strategies``
stays Hypothesis'). Users have CI configs and saved results, so until a later release:

* the old options (``--ctxeval-strategy``, ``--ctxeval-compare-strategies``; ``ctxeval run
  --strategy``, ``ctxeval compare --strategies``, ``ctxeval facts survival --strategies``) are
  hidden aliases of the new ones (:func:`add_renamed_option`); each front end warns once per
  spelling used (:func:`renamed_used`);
* the ini key ``ctxeval_strategy`` is read when ``ctxeval_compactor`` is unset (:data:`RENAMED_INI`);
* results files written with ``strategy``/``strategies`` are read as if written with
  ``compactor``/``compactors`` (:func:`upgrade_results`);
* the public names of ``pytest_ctxeval.compaction`` (``Strategy``, ``BaseStrategy``,
  ``StrategyUnavailable``, ``load_strategy``) import with a :class:`CtxEvalDeprecationWarning`
  (:data:`RENAMED_NAMES`);
* on the top-level public API, the keywords ``strategy=`` of ``run_scenario`` and ``strategies=``
  of ``@grader`` (:func:`renamed_keywords`), and the attributes ``CompactionCase.strategy`` and
  ``RunResult.strategy`` (:func:`add_renamed_attributes`) still work, with the same warning.

Every old spelling lives in this module (the rename codemod leaves it alone), so removing the
aliases later is one file and the lines that call it.
"""

from __future__ import annotations

import argparse
import functools
import inspect
import warnings
from collections.abc import Callable, Iterable
from typing import Any, TypeVar, cast

__all__ = ["CtxEvalDeprecationWarning", "RENAMED_OPTIONS", "RENAMED_INI", "RENAMED_NAMES", "RenamedOption",
           "add_renamed_option", "renamed_used", "renamed_conflicts", "conflict_message", "option_message", "ini_message", "name_message", "upgrade_results",
           "renamed_keywords", "rename_keywords", "add_renamed_attributes"]

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T", bound=type)


class CtxEvalDeprecationWarning(DeprecationWarning):
    """A spelling pytest-ctxeval still accepts but will remove; the message names the new one."""


#: New option name (without prefix) -> its old name. ``ctxeval run --strategy`` and
#: ``pytest --ctxeval-strategy`` share one entry: the prefix is the front end's.
RENAMED_OPTIONS: dict[str, str] = {
    "compactor": "strategy",
    "compactors": "strategies",
    "compare-compactors": "compare-strategies",
}
#: New ini key -> its old key.
RENAMED_INI: dict[str, str] = {"ctxeval_compactor": "ctxeval_strategy"}
#: Old public name of ``pytest_ctxeval.compaction`` -> the new one.
RENAMED_NAMES: dict[str, str] = {
    "Strategy": "Compactor",
    "BaseStrategy": "BaseCompactor",
    "StrategyUnavailable": "CompactorUnavailable",
    "load_strategy": "load_compactor",
}
#: Results keys: old -> new (at the top, on each scenario, and in the comparison table).
_KEYS = {"strategy": "compactor", "strategies": "compactors"}

#: The namespace attribute where :class:`RenamedOption` notes the old spellings used.
USED = "ctxeval_renamed_used"
#: ... and where :class:`NewSpelling` notes the new spellings used (to refuse both at once).
USED_NEW = "ctxeval_renamed_new_used"
_LATER = "the old spelling will be removed in a later release"


class RenamedOption(argparse.Action):
    """An old option spelling: stores into the new option's ``dest`` and notes ``(old, new)`` on
    the namespace (a tuple, so pytest's copied namespaces never share it)."""

    def __init__(self, option_strings: list[str], dest: str, new: str = "", **kwargs: Any) -> None:
        self.new = new
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        setattr(namespace, self.dest, values)
        used = set(getattr(namespace, USED, ())) | {(option_string or self.option_strings[0], self.new)}
        setattr(namespace, USED, tuple(sorted(used)))


class NewSpelling(argparse._StoreAction):
    """The new spelling of a renamed option: stores as ``store`` does and notes that it was given,
    so the old and the new spelling on one command line are refused (:func:`renamed_conflicts`)
    instead of the last one silently winning."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        super().__call__(parser, namespace, values, option_string)
        used = set(getattr(namespace, USED_NEW, ())) | {self.option_strings[0]}
        setattr(namespace, USED_NEW, tuple(sorted(used)))


def add_renamed_option(addoption: Callable[..., Any], prefix: str, new: str, **kwargs: Any) -> None:
    """Add ``{prefix}{new}`` with ``kwargs``, and its old spelling as a hidden alias with the same
    ``dest`` and ``type`` (``addoption`` is argparse's ``add_argument`` or pytest's ``addoption``)."""
    addoption(f"{prefix}{new}", **({"action": NewSpelling} | kwargs))
    old = RENAMED_OPTIONS[new]
    alias: dict[str, Any] = {k: kwargs[k] for k in ("type", "metavar") if k in kwargs}
    alias["dest"] = kwargs["dest"]  # required: the alias must store where the new option does
    addoption(f"{prefix}{old}", action=RenamedOption, new=f"{prefix}{new}", default=argparse.SUPPRESS,
              help=argparse.SUPPRESS, **alias)


def renamed_used(namespace: Any) -> list[tuple[str, str]]:
    """The ``(old, new)`` option spellings a parsed command line used, each once."""
    return list(getattr(namespace, USED, ()))


def renamed_conflicts(namespace: Any) -> list[tuple[str, str]]:
    """The ``(old, new)`` pairs of which both spellings were given on one command line."""
    new_used = set(getattr(namespace, USED_NEW, ()))
    return [(old, new) for old, new in renamed_used(namespace) if new in new_used]


def conflict_message(old: str, new: str) -> str:
    """The usage error for an option given in its old and its new spelling."""
    return f"{old} and {new} are the same option (the old and the new spelling): give only {new}"


def option_message(old: str, new: str) -> str:
    """``--strategy is deprecated: use --compactor ...``"""
    return f"{old} is deprecated: use {new} (compaction strategies are called compactors now; {_LATER})"


def ini_message(old: str, new: str, new_is_set: bool) -> str:
    """The warning for an old ini key (ignored when the new one is set too)."""
    also = f"; it is ignored because {new} is set too" if new_is_set else ""
    return f"the ini key {old} is deprecated: use {new} (compaction strategies are called compactors now; {_LATER}){also}"


def name_message(module: str, old: str) -> str:
    """``pytest_ctxeval.compaction.Strategy is deprecated: use ...Compactor``"""
    return f"{module}.{old} is deprecated: use {module}.{RENAMED_NAMES[old]} ({_LATER})"


def _rename_keys(obj: Any, keys: Iterable[str] = ("strategy",)) -> None:
    if isinstance(obj, dict):
        for old in keys:
            if old in obj:
                value = obj.pop(old)
                obj.setdefault(_KEYS[old], value)  # a file holding both keeps the new key's value


def upgrade_results(doc: Any) -> Any:
    """A results document written before the rename, read with the new keys (in place):
    ``strategy`` -> ``compactor`` at the top and on each scenario, ``strategies`` -> ``compactors``
    at the top and, inside that comparison table, its name list, and ``strategy`` on each row,
    failure and compared scenario. A document with the new keys is returned unchanged; the format version is the same
    (version 1): only the key names changed.

    >>> upgrade_results({"strategy": "codex", "scenarios": [{"name": "a", "strategy": "codex"}]})
    {'scenarios': [{'name': 'a', 'compactor': 'codex'}], 'compactor': 'codex'}
    """
    if not isinstance(doc, dict):
        return doc
    _rename_keys(doc, ("strategy", "strategies"))
    for scenario in _items(doc.get("scenarios")):
        _rename_keys(scenario)
    table = doc.get("compactors")
    if isinstance(table, dict):
        _rename_keys(table, ("strategies",))
        for row in _items(table.get("rows")) + _items(table.get("failures")):
            _rename_keys(row)
        results = table.get("results")  # each compared compactor's scenario entries
        for entries in results.values() if isinstance(results, dict) else []:
            for scenario in _items(entries):
                _rename_keys(scenario)
    return doc


def _items(value: Any) -> list[Any]:
    """``value`` when it is a list (a malformed one is for the document checks to report)."""
    return value if isinstance(value, list) else []


def rename_keywords(where: str, kwargs: dict[str, Any], accepted: Iterable[str]) -> dict[str, Any]:
    """``kwargs`` with each old keyword (``strategy``) renamed to its new one when ``accepted``
    holds the new one, warning once per old keyword; both given is a :class:`TypeError`."""
    for old, new in _KEYS.items():
        if old in kwargs and new in accepted:
            if new in kwargs:
                raise TypeError(f"{where}() got both {old}= and {new}=; {old}= is the deprecated spelling of {new}=")
            warnings.warn(f"{where}({old}=...) is deprecated: use {new}=... ({_LATER})", CtxEvalDeprecationWarning,
                          stacklevel=3)
            kwargs[new] = kwargs.pop(old)
    return kwargs


def renamed_keywords(func: F) -> F:
    """``func`` also accepting the old keyword spellings of its parameters (``strategy=`` for
    ``compactor=``), with a :class:`CtxEvalDeprecationWarning`."""
    params = set(inspect.signature(func).parameters)
    if not any(new in params for new in _KEYS.values()):
        raise TypeError(f"{func.__qualname__} has no renamed parameter")

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if kwargs.keys() & _KEYS.keys():
            rename_keywords(func.__name__, kwargs, params)
        return func(*args, **kwargs)

    return cast(F, wrapper)


def add_renamed_attributes(cls: T) -> T:
    """``cls`` with a deprecated property for the old name of each renamed attribute it has
    (``strategy`` reads and writes ``compactor``)."""
    for old, new in _KEYS.items():
        if new not in getattr(cls, "__dataclass_fields__", {}) and not hasattr(cls, new):
            continue
        message = f"{cls.__name__}.{old} is deprecated: use {cls.__name__}.{new} ({_LATER})"

        def get(self: Any, new: str = new, message: str = message) -> Any:
            warnings.warn(message, CtxEvalDeprecationWarning, stacklevel=2)
            return getattr(self, new)

        def put(self: Any, value: Any, new: str = new, message: str = message) -> None:
            warnings.warn(message, CtxEvalDeprecationWarning, stacklevel=2)
            setattr(self, new, value)

        setattr(cls, old, property(get, put, doc=f"Deprecated: :attr:`{new}`."))
    return cls
