"""pytest_ctxeval.reporting: see the layout in docs/architecture.md."""
