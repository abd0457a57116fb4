"""Tier 5: prompt-too-long retry truncation (000:164-175, 003:293-320, 004:510-512).

When the compaction request itself gets ``prompt is too long``, ``truncateHeadForPTLRetry`` drops
the oldest API-round groups and the request is retried:

* with a parseable gap (``N tokens > M maximum``): drop groups until their estimate covers the gap;
* otherwise: drop 20 % of the groups (at least one);
* always keep at least one group;
* prepend ``[earlier conversation truncated for compaction retry]``;
* at most 3 retries (``MAX_PTL_RETRIES``), then the compaction fails (and counts toward the
  circuit breaker).

An API round is one model response and what answers it: a group starts at each assistant message
with a new message id; whatever precedes the first assistant message is the first group. Cutting
only at group starts means a kept head never begins with a tool_result whose tool_use was dropped.
"""

from __future__ import annotations

import math
from typing import Any

from ..core.config import EngineConfig
from ..core.messages import AssistantMessage, CompactBoundary, UserMessage
from ..core.tokens import estimate_message

__all__ = ["PTL_MARKER", "group_by_api_round", "truncate_head_for_ptl_retry"]

#: The text put in front of what is left (000:171, 003:293-320).
PTL_MARKER = "[earlier conversation truncated for compaction retry]"


def group_by_api_round(messages: list[Any]) -> list[list[Any]]:
    """Split ``messages`` into API rounds (``groupMessagesByApiRound``).

    >>> from pytest_ctxeval.core.messages import UserMessage, AssistantMessage, TextBlock
    >>> u = lambda n: UserMessage(uuid=f"u{n}", content="q")
    >>> a = lambda n, mid: AssistantMessage(uuid=f"a{n}", content=[TextBlock(text="r")], message_id=mid)
    >>> [[m.uuid for m in g] for g in group_by_api_round([u(1), a(1, "m1"), u(2), a(2, "m2"), a(3, "m2")])]
    [['u1'], ['a1', 'u2'], ['a2', 'a3']]
    """
    groups: list[list[Any]] = []
    current: list[Any] = []
    last_id: str | None = None
    for message in messages:
        if isinstance(message, CompactBoundary):
            continue
        if isinstance(message, AssistantMessage):
            mid = message.message_id or message.uuid
            if mid != last_id and current:
                groups.append(current)
                current = []
            last_id = mid
        current.append(message)
    if current:
        groups.append(current)
    return groups


def truncate_head_for_ptl_retry(
    messages: list[Any], gap: int | None, config: EngineConfig, *, marker_uuid: str = "ptl-marker",
) -> tuple[list[Any], int] | None:
    """``messages`` without their oldest API rounds, and how many rounds were dropped.

    Returns None when nothing can be dropped (a single round is left).
    """
    body = [m for m in messages if not (isinstance(m, UserMessage) and m.content == PTL_MARKER)]
    groups = group_by_api_round(body)
    if len(groups) <= 1:
        return None
    if gap is not None and gap > 0:
        # As in the seed (003:301-309): the dropped rounds cover the gap alone. The marker put back
        # in front is not counted, so rounds that cover the gap exactly leave the retry a few
        # tokens over and a second retry is spent; faithful, and tested as such.
        covered, drop = 0, 0
        for group in groups:
            covered += sum(estimate_message(m, config) for m in group)
            drop += 1
            if covered >= gap:
                break
    else:
        drop = max(1, math.floor(len(groups) * config.ptl_drop_fraction))
    drop = min(drop, len(groups) - 1)  # always keep at least one group
    kept = [m for g in groups[drop:] for m in g]
    first_ts = kept[0].timestamp
    return [UserMessage(uuid=marker_uuid, timestamp=first_ts, content=PTL_MARKER), *kept], drop
