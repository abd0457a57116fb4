"""Files an MCP server's tool wrote or moved (``mcp__filesystem__write_file``, ``edit_file``,
``move_file``): changes of the project as real as an Edit's.

Read conservatively, by the tool's name and its arguments: a tool ``mcp__<server>__<name>`` whose
name says it writes, edits, creates, appends to, patches or overwrites a file (``write_file``,
``edit_file``, ``create_file``, ``edit_block``, ``write``) and that gets one path (``path``,
``file_path``, ``filePath``); or one that moves or renames a file (``move_file``, ``rename_file``)
from ``source`` to ``destination``. Not a folder (``create_directory``), not a record of another
system (an issue, a page, a memory entity), and not a file of a remote repository (a call that also
names ``owner``, ``repo`` or ``branch``: GitHub's ``create_or_update_file`` commits elsewhere).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["mcp_file_ops"]

_WRITES = re.compile(r"^(?:write|edit|create|append|patch|overwrite|replace|save|put|modify|update|insert)"
                     r"(?:_(?:to_)?(?:file|block|text|content|lines?|in_file))?$|"
                     r"^(?:write|edit|create|append|patch|overwrite|save|modify)_file(?:_\w+)?$|"
                     r"^(?:file|text)_(?:write|edit|create|append|patch|str_replace)$", re.IGNORECASE)
_MOVES = re.compile(r"^(?:move|rename)(?:_file)?$", re.IGNORECASE)
_PATH_KEYS = ("path", "file_path", "filePath", "filepath", "filename", "file")
_FROM_KEYS = ("source", "src", "from", "old_path", "oldPath", "source_path")
_TO_KEYS = ("destination", "dest", "dst", "to", "new_path", "newPath", "destination_path", "target")
#: Arguments that say the file is somewhere else than the session's working copy.
_REMOTE_KEYS = ("owner", "repo", "repository", "branch", "bucket", "project_id")


def _value(tool_input: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip() and "\n" not in value:
            return value.strip()
    return None


def mcp_file_ops(tool: str, tool_input: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """``[("write", [path])]`` or ``[("move", [src, dst])]`` for an MCP tool call that wrote or moved a
    file of the working copy (see the module docstring); ``[]`` for any other call.

    >>> mcp_file_ops("mcp__filesystem__write_file", {"path": "/r/app/flags.json", "content": "{}"})
    [('write', ['/r/app/flags.json'])]
    >>> mcp_file_ops("mcp__filesystem__move_file", {"source": "/r/a.py", "destination": "/r/b.py"})
    [('move', ['/r/a.py', '/r/b.py'])]
    >>> mcp_file_ops("mcp__github__create_or_update_file", {"owner": "o", "repo": "r", "path": "a.py"})
    []
    >>> mcp_file_ops("mcp__filesystem__create_directory", {"path": "/r/new"})
    []
    """
    if not tool.startswith("mcp__") or not isinstance(tool_input, dict):
        return []
    name = tool.split("__")[-1]
    if any(k in tool_input for k in _REMOTE_KEYS):
        return []
    if _MOVES.match(name):
        src, dst = _value(tool_input, _FROM_KEYS), _value(tool_input, _TO_KEYS)
        return [("move", [src, dst])] if src and dst else []
    if _WRITES.match(name):
        path = _value(tool_input, _PATH_KEYS)
        return [("write", [path])] if path and not path.endswith(("/", "\\")) else []
    return []
