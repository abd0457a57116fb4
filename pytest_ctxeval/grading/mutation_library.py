"""The built-in mutation operators, gathered: the three operator modules, in definition order.

Above the operator modules (which import the framework, :mod:`.mutants`), so the framework never
imports them back.
"""

from __future__ import annotations

from . import mutation_facts, mutation_intent, mutation_ops
from .mutants import MutationSpec, spec_of

__all__ = ["builtin_mutations"]


def builtin_mutations() -> list[MutationSpec]:
    """The built-in operators (:mod:`pytest_ctxeval.grading.mutation_facts`, ``mutation_intent``, ``mutation_ops``),
    in definition order."""
    out: list[MutationSpec] = []
    for module in (mutation_facts, mutation_intent, mutation_ops):
        specs = [spec_of(f) for f in vars(module).values() if callable(f) and getattr(f, "__module__", "") == module.__name__]
        out += sorted((s for s in specs if s is not None), key=lambda s: s.func.__code__.co_firstlineno)
    return out
