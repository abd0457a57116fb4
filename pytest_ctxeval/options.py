"""Run options shared by the pytest plugin and the ``ctxeval`` CLI (one definition, two prefixes,
as pytest-benchmark does): ``add_run_options(group.addoption, "--ctxeval-")`` in the plugin,
``add_run_options(parser.add_argument, "--")`` in the CLI.

Precedence, highest first: command line, then ``[tool.pytest.ini_options]`` (plugin only), then
the defaults below.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .engine.prompt import PromptSet
from .errors import UsageError
from .llm import BACKENDS, LLM, make_llm

__all__ = ["RunOptions", "add_run_options", "builtin_scenarios_dir", "positive_int"]


def positive_int(value: str) -> int:
    """argparse type for ``--context-window``: a clear message instead of a traceback."""
    import argparse
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value!r}") from None
    if n <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value!r}")
    return n


def add_run_options(addoption: Callable[..., Any], prefix: str) -> None:
    addoption(f"{prefix}backend", dest="ctxeval_backend", choices=BACKENDS, default=None,
              help="model backend: 'offline' (default; the deterministic reference model, no key, no "
                   "network) or 'anthropic' (the real API; needs ANTHROPIC_API_KEY)")
    addoption(f"{prefix}model", dest="ctxeval_model", default=None, metavar="NAME",
              help="summariser model for the anthropic backend (default: claude-sonnet-4-5)")
    addoption(f"{prefix}context-window", dest="ctxeval_context_window", type=positive_int, default=None,
              metavar="N", help="override every scenario's context window (token budgets scale with it)")
    addoption(f"{prefix}compact-at-end", dest="ctxeval_compact_at_end", action="store_true", default=False,
              help="add a manual compaction after the last turn, so the end state is always graded")
    addoption(f"{prefix}prompt", dest="ctxeval_prompt", default=None, metavar="PATH",
              help="a jinja2 compaction prompt to use instead of the built-in one (it may include "
                   "_no_tools_preamble.j2, _sections.j2 and _no_tools_trailer.j2)")


@dataclass(frozen=True)
class RunOptions:
    """Resolved run options (the ``ctxeval_config`` fixture returns one)."""

    backend: str = "offline"
    model: str | None = None
    context_window: int | None = None
    compact_at_end: bool = False
    prompt: Path | None = None
    graders_dirs: tuple[Path, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise UsageError(f"unknown backend {self.backend!r}; choose one of: {', '.join(BACKENDS)}")
        if self.context_window is not None and self.context_window <= 0:
            raise UsageError(f"context window must be a positive integer. Current input: {self.context_window!r}")
        if self.prompt is not None and not Path(self.prompt).is_file():
            raise UsageError(f"compaction prompt {self.prompt}: no such file")
        for d in self.graders_dirs:
            if not Path(d).is_dir():
                raise UsageError(f"graders folder {d}: no such directory")

    def make_llm(self, faults: dict[str, list[str]] | None = None) -> LLM:
        return make_llm(self.backend, self.model, faults=faults)

    def prompts(self) -> PromptSet:
        return PromptSet(self.prompt)


def builtin_scenarios_dir() -> Path:
    """The built-in scenario library: inside the installed package, else the source checkout's."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "_builtin" / "scenarios", here.parent / "scenarios"):
        if candidate.is_dir():
            return candidate
    raise UsageError("the built-in scenarios folder is missing from this installation")
