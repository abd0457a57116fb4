"""The built-in library through the real backends, against the local Messages-API server.

Runs ``ctxeval run`` over every built-in scenario four times in one process: ``offline`` (the
in-process reference model), ``record`` over a socket to :class:`pytest_ctxeval.llm.server.ApiServer`,
``replay`` (server stopped) and ``anthropic`` (a rerun from the cassettes). Prints, for each, the
wall time and its ratio to the offline run, the HTTP requests and TCP connections the server saw,
and the calls and dollars the run reported. A later benchmark (prompt caching, concurrency) can
reuse :func:`run_library`.

    python benchmarks/real_api_library.py [--concurrency N]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from pytest_ctxeval.cli import main
from pytest_ctxeval.llm.server import ApiServer
from pytest_ctxeval.options import builtin_scenarios_dir


def run_library(backend: str, cassettes: Path, out: Path, concurrency: int) -> tuple[float, dict[str, Any], int]:
    """One ``ctxeval run`` of the built-in library: seconds, the results' usage, the exit code."""
    start = time.perf_counter()
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(["run", str(builtin_scenarios_dir()), "--backend", backend, "--cassettes", str(cassettes),
                     "--concurrency", str(concurrency), "--json", str(out)])
    if not out.is_file():
        raise SystemExit(f"{backend}: exit {code}: {err.getvalue()}")
    return time.perf_counter() - start, json.loads(out.read_text())["usage"], code


def main_() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, ApiServer() as server:
        root = Path(tmp)
        os.environ.update(server.environ())
        rows = []
        for backend in ("offline", "record", "replay", "anthropic"):
            if backend == "replay":
                sent, conns = len(server.wire.log), server.connections
                server.stop()
            before = len(server.wire.log)
            secs, usage, code = run_library(backend, root / "c", root / f"{backend}.json", args.concurrency)
            rows.append((backend, secs, len(server.wire.log) - before, usage, code))
        print(f"built-in library, {len(list(builtin_scenarios_dir().glob('*.yaml')))} scenarios, "
              f"--concurrency {args.concurrency}; server: {sent} HTTP requests over {conns} connections while recording")
        base = rows[0][1]
        for backend, secs, requests, usage, code in rows:
            print(f"{backend:9s} {secs:6.1f} s  x{secs / base:4.1f} offline  {requests:4d} requests  "
                  f"{usage['api_calls']:4d} calls  {usage.get('cached_calls', 0):4d} from cassettes  "
                  f"${usage['usd']:.4f}  exit {code}")


if __name__ == "__main__":
    main_()
