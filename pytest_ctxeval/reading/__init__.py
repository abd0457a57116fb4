"""pytest_ctxeval.reading: see the layout in docs/architecture.md."""
