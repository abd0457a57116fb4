"""What a scenario template's output depends on, so the expander renders it once per inputs.

A long scenario renders the same field in every pass of its ``repeat`` blocks: ``"Reading the {{
mods[k % 6] }} module."`` or ``{{ log(lines=30, seed=k) }}`` depend on ``k`` only, and a 10,000-turn
session rendered each of them fifty times over. The output of a template is a function of the
values of the names it reads that the context gives (the repeat counters), as long as everything
else it reads is constant and nothing it does has an effect: the fillers (deterministic), the
scenario's ``vars``, the sandbox's guards and jinja's ``range``, ``dict`` and ``namespace``.
:func:`template_inputs` gives those names, or says the template is not such a function:

* it reads another global (``lipsum`` is random; ``cycler``, ``joiner`` keep state) or uses the
  ``random`` filter, or
* it calls anything but a name (``mods.append(1)``, ``x|attr('pop')``): a method call may change a
  ``vars`` value that every later render sees, so once a template can, the expander stops reusing
  outputs altogether (:data:`MAY_CHANGE_VALUES`).

``tests/test_long_session_fast_paths.py`` checks expansions with and without the reuse agree.
"""

from __future__ import annotations

import threading
from collections.abc import Collection

import jinja2
from jinja2 import nodes

__all__ = ["template_inputs", "take_tree", "MAY_CHANGE_VALUES", "PURE_BUILTINS", "IMPURE_FILTERS"]

#: jinja's own globals whose result depends only on their arguments.
PURE_BUILTINS = frozenset({"range", "dict", "namespace"})
#: Filters whose result is not a function of their input (a random pick).
IMPURE_FILTERS = frozenset({"random"})


class _MayChange:
    def __repr__(self) -> str:
        return "MAY_CHANGE_VALUES"


#: What :func:`template_inputs` returns for a template that may change a value (a method call).
MAY_CHANGE_VALUES = _MayChange()


def template_inputs(env: jinja2.Environment, source: str,
                    pure_globals: Collection[str]) -> tuple[str, ...] | _MayChange | None:
    """Every name ``source`` reads, sorted, when its output depends only on the values the context
    gives them (``pure_globals``: the globals that are constant and without effect; a name the
    context does not give reads the same global each time, a name it gives shadows the global);
    ``None`` when it reads another global or uses an impure filter; :data:`MAY_CHANGE_VALUES`
    when it calls anything but a name. A template that does not parse is ``None`` (rendering it
    reports the error). Names the template defines itself (a loop variable) are read too: the
    context does not give them, so they add nothing that varies to the key."""
    read = _READ.get(source)
    if read is None:
        read = _read(env, source)
        while len(_READ) >= _MAX_READ:
            _READ.pop(next(iter(_READ)), None)
        _READ[source] = read
    if read is _UNPARSED or read is _IMPURE:
        return None
    if read is MAY_CHANGE_VALUES:
        return MAY_CHANGE_VALUES
    names = read
    assert isinstance(names, tuple)
    if any(name in env.globals and name not in pure_globals for name in names):
        return None
    return names


#: What the syntax tree of a source says (its parse depends on the source alone: every scenario
#: environment is a BoundedSandbox with the same settings), remembered for the process.
_READ: dict[str, object] = {}
_MAX_READ = 4096
_UNPARSED, _IMPURE = object(), object()


#: The syntax tree :func:`_read` last made, per thread: the expander compiles the same source right
#: after reading it, and takes the tree (:func:`take_tree`) instead of parsing the source again.
_LAST_TREE = threading.local()


def take_tree(source: str) -> nodes.Template | None:
    """The tree this thread's last :func:`template_inputs` parsed, if it was of ``source`` (once)."""
    last = getattr(_LAST_TREE, "value", None)
    _LAST_TREE.value = None
    return last[1] if last is not None and last[0] == source else None


def _read(env: jinja2.Environment, source: str) -> object:
    try:
        tree = env.parse(source)
    except jinja2.TemplateSyntaxError:
        return _UNPARSED
    _LAST_TREE.value = (source, tree)
    if any(not isinstance(call.node, nodes.Name) for call in tree.find_all(nodes.Call)):
        return MAY_CHANGE_VALUES
    if any(f.name in IMPURE_FILTERS for f in tree.find_all(nodes.Filter)):
        return _IMPURE
    return tuple(sorted({name.name for name in tree.find_all(nodes.Name) if name.ctx == "load"}))
