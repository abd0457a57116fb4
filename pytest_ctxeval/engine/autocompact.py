"""Auto-compaction thresholds, warning state and the circuit breaker (000:176-210, 003:147-176,
003:280-290, 004:236-312)."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.config import EngineConfig

__all__ = ["TokenWarningState", "token_warning_state", "AutoCompactTracking", "should_autocompact"]


@dataclass(frozen=True)
class TokenWarningState:
    """``calculateTokenWarningState`` (004:251-264) for a token count."""

    tokens: int
    percent_left: float
    above_warning: bool
    above_error: bool
    above_autocompact: bool
    at_blocking_limit: bool


def token_warning_state(tokens: int, config: EngineConfig) -> TokenWarningState:
    """Where ``tokens`` stands against the thresholds; comparisons are ``>=`` as in the source
    (003:517 ``tokenCount >= autoCompactThreshold``).

    >>> s = token_warning_state(167_000, EngineConfig())
    >>> (s.above_warning, s.above_autocompact, s.at_blocking_limit)
    (True, True, False)
    """
    threshold = config.autocompact_threshold if config.autocompact_enabled else config.effective_window
    percent_left = max(0.0, (threshold - tokens) / threshold * 100) if threshold > 0 else 0.0
    return TokenWarningState(
        tokens=tokens,
        percent_left=round(percent_left, 1),
        above_warning=tokens >= config.warning_threshold,
        above_error=tokens >= config.error_threshold,
        above_autocompact=config.autocompact_enabled and tokens >= config.autocompact_threshold,
        at_blocking_limit=tokens >= config.blocking_limit,
    )


@dataclass
class AutoCompactTracking:
    """Consecutive auto-compaction failures; after ``max_consecutive_failures`` (3, 000:210) the
    breaker trips and auto-compaction stays off for the session (003:280-290). A success resets
    the count (004:300-312)."""

    max_failures: int = 3
    consecutive_failures: int = 0
    compactions: int = 0

    @property
    def tripped(self) -> bool:
        return self.consecutive_failures >= self.max_failures

    def record_failure(self) -> None:
        self.consecutive_failures += 1

    def record_success(self) -> None:
        self.consecutive_failures = 0
        self.compactions += 1


def should_autocompact(tokens: int, config: EngineConfig, tracking: AutoCompactTracking) -> bool:
    """``shouldAutoCompact`` (004:240-266): enabled, breaker not tripped, at or above the threshold."""
    return config.autocompact_enabled and not tracking.tripped and tokens >= config.autocompact_threshold
