"""The one exception hierarchy of pytest-ctxeval.

Every error a user can cause (a bad scenario, a broken transcript line, an unknown grader, a model
that keeps failing) is a :class:`CtxEvalError` whose message says *what* is wrong, *where* (file,
line, field) and, where it helps, *how to fix it*. The CLI and the pytest plugin print these as one
line; anything else escaping is a bug in pytest-ctxeval.
"""

from __future__ import annotations

from collections.abc import Callable


def _by_name(option: str) -> str:
    return f"the run option '{option}'"


_spelling: Callable[[str], str] = _by_name


def flag(option: str) -> str:
    """A run option named in a message, e.g. ``flag("backend record")``.

    The layers below the front ends know a run option by its name (a :class:`~pytest_ctxeval.options.RunOptions`
    field, spelled with dashes), not how a front end spells it on its command line: the front ends'
    option module (:mod:`pytest_ctxeval.options`, loaded by the plugin and the CLI) registers that
    spelling with :func:`spell_options`, giving ``--ctxeval-backend record (ctxeval: --backend
    record)``. Library code that loaded neither gets ``the run option 'backend record'``.
    ``tests/test_layout.py`` checks that no module below the front ends spells an option itself."""
    return _spelling(option)


def spell_options(spelling: Callable[[str], str]) -> Callable[[str], str]:
    """Register how :func:`flag` spells a run option (by :mod:`pytest_ctxeval.options`; ``ctxeval``
    puts its own spelling first while it runs); return the spelling it replaces."""
    global _spelling
    previous, _spelling = _spelling, spelling
    return previous


__all__ = [
    "flag",
    "spell_options",
    "CtxEvalError",
    "ScenarioError",
    "TranscriptError",
    "ModelError",
    "PromptTooLongError",
    "ProviderError",
    "UsageError",
    "GraderError",
]


class CtxEvalError(Exception):
    """Base class: a problem the user can act on, described in one line."""


class ScenarioError(CtxEvalError):
    """A scenario file is invalid: ``scenarios/x.yaml:12: turns[3].tools[0].result: ...``."""


class TranscriptError(CtxEvalError):
    """A transcript cannot be used at all (missing file, no conversation in it).

    ``not_a_session`` says why when the file is not a Claude Code session transcript at all (no user
    or assistant record; SDK stream output): ``ctxeval grade FOLDER`` lists such a file as skipped
    with that reason, not as unreadable."""

    def __init__(self, message: str, *, not_a_session: str | None = None):
        super().__init__(message)
        self.not_a_session = not_a_session


class UsageError(CtxEvalError):
    """A command-line option or fixture argument is invalid."""


class GraderError(CtxEvalError):
    """A grader cannot be loaded or selected (unknown name, broken module)."""


class ModelError(CtxEvalError):
    """A model call failed after the SDK's own retries (or returned something unusable)."""


class ProviderError(CtxEvalError):
    """The model provider cannot serve this run at all: a bad key, an unknown model, an outage
    that outlasted the SDK's retries, a refusal. One error for the run, naming the cause and the
    fix (the CLI exits 2, pytest stops the session); never a failed grader. Not a
    :class:`ModelError`, so no per-request handler turns it into a verdict."""


class PromptTooLongError(ModelError):
    """The API answered ``prompt is too long: N tokens > M maximum``.

    ``actual`` and ``maximum`` are the parsed numbers when the message carried them; ``gap`` is
    how many tokens must go for the request to fit (None when the message could not be parsed).
    """

    def __init__(self, message: str, actual: int | None = None, maximum: int | None = None):
        super().__init__(message)
        self.actual = actual
        self.maximum = maximum

    @property
    def gap(self) -> int | None:
        if self.actual is None or self.maximum is None:
            return None
        return max(0, self.actual - self.maximum)
