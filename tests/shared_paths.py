"""Where the shared seeds and corpus live: ``$CTXEVAL_SHARED``, else ``shared/`` beside this
checkout (``../shared`` from the repository root). ``.ci/run`` sets the variable.

The corpus holds third-party transcripts that stay outside the repository, so a bare clone has none:
a test module that imports this one is skipped then, with a reason naming the variable, instead of
failing. (Module-level skip: the importing modules read corpus files at import time.)
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ENV = "CTXEVAL_SHARED"
_CANDIDATES = [Path(os.environ[ENV])] if os.environ.get(ENV) else []
_CANDIDATES.append(Path(__file__).resolve().parents[1].parent / "shared")

SHARED = next((p for p in _CANDIDATES if (p / "corpus").is_dir() and (p / "seeds").is_dir()), None)
if SHARED is None:
    pytest.skip(
        f"needs the shared corpus and seeds: set {ENV} to the folder holding corpus/ and seeds/ "
        f"(looked in: {', '.join(str(p) for p in _CANDIDATES)})",
        allow_module_level=True,
    )
CORPUS = SHARED / "corpus"
SEEDS = SHARED / "seeds"
