"""The jinja2 sandbox scenario templates render in, with every way to build a huge value bounded
*before* the value is built (the field cap only sees output once a piece of it exists).

On top of jinja2's :class:`~jinja2.sandbox.SandboxedEnvironment` (no attribute escapes, ``range``
capped at 100,000):

* ``*`` on a string or list, ``+``/``~`` joining strings, ``join``, ``replace``: the size of the
  result is computed first and refused over :data:`~pytest_ctxeval.core.limits.MAX_FIELD_CHARS`;
* padding widths (``center``, ``indent``, ``ljust``/``rjust``/``zfill``/``expandtabs``, ``%10s``
  and ``{:>10}`` formats) over :data:`~pytest_ctxeval.core.limits.MAX_PAD_WIDTH` are refused;
* every ``{% for %}`` iteration counts, nested loops multiplied, printing or not, against
  :data:`~pytest_ctxeval.core.limits.MAX_LOOP_STEPS` per render;
* ``**`` with an exponent over 256 is refused.

Each refusal is a :class:`~pytest_ctxeval.errors.ScenarioError` naming the limit; the expander adds
the file, line and field.
"""

from __future__ import annotations

import operator
import re
from typing import Any
from collections.abc import Iterable, Iterator

from jinja2 import nodes
from jinja2.filters import do_center, do_indent, do_join, do_replace
from jinja2.sandbox import SandboxedEnvironment
from jinja2.visitor import NodeTransformer

from ..errors import ScenarioError
from ..core.limits import MAX_FIELD_CHARS, MAX_LOOP_STEPS, MAX_PAD_WIDTH

__all__ = ["BoundedSandbox"]

_LOOP, _CONCAT = "ctxeval_loop_guard", "ctxeval_concat_guard"
# %-format widths and precisions, and {}-format widths, in a format string.
_PERCENT = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\d+|\*)?(?:\.(\d+|\*))?")
_BRACE = re.compile(r"\{[^{}]*:[^{}]*?(\d+)")
_NESTED = re.compile(r"\{[^{}]*:[^{}]*\{")
_PADDING = {"center", "ljust", "rjust", "zfill", "expandtabs"}


def _too_wide(width: Any, what: str) -> None:
    if isinstance(width, int) and not isinstance(width, bool) and width > MAX_PAD_WIDTH:
        raise ScenarioError(f"{what} pads to {width} characters, over the {MAX_PAD_WIDTH} limit (limits.MAX_PAD_WIDTH)")


def _too_big(size: int, what: str) -> None:
    if size > MAX_FIELD_CHARS:
        raise ScenarioError(f"{what} would build {size} characters, over the {MAX_FIELD_CHARS} limit "
                            "(limits.MAX_FIELD_CHARS)")


def _check_format(fmt: str, args: Any = ()) -> None:
    for m in _PERCENT.finditer(fmt):
        for part in m.groups():
            if part == "*":
                for a in args if isinstance(args, tuple) else (args,):
                    _too_wide(a, "a %-format")
            elif part is not None:
                _too_wide(int(part), "a %-format")
    for m in _BRACE.finditer(fmt):
        _too_wide(int(m.group(1)), "a format")


def _size(items: Iterable[Any]) -> int:
    return sum(len(x) if isinstance(x, str) else 16 for x in items)


class _Guard(NodeTransformer):
    """Routes every loop's iterable and every ``~`` through the counting/size guards."""

    def visit_For(self, node: nodes.For) -> nodes.Node:
        node = self.generic_visit(node)  # type: ignore[assignment]  # jinja returns the node it was given
        node.iter = nodes.Call(nodes.Name(_LOOP, "load", lineno=node.lineno), [node.iter], [], None, None,
                               lineno=node.lineno)
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        node = self.generic_visit(node)  # type: ignore[assignment]  # jinja returns the node it was given
        return nodes.Call(nodes.Name(_CONCAT, "load", lineno=node.lineno),
                          [nodes.List(node.nodes, lineno=node.lineno)], [], None, None, lineno=node.lineno)


class BoundedSandbox(SandboxedEnvironment):
    """The scenario template environment (module docstring). ``loop_steps`` counts the iterations
    of the current render; the expander resets it before each one."""

    intercepted_binops = frozenset(["*", "**", "+", "%"])

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self.loop_steps = 0
        self.globals[_LOOP] = self._loop
        self.globals[_CONCAT] = self._concat
        self.filters.update(center=self._center, indent=self._indent, format=self._format, join=self._join,
                            replace=self._replace)

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        tree = super()._parse(source, name, filename)
        out = _Guard().visit(tree)
        out.set_environment(self)
        return out

    # -- loops and concatenation

    def _loop(self, iterable: Any) -> Iterator[Any]:
        for item in iterable:
            self.loop_steps += 1
            if self.loop_steps > MAX_LOOP_STEPS:
                raise ScenarioError(f"the template's loops run more than {MAX_LOOP_STEPS} steps "
                                    "(limits.MAX_LOOP_STEPS); make them shorter")
            yield item

    def _concat(self, parts: list[Any]) -> str:
        strings = [p if isinstance(p, str) else str(p) for p in parts]
        _too_big(_size(strings), "a '~' join")
        return "".join(strings)

    # -- operators

    def call_binop(self, context: Any, operator_: str, left: Any, right: Any) -> Any:
        if operator_ == "*":
            for seq, n in ((left, right), (right, left)):
                if isinstance(seq, (str, list, tuple)) and isinstance(n, int) and len(seq) * n > MAX_FIELD_CHARS:
                    raise ScenarioError(f"a template multiplies a sequence to {len(seq) * n} items, over the "
                                        f"{MAX_FIELD_CHARS} limit (limits.MAX_FIELD_CHARS)")
            return operator.mul(left, right)
        if operator_ == "**":
            if isinstance(right, int) and right > 256:
                raise ScenarioError("a template raises a number to a power over 256")
            return operator.pow(left, right)
        if operator_ == "+":
            if isinstance(left, (str, list, tuple)) and isinstance(right, (str, list, tuple)):
                _too_big(len(left) + len(right), "a '+'")
            return operator.add(left, right)
        if operator_ == "%":
            if isinstance(left, str):
                _check_format(left, right)
            return operator.mod(left, right)
        return super().call_binop(context, operator_, left, right)

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        owner = getattr(__obj, "__self__", None)
        if isinstance(owner, str):
            name = getattr(__obj, "__name__", "")
            if name in _PADDING:
                _too_wide(args[0] if args else kwargs.get("width", kwargs.get("tabsize")), f"str.{name}")
                if name == "expandtabs":
                    _too_big(len(owner) + owner.count("\t") * (args[0] if args and isinstance(args[0], int) else 8),
                             "str.expandtabs")
            elif name == "replace" and len(args) >= 2 and isinstance(args[0], str) and isinstance(args[1], str):
                _too_big(_replaced_size(owner, args[0], args[1]), "str.replace")
            elif name == "join" and args:
                items = list(args[0])
                _too_big(_size(items) + len(owner) * len(items), "str.join")
                return owner.join(items)
        return SandboxedEnvironment.call(__self, __context, __obj, *args, **kwargs)

    def wrap_str_format(self, value: Any) -> Any:
        wrapped = super().wrap_str_format(value)
        if wrapped is None:
            return None
        fmt = value.__self__
        _check_format(fmt)
        if not _NESTED.search(fmt):
            return wrapped

        def checked(*args: Any, **kwargs: Any) -> str:  # a width given as an argument: {:>{w}}
            for a in list(args) + list(kwargs.values()):
                _too_wide(a, "a format")
            return wrapped(*args, **kwargs)

        return checked

    # -- filters

    def _center(self, value: str, width: int = 80) -> str:
        _too_wide(width, "center")
        return do_center(value, width)

    def _indent(self, s: str, width: int | str = 4, first: bool = False, blank: bool = False) -> str:
        _too_wide(width if isinstance(width, int) else len(width), "indent")
        _too_big(len(str(s)) + str(s).count("\n") * (width if isinstance(width, int) else len(width)), "indent")
        return do_indent(s, width, first, blank)

    def _format(self, value: str, *args: Any, **kwargs: Any) -> str:
        _check_format(str(value), tuple(args))
        if kwargs:
            return str(value) % kwargs
        return str(value) % args

    def _join(self, eval_ctx: Any, value: Any, d: str = "", attribute: Any = None) -> str:
        items = list(value)
        _too_big(_size(items) + len(d) * len(items), "join")
        return do_join(eval_ctx, items, d, attribute)

    def _replace(self, eval_ctx: Any, s: str, old: str, new: str, count: int | None = None) -> str:
        _too_big(_replaced_size(str(s), str(old), str(new)), "replace")
        return do_replace(eval_ctx, s, old, new, count)


# Filters that take the eval context are marked so jinja2 passes it.
from jinja2.utils import pass_eval_context  # noqa: E402

BoundedSandbox._join = pass_eval_context(BoundedSandbox._join)  # type: ignore[method-assign]
BoundedSandbox._replace = pass_eval_context(BoundedSandbox._replace)  # type: ignore[method-assign]


def _replaced_size(s: str, old: str, new: str) -> int:
    hits = s.count(old) if old else len(s) + 1
    return len(s) + hits * (len(new) - len(old))
