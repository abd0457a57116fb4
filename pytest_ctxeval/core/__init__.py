"""pytest_ctxeval.core: see the layout in docs/architecture.md."""
