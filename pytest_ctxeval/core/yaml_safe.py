"""Reading YAML written by anyone: plain data only, bounded, no silent surprises.

:func:`load_yaml` composes the document once (libyaml's safe parser when present), checks the node
graph, then builds the Python values from it:

* a key written twice in one mapping is an error naming both lines (PyYAML keeps the last one
  silently: two ``user:`` keys in a turn, two ``expect:`` blocks dropping a constraint);
* an anchor used inside itself (``&a [*a]``) is an error naming its line, never a recursive value;
* aliases are counted (:data:`~pytest_ctxeval.core.limits.MAX_YAML_ALIASES`) and the document's size
  once they are expanded is computed from the graph, without expanding it
  (:data:`~pytest_ctxeval.core.limits.MAX_YAML_NODES`): an alias bomb is refused before it is built;
* nesting is bounded (:data:`~pytest_ctxeval.core.limits.MAX_NESTING`);
* tags other than YAML's plain ones (``!!python/object``) are refused, and so are numbers JSON
  cannot carry (``.inf``, ``.nan``, ``1e999``): a scenario's values end up in API requests.

Every check walks the graph with an explicit stack: no input can make it recurse.
"""

from __future__ import annotations

import math
from typing import Any

import yaml

from .gcpause import paused_gc
from .limits import MAX_NESTING, MAX_YAML_ALIASES, MAX_YAML_NODES

__all__ = ["BadYAML", "load_yaml", "SAFE_LOADER"]

SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class BadYAML(ValueError):
    """Why a YAML text cannot be read, with the (1-based) line it concerns (0 when none)."""

    def __init__(self, line: int, message: str):
        super().__init__(message)
        self.line, self.message = line, message


def _line(node: Any) -> int:
    mark = getattr(node, "start_mark", None)
    return mark.line + 1 if mark is not None else 0


def check_graph(root: yaml.Node) -> None:
    """Raise :class:`BadYAML` for a duplicate key, a recursive anchor, too many aliases, too many
    nodes once expanded, or nesting deeper than the limit. Scalars are counted where they stand
    (an alias to a scalar cannot multiply anything); only lists and mappings are walked."""
    size: dict[int, int] = {}
    height: dict[int, int] = {}
    on_path: set[int] = set()
    aliases = 0
    collections = (yaml.SequenceNode, yaml.MappingNode)
    if not isinstance(root, collections):
        return
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            kids = _children(node)
            total, tallest = 1, 0
            for k in kids:
                if isinstance(k, collections):
                    total += size[id(k)]
                    tallest = max(tallest, height[id(k)])
                else:
                    total += 1
                    tallest = tallest or 1
                    if k.tag == _FLOAT and not _finite(k.value):
                        raise BadYAML(_line(k), f"{k.value} is not a finite number (JSON, and so the API, cannot "
                                                "carry it)")
            size[key], height[key] = total, tallest + 1
            if tallest + 1 > MAX_NESTING:
                raise BadYAML(_line(node), f"nested more than {MAX_NESTING} levels deep (limits.MAX_NESTING)")
            if total > MAX_YAML_NODES:
                raise BadYAML(_line(node), f"expands to more than {MAX_YAML_NODES:,} values once its aliases are "
                                           "expanded (limits.MAX_YAML_NODES); write the values out or use fewer aliases")
            continue
        if key in size:  # a list or mapping seen before: this reference is an alias
            aliases += 1
            if aliases > MAX_YAML_ALIASES:
                raise BadYAML(_line(node), f"more than {MAX_YAML_ALIASES} alias references (*name) to lists or "
                                           "mappings (limits.MAX_YAML_ALIASES); write the values out")
            continue
        if isinstance(node, yaml.MappingNode):
            _check_keys(node)
        on_path.add(key)
        stack.append((node, True))
        for kid in _children(node):
            if isinstance(kid, collections):
                if id(kid) in on_path:
                    raise BadYAML(_line(kid) or _line(node), "an anchor is used inside itself (a recursive "
                                                             "alias); YAML data here must be a tree")
                stack.append((kid, False))


_FLOAT = "tag:yaml.org,2002:float"


def _finite(text: str) -> bool:
    try:
        return math.isfinite(float(text.replace("_", "")))
    except ValueError:  # .inf, .NaN and the like
        return False


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return node.value
    return [n for pair in node.value for n in pair]


def _check_keys(node: yaml.MappingNode) -> None:
    seen: dict[tuple[str, str], int] = {}
    for key, _ in node.value:
        if not isinstance(key, yaml.ScalarNode) or key.tag == "tag:yaml.org,2002:merge":
            continue
        ident = (key.tag, key.value)
        line = _line(key)
        if ident in seen:
            raise BadYAML(line, f"key {key.value!r} appears twice in one mapping (first on line {seen[ident]}); "
                                "YAML would keep only the last one: merge them or rename one")
        seen[ident] = line


def load_yaml(text: str) -> tuple[Any, yaml.Node | None]:
    """``(data, node)`` of one YAML document: the Python values and the composed node (for line
    numbers). Raises :class:`BadYAML` (with a line when there is one) for anything refused.

    >>> load_yaml("a: 1\\nb: [x, y]\\n")[0]
    {'a': 1, 'b': ['x', 'y']}
    >>> load_yaml("a: 1\\na: 2\\n")
    Traceback (most recent call last):
    ...
    pytest_ctxeval.core.yaml_safe.BadYAML: key 'a' appears twice in one mapping (first on line 1); YAML would keep only the last one: merge them or rename one
    """
    try:
        with paused_gc():  # nodes and values form a tree: no collector walks over them while they grow
            node = yaml.compose(text, Loader=SAFE_LOADER)
            if node is None:
                return None, None
            check_graph(node)
            data = yaml.constructor.SafeConstructor().construct_document(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        if isinstance(exc, yaml.constructor.ConstructorError) and "tag" in str(problem):
            problem = f"{problem} (only plain YAML is allowed: tags such as !!python/object are refused)"
        raise BadYAML(mark.line + 1 if mark is not None else 0, f"invalid YAML: {problem}") from None
    except RecursionError:
        raise BadYAML(0, f"invalid YAML: nested too deeply (over {MAX_NESTING} levels, limits.MAX_NESTING)") from None
    return data, node
