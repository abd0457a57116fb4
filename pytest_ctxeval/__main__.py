"""``python -m pytest_ctxeval``: the ``ctxeval`` command."""

import sys

from .cli import main

if __name__ == "__main__":  # imported by doctest collection too: run only as a program
    sys.exit(main())
