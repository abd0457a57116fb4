"""Fixtures for the engine tests; the builders live in ``engine_kit``."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_ctxeval.core.config import EngineConfig

from engine_kit import Session


@pytest.fixture
def session(tmp_path):
    """A factory: ``session(config=..., faults=..., anchor=...)``."""
    made: list[Session] = []

    def make(config: EngineConfig | None = None, **kw: Any) -> Session:
        s = Session(tmp_path / f"s{len(made)}", config, **kw)
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()
