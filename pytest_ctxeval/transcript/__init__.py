"""pytest_ctxeval.transcript: see the layout in docs/architecture.md."""
