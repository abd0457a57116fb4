"""Building a large tree of plain values without CPython's cycle collector rescanning it.

CPython's cyclic garbage collector runs a full collection, a walk over every tracked container
alive, once enough new containers have survived the young generations (every ~70,000 net new
containers until the heap is four times that, then every 25 % of growth). Reading and checking a
big scenario or transcript creates millions of containers (YAML nodes, dicts, lists, pydantic models) that are all
kept, so it triggers many full collections, each a walk over everything built so far: for
``ctxeval lint`` on a 16,000-record scenario, half of the CPU time was the collector, and it grew
faster than the input (a profile blamed whichever function was allocating when a collection
struck, such as ``scenarios._turn_kind``, 7,491 calls at ~90 µs each). What these readers build is
a tree: reference counting frees it, and the few cycles made meanwhile (a caught exception and its
traceback, a compiled template) wait for the next collection after the pause.

:func:`paused_gc` pauses the collector for one such bounded piece of work and restores the state it
found (nested pauses and a caller that disabled the collector are left as they were); it is also a
decorator (``@paused_gc()``). Used by :func:`~pytest_ctxeval.core.yaml_safe.load_yaml`,
:func:`~pytest_ctxeval.scenario.lint.lint_file`, :func:`~pytest_ctxeval.transcript.jsonl.read_transcript` and the
importer (``import`` on 16,000 records: 3.2 s of CPU, a third of it full collections, to 2.0 s).

:func:`freeze_heap` is the same idea for a whole ``pytest --ctxeval`` session: once the plugin has
imported the anthropic SDK, pydantic, jinja2 and the engine (some 3,900 modules, 270,000 tracked
objects, almost all alive until the process ends), every full collection of the run walked them
again, and the interpreter's last collection at exit walked them once more. Frozen
(:func:`gc.freeze`), they are left out of every collection; what the session allocates afterwards
is collected as usual, and :func:`thaw` puts the frozen objects back at the end of the session.
"""

from __future__ import annotations

import atexit
import gc
from contextlib import contextmanager
from collections.abc import Iterator

__all__ = ["paused_gc", "freeze_heap", "thaw"]


@contextmanager
def paused_gc() -> Iterator[bool]:
    """Disable the cyclic garbage collector inside the ``with`` block; re-enable it on the way out
    only if it was enabled on the way in (the value the block gets: ``with paused_gc() as was_on``)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield was_enabled
    finally:
        if was_enabled:
            gc.enable()


_EXIT_FREEZE = False


def freeze_heap() -> bool:
    """Move every object tracked now into the collector's permanent generation (left out of every
    collection until :func:`thaw`), and have the interpreter's final collection at exit skip the
    heap as well. Returns False, doing nothing, when objects are already frozen (someone else's
    freeze is theirs to undo). Call it at the end of a :func:`paused_gc` block that built the heap,
    so no collection walks it in between, and only if the collector was on before that block.

    Cyclic garbage made before the freeze waits for :func:`thaw`; at interpreter exit, objects
    still alive are not collected before the process ends (Python does not promise to finalise
    those anyway: ``object.__del__``).
    """
    global _EXIT_FREEZE
    if gc.get_freeze_count():
        return False
    gc.freeze()
    if not _EXIT_FREEZE:
        _EXIT_FREEZE = True
        atexit.register(gc.freeze)  # runs only when the interpreter exits, not after an in-process session
    return True


def thaw() -> None:
    """Undo :func:`freeze_heap`: the frozen objects are collectable again (the oldest generation)."""
    gc.unfreeze()
