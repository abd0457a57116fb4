"""Hypothesis strategies for agent conversations, valid for the Messages API by construction.

Use them to property-test your own context handling (a truncation, a summary prompt, a grader)
against conversations no one would think to write by hand: parallel tool calls answered out of
order, assistant responses split into records sharing a message id, results of every size, errors,
images, thinking blocks, slash-command echoes, idle gaps and earlier compactions.

**One design: engine messages.** Every strategy generates the engine's pydantic messages
(:class:`~pytest_ctxeval.core.messages.UserMessage`, :class:`~pytest_ctxeval.core.messages.AssistantMessage`,
:class:`~pytest_ctxeval.core.messages.CompactBoundary`, :class:`~pytest_ctxeval.core.messages.AttachmentMessage`),
with uuids and timestamps: what :class:`~pytest_ctxeval.engine.pipeline.ContextManager` holds and a
transcript stores. For the Messages-API ``messages`` list, ``conversations(as_api=True)`` applies
:func:`~pytest_ctxeval.core.messages.to_api` (boundaries dropped, same-role messages merged); for the
others call ``to_api`` yourself. What is generated always passes
:func:`~pytest_ctxeval.core.messages.validate_api` after ``to_api``: the first message is a user
message, every ``tool_use`` is answered by the next user message, results come first, no text is
blank, ids are unique.

**Small failures.** Sizes are drawn separately from content: a result is one line of its tool's
kind of output repeated to a drawn length, so a failing example shrinks to a few short messages
(sizes towards 0, whole turns, responses and calls deleted) instead of a megabyte string shrunk
character by character. What is drawn is a plan; messages are built from it afterwards, so ids are
positional (``u1``, ``a2``, ``msg_1``, ``toolu_01``) and a shrunk example reads like a script.
Timestamps start at :data:`START` and advance as the runner's do (a person types in 20 s, a model
answers in 30 s, a tool runs in 5 s).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, UTC
from typing import Any
from collections.abc import Callable, Sequence

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from .core.messages import (
    AssistantMessage, AttachmentMessage, CompactBoundary, DocumentBlock, ImageBlock, RedactedThinkingBlock,
    TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock, Usage, UserMessage, to_api,
)

__all__ = [
    "START", "DEFAULT_TOOLS", "BLOCK_KINDS",
    "content_blocks", "tool_rounds", "conversations", "sessions", "histories_with_boundary",
]

#: Where generated clocks start (UTC).
START = datetime(2025, 6, 1, 12, 0, 0, tzinfo=UTC)
#: The tool mix by default: the compactable tools of both microcompact profiles, and tools that are
#: never cleared (TodoWrite, Task, an MCP tool).
DEFAULT_TOOLS: tuple[str, ...] = (
    "Read", "Bash", "Grep", "Glob", "Edit", "Write", "WebFetch", "WebSearch", "TodoWrite", "Task",
    "mcp__github__search_issues",
)
#: Every content-block type :func:`content_blocks` can produce.
BLOCK_KINDS: tuple[str, ...] = (
    "text", "image", "document", "thinking", "redacted_thinking", "tool_use", "tool_result",
)

# --- vocabulary: short, readable, shrinking towards the first entry --------------------------------

_PHRASES = ("fix the login bug", "why does this fail?", "add tests for billing", "run the build",
            "continue", "refactor the auth module", "check the logs please", "ok", "déjà vu: naïve café",
            "日本語のテスト", "ship it 🎉")
#: What each tool's output looks like (a line repeated to the drawn size), and its error line.
_OUTPUTS = {
    "Read": ("     1\tdef login(user):", "File does not exist."),
    "Bash": ("tests/test_auth.py::test_login PASSED", "FAILED tests/test_auth.py::test_login - AssertionError"),
    "Grep": ("src/auth/service.py:42: def login(user):", "rg: src/missing: No such file or directory"),
    "Glob": ("src/auth/service.py", "No files found"),
    "Edit": ("The file src/auth.py has been updated.", "String to replace not found in file."),
    "Write": ("File created successfully at: src/auth.py", "EACCES: permission denied"),
    "WebFetch": ('{"ok": true, "items": [1, 2, 3]}', "Request failed with status code 404"),
    "WebSearch": ("1. Auth best practices - https://example.com", "Search failed: rate limited"),
    "TodoWrite": ("Todos have been modified successfully.", "Invalid todo list"),
    "Task": ("The callers are in src/auth/ and src/billing/.", "Agent failed: KeyError: 'coupon:SUMMER24'"),
}
_OTHER_OUTPUT = ("日本語 output ✓", "Error: tool failed")
_NAMES = ("auth", "billing", "service", "models", "utils", "cli")
_IMAGE_SOURCE = {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}
_DOCUMENT_SOURCE = {"type": "text", "media_type": "text/plain", "data": "release notes"}
_NOT_PERSON_TYPED = (
    ("meta", "<system-reminder>\nThe user opened src/auth/service.py in the IDE.\n</system-reminder>"),
    ("command", "<command-name>/model</command-name>\n<command-message>model</command-message>\n"
                "<command-args>sonnet</command-args>"),
    ("stdout", "<local-command-stdout>Set model to sonnet</local-command-stdout>"),
    ("interrupt", "[Request interrupted by user]"),
)

_USER_STEP = timedelta(seconds=20)
_ASSISTANT_STEP = timedelta(seconds=30)
_TOOL_STEP = timedelta(seconds=5)


def _fill(phrase: str, size: int) -> str:
    """``phrase`` repeated (newline-separated) to exactly ``size`` characters."""
    if size <= 0:
        return ""
    unit = (phrase or "x") + "\n"
    return (unit * (size // len(unit) + 1))[:size]


def _sizes(small: int, huge: int) -> st.SearchStrategy[int]:
    """Sizes that shrink towards 0: up to ``small``, one in four up to ``huge`` (two draws)."""
    if huge <= small:
        return st.integers(0, small)
    small_sizes, huge_sizes = st.integers(0, small), st.integers(small, huge)

    @st.composite
    def size(draw: Any) -> int:
        return draw(huge_sizes if draw(_D4) == 3 else small_sizes)

    return size()


_phrases = st.sampled_from(_PHRASES)
_D4 = st.integers(0, 3)


@dataclass(frozen=True)
class _Opts:
    tools: tuple[str, ...] = DEFAULT_TOOLS
    min_parallel: int = 1
    max_parallel: int = 3
    max_steps: int = 3
    images: bool = False
    thinking: bool = False
    errors: bool = True
    huge_result_chars: int = 0
    long_message_chars: int = 0
    person_typed_only: bool = False
    split_records: bool = True
    usage: bool = False

    def check(self) -> _Opts:
        if not self.tools or not all(isinstance(t, str) and t for t in self.tools):
            raise InvalidArgument(f"tools must be a non-empty sequence of tool names, got {self.tools!r}")
        if not 1 <= self.min_parallel <= self.max_parallel:
            raise InvalidArgument(f"need 1 <= min_parallel <= max_parallel, got {self.min_parallel}, "
                                  f"{self.max_parallel}")
        for name in ("max_steps", "huge_result_chars", "long_message_chars"):
            if getattr(self, name) < 0:
                raise InvalidArgument(f"{name} must be >= 0, got {getattr(self, name)}")
        return self


class _Builder:
    """Positional ids and a clock, shared by everything drawn for one example."""

    def __init__(self, start: datetime):
        self.clock = start
        self.n = 0
        self.tools = 0
        self.responses = 0

    def uid(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def tool_id(self) -> str:
        self.tools += 1
        return f"toolu_{self.tools:02d}"

    def message_id(self) -> str:
        self.responses += 1
        return f"msg_{self.responses}"

    def tick(self, delta: timedelta) -> datetime:
        self.clock += delta
        return self.clock


# --- drawing pieces -------------------------------------------------------------------------------
#
# What is drawn is a *plan*: closures that build messages once ids and the clock are known. Lists
# of turns, responses and calls shrink by deleting elements, so a failing conversation loses whole
# turns, responses and calls while it shrinks; building afterwards keeps ids positional and the
# clock consistent. The strategies for one set of options are built once (:class:`_Plans`).

_Build = Callable[[_Builder], list[Any]]
_BOOL = st.booleans()
_D6 = st.integers(0, 5)
_SHAPE = st.integers(0, 31)
#: One draw per user message: 0-24, ``% 5 == 4`` a message the client wrote, ``// 5 == 4`` an image.
_USER_KIND = st.integers(0, 24)
#: One draw per result: 0-39, ``% 4 == 3`` an error, ``// 4``: 0-7 a string, 8 the SDK's list form,
#: 9 an image (a Read, with ``images``).
_RESULT_KIND = st.integers(0, 39)
_OTHER_USER = st.sampled_from(_NOT_PERSON_TYPED)
_USAGE = st.none() | st.tuples(st.integers(0, 50_000), st.integers(0, 2_000))
_TODO_STATUS = ("pending", "in_progress", "completed")
_NAME = st.sampled_from(_NAMES)


def _tool_input(name: str, word: str) -> dict[str, Any]:
    """A plausible input for ``name`` about ``word`` (deterministic, so a call is one draw)."""
    path = f"src/{word}.py"
    k = _NAMES.index(word) if word in _NAMES else 0
    if name == "Read":
        # Some reads are pages of the file (the dedupe tier keys on path, offset and limit).
        return {"file_path": path} if k % 2 == 0 else {"file_path": path, "offset": 1 + 100 * k, "limit": 200}
    if name == "Bash":
        return {"command": f"pytest tests/test_{word}.py -q"}
    if name == "Grep":
        return {"pattern": word, "path": "src"}
    if name == "Glob":
        return {"pattern": f"**/*{word}*"}
    if name == "Edit":
        return {"file_path": path, "old_string": "return None", "new_string": "return user"}
    if name == "Write":
        return {"file_path": path, "content": f"# {word}\n"}
    if name == "WebFetch":
        return {"url": f"https://docs.example.com/{word}", "prompt": "summarise"}
    if name == "WebSearch":
        return {"query": f"{word} best practices"}
    if name == "TodoWrite":
        return {"todos": [{"content": f"migrate {word}", "status": _TODO_STATUS[k % 3],
                           "activeForm": f"Migrating {word}"}]}
    if name == "Task":
        return {"description": f"explore {word}", "prompt": f"Find every caller of {word}."}
    return {"query": word}


def _result_content(name: str, kind: int, size: int, images: bool) -> tuple[str | list[Any], bool]:
    """A result of ``name``'s kind of output, ``size`` characters (see :data:`_RESULT_KIND`)."""
    is_error, form = kind % 4 == 3, kind // 4
    if form == 9 and images and name == "Read" and not is_error:
        return [ImageBlock(source=dict(_IMAGE_SOURCE))], False
    line = _OUTPUTS.get(name, _OTHER_OUTPUT)[1 if is_error else 0]
    text = _fill(line, size)
    return ([TextBlock(text=text or "ok")] if form == 8 else text), is_error


class _Plans:
    """The plan strategies for one set of options, built once."""

    def __init__(self, opts: _Opts, gap_minutes: int = 0):
        self.opts = opts
        self.target = st.sampled_from([(name, word) for name in opts.tools for word in _NAMES])
        self.result_size = _sizes(120, opts.huge_result_chars)
        self.pad = _sizes(0, opts.long_message_chars)
        self.gap = st.one_of(st.just(0), st.integers(1, gap_minutes)) if gap_minutes else st.just(0)
        self.call = self._call()
        self.calls = st.lists(self.call, min_size=opts.min_parallel, max_size=opts.max_parallel)
        self.tool_response = self._response(True)
        self.final_response = st.none() | self._response(False)
        self.steps = st.lists(self.tool_response, max_size=opts.max_steps)
        self.user = self._user()
        self.turn = self._turn()

    def conversation(self, min_turns: int, max_turns: int) -> st.SearchStrategy[_Build]:
        """Turns; the first user message is always person-typed (and never after a gap). All turns
        are drawn alike, so shrinking can delete any of them."""
        return st.lists(self.turn, min_size=min_turns, max_size=max_turns).map(
            lambda turns: lambda b: [m for i, turn in enumerate(turns) for m in turn(b, i == 0)])

    def _call(self) -> st.SearchStrategy[tuple[str, dict[str, Any], bool, Any]]:
        """One parallel call: tool name, input, error?, result content. Four choices (tool and
        subject, kind, size), so the shrinker can delete a whole call from a list."""
        opts = self.opts

        @st.composite
        def call(draw: Any) -> tuple[str, dict[str, Any], bool, Any]:
            name, word = draw(self.target)
            kind = draw(_RESULT_KIND) if opts.errors else draw(_RESULT_KIND) // 4 * 4
            content, is_error = _result_content(name, kind, draw(self.result_size), opts.images)
            return name, _tool_input(name, word), is_error, content

        return call()

    def _response(self, with_tools: bool) -> st.SearchStrategy[_Build]:
        """One model response (thinking?, text?, parallel calls) and, with calls, the user message
        answering each; one record, or (``split_records``) one record per block sharing a message id."""
        opts = self.opts

        @st.composite
        def response(draw: Any) -> _Build:
            thinking: Any = None
            if opts.thinking and draw(_BOOL):
                thinking = (RedactedThinkingBlock(data="EqQBCgIYAhIM") if draw(_D6) == 5
                            else ThinkingBlock(thinking=draw(_phrases), signature="sig"))
            calls = draw(self.calls) if with_tools else []
            # One draw for the shape: text (bit 0, always without calls), one record per block
            # (bit 1, with split_records), the results' order (bits 2-4: rotated and/or reversed).
            shape = draw(_SHAPE)
            text = draw(_phrases) if not calls or shape & 1 else None
            split = opts.split_records and bool(shape & 2)
            shuffle = shape >> 2 if len(calls) > 1 else 0
            drawn = draw(_USAGE) if opts.usage else None
            usage = Usage(input_tokens=drawn[0], output_tokens=drawn[1]) if drawn else None

            def build(b: _Builder) -> list[Any]:
                uses = [ToolUseBlock(id=b.tool_id(), name=name, input=inp) for name, inp, _, _ in calls]
                blocks = [x for x in (thinking, TextBlock(text=text) if text else None) if x is not None] + uses
                ts, mid = b.tick(_ASSISTANT_STEP), b.message_id()
                if split and len(blocks) > 1:
                    # Claude Code writes one record per content block, sharing the response's message id.
                    out: list[Any] = [AssistantMessage(uuid=b.uid("a"), timestamp=ts, content=[x], message_id=mid)
                                      for x in blocks]
                    if usage is not None:
                        out[-1] = out[-1].model_copy(update={"usage": usage})
                else:
                    out = [AssistantMessage(uuid=b.uid("a"), timestamp=ts, content=blocks, message_id=mid,
                                            usage=usage)]
                if uses:
                    results = [ToolResultBlock(tool_use_id=u.id, content=content, is_error=is_error)
                               for u, (_, _, is_error, content) in zip(uses, calls)]
                    rot = shuffle % len(results)
                    results = results[rot:] + results[:rot]
                    if shuffle >= 4:
                        results.reverse()
                    out.append(UserMessage(uuid=b.uid("u"), timestamp=b.tick(_TOOL_STEP), content=[*results]))
                return out

            return build

        return response()

    def _user(self) -> st.SearchStrategy[Callable[[_Builder, bool], list[Any]]]:
        """A user message: typed by the person (a phrase, maybe a pasted log, maybe an image) or,
        unless ``person_typed_only`` or it opens the conversation, now and then one the client wrote."""
        opts = self.opts

        @st.composite
        def user(draw: Any) -> Callable[[_Builder, bool], list[Any]]:
            kind = draw(_USER_KIND)
            other = draw(_OTHER_USER) if not opts.person_typed_only and kind % 5 == 4 else None
            text = draw(_phrases)
            pad = draw(self.pad) if opts.long_message_chars else 0
            if pad:
                text = text + "\n" + _fill("pasted log line 17: ERROR timeout", pad)
            content: Any = text
            if opts.images and kind // 5 == 4:
                content = [TextBlock(text=text), ImageBlock(source=dict(_IMAGE_SOURCE))]

            def build(b: _Builder, first: bool) -> list[Any]:
                ts = b.tick(_USER_STEP)
                if other is not None and not first:
                    return [UserMessage(uuid=b.uid("u"), timestamp=ts, content=other[1], is_meta=other[0] == "meta")]
                return [UserMessage(uuid=b.uid("u"), timestamp=ts, content=content)]

            return build

        return user()

    def _turn(self) -> st.SearchStrategy[Callable[[_Builder, bool], list[Any]]]:
        """A turn: an idle gap (sessions; never before the first turn), a user message, up to
        ``max_steps`` responses calling tools (each followed by its results), maybe a closing reply."""

        @st.composite
        def turn(draw: Any) -> Callable[[_Builder, bool], list[Any]]:
            gap = draw(self.gap)
            user = draw(self.user)
            steps = draw(self.steps)
            final = draw(self.final_response)

            def build(b: _Builder, first: bool) -> list[Any]:
                if not first:
                    b.tick(timedelta(minutes=gap))
                out = user(b, first)
                for step in steps + ([final] if final else []):
                    out += step(b)
                return out

            return build

        return turn()


_TRIGGER = st.sampled_from(["auto", "manual"])
_PRE_TOKENS = st.integers(0, 200_000)


@st.composite
def _compactions(draw: Any) -> Callable[[_Builder, list[Any]], list[Any]]:
    """A compact boundary and the summary message after it (003:221-229)."""
    trigger, pre_tokens = draw(_TRIGGER), draw(_PRE_TOKENS)

    def build(b: _Builder, before: list[Any]) -> list[Any]:
        ts = b.tick(_USER_STEP)
        summary_of = _first_typed(before)
        boundary = CompactBoundary(uuid=b.uid("b"), timestamp=ts, trigger=trigger, pre_tokens=pre_tokens,
                                   logical_parent_uuid=before[-1].uuid if before else None)
        summary = UserMessage(
            uuid=b.uid("s"), timestamp=ts, is_compact_summary=True,
            content=("This session is being continued from a previous conversation that ran out of context. "
                     "The summary below covers the earlier portion of the conversation.\n\nSummary:\n"
                     f"1. Primary Request and Intent:\n   {summary_of}\n"
                     f"6. All user messages:\n   - {summary_of}\n"))
        return [boundary, summary]

    return build


_FILES = st.lists(st.tuples(_NAME, st.integers(0, 200)), max_size=2)


@st.composite
def _attachments(draw: Any) -> _Build:
    """0-2 files re-injected after a compaction (003:585-612)."""
    files = draw(_FILES)

    def build(b: _Builder) -> list[Any]:
        return [AttachmentMessage(uuid=b.uid("f"), timestamp=b.clock, attachment_type="file", path=f"src/{w}.py",
                                  content=f"Contents of src/{w}.py as last read before the compaction:\n"
                                          + _fill(f"def {w}(): pass", size)) for w, size in files]

    return build


def _first_typed(messages: list[Any]) -> str:
    for m in messages:
        if isinstance(m, UserMessage) and isinstance(m.content, str) and not m.is_meta:
            return m.content.splitlines()[0]
    return "continue"


# --- public strategies ----------------------------------------------------------------------------

def content_blocks(kinds: Sequence[str] = BLOCK_KINDS, *, tools: Sequence[str] = DEFAULT_TOOLS,
                   max_chars: int = 400) -> st.SearchStrategy[Any]:
    """One content block of a type in ``kinds`` (any of :data:`BLOCK_KINDS`).

    Text and thinking are short phrases; a ``tool_result`` answers ``toolu_01`` with content of up
    to ``max_chars`` characters (sometimes an error, sometimes the list form); a ``tool_use`` calls
    one of ``tools`` with a plausible input. Blocks alone are not a conversation: use
    :func:`conversations` for anything that must be API-valid.

    Example::

        from hypothesis import given
        from pytest_ctxeval.strategies import content_blocks
        from pytest_ctxeval.core.tokens import estimate_block

        @given(content_blocks(kinds=["text", "tool_use", "tool_result"]))
        def test_no_block_has_a_negative_estimate(block):
            assert estimate_block(block) >= 0
    """
    kinds = tuple(kinds)
    unknown = [k for k in kinds if k not in BLOCK_KINDS]
    if not kinds or unknown:
        raise InvalidArgument(f"kinds must be a non-empty subset of {BLOCK_KINDS}, got {kinds!r}")
    if max_chars < 2:
        raise InvalidArgument(f"max_chars must be at least 2, got {max_chars}")
    opts = _Opts(tools=tuple(tools), huge_result_chars=max_chars).check()
    target = st.sampled_from([(name, word) for name in opts.tools for word in _NAMES])
    sizes = _sizes(min(120, opts.huge_result_chars), opts.huge_result_chars)
    kind_of = st.sampled_from(kinds)

    @st.composite
    def block(draw: Any) -> Any:
        kind = draw(kind_of)
        if kind == "text":
            return TextBlock(text=draw(_phrases))
        if kind == "image":
            return ImageBlock(source=dict(_IMAGE_SOURCE))
        if kind == "document":
            return DocumentBlock(source=dict(_DOCUMENT_SOURCE), title="notes" if draw(_BOOL) else None)
        if kind == "thinking":
            return ThinkingBlock(thinking=draw(_phrases), signature="sig")
        if kind == "redacted_thinking":
            return RedactedThinkingBlock(data="EqQBCgIYAhIM")
        name, word = draw(target)
        if kind == "tool_use":
            return ToolUseBlock(id="toolu_01", name=name, input=_tool_input(name, word))
        content, is_error = _result_content(name, draw(_RESULT_KIND), draw(sizes), True)
        return ToolResultBlock(tool_use_id="toolu_01", content=content, is_error=is_error)

    return block()


def tool_rounds(*, min_parallel: int = 1, max_parallel: int = 4, tools: Sequence[str] = DEFAULT_TOOLS,
                errors: bool = True, images: bool = False, thinking: bool = False, huge_result_chars: int = 0,
                split_records: bool = True, start: datetime = START) -> st.SearchStrategy[list[Any]]:
    """One API round with tool calls: an assistant response with ``min_parallel..max_parallel``
    parallel ``tool_use`` blocks, then the user message answering each of them (in the calls' order,
    or rotated, or reversed).

    The response is one :class:`AssistantMessage`, or (``split_records``) one record per block
    sharing a message id, as Claude Code writes them. Results are up to 120 characters, one in four
    up to ``huge_result_chars`` when that is set; with ``errors`` about one in four is an error; with
    ``images`` a Read may return an image. Returns a list ``[assistant record(s)..., results]``;
    put a user message in front before sending it (a request starts with a user message).

    Example::

        from hypothesis import given
        from pytest_ctxeval.core.messages import UserMessage, to_api, tool_results, tool_uses, validate_api
        from pytest_ctxeval.strategies import tool_rounds

        @given(tool_rounds(max_parallel=8, huge_result_chars=60_000))
        def test_every_call_is_answered(round_):
            calls = {u.id for m in round_ for u in tool_uses(m)}
            assert {r.tool_use_id for r in tool_results(round_[-1])} == calls
            assert validate_api(to_api([UserMessage(uuid="u0", content="go"), *round_])) == []
    """
    opts = _Opts(tools=tuple(tools), min_parallel=min_parallel, max_parallel=max_parallel, errors=errors,
                 images=images, thinking=thinking, huge_result_chars=huge_result_chars,
                 split_records=split_records).check()

    response = _Plans(opts).tool_response

    @st.composite
    def round_(draw: Any) -> list[Any]:
        return draw(response)(_Builder(start))

    return round_()


def conversations(*, min_turns: int = 1, max_turns: int = 6, max_steps: int = 3,
                  tools: Sequence[str] = DEFAULT_TOOLS, max_parallel: int = 3, images: bool = False,
                  thinking: bool = False, errors: bool = True, huge_result_chars: int = 0,
                  long_message_chars: int = 0, person_typed_only: bool = False, split_records: bool = True,
                  usage: bool = False, as_api: bool = False,
                  start: datetime = START) -> st.SearchStrategy[list[Any]]:
    """A conversation of ``min_turns..max_turns`` turns, API-valid by construction.

    A turn is a user message, up to ``max_steps`` model responses that call 1..``max_parallel``
    tools (from ``tools``), each followed by the user message answering every call (in the calls'
    order, or rotated, or reversed), and maybe a closing text response. Options:

    * ``images``, ``thinking``: image blocks in user messages and Read results; thinking (and
      redacted thinking) blocks opening responses;
    * ``huge_result_chars``: about one result in four is up to that many characters (sizes are
      drawn apart from content, so they shrink cheaply); ``long_message_chars``: one user message
      in four carries a pasted log of up to that many characters;
    * ``person_typed_only``: every user message is typed by the person; otherwise about one in five
      (never the first) is a meta reminder, a slash-command echo, local command output or an
      interruption notice, as the graders' person-typed policy must tell apart;
    * ``split_records``: a response may be written as one record per block sharing a message id;
    * ``usage``: some responses carry an API usage (the token count's anchor);
    * ``as_api``: the Messages-API dicts (``to_api`` of the messages) instead of engine messages.

    The first message is a person-typed user message; nothing is left unanswered at the end.

    Example::

        from hypothesis import given
        from pytest_ctxeval.core.messages import to_api, validate_api
        from pytest_ctxeval.strategies import conversations

        @given(conversations(max_turns=4, images=True, thinking=True))
        def test_dropping_the_oldest_turn_keeps_the_request_valid(messages):
            starts = [i for i, m in enumerate(messages) if m.kind == "user"
                      and isinstance(m.content, str)]          # plain user turns
            kept = messages[starts[1]:] if len(starts) > 1 else messages
            assert validate_api(to_api(kept)) == []
    """
    if not 1 <= min_turns <= max_turns:
        raise InvalidArgument(f"need 1 <= min_turns <= max_turns, got {min_turns}, {max_turns}")
    opts = _Opts(tools=tuple(tools), max_parallel=max_parallel, max_steps=max_steps, images=images,
                 thinking=thinking, errors=errors, huge_result_chars=huge_result_chars,
                 long_message_chars=long_message_chars, person_typed_only=person_typed_only,
                 split_records=split_records, usage=usage).check()

    plan = _Plans(opts).conversation(min_turns, max_turns)

    @st.composite
    def conversation(draw: Any) -> list[Any]:
        messages = draw(plan)(_Builder(start))
        return to_api(messages) if as_api else messages

    return conversation()


def sessions(*, max_compactions: int = 2, min_turns: int = 1, max_turns: int = 4, max_gap_minutes: int = 180,
             usage: bool = True, start: datetime = START, **options: Any) -> st.SearchStrategy[list[Any]]:
    """A whole session as its transcript holds it: segments of conversation separated by
    compactions (a :class:`CompactBoundary` and the summary message after it, ``is_compact_summary``),
    with idle gaps of 1..``max_gap_minutes`` minutes between some turns (60 or more cools the cache
    and triggers time-based microcompact) and, with ``usage``, API usage on some responses.

    ``0..max_compactions`` compactions; each segment has ``min_turns..max_turns`` turns; other
    keyword arguments are :func:`conversations` options. The context a
    :class:`~pytest_ctxeval.engine.pipeline.ContextManager` would hold is the part from the last
    boundary on; ``to_api`` of the whole list is valid too (boundaries are dropped).

    Example::

        from hypothesis import given
        from pytest_ctxeval.core.messages import CompactBoundary
        from pytest_ctxeval.strategies import sessions

        @given(sessions(max_compactions=3))
        def test_the_clock_never_goes_back(history):
            times = [m.timestamp for m in history]
            assert times == sorted(times)
            assert sum(isinstance(m, CompactBoundary) for m in history) <= 3
    """
    if max_compactions < 0 or max_gap_minutes < 0 or not 1 <= min_turns <= max_turns:
        raise InvalidArgument("need max_compactions >= 0, max_gap_minutes >= 0 and 1 <= min_turns <= max_turns")
    opts = _Opts(usage=usage, **_conversation_options(options)).check()

    segment = _Plans(opts, max_gap_minutes).conversation(min_turns, max_turns)

    @st.composite
    def session(draw: Any) -> list[Any]:
        first = draw(segment)
        later = draw(st.lists(st.tuples(_compactions(), segment), max_size=max_compactions))
        b = _Builder(start)
        history = first(b)
        for compaction, conversation in later:
            history += compaction(b, history)
            history += conversation(b)
        return history

    return session()


def histories_with_boundary(*, older: bool = True, kept: bool = True, attachments: bool = True,
                            max_earlier: int = 1, min_turns: int = 1, max_turns: int = 4, usage: bool = False,
                            start: datetime = START, **options: Any) -> st.SearchStrategy[list[Any]]:
    """A context right after (and since) a compaction, in the shapes the engine produces; it holds
    at least one :class:`CompactBoundary`, and the last one is followed by its summary message:

    * ``[boundary, summary, attachments..., new turns...]`` (full compaction);
    * ``[boundary, summary, kept..., attachments..., new turns...]`` with ``kept`` (session-memory or
      partial ``up_to`` compaction; the kept part may start with an assistant response);
    * ``[older..., boundary, summary, new turns...]`` with ``older`` (partial ``from`` compaction,
      and up to ``max_earlier`` earlier compactions inside ``older``).

    The messages after the last boundary are what session-memory compaction may keep; its floor is
    ``last_boundary_floor(messages)``. Other keyword arguments are :func:`conversations` options.

    Example::

        from hypothesis import given
        from pytest_ctxeval.engine.boundaries import last_boundary_floor
        from pytest_ctxeval.strategies import histories_with_boundary

        @given(histories_with_boundary())
        def test_the_summary_follows_the_last_boundary(messages):
            floor = last_boundary_floor(messages)
            assert messages[floor].is_compact_summary
    """
    if max_earlier < 0 or not 1 <= min_turns <= max_turns:
        raise InvalidArgument("need max_earlier >= 0 and 1 <= min_turns <= max_turns")
    opts = _Opts(usage=usage, **_conversation_options(options)).check()

    plan = _Plans(opts).conversation(min_turns, max_turns)
    older_plans = st.tuples(plan, st.lists(st.tuples(_compactions(), plan), max_size=max_earlier))
    kept_plans = st.tuples(plan, _BOOL)

    @st.composite
    def history(draw: Any) -> list[Any]:
        # Drawn from the most to the least essential part, so a shrinking failure drops the
        # optional parts (older messages, attachments, the kept part) from the end of its choices.
        tail = draw(plan)
        compaction = draw(_compactions())
        kept_part = draw(st.none() | kept_plans) if kept else None
        files = draw(_attachments()) if attachments else None
        before = draw(st.none() | older_plans) if older else None
        b = _Builder(start)
        out: list[Any] = []
        if before is not None:
            out += before[0](b)
            for earlier, conversation in before[1]:
                out += earlier(b, out)
                out += conversation(b)
        out += compaction(b, out)
        if kept_part is not None:
            part = kept_part[0](b)
            # The keep window may start at an assistant response (after the summary, still valid).
            if kept_part[1] and len(part) > 1 and isinstance(part[1], AssistantMessage):
                part = part[1:]
            out += part
        if files is not None:
            out += files(b)
        out += tail(b)
        return out

    return history()


_CONVERSATION_OPTIONS = {"tools", "max_parallel", "max_steps", "images", "thinking", "errors",
                         "huge_result_chars", "long_message_chars", "person_typed_only", "split_records"}


def _conversation_options(options: dict[str, Any]) -> dict[str, Any]:
    unknown = set(options) - _CONVERSATION_OPTIONS
    if unknown:
        raise InvalidArgument(f"unknown option(s) {', '.join(sorted(unknown))}; conversation options are "
                              f"{', '.join(sorted(_CONVERSATION_OPTIONS))}")
    if "tools" in options:
        options = {**options, "tools": tuple(options["tools"])}
    return options
