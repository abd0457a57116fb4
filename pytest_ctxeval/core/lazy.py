"""Lazy public surfaces (PEP 562) for the package's ``__init__`` files.

Each subpackage's ``__init__`` names its public surface once, in an ``_EXPORTS`` table (name ->
module inside the subpackage); the names are imported on first use, so ``import pytest_ctxeval``
(which pytest does in every run of a project with the plugin installed) stays cheap.
``tests/test_layout.py`` checks that ``__all__``, ``_EXPORTS`` and the type-checking imports agree,
as Hypothesis' ``_check_exports`` does for ``hypothesis.strategies``.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: str, exports: Mapping[str, str],
                 namespace: dict[str, Any]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package`` whose public names live in ``exports``
    (name -> module relative to the package); a submodule name gives the submodule.

    >>> getattr_, _ = lazy_exports("pytest_ctxeval.core", {"EngineConfig": "config"}, {})
    >>> getattr_("EngineConfig").__name__
    'EngineConfig'
    """

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            if name.startswith("_") or importlib.util.find_spec(f"{package}.{name}") is None:
                raise AttributeError(f"module {package!r} has no attribute {name!r}")
            return importlib.import_module(f"{package}.{name}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(exports))

    return __getattr__, __dir__
