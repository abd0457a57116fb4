"""The checks over the whole built-in library and corpus, and the samples the unit suite takes.

The unit suite (``pytest -n auto``) runs the library-wide checks on a sample: the grader
validation and the hand-written mutants (tests/test_validate.py, tests/test_handwritten_mutants.py:
the sample of tests/validation_kit.py), the comparison of compactors
(tests/compaction/test_compare.py, ``COMPARED_SCENARIOS``) and the import of each corpus file
(tests/test_importer.py, ``SAMPLED``). ``.ci/run`` runs them on the whole library and corpus in
their own step, with ``CTXEVAL_LIBRARY_TESTS=1`` (CONTRIBUTING.md, "Slow checks"). The samples run
every line and branch of the package that the whole checks run: ``python
benchmarks/sample_coverage.py`` measures it.
"""

from __future__ import annotations

import os

import pytest

#: Set by ``.ci/run``'s library-wide step: the whole library and corpus, not the samples.
LIBRARY_TESTS = os.environ.get("CTXEVAL_LIBRARY_TESTS") == "1"

#: Marks a test of the whole library and corpus (skipped in the unit suite, which runs its sample).
library_wide = pytest.mark.skipif(not LIBRARY_TESTS, reason="a check of the whole library and corpus, run in "
                                  ".ci/run's own step: set CTXEVAL_LIBRARY_TESTS=1 (CONTRIBUTING.md, Slow checks)")
