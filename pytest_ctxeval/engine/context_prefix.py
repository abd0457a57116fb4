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

**The compaction request sees the memory files too.** Claude Code summarises in a forked agent
(000:148, "Sends ALL messages to a forked agent with the compact prompt"; 004:486-493,
``streamCompactSummary`` with the main loop's ``cacheSafeParams`` through ``runForkedAgent()``):
the fork shares the main agent's prefix, the user context with the CLAUDE.md files included. Its
prompt asks the model to follow "additional summarization instructions provided in the included
context", such as a ``## Compact Instructions`` section of CLAUDE.md. The engine's summariser
has its own short system prompt, so :func:`compaction_system` appends the same memory-file text
to it: a CLAUDE.md compact instruction reaches the summariser on every compaction, automatic ones
included (which carry no ``/compact`` text, 004:296).
"""

from __future__ import annotations

from ..core.config import EngineConfig

__all__ = ["cap_git_status", "cap_memory_file", "compaction_system", "memory_context", "system_context"]


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
    memory = memory_context(memory_files, config)
    if memory:
        parts.append(memory)
    return "\n\n".join(parts)


def memory_context(memory_files: dict[str, str] | None, config: EngineConfig) -> str:
    """The memory files as the model is shown them, each capped (003:78): ``Contents of PATH
    (project instructions, checked into the codebase):`` and the file; "" without any.

    >>> memory_context({"/repo/CLAUDE.md": "- run make lint"}, EngineConfig()).splitlines()[0]
    'Contents of /repo/CLAUDE.md (project instructions, checked into the codebase):'
    """
    return "\n\n".join(f"Contents of {path} (project instructions, checked into the codebase):\n\n"
                       + cap_memory_file(path, content, config) for path, content in (memory_files or {}).items())


def compaction_system(system_compact: str, memory_files: dict[str, str] | None, config: EngineConfig) -> str:
    """The summariser's ``system`` field: its own prompt, then the memory files the forked agent
    shares with the main one (see the module docstring). Without memory files, ``system_compact``.

    >>> compaction_system("You summarise.", None, EngineConfig())
    'You summarise.'
    """
    memory = memory_context(memory_files, config)
    return f"{system_compact}\n\n{memory}" if memory else system_compact
