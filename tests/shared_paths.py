"""Where the shared seeds and corpus live: ``$CTXEVAL_SHARED``, else ``shared/`` beside this
checkout (``../shared`` from the repository root). ``.ci/run`` sets the variable.

The corpus holds third-party transcripts that stay outside the repository, so a bare clone has none.
Two ways to use this module:

* ``from shared_paths import CORPUS`` (or ``SEEDS``) in a module whose tests all need the folder (it
  reads corpus files at import time, or parametrizes over them): when the folder is absent, the
  whole module is skipped, with a reason naming the variable;
* ``from shared_paths import CORPUS_DIR, needs_shared`` in a module where only some tests need it:
  ``CORPUS_DIR``/``SEEDS_DIR`` are always defined (where the folder was looked for, when absent) and
  ``@needs_shared`` skips just the tests that read them, with the same reason.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ENV = "CTXEVAL_SHARED"
_CANDIDATES = [Path(os.environ[ENV])] if os.environ.get(ENV) else []
_CANDIDATES.append(Path(__file__).resolve().parents[1].parent / "shared")

SHARED = next((p for p in _CANDIDATES if (p / "corpus").is_dir() and (p / "seeds").is_dir()), None)
REASON = (f"needs the shared corpus and seeds: set {ENV} to the folder holding corpus/ and seeds/ "
          f"(looked in: {', '.join(str(p) for p in _CANDIDATES)})")
CORPUS_DIR = (SHARED or _CANDIDATES[0]) / "corpus"
SEEDS_DIR = (SHARED or _CANDIDATES[0]) / "seeds"
#: Skips a test that reads ``CORPUS_DIR`` or ``SEEDS_DIR`` when the shared folder is absent.
needs_shared = pytest.mark.skipif(SHARED is None, reason=REASON)


def __getattr__(name: str) -> Path:
    """``CORPUS`` and ``SEEDS``: importing either skips the importing module when the folder is absent."""
    if name in ("CORPUS", "SEEDS"):
        if SHARED is None:
            importer = sys._getframe(1).f_globals.get("__name__", "this module")
            pytest.skip(f"{importer} (all its tests) {REASON}", allow_module_level=True)
        return CORPUS_DIR if name == "CORPUS" else SEEDS_DIR
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
