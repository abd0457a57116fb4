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
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from collections.abc import Iterator

__all__ = ["paused_gc"]


@contextmanager
def paused_gc() -> Iterator[None]:
    """Disable the cyclic garbage collector inside the ``with`` block; re-enable it on the way out
    only if it was enabled on the way in."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
