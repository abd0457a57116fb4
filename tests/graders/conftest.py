"""Shared builders for the rule-grader tests.

Everything is reached through fixtures (``kit``, ``grade``, ``session``, ``good_case``) so the test
modules never import this conftest by name.

* ``kit`` builds hand-written messages, nine-section summaries and :class:`CompactionCase` objects;
* ``grade(name, case)`` runs one grader through the registry (so ``grader``/``kind`` are set) and
  refuses an ``ungraded`` verdict, which would hide a grader crash;
* ``session`` is a small scripted session (an edit, a write, a read, a TodoWrite, a failing test
  run, two person messages) and ``good_case`` a faithful summary of it that every grader passes.
"""

from __future__ import annotations

import itertools
from types import SimpleNamespace
from typing import Any
from collections.abc import Iterable

import pytest

from pytest_ctxeval.engine.prompt import PromptSet
from pytest_ctxeval.grading import CompactionCase, GraderRegistry, Verdict, load_graders
from pytest_ctxeval.core.messages import (
    AssistantMessage, CompactBoundary, TextBlock, ToolResultBlock, ToolUseBlock, UserMessage,
)
from pytest_ctxeval.scenario.schema import Expectations
from pytest_ctxeval.reading.summary import SECTION_KINDS, SECTION_TITLES

TRANSCRIPT = "/tmp/ctxeval-tests/0b5e7c1e-session.jsonl"


class Kit:
    """Builders for messages, summaries and cases (one instance per test: ids restart)."""

    SECTION_TITLES = SECTION_TITLES
    SECTION_KINDS = SECTION_KINDS
    TRANSCRIPT = TRANSCRIPT

    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self.prompts = PromptSet()

    # -- messages --------------------------------------------------------------------------------
    def _uuid(self, prefix: str) -> str:
        return f"{prefix}-{next(self._ids)}"

    def user(self, content: Any, **kw: Any) -> UserMessage:
        return UserMessage(uuid=self._uuid("u"), content=content, **kw)

    def meta(self, text: str) -> UserMessage:
        return UserMessage(uuid=self._uuid("meta"), content=text, is_meta=True)

    def say(self, text: str) -> AssistantMessage:
        return AssistantMessage(uuid=self._uuid("a"), content=[TextBlock(text=text)])

    def call(self, name: str, input: dict[str, Any] | None = None, *, text: str | None = None,
             id: str | None = None) -> AssistantMessage:
        blocks: list[Any] = [TextBlock(text=text)] if text else []
        blocks.append(ToolUseBlock(id=id or f"toolu_{next(self._ids):03d}", name=name, input=input or {}))
        return AssistantMessage(uuid=self._uuid("a"), content=blocks)

    def answer(self, call: AssistantMessage, content: str = "ok", *, is_error: bool = False) -> UserMessage:
        """A user message with one tool_result for every tool_use of ``call``."""
        results = [ToolResultBlock(tool_use_id=b.id, content=content, is_error=is_error)
                   for b in call.content if isinstance(b, ToolUseBlock)]
        return UserMessage(uuid=self._uuid("r"), content=results)

    def tool(self, name: str, input: dict[str, Any] | None = None, result: str = "ok", *,
             is_error: bool = False, text: str | None = None) -> list[Any]:
        """``[assistant tool_use, user tool_result]``."""
        c = self.call(name, input, text=text)
        return [c, self.answer(c, result, is_error=is_error)]

    def todo(self, *items: tuple[str, str]) -> list[Any]:
        """A TodoWrite call and its result; items are ``(content, status)``."""
        return self.tool("TodoWrite", {"todos": [{"content": c, "status": s} for c, s in items]},
                         "Todos have been modified successfully")

    def boundary(self, trigger: str = "auto") -> CompactBoundary:
        return CompactBoundary(uuid=self._uuid("b"), trigger=trigger)

    def summary_msg(self, text: str) -> UserMessage:
        return UserMessage(uuid=self._uuid("s"), content=text, is_compact_summary=True)

    # -- summaries ---------------------------------------------------------------------------------
    @classmethod
    def summary_of(cls, **bodies: str) -> str:
        """:meth:`summary` with these bodies by kind and ``x`` in every other section."""
        return cls.summary({**{k: "x" for k in SECTION_KINDS}, **bodies})

    @staticmethod
    def summary(bodies: dict[str, str], *, style: str = "colon", omit: Iterable[str] = (),
                order: Iterable[str] | None = None) -> str:
        """A summary with the canonical nine sections (numbered canonically), bodies by kind.

        ``style``: ``colon`` (``1. Primary Request and Intent:`` + indented body, as Claude Code
        writes it) or ``md`` (``## 1. Primary Request and Intent``).
        """
        omitted = set(omit)
        parts = []
        for kind in (list(order) if order is not None else SECTION_KINDS):
            if kind in omitted:
                continue
            n, title = SECTION_KINDS.index(kind) + 1, SECTION_TITLES[kind]
            body = bodies.get(kind, "")
            if style == "colon":
                indented = "\n".join(("   " + l) if l.strip() else "" for l in body.split("\n"))
                parts.append(f"{n}. {title}:" + (f"\n{indented}" if body else ""))
            elif style == "md":
                parts.append(f"## {n}. {title}" + (f"\n{body}" if body else ""))
            else:
                raise ValueError(style)
        return "\n\n".join(parts)

    @staticmethod
    def section(kind: str, body: str) -> str:
        """A summary holding one section only."""
        n = SECTION_KINDS.index(kind) + 1
        return f"{n}. {SECTION_TITLES[kind]}:\n" + "\n".join("   " + l for l in body.split("\n"))

    @staticmethod
    def line_of(text: str, needle: str) -> int:
        """1-based line of the first line of ``text`` containing ``needle``."""
        for i, line in enumerate(text.split("\n"), start=1):
            if needle in line:
                return i
        raise AssertionError(f"{needle!r} not in text")

    def continuation(self, summary: str, *, auto: bool = True, path: str = TRANSCRIPT) -> str:
        """The real summary message the engine would write for ``summary``."""
        return self.prompts.render_continuation(summary, path, auto=auto)

    # -- cases ---------------------------------------------------------------------------------------
    def case(self, messages: list[Any], summary: str, *, history: list[Any] | None = None,
             summary_message: str | None = None, post_messages: list[Any] | None = None,
             requests: list[dict[str, Any]] | None = None, compaction_request: dict[str, Any] | None = None,
             expect: Expectations | dict[str, Any] | None = None, trigger: str = "manual",
             transcript_path: str | None = None, kind: str = "full") -> CompactionCase:
        """A case for ``summary`` of ``messages`` (the summarised span; also the history unless
        ``history`` is given). The summary message defaults to the summary text itself."""
        if isinstance(expect, dict):
            expect = Expectations(**expect)
        return CompactionCase(
            source="hand-written", index=1, kind=kind, trigger=trigger, summary=summary,
            summary_message=summary if summary_message is None else summary_message,
            summarized=list(messages), history=list(messages if history is None else history),
            post_messages=list(post_messages or []), expect=expect or Expectations(),
            requests=list(requests or []), compaction_request=compaction_request,
            transcript_path=transcript_path)


@pytest.fixture(scope="session")
def registry() -> GraderRegistry:
    return load_graders()


@pytest.fixture
def grade(registry: GraderRegistry):
    def _grade(name: str, case: CompactionCase) -> Verdict:
        (verdict,) = registry.run(case, [registry.get(name)])
        assert verdict.grader == name
        assert verdict.status != "ungraded", f"{name} could not grade (crash?): {verdict.reasons}"
        assert verdict.reasons, f"{name} gave no reason"
        return verdict
    return _grade


@pytest.fixture
def corpus_verdict(registry: GraderRegistry):
    """``corpus_verdict(file_name, grader)``: the grader's verdict on the first compaction of a
    transcript of the shared corpus (mark the test ``needs_shared``: it skips without the corpus)."""
    from pytest_ctxeval.grading.registry import cases_from_transcript
    from pytest_ctxeval.transcript import read_transcript
    from shared_paths import CORPUS_DIR

    def _verdict(name: str, grader: str) -> Verdict:
        (verdict,) = registry.run(cases_from_transcript(read_transcript(CORPUS_DIR / name))[0], [registry.get(grader)])
        return verdict
    return _verdict


@pytest.fixture
def kit() -> Kit:
    return Kit()


# -- one small scripted session and a faithful summary of it -------------------------------------------

FIRST_REQUEST = "Refactor src/auth/session.py to use opaque session tokens instead of JWT"
LAST_REQUEST = "Fix the KeyError in src/auth/loader.py, then rerun the session tests"
LAST_ASSISTANT = "Looking at the loader to see where user_id is read from the old claims."
KEY_ERROR = "KeyError: 'user_id'"
TRACEBACK = ("Exit code 1\nTraceback (most recent call last):\n"
             '  File "src/auth/loader.py", line 12, in load\n    uid = claims["user_id"]\n' + KEY_ERROR)

GOOD_BODIES = {
    "request": f'The user asked: "{FIRST_REQUEST}". Latest: fix the loader KeyError and rerun the tests.',
    "concepts": "- Opaque session tokens stored server-side\n- JWT, being replaced",
    "files": ("- src/auth/session.py — edited: encode() now returns an opaque token\n"
              "- src/auth/tokens.py — written: TokenStore\n"
              "- src/auth/loader.py — read: load() reads claims['user_id']"),
    "errors": f"- pytest tests/test_session.py failed: {KEY_ERROR} (raised in loader.load; still open)",
    "problem": "The token swap is done; the loader still expects the old JWT claims.",
    "user_messages": f'- "{FIRST_REQUEST}"\n- "{LAST_REQUEST}"',
    "pending": "- Replace JWT encoding with opaque tokens\n- Add a revocation table migration",
    "current": "Reading src/auth/loader.py to find where user_id is read.",
    "next": f'Fix the loader, then rerun the tests. The user said: "{LAST_REQUEST}"',
}


def build_session(kit: Kit) -> list[Any]:
    return [
        kit.user(FIRST_REQUEST),
        *kit.tool("Read", {"file_path": "src/auth/session.py"}, "def encode(user):\n    return jwt.encode(user)",
                  text="Reading the auth module first."),
        *kit.todo(("Read the auth module", "completed"),
                  ("Replace JWT encoding with opaque tokens", "in_progress"),
                  ("Add a revocation table migration", "pending")),
        *kit.tool("Edit", {"file_path": "src/auth/session.py", "old_string": "jwt.encode(user)",
                           "new_string": "store.issue(user)"}),
        *kit.tool("Write", {"file_path": "src/auth/tokens.py", "content": "class TokenStore: ..."}),
        *kit.tool("Bash", {"command": "pytest tests/test_session.py"}, TRACEBACK, is_error=True),
        kit.user(LAST_REQUEST),
        *kit.tool("Read", {"file_path": "src/auth/loader.py"}, "def load(claims):\n    uid = claims['user_id']",
                  text=LAST_ASSISTANT),
    ]


@pytest.fixture
def session(kit: Kit) -> SimpleNamespace:
    return SimpleNamespace(
        messages=build_session(kit), first=FIRST_REQUEST, last=LAST_REQUEST, last_assistant=LAST_ASSISTANT,
        key_error=KEY_ERROR, bodies=dict(GOOD_BODIES),
        edited=["src/auth/session.py", "src/auth/tokens.py"],
        open_todos=["Replace JWT encoding with opaque tokens", "Add a revocation table migration"])


@pytest.fixture
def good_case(kit: Kit, session: SimpleNamespace) -> CompactionCase:
    """An automatic compaction of ``session`` with a faithful summary, the engine's continuation
    message, a valid post-compact context and one valid request after it."""
    summary = kit.summary(session.bodies)
    message = kit.continuation(summary, auto=True)
    post = [kit.boundary("auto"), kit.summary_msg(message)]
    request = {"messages": [{"role": "user", "content": message},
                            {"role": "assistant", "content": [{"type": "text", "text": "Checking load()."}]},
                            {"role": "user", "content": "go on"}]}
    return kit.case(session.messages, summary, summary_message=message, post_messages=post, requests=[request],
                    trigger="auto", transcript_path=TRANSCRIPT, expect={"superseded": ["use JWT"]})
