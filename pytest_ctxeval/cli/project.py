"""The project's pytest configuration, read by ``ctxeval`` so that its verbs run the graders (and
``run``, ``compare``, ``validate`` and ``lint`` the scenarios) that ``pytest --ctxeval`` runs in
the same project: the ini keys ``ctxeval_graders`` and ``ctxeval_scenarios``.

The file is found as pytest finds it: from the current folder upwards, the first of
``pytest.toml``, ``.pytest.toml``, ``pytest.ini``, ``.pytest.ini``, ``pyproject.toml`` (with a
``[tool.pytest.ini_options]`` or ``[tool.pytest]`` table), ``tox.ini`` (``[pytest]``) or
``setup.cfg`` (``[tool:pytest]``); paths are relative to that file's folder. An option on the
command line (``--graders-dir``, scenario paths) wins over the file, as in pytest.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import iniconfig

from ..errors import UsageError

__all__ = ["ProjectConfig", "find_project_config", "apply_project_config"]

_FILES = ("pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
#: Verbs whose default scenario paths (none given) come from ``ctxeval_scenarios``.
_SCENARIO_VERBS = frozenset({"run", "compare", "validate", "lint"})


@dataclass(frozen=True)
class ProjectConfig:
    """The pytest settings of the project ``ctxeval`` runs in (``path`` None: none found)."""

    path: Path | None = None
    values: dict[str, Any] = field(default_factory=dict)

    def paths(self, key: str) -> list[Path]:
        """An ini value of type ``paths``: a list (TOML) or a whitespace-separated string (ini)."""
        value = self.values.get(key)
        if not value or self.path is None:
            return []
        if isinstance(value, str):
            try:
                items = shlex.split(value)
            except ValueError as exc:  # pytest's own reading of the value fails the same way
                raise UsageError(f"{_shown(self.path)}: {key} = {value!r}: {exc}; quote each path once") from None
        else:
            items = [str(v) for v in value]
        return [self.path.parent / item for item in items]


def _read(path: Path) -> dict[str, Any] | None:
    """The pytest settings in ``path``, or None when the file is not a pytest configuration (a
    ``tox.ini`` without ``[pytest]``, a ``pyproject.toml`` without ``[tool.pytest...]``). Read by
    pytest's rules (``_pytest/config/findpaths.py``: ``iniconfig`` for ini files, ``tomllib`` for
    TOML), so that a file pytest refuses is refused here too, naming the file and line, rather
    than passed over for another one (pytest would stop; ``ctxeval`` would run other graders)."""
    where = _shown(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{where}: cannot read the pytest configuration ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise UsageError(f"{where}: the pytest configuration is not UTF-8") from None
    if path.suffix == ".toml":
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise UsageError(f"{where}: not valid TOML: {exc} (pytest refuses it too; fix the file)") from None
        if path.name == "pyproject.toml":
            tool = data.get("tool", {})
            tool = tool.get("pytest", {}) if isinstance(tool, dict) else {}
            if not isinstance(tool, dict):
                return None
            native = {k: v for k, v in tool.items() if k != "ini_options"}
            ini = tool.get("ini_options")
            if native and ini is not None:
                raise UsageError(f"{where}: both [tool.pytest] and [tool.pytest.ini_options]: pytest refuses "
                                 "the file; keep one of them")
            if native:
                return native
            return ini if isinstance(ini, dict) else None
        table = data.get("pytest", {})  # pytest.toml: always the configuration, even empty
        return table if isinstance(table, dict) else {}
    try:
        ini_file = iniconfig.IniConfig(where, data=text)
    except iniconfig.ParseError as exc:
        raise UsageError(f"{exc} (pytest refuses the file too; fix it)") from None
    if path.name == "setup.cfg":
        if "tool:pytest" in ini_file:
            return dict(ini_file["tool:pytest"].items())
        if "pytest" in ini_file:
            raise UsageError(f"{where}: [pytest] in setup.cfg is no longer read by pytest; rename the "
                             "section to [tool:pytest]")
        return None
    if "pytest" in ini_file:
        return dict(ini_file["pytest"].items())
    return {} if path.name in ("pytest.ini", ".pytest.ini") else None


def find_project_config(start: Path | None = None) -> ProjectConfig:
    """The pytest configuration file that governs ``start`` (default: the current folder)."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        for name in _FILES:
            candidate = folder / name
            if candidate.is_file():
                values = _read(candidate)
                if values is not None:
                    return ProjectConfig(candidate, values)
    return ProjectConfig()


def apply_project_config(args: argparse.Namespace, config: ProjectConfig | None = None) -> None:
    """Fill what the command line left unset from the project's ``ctxeval_graders`` and
    ``ctxeval_scenarios``, saying so on stderr (one line each)."""
    wants_graders = hasattr(args, "graders_dir") and args.graders_dir is None
    wants_scenarios = args.command in _SCENARIO_VERBS and hasattr(args, "paths") and not args.paths
    if not (wants_graders or wants_scenarios):
        return
    config = config or find_project_config()
    if config.path is None:
        return
    graders = [_shown(p) for p in config.paths("ctxeval_graders")] if wants_graders else []
    if graders:
        args.graders_dir = graders
        print(f"ctxeval: graders from {_shown(config.path)} (ctxeval_graders): {', '.join(graders)}; "
              "--graders-dir overrides", file=sys.stderr)
    scenarios = [_shown(p) for p in config.paths("ctxeval_scenarios")] if wants_scenarios else []
    if scenarios:
        args.paths = [Path(p) for p in scenarios]
        print(f"ctxeval: scenarios from {_shown(config.path)} (ctxeval_scenarios): {', '.join(scenarios)}; "
              "paths on the command line override", file=sys.stderr)


def _shown(path: Path) -> str:
    """``path`` relative to the current folder when it is below it (as the user would type it)."""
    try:
        return str(path.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
