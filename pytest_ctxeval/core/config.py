"""Every constant of the reference engine, named once, with the seed line it comes from.

Seeds live in ``shared/seeds/`` (cited below as ``000:L``, ``003:L``, ``004:L`` = file prefix and
line). Where the seeds are silent the choice is ours and the field's description says so.

Scaling
-------
Scenarios use small context windows so that a 60-turn script compacts several times. To keep the
real system's *proportions*, every token and character **budget** scales with
``context_window / 200_000`` (see :data:`SCALED_FIELDS`): a 20,000-token scenario triggers
auto-compaction at 16,700 tokens exactly as a 200,000-token session triggers it at 167,000.
Counts (keep the 5 most recent results, 3 retries, 5 files), times (60 minutes), the per-block size
estimates (an image is ~2,000 tokens whatever the window) and the 64 MB disk cap do not scale.
A scenario's ``config:`` mapping overrides any field after scaling.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..errors import UsageError, flag

__all__ = [
    "REFERENCE_WINDOW",
    "SCALED_FIELDS",
    "EngineConfig",
    "resolve_context_window",
]

#: The window all seed constants are stated for (000:204 ``MODEL_CONTEXT_WINDOW_DEFAULT = 200,000``).
REFERENCE_WINDOW = 200_000
#: ``[1m]`` model-name suffix: explicit 1M-token opt-in (000:196).
ONE_MILLION_WINDOW = 1_000_000
#: Environment override, first in the resolution chain (000:194).
CONTEXT_WINDOW_ENV = "CLAUDE_CODE_MAX_CONTEXT_TOKENS"

#: Tools whose old results time-based microcompact may clear (000:111, 004:212): Read, shell,
#: Grep, Glob, WebSearch, WebFetch, Edit, Write. Seed 003:122-123 disagrees for Edit/Write; see the
#: ``read_only`` profile in ``MICROCOMPACT_PROFILES``.
COMPACTABLE_TOOLS_000_004 = (
    "Read", "Bash", "PowerShell", "Grep", "Glob", "WebSearch", "WebFetch", "Edit", "Write",
)
#: Seed 003:122-123, 496-502: write tools (Edit, Write) are never cleared, nor composite tools.
COMPACTABLE_TOOLS_003 = ("Read", "Bash", "PowerShell", "Grep", "Glob", "WebSearch", "WebFetch")
#: Built-in tools whose results the API-side clearing must leave alone unless the profile makes them
#: compactable (``exclude_tools`` of ``clear_tool_uses_20250919``): subagent/composite tools
#: (003:502), the todo list, skills (re-injected after compaction, 000:158), and the write tools
#: (003:123, 003:501; compactable only under the ``default`` profile, 000:121, 004:210).
NEVER_CLEARED_TOOLS = ("Task", "Agent", "TodoWrite", "Skill", "Edit", "MultiEdit", "Write", "NotebookEdit")
MICROCOMPACT_PROFILES: dict[str, tuple[str, ...]] = {
    "default": COMPACTABLE_TOOLS_000_004,
    "read_only": COMPACTABLE_TOOLS_003,
}


def _seed(text: str, **kw: Any) -> Any:
    return Field(description=text, **kw)


class EngineConfig(BaseModel):
    """The engine's constants for one run. Build it with :meth:`for_window`.

    >>> cfg = EngineConfig.for_window(200_000)
    >>> cfg.autocompact_threshold
    167000
    >>> EngineConfig.for_window(20_000).autocompact_threshold
    16700
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    # --- context window and thresholds ---------------------------------------------------------
    context_window: int = _seed("000:204 MODEL_CONTEXT_WINDOW_DEFAULT = 200,000", default=200_000, gt=0)
    max_output_tokens: int = _seed(
        "The model's max output. Not in the seeds; 32,000 is a current Claude default. Only "
        "min(max_output_tokens, summary_output_reserve_tokens) matters (000:188).",
        default=32_000, gt=0)
    summary_output_reserve_tokens: int = _seed(
        "000:187 MAX_OUTPUT_TOKENS_FOR_SUMMARY = 20_000; 003:153; 004:51", default=20_000, ge=0)
    summary_thinking_tokens: int = _seed(
        "Not in the seeds (the seeds predate models that think by default). Current models think "
        "before they answer and thinking counts toward max_tokens, so a summariser or session-memory "
        "request asks for the summary reserve plus this much room (never scaled with the window: "
        "thinking does not shrink with a scenario's window); the reserve alone still sizes the "
        "budget. A reply cut at max_tokens is asked again with twice the room (pytest_ctxeval.llm.base).",
        default=16_000, ge=0)
    autocompact_buffer_tokens: int = _seed("000:178 AUTOCOMPACT_BUFFER_TOKENS = 13_000; 003:156; 004:238",
                                           default=13_000, ge=0)
    warning_buffer_tokens: int = _seed("000:179 WARNING_THRESHOLD_BUFFER_TOKENS = 20_000; 003:172",
                                       default=20_000, ge=0)
    error_buffer_tokens: int = _seed("000:180 ERROR_THRESHOLD_BUFFER_TOKENS = 20_000",
                                     default=20_000, ge=0)
    blocking_buffer_tokens: int = _seed("000:181 MANUAL_COMPACT_BUFFER_TOKENS = 3_000; 003:173",
                                        default=3_000, ge=0)
    max_consecutive_failures: int = _seed(
        "000:210 MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES = 3; 003:282; 004:272", default=3, ge=1)
    autocompact_enabled: bool = _seed("Auto-compaction on (the Claude Code default).", default=True)
    blocking_limit_enforced: bool = _seed(
        "000:181 MANUAL_COMPACT_BUFFER_TOKENS = 3_000 'hard blocking limit'; 003:173 '阻塞(必须压缩)' (blocked, "
        "must compact): at or above blocking_limit a turn that no compaction brought under it is refused, not sent. "
        "Off only for the compactors of pytest_ctxeval.compaction, which decide compaction themselves",
        default=True)

    # --- token estimation ---------------------------------------------------------------------
    bytes_per_token: int = _seed("000:93 4 bytes/token for prose; 003:345", default=4, ge=1)
    json_bytes_per_token: int = _seed("000:93 2 bytes/token when the text starts with '{'; 003:345",
                                      default=2, ge=1)
    estimate_margin: float = _seed("003:353 Math.ceil(totalTokens * (4 / 3))", default=4 / 3, ge=1)
    image_tokens: int = _seed("003:106 an image can take 2000+ tokens; used per image/document block",
                              default=2_000, ge=0)

    # --- tier 1: tool-result budget (issue 3) -------------------------------------------------
    default_max_result_chars: int = _seed("003:36 DEFAULT_MAX_RESULT_SIZE_CHARS = 50_000; 004:117",
                                          default=50_000, gt=0)
    tool_result_chars: dict[str, int] = _seed(
        "004:117 per-tool persistence thresholds: Bash/PowerShell 30,000, Grep 20,000, "
        "McpAuth 10,000 chars", default_factory=lambda: {
            "Bash": 30_000, "PowerShell": 30_000, "Grep": 20_000, "McpAuth": 10_000})
    max_tool_result_tokens: int = _seed("003:39 MAX_TOOL_RESULT_TOKENS = 100_000", default=100_000, gt=0)
    per_message_result_chars: int = _seed("003:42 MAX_TOOL_RESULTS_PER_MESSAGE_CHARS = 200_000; 004:121",
                                          default=200_000, gt=0)
    preview_chars: int = _seed("003:66 'Preview (first 2000 chars)'", default=2_000, gt=0)
    persisted_max_bytes: int = _seed("004:119 persisted results are kept up to 64MB, then truncated",
                                     default=64 * 1024 * 1024, gt=0)
    read_max_lines: int = _seed("003:79, 003:416 FileRead reads 2,000 lines at a time; 004:129", default=2_000, gt=0)
    read_max_bytes: int = _seed("004:129 Read maxSizeBytes 256KB", default=256 * 1024, gt=0)
    read_max_tokens: int = _seed("004:129 Read maxTokens 25K", default=25_000, gt=0)
    git_status_max_chars: int = _seed("003:77 Git status 2,000 chars (context.ts); 000:49 'git status (truncated to "
                                      "2000 chars)'", default=2_000, gt=0)
    memory_file_max_chars: int = _seed("003:78 CLAUDE.md 40,000 chars per file (claudemd.ts)", default=40_000, gt=0)

    # --- tier 3: microcompact (issue 3) -------------------------------------------------------
    microcompact_gap_minutes: float = _seed("004:197 gapThresholdMinutes = 60; 000:109", default=60, gt=0)
    microcompact_keep_recent: int = _seed("004:214 keepRecent = 5", default=5, ge=0)
    compactable_tools: tuple[str, ...] = _seed("000:111, 004:212 (profile 'default')",
                                               default=COMPACTABLE_TOOLS_000_004)
    microcompact_profile: str = _seed(
        "Names a compactable-tools set: 'default' (000:111, 004:210) or 'read_only' (003:122-123: Edit "
        "and Write results are never cleared). Sets compactable_tools unless that is given too.",
        default="default")
    cached_microcompact: bool = _seed(
        "The cached (cache_edits) microcompact path is behind feature('CACHED_MICROCOMPACT') (003:137) and "
        "its thresholds are not in the seeds: off by default; on, it deletes old results server-side",
        default=False)
    cache_edits_trigger_results: int = _seed(
        "Cached microcompact: count-based, thresholds (003:480; 000:107) with no numbers "
        "in the seeds; our choice: act once more than 20 compactable results are live", default=20, ge=0)
    cache_edits_keep_recent: int = _seed(
        "Cached microcompact keeps this many recent results (our choice; mirrors keepRecent = 5, 004:214)",
        default=5, ge=0)
    api_context_management: bool = _seed(
        "Send the context_management config with main requests (000:113-124, apiMicrocompact.ts)", default=True)
    api_clear_trigger_tokens: int = _seed("000:119 DEFAULT_MAX_INPUT_TOKENS = 180_000", default=180_000, gt=0)
    api_clear_keep_tokens: int = _seed("000:120 DEFAULT_TARGET_INPUT_TOKENS = 40_000", default=40_000, gt=0)

    # --- tier 4: session memory (issue 3) -----------------------------------------------------
    session_memory_enabled: bool = _seed(
        "004:281 session-memory compaction is an experiment ('EXPERIMENT: Try session memory compaction "
        "first'; the seed cannot tell whether it is on). Off by default: the corpus's real auto compaction "
        "(Claude Code 2.1.39, preTokens 167,731) wrote a nine-section summary, i.e. full compaction. "
        "Scenarios turn it on with config: {session_memory_enabled: true}", default=False)
    sm_init_tokens: int = _seed("004:333 first extraction at 10K tokens of context", default=10_000, gt=0)
    sm_update_growth_tokens: int = _seed("004:334 >= 5K token growth since the last extraction",
                                         default=5_000, gt=0)
    sm_update_tool_calls: int = _seed("004:335 and (>= 3 tool calls since the last extraction or none in the last turn)", default=3, ge=1)
    sm_keep_min_tokens: int = _seed("000:134, 004:430 keep window minimum 10K tokens", default=10_000, ge=0)
    sm_keep_min_text_messages: int = _seed("000:134, 004:430 and >= 5 messages with text blocks",
                                           default=5, ge=0)
    sm_keep_max_tokens: int = _seed("000:134, 004:431 keep window capped near 40K tokens",
                                    default=40_000, gt=0)
    post_compact_max_files: int = _seed("003:596 POST_COMPACT_MAX_FILES_TO_RESTORE = 5", default=5, ge=0)
    post_compact_tokens_per_file: int = _seed("003:597 POST_COMPACT_MAX_TOKENS_PER_FILE = 5_000",
                                              default=5_000, ge=0)
    post_compact_files_budget: int = _seed("000:156 file read state: 50K token budget", default=50_000, ge=0)
    post_compact_tokens_per_skill: int = _seed("003:603 POST_COMPACT_MAX_TOKENS_PER_SKILL = 5_000",
                                               default=5_000, ge=0)
    post_compact_skills_budget: int = _seed("003:604 POST_COMPACT_SKILLS_TOKEN_BUDGET = 25_000",
                                            default=25_000, ge=0)

    # --- tier 5: prompt-too-long retry --------------------------------------------------------
    max_ptl_retries: int = _seed("003:320 MAX_PTL_RETRIES = 3; 000:174", default=3, ge=0)
    ptl_drop_fraction: float = _seed("003:314 drop 20% of groups when the gap is unknown; 000:168",
                                     default=0.2, gt=0, le=1)

    @model_validator(mode="before")
    @classmethod
    def _profile(cls, data: Any) -> Any:
        if isinstance(data, dict) and "microcompact_profile" in data and "compactable_tools" not in data:
            name = data["microcompact_profile"]
            if name not in MICROCOMPACT_PROFILES:
                raise ValueError(f"microcompact_profile must be one of {', '.join(MICROCOMPACT_PROFILES)}; got {name!r}")
            data = {**data, "compactable_tools": MICROCOMPACT_PROFILES[name]}
        return data

    # --- derived thresholds -------------------------------------------------------------------
    @property
    def effective_window(self) -> int:
        """Window minus the summary reserve: ``window - min(max_output, 20_000)`` (000:188)."""
        return self.context_window - min(self.max_output_tokens, self.summary_output_reserve_tokens)

    @property
    def summary_request_max_tokens(self) -> int:
        """``max_tokens`` of a summariser request: the summary reserve plus room to think
        (:attr:`summary_thinking_tokens`).

        >>> EngineConfig.for_window(20_000).summary_request_max_tokens
        18000
        """
        return self.summary_output_reserve_tokens + self.summary_thinking_tokens

    @property
    def autocompact_threshold(self) -> int:
        """``effective_window - 13_000``: 167,000 on a 200K window (003:165, 003:171, 004:238).

        Seed 000:183 says 187,000 for 200K, which contradicts its own formula; the real transcript in
        the corpus compacted at preTokens 167,731, so 167,000 it is.
        """
        return self.effective_window - self.autocompact_buffer_tokens

    @property
    def warning_threshold(self) -> int:
        """``effective_window - 20_000``: 160,000 on a 200K window (003:172)."""
        return self.effective_window - self.warning_buffer_tokens

    @property
    def error_threshold(self) -> int:
        """``effective_window - 20_000`` (000:180)."""
        return self.effective_window - self.error_buffer_tokens

    @property
    def blocking_limit(self) -> int:
        """``effective_window - 3_000``: 177,000 on a 200K window (003:173)."""
        return self.effective_window - self.blocking_buffer_tokens

    def max_result_chars(self, tool_name: str, declared: int | None = None) -> float:
        """Persistence threshold for one tool's result (004:117, 003:408-416).

        The seed's tiers are remote per-tool config, then the tool's own declared
        ``maxResultSizeChars``, then the 50,000 default (003:410-414). ``tool_result_chars`` holds
        the built-in tools' declarations (004:117: Bash 30,000, Grep 20,000, ...); a scenario's
        ``max_result_chars`` on a call is that call's declaration and wins over it (the remote tier
        is not modelled). A declared limit is capped at ``max_tool_result_tokens`` (003:39, "100K
        tokens ≈ 400KB") at ``bytes_per_token``: our reading of how the token cap applies, which the
        seed does not spell out. Read declares ``Infinity`` (003:416): it is never persisted.
        """
        if tool_name == "Read":
            return float("inf")
        if declared is None:
            declared = self.tool_result_chars.get(tool_name)
        if declared is None:
            return self.default_max_result_chars
        return min(declared, self.max_tool_result_tokens * self.bytes_per_token)

    # --- construction -------------------------------------------------------------------------
    @classmethod
    def for_window(cls, context_window: int = REFERENCE_WINDOW, /, **overrides: Any) -> EngineConfig:
        """The seed constants scaled to ``context_window`` (see the module docstring), then
        ``overrides`` applied unscaled. Unknown or invalid overrides raise :class:`UsageError`
        naming the field."""
        if isinstance(context_window, bool) or not isinstance(context_window, int) or context_window <= 0:
            raise UsageError(f"context_window must be a positive integer. Current input: {context_window!r}")
        scale = context_window / REFERENCE_WINDOW
        values: dict[str, Any] = {"context_window": context_window}
        defaults = cls()
        for name in SCALED_FIELDS:
            value = getattr(defaults, name)
            if isinstance(value, dict):
                values[name] = {k: max(1, round(v * scale)) for k, v in value.items()}
            else:
                values[name] = max(1, round(value * scale)) if value else 0
        if "context_window" in overrides:
            raise UsageError("config.context_window: the window is not a config override; set "
                             f"'context_window:' at the top level of the scenario (or {flag('context-window N')})")
        values.update(overrides)
        try:
            return cls(**values)
        except ValidationError as exc:
            raise UsageError(_describe(exc, "config")) from None

    def replace(self, **changes: Any) -> EngineConfig:
        try:
            return type(self)(**{**self.model_dump(), **changes})
        except ValidationError as exc:
            raise UsageError(_describe(exc, "config")) from None


#: Budgets that scale with ``context_window / 200_000``.
SCALED_FIELDS: tuple[str, ...] = (
    "max_output_tokens", "summary_output_reserve_tokens", "autocompact_buffer_tokens",
    "warning_buffer_tokens", "error_buffer_tokens", "blocking_buffer_tokens",
    "default_max_result_chars", "tool_result_chars", "max_tool_result_tokens",
    "per_message_result_chars", "preview_chars", "read_max_bytes", "read_max_tokens",
    "git_status_max_chars", "memory_file_max_chars",
    "api_clear_trigger_tokens", "api_clear_keep_tokens",
    "sm_init_tokens", "sm_update_growth_tokens", "sm_keep_min_tokens", "sm_keep_max_tokens",
    "post_compact_tokens_per_file", "post_compact_files_budget",
    "post_compact_tokens_per_skill", "post_compact_skills_budget",
)


def _describe(exc: ValidationError, prefix: str) -> str:
    parts = []
    for err in exc.errors():
        msg = err["msg"].removeprefix("Value error, ")
        if not err["loc"]:  # a rule across fields: its message names them; the input is the whole config
            parts.append(f"{prefix}: {msg}")
            continue
        loc = ".".join(str(p) for p in err["loc"])
        parts.append(f"{prefix}.{loc}: {msg} (got {err.get('input')!r})")
    return "; ".join(parts)


_ONE_M = re.compile(r"\[1m\]\s*$", re.IGNORECASE)


def resolve_context_window(model: str | None = None, env: Mapping[str, str] | None = None) -> int:
    """The context window for ``model`` by the seed's priority chain (000:192-204).

    1. ``CLAUDE_CODE_MAX_CONTEXT_TOKENS`` in the environment;
    2. a ``[1m]`` suffix on the model name (1,000,000);
    3. the 200,000 default. (The capability registry, beta header and experiments of 000:198-202
       are Claude Code internals with no offline meaning; they are not modelled.)

    >>> resolve_context_window("claude-sonnet-4-5[1m]", env={})
    1000000
    """
    env = os.environ if env is None else env
    raw = env.get(CONTEXT_WINDOW_ENV)
    if raw not in (None, ""):
        try:
            value = int(raw)
        except ValueError:
            value = -1
        if value <= 0:
            raise UsageError(f"{CONTEXT_WINDOW_ENV} must be a positive integer. Current input: {raw!r}")
        return value
    if model and _ONE_M.search(model):
        return ONE_MILLION_WINDOW
    return REFERENCE_WINDOW
