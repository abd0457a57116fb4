"""The reference model behind a real socket, answering as the Messages API (pytest_ctxeval.llm.server)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pytest_ctxeval.llm.server import ApiServer


@pytest.fixture
def api_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ApiServer]:
    """A fresh server on 127.0.0.1, and the environment that points the real backends at it
    (no proxy from the machine's environment, so requests go straight to the socket)."""
    with ApiServer() as server:
        for key, value in server.environ().items():
            monkeypatch.setenv(key, value)
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
            monkeypatch.delenv(name, raising=False)
        yield server
