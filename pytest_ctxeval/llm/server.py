"""The reference model behind a real HTTP server on 127.0.0.1, speaking the Messages API.

:class:`ApiServer` serves a :class:`~pytest_ctxeval.llm.wire.WireModel` over a socket, so the
``anthropic``, ``record`` and ``replay`` backends run with the SDK's own HTTP client (its
connection pool and keep-alive, its proxies, its timeouts and streaming rules, its retries)
against an endpoint that answers as the API documents::

    with ApiServer() as server:
        env = server.environ()   # ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY for this server
        ...                      # pytest --ctxeval --ctxeval-backend anthropic, or ctxeval run

It also answers as an HTTP forward proxy (a request line with an absolute ``http://`` URL is
served and counted in :attr:`ApiServer.proxied`), so a test can show that ``HTTP_PROXY`` is
honoured, and it counts TCP connections (:attr:`ApiServer.connections`), so a test can show that
keep-alive is kept. Benchmarks use it the same way (``python -m pytest_ctxeval.llm.server`` prints
the address and serves until interrupted).
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx2

from .wire import WireModel

__all__ = ["ApiServer"]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: one connection serves many requests
    server: _Server

    def setup(self) -> None:
        super().setup()
        with self.server.owner._lock:
            self.server.owner.connections += 1

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read the wire log
        return

    def _serve(self) -> None:
        owner = self.server.owner
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        target = self.path
        if target.startswith("http://"):  # absolute form: we are being used as a forward proxy
            with owner._lock:
                owner.proxied += 1
            url = target
        else:
            url = f"http://{self.headers.get('host', owner.address)}{target}"
        headers = [(k, v) for k, v in self.headers.items() if k.lower() not in ("content-length", "transfer-encoding")]
        request = httpx2.Request(self.command, url, headers=headers, content=body)
        try:
            response = owner.wire.handle(request)
        except ConnectionResetError:  # a scripted dropped connection
            self.close_connection = True
            self.connection.close()
            return
        data = response.read()
        self.send_response(response.status_code)
        for key, value in response.headers.items():
            if key.lower() not in ("content-length", "transfer-encoding", "connection"):
                self.send_header(key, value)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_DELETE = _serve


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: ApiServer


class ApiServer:
    """A :class:`WireModel` on ``127.0.0.1:<free port>``, in a background thread.

    Use it as a context manager (or ``start()`` / ``stop()``). ``url`` is the base URL for the
    Anthropic shape, ``vertex_url`` for ``AnthropicVertex`` (its base URL ends in ``/v1``).
    """

    def __init__(self, wire: WireModel | None = None, **wire_options: Any):
        self.wire = wire or WireModel(**wire_options)
        self.connections = 0
        self.proxied = 0
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def address(self) -> str:
        if self._server is None:
            raise RuntimeError("the server is not running; call start() or use it in a with block")
        host, port = self._server.server_address[:2]
        return f"{host!s}:{port}"

    @property
    def url(self) -> str:
        return f"http://{self.address}"

    @property
    def vertex_url(self) -> str:
        return f"{self.url}/v1"

    def environ(self) -> dict[str, str]:
        """The environment that points the ``anthropic`` backend at this server."""
        return {"ANTHROPIC_BASE_URL": self.url, "ANTHROPIC_API_KEY": self.wire.api_key}

    def bedrock_environ(self) -> dict[str, str]:
        """The environment for ``--ctxeval-provider bedrock`` against this server: AWS keys the
        server verifies SigV4 signatures with, a region, and ``ANTHROPIC_BEDROCK_BASE_URL``."""
        return {"AWS_ACCESS_KEY_ID": self.wire.aws.access_key, "AWS_SECRET_ACCESS_KEY": self.wire.aws.secret_key,
                "AWS_REGION": "us-east-1", "ANTHROPIC_BEDROCK_BASE_URL": self.url}

    def vertex_environ(self) -> dict[str, str]:
        """The environment for ``--ctxeval-provider vertex`` against this server (an access token,
        so no Google login is needed)."""
        return {"ANTHROPIC_VERTEX_ACCESS_TOKEN": self.wire.api_key, "CLOUD_ML_REGION": "us-east5",
                "ANTHROPIC_VERTEX_PROJECT_ID": "ctxeval-test", "ANTHROPIC_VERTEX_BASE_URL": self.vertex_url}

    def start(self) -> ApiServer:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.owner = self
        # serve_forever checks for shutdown every poll_interval: at its default (0.5 s) every stop
        # waited half a second, idle (a test suite stops dozens of servers).
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02},
                                        name="ctxeval-api-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> ApiServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def main() -> None:  # pragma: no cover - a manual tool
    """Serve until interrupted; print the environment that points a run at it."""
    import time

    with ApiServer() as server:
        for key, value in server.environ().items():
            print(f"export {key}={value}")
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":  # pragma: no cover
    main()
