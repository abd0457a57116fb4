"""Shared pieces every stage uses (the bottom layer): engine messages, token estimates, the
engine's constants, identifiers, input limits, the JSON documents, safe YAML, output files, terminal
text, secret redaction and a multi-needle text index. Nothing here imports another stage."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs
    from .config import EngineConfig, resolve_context_window
    from .messages import Message, UserMessage, AssistantMessage, CompactBoundary, AttachmentMessage, ContentBlock, Usage, to_api, from_api
    from .tokens import estimate_text, estimate_messages
    from .yaml_safe import load_yaml

#: Public name -> the module of this package that defines it (imported on first use).
_EXPORTS = {
    "EngineConfig": "config", "resolve_context_window": "config", "Message": "messages", "UserMessage":
    "messages", "AssistantMessage": "messages", "CompactBoundary": "messages", "AttachmentMessage": "messages",
    "ContentBlock": "messages", "Usage": "messages", "to_api": "messages", "from_api": "messages",
    "estimate_text": "tokens", "estimate_messages": "tokens", "load_yaml": "yaml_safe",
}

__all__ = [
    "EngineConfig", "resolve_context_window", "Message", "UserMessage", "AssistantMessage", "CompactBoundary",
    "AttachmentMessage", "ContentBlock", "Usage", "to_api", "from_api", "estimate_text", "estimate_messages",
    "load_yaml",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
