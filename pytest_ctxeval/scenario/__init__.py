"""Scenarios, the first stage: the strict schema and YAML loading, sandboxed template expansion,
fillers, lint, planted facts, generated fact scenarios and the import of real sessions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs
    from .schema import Scenario, Expectations, load_scenario, find_scenarios
    from .expansion import expand, ExpandedScenario
    from .lint import LintProblem, lint_paths
    from .importer import import_transcript, write_scenario
    from .planted import PlantedFact

#: Public name -> the module of this package that defines it (imported on first use).
_EXPORTS = {
    "Scenario": "schema", "Expectations": "schema", "load_scenario": "schema", "find_scenarios": "schema",
    "expand": "expansion", "ExpandedScenario": "expansion", "LintProblem": "lint", "lint_paths": "lint",
    "import_transcript": "importer", "write_scenario": "importer", "PlantedFact": "planted",
}

__all__ = [
    "Scenario", "Expectations", "load_scenario", "find_scenarios", "expand", "ExpandedScenario", "LintProblem",
    "lint_paths", "import_transcript", "write_scenario", "PlantedFact",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
