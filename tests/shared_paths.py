"""Where the shared seeds and corpus live: ``$CTXEVAL_SHARED``, else ``shared/`` next to this
checkout (the layout of this workplace: ``work/main`` and ``work/shared``)."""

from __future__ import annotations

import os
from pathlib import Path

_CANDIDATES = [Path(os.environ["CTXEVAL_SHARED"])] if os.environ.get("CTXEVAL_SHARED") else []
_CANDIDATES += [Path(__file__).resolve().parents[2] / "shared", Path("/work/shared")]

SHARED = next((p for p in _CANDIDATES if (p / "corpus").is_dir()), _CANDIDATES[0])
CORPUS = SHARED / "corpus"
SEEDS = SHARED / "seeds"
