"""Hooks around compaction (003:179-181, 003:227, 004:460-471, 004:530, 000:27).

A scenario scripts the hooks a user configured (``hooks:``): for each event, what each hook
prints. The engine runs them where Claude Code does:

* **PreCompact**, first step of a full or partial compaction (003:179 "第一步：执行 PreCompact
  hooks"; 004:460-471 ``executePreCompactHooks({trigger: 'auto' | 'manual', customInstructions})``):
  the outputs of the hooks that match the trigger become custom instructions for the compaction
  prompt (003:181: "users inject their own compaction instructions through hooks"), merged after
  the ``/compact`` instructions (004:471 "合并 instructions"; an automatic compaction has none,
  004:469). A hook that blocks (``block: reason``, a hook exiting with code 2) stops the
  compaction: it fails with the reason, and an automatic one counts toward the circuit breaker
  like any failed attempt. Session-memory compaction has no prompt and runs no PreCompact hook
  (the seeds place the hooks inside ``compactConversation`` only).
* **SessionStart** (source ``compact``), after every compaction the engine makes (full, partial,
  session memory): each matching hook's output is a hook result message placed after the
  attachments: ``[boundary][summary][kept][attachments][hookResults]`` (003:221-229, 004:571-575).
  Hooks with the matcher ``startup`` run when the session starts instead.

A hook result is an :class:`~pytest_ctxeval.core.messages.AttachmentMessage` of type ``hook_result``
(sent, like every attachment, as a ``<system-reminder>`` user message) named after its event.
Matchers follow Claude Code's settings: PreCompact ``auto`` / ``manual``, SessionStart ``startup``
/ ``compact``; no matcher matches every trigger.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..core.messages import AttachmentMessage

__all__ = ["Hook", "HookSet", "PreCompactOutcome", "merge_hook_instructions"]

PRE_COMPACT = "PreCompact"
SESSION_START = "SessionStart"
MATCHERS = {PRE_COMPACT: ("auto", "manual"), SESSION_START: ("startup", "compact")}


@dataclass(frozen=True)
class Hook:
    """One scripted hook: what it prints (``output``), or the reason it blocks (``block``)."""

    event: str
    output: str = ""
    matcher: str | None = None
    block: str | None = None

    def matches(self, value: str) -> bool:
        return self.matcher is None or self.matcher == value


@dataclass(frozen=True)
class PreCompactOutcome:
    """What the PreCompact hooks of one compaction did."""

    instructions: str | None   # the merged custom instructions for the prompt
    hook_output: str | None    # the hooks' own part of them
    blocked: str | None        # the reason a blocking hook gave (the compaction does not run)
    ran: int                   # how many hooks matched


def merge_hook_instructions(user: str | None, hook: str | None) -> str | None:
    """The ``/compact`` instructions, then the hooks' output, a blank line apart.

    >>> merge_hook_instructions("focus on auth", "keep test output")
    'focus on auth\\n\\nkeep test output'
    >>> merge_hook_instructions(None, "keep test output")
    'keep test output'
    """
    parts = [p for p in (user, hook) if p and p.strip()]
    return "\n\n".join(parts) if parts else None


@dataclass
class HookSet:
    """The scripted hooks of a session, by event."""

    hooks: list[Hook] = field(default_factory=list)

    @classmethod
    def from_mapping(cls, mapping: dict[str, list[Any]] | None) -> HookSet:
        """From a scenario's ``hooks:`` (event -> entries with ``output``, ``matcher``, ``block``)."""
        out = []
        for event, entries in (mapping or {}).items():
            for e in entries:
                get = e.get if isinstance(e, dict) else (lambda k, e=e: getattr(e, k, None))
                out.append(Hook(event=event, output=get("output") or "", matcher=get("matcher"), block=get("block")))
        return cls(out)

    def __bool__(self) -> bool:
        return bool(self.hooks)

    def pre_compact(self, trigger: str, custom_instructions: str | None) -> PreCompactOutcome:
        """Run the PreCompact hooks for a compaction of ``trigger`` (``auto`` / ``manual``)."""
        ran = [h for h in self.hooks if h.event == PRE_COMPACT and h.matches(trigger)]
        blocked = next((h.block for h in ran if h.block), None)
        output = "\n\n".join(h.output.strip() for h in ran if not h.block and h.output.strip()) or None
        return PreCompactOutcome(merge_hook_instructions(custom_instructions, output), output, blocked, len(ran))

    def session_start(self, source: str, *, ids: Any, now: datetime) -> list[AttachmentMessage]:
        """The hook result messages of the SessionStart hooks for ``source`` (``startup`` /
        ``compact``), in the order the hooks are declared; a hook that prints nothing adds none."""
        return [AttachmentMessage(uuid=ids.uuid(), timestamp=now, attachment_type="hook_result",
                                  name=SESSION_START, content=h.output.strip())
                for h in self.hooks if h.event == SESSION_START and h.matches(source) and h.output.strip()]
