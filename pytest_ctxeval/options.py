"""Run options shared by the pytest plugin and the ``ctxeval`` CLI (one definition, two prefixes,
as pytest-benchmark does): ``add_run_options(group.addoption, "--ctxeval-")`` in the plugin,
``add_run_options(parser.add_argument, "--")`` in the CLI.

Precedence, highest first: command line, then ``[tool.pytest.ini_options]`` (plugin only), then
the defaults below.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Callable

from typing import TYPE_CHECKING

from .core.renamed import add_renamed_option
from .errors import UsageError, flag, spell_options
from .llm import BACKENDS, PROVIDERS

# Both front ends take these options (the plugin as --ctxeval-NAME, the CLI as --NAME), so a
# message from below them names both spellings (errors.flag).
spell_options(lambda option: f"--ctxeval-{option} (ctxeval: --{option})")

if TYPE_CHECKING:  # pragma: no cover
    from .compaction.base import Compactor
    from .engine.prompt import PromptSet
    from .grading.judging import Judge
    from .llm import LLM

__all__ = ["RunOptions", "add_run_options", "add_model_options", "add_strict_prompt_option", "builtin_scenarios_dir",
           "positive_int"]


#: The smallest context window a scenario may set (``context_window`` in the scenario schema).
MIN_CONTEXT_WINDOW = 1_000


def window_tokens(value: str) -> int:
    """argparse type for ``--context-window``: at least :data:`MIN_CONTEXT_WINDOW`, as in a scenario."""
    import argparse
    n = positive_int(value)
    if n < MIN_CONTEXT_WINDOW:
        raise argparse.ArgumentTypeError(f"a context window of at least {MIN_CONTEXT_WINDOW:,} tokens, got {value!r}")
    return n


def judge_votes(value: str) -> int:
    """argparse type for ``--judge-votes``: 1 to :data:`~pytest_ctxeval.core.limits.MAX_JUDGE_VOTES`."""
    import argparse

    from .core.limits import MAX_JUDGE_VOTES

    n = positive_int(value)
    if n > MAX_JUDGE_VOTES:
        raise argparse.ArgumentTypeError(f"expected 1 to {MAX_JUDGE_VOTES} votes (limits.MAX_JUDGE_VOTES), got "
                                         f"{value!r}; each vote is one model call per verdict")
    return n


def positive_int(value: str) -> int:
    """argparse type for counts: a clear message instead of a traceback."""
    import argparse
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value!r}") from None
    if n <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value!r}")
    return n


def duration(value: str) -> float:
    """argparse type for ``--offline-latency``: seconds, as ``2s``, ``250ms`` or ``0.5``."""
    import argparse
    text = value.strip().lower()
    scale = 0.001 if text.endswith("ms") else 1.0
    try:
        x = float(text[:-2] if text.endswith("ms") else text[:-1] if text.endswith("s") else text) * scale
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a duration such as 2s, 250ms or 0.5, got {value!r}") from None
    if not 0 <= x <= 600:
        raise argparse.ArgumentTypeError(f"expected a duration between 0 and 600 s, got {value!r}")
    return x


def tolerance(value: str) -> float:
    """argparse type for ``--tolerance`` / ``--ctxeval-tolerance``: a score difference in [0, 1]."""
    import argparse
    try:
        x = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number such as 0.05, got {value!r}") from None
    if not 0 <= x <= 1:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got {value!r}")
    return x


def add_model_options(addoption: Callable[..., Any], prefix: str, *, summarises: bool = True) -> None:
    """Options that choose and configure the models (summariser, judge): ``run`` and ``grade``.
    ``summarises=False`` (``grade``: it grades summaries already written) says what ``--model``
    does there: it picks the judge's model when ``--judge-model`` is not given."""
    addoption(f"{prefix}backend", dest="ctxeval_backend", choices=BACKENDS, default=None,
              help="model backend: 'offline' (default; the deterministic reference model, no key, no "
                   "network), 'anthropic' (the real API, replies cached in the cassette folder; needs "
                   "ANTHROPIC_API_KEY), 'record' (the real API, cassettes rewritten) or 'replay' "
                   "(cassettes only, never the network)")
    addoption(f"{prefix}model", dest="ctxeval_model", default=None, metavar="NAME",
              help="summariser model for the real API (default: claude-sonnet-5-5)" if summarises else
                   "this verb writes no summary: the judge's model when --judge-model is not given "
                   "(default: claude-sonnet-5-5)")
    addoption(f"{prefix}base-url", dest="ctxeval_base_url", default=None, metavar="URL",
              help="the endpoint the real backends send to: any server speaking the Messages API "
                   "(default: ANTHROPIC_BASE_URL, else the SDK's default)")
    addoption(f"{prefix}provider", dest="ctxeval_provider", choices=PROVIDERS, default=None,
              help="whose SDK client sends the real backends' requests: 'anthropic' (default), 'bedrock' "
                   "(AnthropicBedrock; AWS credentials and region; pip install pytest-ctxeval[bedrock]) or "
                   "'vertex' (AnthropicVertex; CLOUD_ML_REGION, ANTHROPIC_VERTEX_PROJECT_ID; "
                   "pytest-ctxeval[vertex])")
    addoption(f"{prefix}judge-model", dest="ctxeval_judge_model", default=None, metavar="NAME",
              help="model for the LLM graders' judge and probe answers (default: the "
                   + ("summariser model)" if summarises else "--model, else claude-sonnet-5-5)"))
    addoption(f"{prefix}judge-votes", dest="ctxeval_judge_votes", type=judge_votes, default=None, metavar="N",
              help="independent judgements per verdict; the median score counts, the majority decides "
                   "pass/fail, a spread over 2 points marks the verdict unstable (default 1)")
    addoption(f"{prefix}cassettes", dest="ctxeval_cassettes", default=None, metavar="DIR",
              help="cassette folder: the anthropic backend caches replies there, record rewrites them, "
                   "replay serves only from it (default .ctxeval/cassettes)")
    addoption(f"{prefix}concurrency", dest="ctxeval_concurrency", type=positive_int, default=None, metavar="N",
              help="model requests in flight at once, over the whole run: scenarios, summaries, judge "
                   "votes and probes share this one limit (default 8)")
    addoption(f"{prefix}batch", dest="ctxeval_batch", action="store_true", default=False,
              help="send judge requests through the Message Batches API (for suites too large for "
                   "interactive rate limits); results are polled, cached and graded")
    addoption(f"{prefix}prices", dest="ctxeval_prices", default=None, metavar="FILE",
              help="a YAML/JSON price table (USD per million tokens by model) to cost the run with")
    addoption(f"{prefix}prompt-caching", dest="ctxeval_prompt_caching", choices=("on", "off"), default=None,
              help="mark the prefixes that requests share (the probes of one context, a request sent again) "
                   "with cache_control breakpoints, so they are billed as cache reads (default on; 'off' for "
                   "an endpoint that refuses cache_control)")
    addoption(f"{prefix}offline-latency", dest="ctxeval_offline_latency", type=duration, default=None,
              metavar="SECONDS", help="the offline reference model answers after this long (2s, 250ms): a run "
              "that waits on the model like a real one, to see what concurrency buys (default 0)")


def add_strict_prompt_option(addoption: Callable[..., Any], prefix: str) -> None:
    """``strict-prompt``: the front ends that print the prompt-change coverage note (``pytest
    --ctxeval``, ``ctxeval run``) fail the run on a changed line the offline model does not see."""
    addoption(f"{prefix}strict-prompt", dest="ctxeval_strict_prompt", action="store_true", default=False,
              help="offline, a changed compaction-prompt line the offline model does not see (NOT SEEN OFFLINE in "
                   "the prompt-change coverage note) fails the run, naming each line: for CI jobs that test "
                   "prompt edits offline (docs/strict-prompt.md)")


def add_run_options(addoption: Callable[..., Any], prefix: str) -> None:
    """The model options plus what shapes a scenario run: ``pytest --ctxeval`` and ``ctxeval run``."""
    add_model_options(addoption, prefix)
    addoption(f"{prefix}context-window", dest="ctxeval_context_window", type=window_tokens, default=None,
              metavar="N", help="override every scenario's context window (token budgets scale with it)")
    addoption(f"{prefix}compact-at-end", dest="ctxeval_compact_at_end", action="store_true", default=False,
              help="add a manual compaction after the last turn, so the end state is always graded")
    addoption(f"{prefix}prompt", dest="ctxeval_prompt", default=None, metavar="PATH",
              help="a jinja2 compaction prompt to use instead of the built-in one (it may include "
                   "_no_tools_preamble.j2, _sections.j2 and _no_tools_trailer.j2; 'ctxeval prompt init DIR' "
                   "copies the built-ins to edit, 'ctxeval prompt show' prints what a run sends)")
    addoption(f"{prefix}session-memory-prompt", dest="ctxeval_session_memory_prompt", default=None, metavar="PATH",
              help="a jinja2 session-memory notes template to use instead of the built-in ten-section one")
    add_renamed_option(addoption, prefix, "compactor", dest="ctxeval_compactor", default=None, metavar="SPEC",
              help="the compactor to run the scenarios under: claude_code (default, the reference "
                   "engine), codex, gemini_cli, opencode, observation_masking, anthropic_server (real API only), "
                   "or your own as package.module:Name; options in parentheses: 'observation_masking(keep=5)'")


@dataclass(frozen=True)
class RunOptions:
    """Resolved run options (the ``ctxeval_options`` fixture returns one)."""

    backend: str = "offline"
    model: str | None = None
    context_window: int | None = None
    compact_at_end: bool = False
    prompt: Path | None = None
    session_memory_prompt: Path | None = None
    graders_dirs: tuple[Path, ...] = field(default_factory=tuple)
    judge_model: str | None = None
    judge_votes: int = 1
    cassettes: Path | None = None
    concurrency: int = 8
    batch: bool = False
    prices: Path | None = None
    compactor: str | None = None
    base_url: str | None = None
    provider: str = "anthropic"
    prompt_caching: bool = True
    offline_latency: float = 0.0

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise UsageError(f"unknown backend {self.backend!r}; choose one of: {', '.join(BACKENDS)}")
        if self.context_window is not None and self.context_window <= 0:
            raise UsageError(f"context window must be a positive integer. Current input: {self.context_window!r}")
        if self.prompt is not None and not Path(self.prompt).is_file():
            raise UsageError(f"compaction prompt {self.prompt}: no such file")
        if self.session_memory_prompt is not None and not Path(self.session_memory_prompt).is_file():
            raise UsageError(f"session-memory template {self.session_memory_prompt}: no such file")
        for d in self.graders_dirs:
            if not Path(d).is_dir():
                raise UsageError(f"graders folder {d}: no such directory (this option takes a folder of your own "
                                 "graders; to run only some graders by name: ctxeval --graders a,b, pytest -k NAME)")
        from .core.limits import MAX_JUDGE_VOTES

        if not 1 <= self.judge_votes <= MAX_JUDGE_VOTES:
            raise UsageError(f"judge votes must be from 1 to {MAX_JUDGE_VOTES} (limits.MAX_JUDGE_VOTES). "
                             f"Current input: {self.judge_votes!r}")
        if self.prices is not None:
            from .llm.pricing import load_prices, set_prices
            set_prices(load_prices(self.prices))
        if self.compactor is not None:
            self.make_compactor()  # a bad spec is a usage error now, not one failure per scenario

    @classmethod
    def from_namespace(cls, ns: Any, *, ini: Callable[[str], Any] | None = None,
                       graders_dirs: tuple[Path, ...] = ()) -> RunOptions:
        """From parsed options (argparse namespace or pytest's option object); ``ini`` supplies
        values the command line left unset (pytest). Command line > ini > defaults."""
        def get(name: str, default: Any = None) -> Any:
            value = getattr(ns, f"ctxeval_{name}", None)
            if value in (None, False) and ini is not None:
                value = ini(name) or value
            return default if value in (None, "") else value

        prompt, cassettes, prices = get("prompt"), get("cassettes"), get("prices")
        sm_prompt = get("session_memory_prompt")
        return cls(backend=get("backend", "offline"), model=get("model"), context_window=get("context_window"),
                   compact_at_end=bool(get("compact_at_end", False)), prompt=Path(prompt) if prompt else None,
                   session_memory_prompt=Path(sm_prompt) if sm_prompt else None,
                   graders_dirs=graders_dirs, judge_model=get("judge_model"), judge_votes=int(get("judge_votes", 1)),
                   cassettes=Path(cassettes) if cassettes else None, concurrency=int(get("concurrency", 8)),
                   batch=bool(get("batch", False)), prices=Path(prices) if prices else None,
                   compactor=get("compactor"), base_url=get("base_url"), provider=get("provider", "anthropic"),
                   prompt_caching=get("prompt_caching", "on") not in ("off", False),
                   offline_latency=float(get("offline_latency", 0.0)))

    @property
    def waits_on_model(self) -> bool:
        """Whether a request waits on the model: a real endpoint (or its recording), or the offline
        model with a simulated latency. Offline without one, nothing waits: running scenarios,
        compactors or votes side by side on threads only makes them take turns holding the GIL,
        which costs CPU (switches, and a write that lets the next thread in must queue to go on)."""
        return self.backend != "offline" or self.offline_latency > 0

    def side_by_side(self, jobs: int) -> int:
        """Threads for ``jobs`` independent runs (scenarios, compactors): up to ``concurrency``
        when requests wait on the model, else 1 (one after another; each run has its own model
        and fault plan, so the results are those of a concurrent run)."""
        return max(1, min(self.concurrency, jobs)) if self.waits_on_model else 1

    def check_key(self) -> None:
        """Fail early, with the fix, when the real API is asked for without a key, or replay
        without recorded cassettes (one usage error, not a failure per scenario)."""
        import os

        from .llm import DEFAULT_CASSETTES

        if self.provider not in PROVIDERS:
            raise UsageError(f"unknown provider {self.provider!r}; choose one of: {', '.join(PROVIDERS)}")
        if self.backend in ("anthropic", "record") and self.provider == "anthropic" \
                and not os.environ.get("ANTHROPIC_API_KEY"):
            raise UsageError(f"the {self.backend} backend needs ANTHROPIC_API_KEY in the environment (or use "
                             f"{flag('backend offline')}, the default, or replay with recorded cassettes)")
        root = Path(self.cassettes) if self.cassettes else DEFAULT_CASSETTES
        if self.backend == "replay" and not root.is_dir():
            raise UsageError(f"replay needs recorded cassettes in {root}; record them with "
                             f"{flag('backend record')} and {flag(f'cassettes {root}')}")

    def make_llm(self, faults: dict[str, list[str]] | None = None) -> LLM:
        """The summariser for a run; a scenario whose ``faults:`` script the offline model cannot be
        played against a real endpoint and is skipped with that reason (its expectations rest on
        the faults), not failed."""
        from .llm import make_llm

        if faults and self.backend != "offline":
            from .compaction.base import CompactorUnavailable

            raise CompactorUnavailable(f"this scenario scripts faults of the offline model ({', '.join(sorted(faults))}); "
                                      f"they cannot be played against the {self.backend} backend")

        return make_llm(self.backend, self.model, faults=faults, cassettes=self.cassettes,
                        concurrency=self.concurrency, base_url=self.base_url, provider=self.provider,
                        gate=self.gate(), clients=self._clients(), **self._cache_args())

    def _clients(self) -> dict[Any, Any]:
        """The SDK clients of this run (one connection pool per endpoint, kept alive)."""
        return self.__dict__.setdefault("_clients_cache", {})

    def _cache_args(self) -> dict[str, Any]:
        return {"cache": self.prompt_cache(), "latency": self.offline_latency, "caching": self.prompt_caching}

    def prompt_cache(self) -> Any:
        """The offline model's prompt cache for this run (one, like one organisation's on the API)."""
        cache = self.__dict__.get("_cache")
        if cache is None:
            from .llm.prompt_cache import PromptCache

            cache = PromptCache()
            object.__setattr__(self, "_cache", cache)
        return cache

    def gate(self) -> Any:
        """The run's one concurrency limit, shared by every model client these options make."""
        gate = self.__dict__.get("_gate")
        if gate is None:
            from .llm import Gate

            gate = Gate(self.concurrency)
            object.__setattr__(self, "_gate", gate)
        return gate

    def make_judge(self, faults: dict[str, list[str]] | None = None) -> Judge:
        """The judge for the LLM graders: same backend, the judge model, its own usage totals.
        ``faults`` (offline only) scripts failures of its ``judge``/``probe`` calls."""
        from .grading.judging import Judge
        from .llm import make_llm

        plan = {k: v for k, v in (faults or {}).items() if k in ("judge", "probe")} or None
        llm = make_llm(self.backend, self.judge_model or self.model, cassettes=self.cassettes,
                       concurrency=self.concurrency, faults=plan, base_url=self.base_url, provider=self.provider,
                       gate=self.gate(), clients=self._clients(), **self._cache_args())
        return Judge(llm, votes=self.judge_votes, batch=self.batch)

    def make_compactor(self, spec: str | None = None) -> Compactor | None:
        """The compactor ``spec`` (default: the run's) names, or None for the reference
        engine; a bad spec is a :class:`UsageError` naming it and the fix."""
        from .compaction import load_compactor

        spec = spec if spec is not None else self.compactor
        return load_compactor(spec) if spec else None

    def prompts(self, compact: Path | None = None) -> PromptSet:
        """The run's templates (``compact`` replaces the compaction prompt, for an A/B run)."""
        from .engine.prompt import PromptSet

        return PromptSet(compact or self.prompt, session_memory_template=self.session_memory_prompt)


def builtin_scenarios_dir() -> Path:
    """The built-in scenario library: inside the installed package, else the source checkout's."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "_builtin" / "scenarios", here.parent / "scenarios"):
        if candidate.is_dir():
            return candidate
    raise UsageError("the built-in scenarios folder is missing from this installation")
