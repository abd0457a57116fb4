"""The package layout (issue 22): no import cycle, public surfaces that agree, one meaning per name.

In the style of Hypothesis' ``_check_exports``: each subpackage's ``__init__`` names its public
surface in ``__all__`` and imports it lazily through an ``_EXPORTS`` (or ``_LAZY``) table; the
two, and the imports written for type checkers, must name the same things.
"""

from __future__ import annotations

import ast
import functools
import importlib
from pathlib import Path

import pytest

import pytest_ctxeval

PACKAGE = Path(pytest_ctxeval.__file__).parent
NAME = "pytest_ctxeval"
LAZY_TABLES = ("_EXPORTS", "_LAZY")


def _modules() -> dict[str, tuple[Path, bool]]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = [NAME, *path.relative_to(PACKAGE).with_suffix("").parts]
        is_pkg = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_pkg else parts)] = (path, is_pkg)
    return out


MODULES = _modules()
PACKAGES = sorted(m for m, (_, is_pkg) in MODULES.items() if is_pkg)


def _is_type_checking(node: ast.If) -> bool:
    return "TYPE_CHECKING" in ast.unparse(node.test)


def _lazy_table(tree: ast.Module) -> dict[str, str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") in LAZY_TABLES for t in node.targets):
            return ast.literal_eval(node.value)
    return {}


def _resolve(module: str, is_pkg: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    parts = module.split(".") if is_pkg else module.split(".")[:-1]
    parts = parts[: len(parts) - (node.level - 1)]
    return ".".join(parts + ([node.module] if node.module else []))


def _absolute(package: str, target: str) -> str:
    """A lazy table's module string ("registry", "..core.redact") as an absolute module name."""
    if not target.startswith("."):
        return f"{package}.{target}"
    level = len(target) - len(target.lstrip("."))
    base = package.split(".")[: len(package.split(".")) - (level - 1)]
    return ".".join(base + [target.lstrip(".")])


# Parsed when first asked for, not at import: every pytest-xdist worker collects this module.
@functools.cache
def _tree(module: str) -> ast.Module:
    return ast.parse(MODULES[module][0].read_text(encoding="utf-8"))


@functools.cache
def _lazy(package: str) -> dict[str, str]:
    return _lazy_table(_tree(package))


def _targets(base: str, name: str) -> list[str]:
    """The modules ``from base import name`` executes: the package chain, a submodule or the
    module a lazy table sends the name to."""
    out = []
    if base in MODULES:
        out.append(base)
    if f"{base}.{name}" in MODULES:
        out.append(f"{base}.{name}")
    elif base in PACKAGES and name in _lazy(base):
        out.append(_absolute(base, _lazy(base)[name]))
    return out


def _imports(module: str, *, deferred: bool) -> set[str]:
    """The package's modules ``module`` imports when it runs (module level; with ``deferred``,
    also inside functions). Imports for type checkers only are not run and are left out."""
    is_pkg = MODULES[module][1]
    found: set[str] = set()

    def visit(nodes: list[ast.stmt], top: bool) -> None:
        for node in nodes:
            if isinstance(node, ast.If) and _is_type_checking(node):
                continue
            if isinstance(node, ast.Import):
                for alias in node.names:
                    parts = alias.name.split(".")
                    found.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(module, is_pkg, node)
                parts = base.split(".")
                found.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
                for alias in node.names:
                    found.update(_targets(base, alias.name))
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if deferred:
                    visit(node.body, False)
                continue
            for field in ("body", "orelse", "finalbody", "handlers"):
                inner = getattr(node, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], (ast.stmt, ast.excepthandler)):
                    visit(inner if field != "handlers" else [s for h in inner for s in h.body], top)

    visit(_tree(module).body, True)
    # its own packages' __init__ ran before it (they are loading, not imported by it)
    parts = module.split(".")
    own = {".".join(parts[:i]) for i in range(1, len(parts))}
    return {m for m in found if m in MODULES and m != module and m not in own}


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            strong(v)
    return out


def _edges(deferred: bool) -> dict[str, set[str]]:
    return {m: _imports(m, deferred=deferred) for m in MODULES}


def test_no_import_cycle_at_module_level():
    cycles = _cycles(_edges(deferred=False))
    assert not cycles, "modules that import each other when they load: " + "; ".join(" <-> ".join(c) for c in cycles)


#: Cycles left among the front ends that another change splits (``cli.py`` -> ``cli/``, one module
#: per verb): a verb module still imports helpers from ``cli.py``, which registers it.
FRONT_ENDS = ("pytest_ctxeval.cli",)


def test_no_import_cycle_hidden_in_functions():
    """An import inside a function is how a cycle hides: counted too (a front end's verb modules
    excepted, see FRONT_ENDS)."""
    edges = _edges(deferred=True)
    cycles = [c for c in _cycles(edges) if not all(m.startswith(FRONT_ENDS) for m in c)]
    assert not cycles, "runtime import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_the_cycle_check_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def _type_checking_imports(package: str) -> dict[str, str]:
    out = {}
    for node in _tree(package).body:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for inner in ast.walk(node):
                if isinstance(inner, ast.ImportFrom):
                    base = _resolve(package, True, inner)
                    for alias in inner.names:
                        out[alias.asname or alias.name] = base
    return out


def _eager_names(package: str) -> set[str]:
    """Names an ``__init__`` binds when it runs (definitions, assignments, imports)."""
    out = set()
    for node in _tree(package).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        out.add(n.id)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.add(node.target.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in node.names)
    return out


SURFACES = [p for p in PACKAGES if (p == NAME or p.count(".") == 1) and "__all__" in _eager_names(p)]


def test_every_subpackage_has_a_public_surface():
    subpackages = [p for p in PACKAGES if p.count(".") == 1]
    assert subpackages, "no subpackages found"
    missing = [p for p in subpackages if p not in SURFACES]
    assert not missing, f"subpackages without __all__ in their __init__: {missing}"


@pytest.mark.parametrize("package", SURFACES)
def test_all_matches_the_lazy_exports(package):
    module = importlib.import_module(package)
    public = list(module.__all__)
    assert len(public) == len(set(public)), f"{package}.__all__ names something twice"
    lazy = _lazy(package)
    eager = _eager_names(package)
    assert set(lazy) <= set(public), f"{package}: lazily exported but not in __all__: {sorted(set(lazy) - set(public))}"
    unexplained = [n for n in public if n not in lazy and n not in eager and n != "__version__"]
    assert not unexplained, f"{package}.__all__ names what it neither defines nor exports lazily: {unexplained}"
    typed = _type_checking_imports(package)
    if lazy:
        assert set(typed) == set(lazy), (f"{package}: the TYPE_CHECKING imports and the lazy table disagree: "
                                         f"{sorted(set(typed) ^ set(lazy))}")
        for name, target in lazy.items():
            assert typed[name] == _absolute(package, target), f"{package}.{name}: typed from {typed[name]}"
    for name in public:
        assert getattr(module, name) is not None or name in eager
    for name, target in lazy.items():
        source = importlib.import_module(_absolute(package, target))
        assert getattr(module, name) is getattr(source, name)
    assert set(public) <= set(dir(module))


def _defined_in(obj: object) -> str | None:
    return getattr(obj, "__module__", None)


def test_every_public_name_is_exported_once():
    """A name appears in one subpackage's ``__all__`` (the top-level package is the umbrella that
    re-exports a few), and the umbrella's names are the same objects."""
    seen: dict[str, str] = {}
    twice = []
    for package in SURFACES:
        if package == NAME:
            continue
        for name in importlib.import_module(package).__all__:
            if name in seen:
                twice.append(f"{name} ({seen[name]}, {package})")
            seen[name] = package
    assert not twice, f"exported by two subpackages: {twice}"
    for name in pytest_ctxeval.__all__:
        if name in seen:
            assert getattr(pytest_ctxeval, name) is getattr(importlib.import_module(seen[name]), name), name


#: Public functions defined twice on purpose: each front end's ``main``; the pytest fixture and the
#: runner's function (issue 22's one evaluate API merges them); the validate verb's report page.
SAME_NAME_OK = {"main", "run_scenario", "render_html"}


def test_a_public_name_means_one_thing():
    """No two modules define a public class or function of the same name (``Comparison``,
    ``Problem`` and ``format_comparison`` each meant two things)."""
    where: dict[str, list[str]] = {}
    for module in MODULES:
        tree = _tree(module)
        for node in tree.body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) \
                    and not node.name.startswith("_"):
                where.setdefault(node.name, []).append(module)
    clashes = {n: ms for n, ms in where.items() if len(ms) > 1 and n not in SAME_NAME_OK}
    assert not clashes, f"one name, two meanings: {clashes}"


def test_no_two_modules_share_a_file_name_within_the_package():
    """``formats.py`` twice, ``compare.py`` twice: a file name says which module it is. The front
    end's verb modules are the exception: ``cli/lint.py`` is the ``ctxeval lint`` verb, named after
    it, and runs ``scenario/lint.py``."""
    names: dict[str, list[str]] = {}
    for module, (path, is_pkg) in MODULES.items():
        if not is_pkg and not module.startswith("pytest_ctxeval.cli.") and path.name != "__main__.py":
            names.setdefault(path.name, []).append(module)
    clashes = {n: ms for n, ms in names.items() if len(ms) > 1 and n not in ("base.py",)}
    assert not clashes, clashes


def test_top_level_holds_front_ends_and_the_loop_only():
    top = sorted(p.stem for p in PACKAGE.glob("*.py"))
    stages = {"__init__", "__main__", "errors", "plugin", "session", "runner", "options", "evaluation",
              "evaluate", "results", "compare_real", "strategies"}
    extra = [m for m in top if m not in stages and not m.startswith("cli")]
    assert not extra, f"flat modules outside a stage's subpackage: {extra}"


def _subpackage(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and MODULES[module][1]) else None


def test_subpackages_form_layers():
    """At load time the stages import downwards only: core <- reading <- transcript, llm <- engine
    <- compaction; scenario; grading <- reporting (the front ends at the top import them all)."""
    edges: dict[str, set[str]] = {}
    for module, targets in _edges(deferred=False).items():
        here = _subpackage(module)
        if here is None:
            continue
        edges.setdefault(here, set())
        for target in targets:
            there = _subpackage(target)
            if there is not None and there != here:
                edges[here].add(there)
                edges.setdefault(there, set())
    assert not _cycles(edges), f"subpackages importing each other at load time: {_cycles(edges)}"
    assert not edges["core"], f"core imports other stages: {edges['core']}"


def _spelled_options(path: Path) -> list[str]:
    """String constants (docstrings aside) in ``path`` that spell a run option of the front ends
    (a plugin-only option such as ``--ctxeval-save-baseline`` is no run option, and a hint naming
    it names the command that writes a file)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    where = path.relative_to(PACKAGE.parent) if path.is_relative_to(PACKAGE) else path.name
    options = _run_options()
    return [f"{where}:{node.lineno}: {node.value[:60]!r}" for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
            and (any(f"--ctxeval-{o}" in node.value for o in options) or "(ctxeval: --" in node.value)]


@functools.cache
def _run_options() -> frozenset[str]:
    """The options both front ends take (``options.add_run_options``), by name."""
    from pytest_ctxeval.options import add_run_options

    names: set[str] = set()
    add_run_options(lambda flag, **_: names.add(flag.removeprefix("--")), "--")
    return frozenset(names)


def test_stages_name_options_and_the_front_ends_spell_them():
    """Below the front ends a message names a run option with ``errors.flag("backend record")``;
    how the plugin and the CLI spell it (``--ctxeval-backend``, ``--backend``) is theirs
    (``options.py`` registers it). A literal ``--ctxeval-...`` in a stage's message is the CLI's
    spelling in the wrong layer."""
    stage_files = [p for p in sorted(PACKAGE.glob("*/**/*.py")) if not p.relative_to(PACKAGE).parts[0].startswith("cli")]
    assert len(stage_files) > 50
    found = [hit for path in stage_files for hit in _spelled_options(path)]
    assert not found, "options spelled below the front ends (use errors.flag):\n" + "\n".join(found)


def test_the_option_spelling_check_sees_a_message_but_not_a_docstring(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text('"""Run with ``--ctxeval-backend record``."""\n'
                     'def f():\n    """--ctxeval-model NAME picks it."""\n'
                     '    raise ValueError("record with --ctxeval-backend record")\n')
    assert [hit.split(": ", 1)[1] for hit in _spelled_options(probe)] == ["'record with --ctxeval-backend record'"]


def test_flag_is_spelled_by_the_front_ends_option_module():
    import subprocess
    import sys

    code = ("from pytest_ctxeval.errors import flag; print(flag('backend record')); "
            "import pytest_ctxeval.options; print(flag('backend record'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["the run option 'backend record'",
                                "--ctxeval-backend record (ctxeval: --backend record)"]
