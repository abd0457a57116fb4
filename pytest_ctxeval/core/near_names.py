"""Names one slip away from a known one: a tool name in a scenario ("Raed" for Read), a grader
name on the command line ("verbatim_user_mesages"). "Did you mean" only for a near miss, so a real
name of the user's own (a custom tool, a grader of their own) is never taken for a typo.

Claude Code's built-in tool names: the tools the seeds name (Read, Write, Edit, Bash, Grep, Glob,
WebFetch, WebSearch, TodoWrite, Task, Agent, Skill, PowerShell: seeds 003 and 004, the
per-tool thresholds and the compactable tool list) and those the real sessions of the shared
corpus call (MultiEdit, NotebookEdit, BashOutput, KillShell, AskUserQuestion, ExitPlanMode, the
Task* and Team* tools, SendMessage, ToolSearch). A tool of the user's own is an MCP tool, named
``mcp__server__tool``.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["CLAUDE_CODE_TOOLS", "edits", "near_miss", "near_tool"]

CLAUDE_CODE_TOOLS = frozenset({
    "Read", "Write", "Edit", "MultiEdit", "NotebookEdit", "NotebookRead", "Bash", "BashOutput", "KillBash",
    "KillShell", "PowerShell", "Grep", "Glob", "LS", "WebFetch", "WebSearch", "TodoWrite", "Task", "TaskCreate",
    "TaskUpdate", "TaskList", "TaskGet", "TaskOutput", "TaskStop", "Agent", "SendMessage", "TeamCreate",
    "TeamDelete", "AskUserQuestion", "ExitPlanMode", "EnterPlanMode", "Skill", "SlashCommand", "ToolSearch", "LSP",
})


def edits(a: str, b: str) -> int:
    """Edits from ``a`` to ``b``: a letter added, dropped, changed, or two neighbours swapped
    (``Raed`` -> ``Read`` is one)."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        row = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            row[j] = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                row[j] = min(row[j], prev2[j - 2] + 1)
        prev2, prev = prev, row
    return prev[-1]


def near_miss(name: str, known: Iterable[str]) -> str | None:
    """The known name ``name`` is a slip of, case aside: one edit away (with the same first letter
    for a name of up to 4 letters: "Exit" for Edit, not "Ask" for Task), two for a name of 6 letters
    or more ("small" is not a slip of Skill);
    None when ``name`` is known, when no name is that near, or when two are equally near."""
    known = list(known)
    if name in known or not name:
        return None
    lowered = name.lower()
    allowed = 1 if len(name) <= 5 else 2
    scored = sorted((edits(lowered, k.lower()), k) for k in known if len(name) > 4 or k[:1].lower() == lowered[:1])
    if not scored or scored[0][0] > allowed:
        return None
    best = [k for d, k in scored if d == scored[0][0]]
    return best[0] if len(best) == 1 else None


def near_tool(name: str) -> str | None:
    """The built-in tool ``name`` looks like a slip of ("Raed" -> "Read"), else None (a built-in
    name, an MCP tool, or a name of the user's own that is not that near)."""
    if name.startswith("mcp__"):
        return None
    return near_miss(name, CLAUDE_CODE_TOOLS)
