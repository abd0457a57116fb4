"""pytest_ctxeval.scenario: see the layout in docs/architecture.md."""
