"""A plain function as a compactor: no class.

``--ctxeval-compactor mypkg.compaction:compact`` (or ``ctxeval run --compactor ...``) accepts a function::

    def compact(messages, *, instructions=None):
        '''messages: the context as Messages-API dicts ({"role", "content"}), as the model sees it.'''
        return "Summary: ..."                       # a string: it becomes the summary message
        # or: return [{"role": "user", "content": "Summary: ..."}, *messages[-4:]]   # the new context

A string becomes the one message of the post-compact context (a user message carrying the summary).
A list is the post-compact context itself, as Messages-API dicts; a message returned unchanged keeps
its identity (the graders know it was kept), a new user text message first in the list is taken as
the summary. ``instructions`` is the ``/compact`` text of a manual compaction (None otherwise); a
function that does not take it is called without it.

When: like Claude Code, at the engine's auto-compact threshold (``autocompact_threshold``, see
config.py), and at every ``compact:`` step. Options: ``tiers`` (as every compactor) and ``name`` (the
label in tables; default the function's name):
``--ctxeval-compactor 'mypkg.compaction:compact(name=mine, tiers=none)'``.
"""

from __future__ import annotations

import inspect
import json
import re
from typing import Any
from collections.abc import Callable

from ..engine.compact import CompactionFailed
from ..engine.dedupe import media_stripped
from ..core.messages import UserMessage, from_api, text_of, to_api, validate_api
from .base import BaseCompactor, Compacted, CompactionState, option
from .formats import FREE_FORM

__all__ = ["FunctionCompactor", "is_compact_function"]

#: An output over this many context windows is refused (a failed compaction with the reason).
_MAX_WINDOWS = 4


def is_compact_function(obj: Any) -> bool:
    """Whether ``obj`` is a plain compactor function (``compact(messages, ...)``): a function with a
    required positional parameter. A factory (``make_compactor(level=2)``) takes keywords only."""
    if not (inspect.isfunction(obj) or inspect.ismethod(obj) or inspect.isbuiltin(obj)):
        return False
    try:
        params = list(inspect.signature(obj).parameters.values())
    except (TypeError, ValueError):
        return False
    return bool(params) and params[0].kind in (params[0].POSITIONAL_ONLY, params[0].POSITIONAL_OR_KEYWORD) \
        and params[0].default is params[0].empty


def _takes_instructions(func: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return True
    return "instructions" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


class FunctionCompactor(BaseCompactor):
    """A plain ``compact(messages, *, instructions=None) -> str | list[dict]`` function as a compactor."""

    summary_format = FREE_FORM

    def __init__(self, func: Callable[..., Any], *, tiers: str = "all", name: str | None = None, **options: Any):
        self.name = _name(name if name is not None else getattr(func, "__name__", "function"))
        super().__init__(tiers=tiers, **options)
        if name is not None:
            option(self.name, "name", name, str)
        self.func = func
        self.description = (inspect.getdoc(func) or "").split("\n")[0] or f"the function {self.name}"
        self._instructions = _takes_instructions(func)

    @classmethod
    def option_names(cls) -> list[str]:
        return ["tiers", "name"]

    def should_compact(self, state: CompactionState) -> bool:
        return state.tokens >= state.config.autocompact_threshold

    def compact(self, state: CompactionState) -> Compacted:
        shown = media_stripped(state.view)
        api = to_api(shown)
        kwargs = {"instructions": state.instructions} if self._instructions else {}
        try:
            out = self.func(json.loads(json.dumps(api)), **kwargs)  # a copy: the function may change it
        except Exception as exc:  # noqa: BLE001 - the user's compactor failed: a failed compaction, with its cause
            raise CompactionFailed(f"the {self.name} compactor raised {type(exc).__name__}: {exc}") from None
        size = len(out) if isinstance(out, str) else len(json.dumps(out, default=str)) if isinstance(out, list) else 0
        if size > _MAX_WINDOWS * 4 * state.config.context_window:  # ~4 characters a token
            raise CompactionFailed(f"the {self.name} compactor returned {size:,} characters, over {_MAX_WINDOWS} "
                                   f"context windows ({state.config.context_window:,} tokens each): refused before "
                                   "it is used (a summary that grows every round would exhaust memory)")
        if isinstance(out, str):
            if not out.strip():
                raise CompactionFailed(f"the {self.name} compactor returned an empty summary")
            return Compacted(messages=[state.summary_message(out)], summary=out, raw_reply=out, kind=self.name)
        if not isinstance(out, list) or not all(isinstance(m, dict) and m.get("role") in ("user", "assistant")
                                                and "content" in m for m in out):
            raise CompactionFailed(f"the {self.name} compactor returned {type(out).__name__}; it must return a "
                                   "string (the summary) or a list of {'role', 'content'} message dicts")
        if not out:
            raise CompactionFailed(f"the {self.name} compactor returned an empty list of messages")
        problems = validate_api(out, allow_pending_tool_use=True)
        if problems:
            raise CompactionFailed(f"the {self.name} compactor returned messages the API would refuse: {problems[0]}")
        originals = {json.dumps(api[0], sort_keys=True): m for m in state.messages if (api := to_api([m]))}
        made = from_api(out, uuid_prefix=state.uuid())
        messages: list[Any] = []
        summary = ""
        for i, (item, new) in enumerate(zip(out, made)):
            kept = originals.get(json.dumps(item, sort_keys=True))
            if kept is not None:
                messages.append(kept)
            elif i == 0 and isinstance(new, UserMessage) and isinstance(item["content"], str | list) \
                    and text_of(new.content).strip() and not any(b.get("type") == "tool_result"
                                                                 for b in _blocks(item["content"])):
                summary = text_of(new.content)
                messages.append(state.summary_message(summary))
            else:
                messages.append(new.model_copy(update={"uuid": state.uuid(), "timestamp": state.now or new.timestamp}))
        return Compacted(messages=messages, summary=summary, raw_reply=summary, kind=self.name)


def _blocks(content: Any) -> list[dict[str, Any]]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def _name(text: str) -> str:
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", str(text)).strip("_.-") or "function"
    if not re.match(r"[A-Za-z_]", name):
        name = "f_" + name
    return name
