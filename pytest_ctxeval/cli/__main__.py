"""``python -m pytest_ctxeval.cli``: the ``ctxeval`` command."""

import sys

from . import main

if __name__ == "__main__":  # imported by doctest collection too: run only as a program
    sys.exit(main())
