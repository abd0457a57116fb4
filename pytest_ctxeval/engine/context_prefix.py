"""The context prefix: git status and memory files (000:45-53, 003:74-79, 003:376).

Claude Code builds it from two memoised functions (000:47-53): ``getSystemContext()`` (git
status, truncated to 2,000 characters, 000:49 and 003:77) and ``getUserContext()`` (the CLAUDE.md
files, 40,000 characters per file, 003:78). Both are computed once for the conversation and sent
with every request, so they survive every compaction.

A scenario gives them as ``git_status:`` and ``memory_files:`` (path -> content). The caps are
``EngineConfig.git_status_max_chars`` and ``memory_file_max_chars`` (scaled with the window like
every character budget); a cut text ends with a marker saying so. The engine sends both in the
request's ``system`` field. Claude Code sends the user context as a ``<system-reminder>`` user
message at the head of the messages instead (003:376: "userContext 放在用户消息而非 system prompt
中", for the prompt cache): the same tokens, before the conversation, on every request; the
engine's placement is a documented deviation (it keeps the incremental request view a view of the
conversation alone).
"""

from __future__ import annotations

from ..core.config import EngineConfig

__all__ = ["cap_git_status", "cap_memory_file", "system_context"]


def cap_git_status(status: str, config: EngineConfig) -> str:
    """``status`` cut to ``git_status_max_chars`` with Claude Code's hint to run git status.

    >>> cap_git_status("M a.py", EngineConfig())
    'M a.py'
    >>> cap_git_status("x" * 2_001, EngineConfig()).endswith('using the Bash tool)')
    True
    """
    cap = config.git_status_max_chars
    if len(status) <= cap:
        return status
    return (status[:cap] + f"\n... (truncated because it exceeds {cap:,} characters. If you need more "
            "information, run \"git status\" using the Bash tool)")


def cap_memory_file(path: str, content: str, config: EngineConfig) -> str:
    """One memory file's content cut to ``memory_file_max_chars`` (003:78), with a marker."""
    cap = config.memory_file_max_chars
    if len(content) <= cap:
        return content
    return content[:cap] + f"\n... (truncated: {path} is over the {cap:,}-character limit for a memory file)"


def system_context(system: str, git_status: str | None, memory_files: dict[str, str] | None,
                   config: EngineConfig) -> str:
    """The ``system`` field of every request: the system prompt, then the git status and the
    memory files, each capped. Without either, ``system`` unchanged.

    >>> system_context("You are a coding agent.", None, None, EngineConfig())
    'You are a coding agent.'
    """
    parts = [system]
    if git_status:
        parts.append("gitStatus: This is the git status at the start of the conversation. Note that this "
                     "status is a snapshot in time, and will not update during the conversation.\n"
                     + cap_git_status(git_status, config))
    for path, content in (memory_files or {}).items():
        parts.append(f"Contents of {path} (project instructions, checked into the codebase):\n\n"
                     + cap_memory_file(path, content, config))
    return "\n\n".join(parts)
