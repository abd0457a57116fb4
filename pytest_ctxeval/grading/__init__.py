"""pytest_ctxeval.grading: see the layout in docs/architecture.md."""
