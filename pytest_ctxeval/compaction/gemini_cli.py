"""``gemini_cli``: Gemini CLI's chat compression (PEERS.md lines 29-38,
packages/core/src/context/chatCompressionService.ts).

* **When** (PEERS 30): at 0.5 of the token limit (:data:`COMPRESSION_THRESHOLD` x the window).
* **Old tool output** (PEERS 33): walking from the newest result back, once the results add up to
  more than 50,000 tokens (:data:`FUNCTION_RESPONSE_TOKENS`, scaled) each older result is saved to
  a file and replaced by a preview — in what is summarised and in what is kept.
* **Split** (PEERS 30-32, :func:`find_split_point`): keep the newest 30 % (:data:`PRESERVE_FRACTION`)
  of the characters: the split is the first user turn that holds no function response once 70 % of
  the characters lie before it, else the last such turn before that; everything is compressed only
  when the last message is a model message with no function call. A call is therefore never split
  from its response.
* **Summary** (PEERS 34-35): an XML ``<state_snapshot>`` (overall goal, active constraints, key
  knowledge, artifact trail, file system state, recent actions, task state;
  ``prompts/gemini_snapshot.j2``, our wording), then a model acknowledgement; a **second call
  verifies** the first (``prompts/gemini_verify.j2``) and its snapshot is the one kept.
* **Failure** (PEERS 36-37): an empty summary, or a new history larger than the old one, is a
  failed compression: the history is left as it was.

Assumed where PEERS.md is silent: after an automatic compression that inflated the history,
automatic compression is not tried again in the session (a forced ``/compact`` still runs, and one
that inflates does not turn it off); the preview is the engine's ``preview_chars`` (2,000
characters, scaled); characters are counted on the API form of each message (JSON); a verify reply
without a snapshot keeps the first snapshot.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..engine.budget import safe_file_stem
from ..engine.compact import CompactionFailed
from ..core.messages import (
    AssistantMessage, CompactBoundary, TextBlock, ToolResultBlock, UserMessage, result_text, to_api, tool_results,
    tool_uses,
)
from ..core.tokens import estimate_messages, estimate_text
from .base import BaseCompactor, Compacted, CompactionState, option, render, scaled
from .formats import FormatSection, SummaryFormat

__all__ = ["GeminiCli", "COMPRESSION_THRESHOLD", "PRESERVE_FRACTION", "FUNCTION_RESPONSE_TOKENS",
           "find_split_point", "truncate_old_responses", "ACKNOWLEDGEMENT", "extract_snapshot"]

#: PEERS 30: "Compress at 0.5 of the token limit".
COMPRESSION_THRESHOLD = 0.5
#: PEERS 30: "keep the newest 30 %" (so the split comes once 70 % of the characters lie before it).
PRESERVE_FRACTION = 0.3
#: PEERS 33: "Old function responses beyond a 50,000-token budget are saved to a file" (scaled).
FUNCTION_RESPONSE_TOKENS = 50_000
#: PEERS 35: the snapshot is "followed by a model acknowledgement" (our wording).
ACKNOWLEDGEMENT = "Understood. I have the state snapshot and will continue the work from it."

FORMAT = SummaryFormat("Gemini CLI state snapshot", (
    FormatSection("overall_goal", ("request",)),
    FormatSection("active_constraints", ("constraints",)),
    FormatSection("key_knowledge", ("concepts",)),
    FormatSection("artifact_trail", ("files",)),
    FormatSection("file_system_state", ("files",)),
    FormatSection("recent_actions", ("current",)),
    FormatSection("task_state", ("pending",)),
), style="xml", root="state_snapshot")

_SNAPSHOT = re.compile(r"<state_snapshot>[\s\S]*?</state_snapshot>", re.IGNORECASE)


def extract_snapshot(reply: str) -> str:
    """The ``<state_snapshot>`` element of a reply (the thinking before it dropped); the stripped
    reply when it has none."""
    match = _SNAPSHOT.search(reply or "")
    return match.group(0).strip() if match else (reply or "").strip()


def _chars(message: Any) -> int:
    return len(json.dumps(to_api([message]), ensure_ascii=False)) if not isinstance(message, CompactBoundary) else 0


def _user_turn(message: Any) -> bool:
    """A user turn that holds no function response: a split may come before it."""
    return isinstance(message, UserMessage) and not tool_results(message)


def find_split_point(messages: list[Any], preserve: float = PRESERVE_FRACTION) -> int:
    """Index of the first message kept (PEERS 30-32): the messages before it are compressed.

    >>> u = lambda i, t: UserMessage(uuid=f"u{i}", content=t)
    >>> a = lambda i, t: AssistantMessage(uuid=f"a{i}", content=[TextBlock(text=t)])
    >>> find_split_point([u(1, "x" * 100), a(1, "y" * 100), u(2, "x" * 100), a(2, "y" * 100), u(3, "z")])
    4
    """
    chars = [_chars(m) for m in messages]
    target = sum(chars) * (1 - preserve)
    cumulative, last_split = 0, 0
    for i, message in enumerate(messages):
        if _user_turn(message):
            if cumulative >= target:
                return i
            last_split = i
        cumulative += chars[i]
    last = next((m for m in reversed(messages) if not isinstance(m, CompactBoundary)), None)
    if isinstance(last, AssistantMessage) and not tool_uses(last):
        return len(messages)
    return last_split


def truncate_old_responses(messages: list[Any], view: list[Any], budget: int, state: CompactionState) -> tuple[list[Any], list[Any], list[str]]:
    """``(messages, view, ids)`` with every tool result older than the newest ``budget`` tokens of
    results saved to a file and replaced by a preview (PEERS 33). Sizes are read on the view (what
    the model sees); a result no longer than its preview is left alone."""
    config = state.config
    preview = config.preview_chars
    names = {u.id: u.name for m in messages for u in tool_uses(m)}
    total, cut = 0, {}
    for message, shown in zip(reversed(messages), reversed(view)):
        for block, seen in zip(reversed(tool_results(message)), reversed(tool_results(shown))):
            text = result_text(seen)
            total += estimate_text(text, config)
            if total > budget and len(text) > preview:
                cut[block.tool_use_id] = result_text(block)
    if not cut:
        return messages, view, []
    folder = (state.session_dir / "gemini-tool-outputs") if state.session_dir else None
    shown_folder = f"{state.shown_session_dir or '<session>'}/gemini-tool-outputs"
    replaced = {}
    for tool_use_id, text in cut.items():
        stem = safe_file_stem(tool_use_id)
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
            try:
                with open(folder / f"{stem}.txt", "x", encoding="utf-8") as fh:
                    fh.write(text)
            except FileExistsError:
                pass
        replaced[tool_use_id] = (f"[Output of {names.get(tool_use_id, 'a tool')} ({estimate_text(text, config):,} tokens) "
                                 f"saved to {shown_folder}/{stem}.txt to save context; preview:]\n{text[:preview]}")

    def apply(items: list[Any]) -> list[Any]:
        out = []
        for m in items:
            if any(b.tool_use_id in replaced for b in tool_results(m)):
                m = m.model_copy(update={"content": [
                    b.model_copy(update={"content": replaced[b.tool_use_id]})
                    if isinstance(b, ToolResultBlock) and b.tool_use_id in replaced else b for b in m.content]})
            out.append(m)
        return out

    return apply(messages), apply(view), list(replaced)


class GeminiCli(BaseCompactor):
    """Gemini CLI: split at a safe user turn keeping the newest 30 %, state snapshot, verify pass."""

    name = "gemini_cli"
    description = "Gemini CLI: XML state snapshot of the oldest 70 % (verified by a second call) at 50 % of the window"
    summary_format = FORMAT

    def __init__(self, *, tiers: str = "all", threshold: float = COMPRESSION_THRESHOLD,
                 preserve: float = PRESERVE_FRACTION, verify: bool = True, **options: Any):
        super().__init__(tiers=tiers, **options)
        self.threshold = option(self.name, "threshold", threshold, float, low=0.01, high=1)
        self.preserve = option(self.name, "preserve", preserve, float, low=0, high=0.99)
        self.verify = option(self.name, "verify", verify, bool)

    def should_compact(self, state: CompactionState) -> bool:
        if state.store.get("gemini_failed"):
            return False
        return state.tokens >= self.threshold * state.config.context_window

    def compact(self, state: CompactionState) -> Compacted | None:
        budget = scaled(FUNCTION_RESPONSE_TOKENS, state.config)
        messages, view, truncated = truncate_old_responses(state.messages, state.view, budget, state)
        if truncated:
            state.emit("compact", "gemini_outputs_saved", ids=truncated,
                       detail=f"{len(truncated)} tool output(s) beyond the newest {budget:,} tokens of results saved "
                              "to files and previewed")
        split = find_split_point(view, self.preserve)
        if split <= 0:
            return None  # nothing older than the kept 30 % to compress
        head, tail = view[:split], messages[split:]
        system = render("gemini_system.j2")
        text, usage, request = state.ask(head, render("gemini_snapshot.j2", instructions=state.instructions or ""),
                                         system=system)
        snapshot = extract_snapshot(text)
        if not snapshot:
            raise CompactionFailed("the summariser returned an empty state snapshot", request, text)
        calls = 1
        if self.verify:
            checked, more, request = state.ask(head, render("gemini_verify.j2", snapshot=snapshot), system=system)
            calls += 1
            usage = usage.model_copy(update={"input_tokens": usage.input_tokens + more.input_tokens,
                                             "output_tokens": usage.output_tokens + more.output_tokens})
            snapshot = extract_snapshot(checked) if _SNAPSHOT.search(checked or "") else snapshot
            text = checked or text
        summary_message = state.summary_message(snapshot)
        ack = AssistantMessage(uuid=state.uuid(), timestamp=summary_message.timestamp,
                               content=[TextBlock(text=ACKNOWLEDGEMENT)])
        new = [summary_message, ack, *tail]
        before, after = estimate_messages(state.view, state.config), estimate_messages([summary_message, ack, *view[split:]], state.config)
        if after > before:
            if state.trigger == "auto":  # a forced /compact that inflates does not turn automatic compression off
                state.store["gemini_failed"] = True
            raise CompactionFailed(f"compression inflated the history ({before:,} -> {after:,} tokens); the history is "
                                   "kept as it was" + (" and automatic compression is off for the rest of the session"
                                                       if state.trigger == "auto" else ""), request, text)
        return Compacted(messages=new, summary=snapshot, summarized=state.messages[:split], raw_reply=text,
                         request=request, usage=usage,
                         notes=[f"split at message {split} of {len(view)}; {calls} model call(s)"])
