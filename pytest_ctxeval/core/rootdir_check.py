"""Catch the one case where pytest chooses the wrong project: a ``--ctxeval-*`` option value
written after a space (``--ctxeval-prompt /elsewhere/compact.j2``).

pytest finds its rootdir and config file *before* it loads plugins, so at that moment it does not
know that ``--ctxeval-prompt`` takes a value: the value is read as a test path, and the rootdir
and ini file are searched from it (pytest-dev/pytest#8846, "a known issue": the ``--opt=value``
form is not affected). A prompt or baseline outside the project then makes pytest read no
``[tool.pytest.ini_options]`` at all: no ``ctxeval_scenarios``, no ``ctxeval_graders``, the
built-in library runs instead of the project's scenarios, and the run is green. A plugin cannot
take part in that early parse, so :func:`misread_rootdir` finds out afterwards: it works the
setup out again with the option values taken as values, and when the rootdir or the ini file
differs it returns the message of a usage error (what happened, and the ``=`` form that fixes it).
"""

from __future__ import annotations

import inspect
import os
import shlex
from pathlib import Path
from typing import Any

__all__ = ["misread_rootdir", "value_options"]

#: argparse actions that take no value.
_FLAG_ACTIONS = ("store_true", "store_false", "store_const", "count", "help", "version")


def value_options(parser: Any, prefix: str = "--ctxeval-") -> set[str]:
    """The long option names starting with ``prefix`` that take a value (``--ctxeval-prompt``,
    not ``--ctxeval-strict``), as registered with pytest's ``parser``."""
    names: set[str] = set()
    groups = [*getattr(parser, "_groups", []), getattr(parser, "_anonymous", None)]
    for group in groups:
        for option in getattr(group, "options", []) if group is not None else []:
            if _takes_value(option):
                    names.update(n for n in option.names() if n.startswith(prefix))
    return names


def _takes_value(option: Any) -> bool:
    """Whether a pytest option takes a value: pytest 9 keeps the argparse action (``nargs`` 0 for a
    flag), pytest 8 the keyword arguments (``action='store_true'``)."""
    action = getattr(option, "_action", None)
    if action is not None:
        return bool(action.nargs != 0)
    return option.attrs().get("action", "store") not in _FLAG_ACTIONS


def _spaced_values(args: list[str], options: set[str]) -> list[tuple[str, str]]:
    """``(option, value)`` for each of ``options`` written with its value after a space, where the
    value names an existing path (the only values pytest's rootdir search picks up)."""
    found = []
    for i, arg in enumerate(args[:-1]):
        if arg == "--":
            break
        value = args[i + 1]
        if arg in options and not value.startswith("-") and Path(value).exists():
            found.append((arg, value))
    return found


def _setup(config: Any, args: list[str]) -> tuple[Path, Path | None] | None:
    """The rootdir and ini file pytest determines for ``args`` when every option it now knows
    (the plugins' too) takes its value; None when it cannot be worked out (pytest reports that)."""
    from _pytest.config.findpaths import determine_setup

    try:
        ns = config._parser.parse_known_args(args)
        accepted = inspect.signature(determine_setup).parameters
        given = {"inifile": ns.inifilename, "override_ini": getattr(ns, "override_ini", None),
                 "args": [str(a) for a in ns.file_or_dir], "rootdir_cmd_arg": ns.rootdir or None,
                 "invocation_dir": config.invocation_params.dir}
        result = determine_setup(**{k: v for k, v in given.items() if k in accepted})
    except Exception:  # noqa: BLE001 - pytest's own parse reports a bad command line its way
        return None
    return Path(result[0]), Path(result[1]) if result[1] is not None else None


def _where(root: Path, ini: Path | None) -> str:
    return f"rootdir {root} with {'config file ' + str(ini) if ini else 'no config file'}"


def misread_rootdir(config: Any) -> str | None:
    """The usage-error message when a spaced ``--ctxeval-*`` option value moved pytest's rootdir or
    ini file away from the ones the command line means, else None."""
    args = [*shlex.split(os.environ.get("PYTEST_ADDOPTS", "")), *map(str, config.invocation_params.args)]
    spaced = _spaced_values(args, value_options(config._parser))
    if not spaced:
        return None
    meant = _setup(config, args)
    if meant is None:
        return None
    chosen = (Path(config.rootpath), Path(config.inipath) if config.inipath is not None else None)
    if chosen == meant:
        return None
    written = " ".join(f"{opt} {value}" for opt, value in spaced)
    fixed = " ".join(f"{opt}={value}" for opt, value in spaced)
    lost = (f"the settings in {meant[1]} (ctxeval_scenarios, ctxeval_graders, ...) would not be read"
            if meant[1] is not None and meant[1] != chosen[1] else
            f"the scenarios/ folder of {meant[0]} would not be found")
    return (f"{written}: pytest reads the paths on its command line before it loads plugins, so it took "
            f"this value for a test path and chose {_where(*chosen)}, instead of {_where(*meant)}: "
            f"{lost} and other scenarios would run. Write the value after '=': {fixed} "
            "(pytest-dev/pytest#8846)")
