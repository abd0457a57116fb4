"""Graders: the ``@grader`` decorator, verdicts, compaction cases and the registry.

A grader is a function decorated ``@grader("name", kind="rule")`` that takes a
:class:`CompactionCase` and returns a :class:`Verdict`::

    @grader("mentions_tests", kind="rule")
    def mentions_tests(case: CompactionCase) -> Verdict:
        if "pytest" in case.summary:
            return Verdict.passed_("the summary mentions pytest")
        return Verdict.failed("the summary never mentions pytest", where="summary")

Graders live in plain Python files in a folder (built-ins in ``graders/``; a user's own folder with
``--ctxeval-graders``/``ctxeval_graders``), loaded by path like conftest files. The registry is an
object passed around, not module state.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import inspect
import re
import sys
import traceback
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from collections.abc import Callable, Iterable

from ..errors import GraderError, ProviderError
from ..core.redact import scrub_output
from ..core.renamed import add_renamed_attributes, renamed_keywords
from ..reading.extract import PersonMessage, person_messages
from ..reading.quoting import Conversation, flat_lines, recent_conversation
from ..core.messages import AssistantMessage, CompactBoundary, UserMessage, plain_text, text_of
from ..scenario.schema import Expectations
from ..reading.summary import SECTION_KINDS, SECTION_TITLES, ParsedSummary, normalize_ws, parse_summary, prompt_titles, section_entries
from ..reading.verbatim import normalize
from ..reading.terminal_copy import claude_code_summary, from_terminal
from ..core.tokens import estimate_messages

if TYPE_CHECKING:  # for annotations only: these modules import this one
    from ..compaction.formats import SummaryFormat
    from ..core.config import EngineConfig
    from .judging import Judge
    from ..scenario.planted import PlantedFact
    from ..runner import RunResult
    from ..transcript.jsonl import Transcript

__all__ = [
    "Verdict", "Status", "CompactionCase", "GraderSpec", "grader", "GraderRegistry", "load_graders",
    "builtin_graders_dir", "cases_from_run", "cases_from_transcript", "STATUSES", "crash_verdict",
]

Status = Literal["pass", "fail", "n/a", "ungraded", "error"]
STATUSES: tuple[str, ...] = ("pass", "fail", "n/a", "ungraded", "error")


@dataclass
class Verdict:
    """The outcome of one grader on one compaction.

    ``status`` is ``pass``, ``fail``, ``n/a`` (the invariant does not apply: nothing to check) or
    ``ungraded`` (the grader could not decide, e.g. a judge reply that never parsed): ungraded
    never counts as a pass or a fail (``--strict`` makes it a failure); ``error`` (the grader
    itself raised: a bug in the grader, never a pass, a fail or a skip; ``exc`` holds the
    exception with its traceback). ``score`` is in [0, 1]; ``reasons`` are human-readable and
    say what is missing and where; ``evidence`` holds the details (missing items, section text).
    """

    status: Status
    score: float
    reasons: list[str] = field(default_factory=list)
    evidence: dict[str, Any] = field(default_factory=dict)
    grader: str = ""
    kind: str = "rule"
    exc: BaseException | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Reasons are printed, written to JSON and shown by pytest: a key a judge echoed (or a person
        # pasted) must not travel with them.
        self.reasons = [scrub_output(r) for r in self.reasons]

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    @classmethod
    def passed_(cls, *reasons: str, score: float = 1.0, **evidence: Any) -> Verdict:
        return cls("pass", score, list(reasons), evidence)

    @classmethod
    def failed(cls, *reasons: str, score: float = 0.0, **evidence: Any) -> Verdict:
        return cls("fail", score, list(reasons), evidence)

    @classmethod
    def not_applicable(cls, reason: str, **evidence: Any) -> Verdict:
        return cls("n/a", 1.0, [reason], evidence)

    @classmethod
    def ungraded(cls, reason: str, **evidence: Any) -> Verdict:
        return cls("ungraded", 0.0, [reason], evidence)

    @classmethod
    def from_fraction(cls, found: int, total: int, missing_reasons: list[str], ok_reason: str,
                      **evidence: Any) -> Verdict:
        """Pass when nothing is missing; the score is the fraction found."""
        score = found / total if total else 1.0
        if missing_reasons:
            return cls("fail", round(score, 4), missing_reasons, evidence)
        return cls("pass", 1.0, [ok_reason], evidence)

    def as_dict(self) -> dict[str, Any]:
        return {"grader": self.grader, "kind": self.kind, "status": self.status,
                "score": round(float(self.score), 4), "reasons": list(self.reasons)}


@add_renamed_attributes  # the attribute's name before the compactor rename, deprecated
@dataclass
class CompactionCase:
    """Everything a grader may look at for one compaction.

    ``summary`` is the summary text the model sees after compaction (for the engine: the
    extracted ``<summary>``; for a real transcript: the stored summary message). ``summarized`` is
    the context the summariser was given; ``history`` every message of the session before the
    compaction (earlier compactions included), so invariants hold *across* re-compactions.
    """

    source: str
    index: int
    kind: str                                   # full | session_memory | partial | transcript
    trigger: str                                # auto | manual
    summary: str
    summary_message: str
    summarized: list[Any]
    history: list[Any]
    post_messages: list[Any]
    expect: Expectations = field(default_factory=Expectations)
    raw_reply: str | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)
    compaction_request: dict[str, Any] | None = None
    transcript_path: str | None = None          # the transcript path the model was told
    pre_tokens: int = 0
    post_tokens: int = 0
    turn: int | None = None
    origin: str = "engine"                      # engine | transcript | summary-file
    line: int | None = None                     # transcript line of the summary, when known
    config: EngineConfig | None = field(default=None, repr=False)   # the EngineConfig of the run (engine cases)
    is_last: bool = True                        # the last compaction of its run or transcript
    generations: list[CompactionCase] = field(default_factory=list, repr=False)  # all of the run's cases
    judge: Judge | None = field(default=None, repr=False)           # the judge of the llm graders
    recompact: Callable[[CompactionCase], CompactionCase | None] | None = field(default=None, repr=False)  # case -> case: compact the post-compact context again
    final_context: list[Any] = field(default_factory=list, repr=False)  # the run's context at its end (last case)
    #: The graders run on this case (set by GraderRegistry.run): an llm grader marks a prefix for
    #: prompt caching only when another selected grader's request will read it.
    graders: tuple[str, ...] = field(default=(), repr=False)
    #: The compactor that made this compaction (pytest_ctxeval.compaction), and its summary
    #: format (a SummaryFormat; None: Claude Code's nine sections).
    compactor: str = "claude_code"
    summary_format: SummaryFormat | None = field(default=None, repr=False)
    #: The Claude Code version that wrote this compaction (a real transcript's boundary), None for an
    #: engine run: graders hold a real summary to what its version promised (pytest_ctxeval.grading.versions).
    version: str | None = None
    #: What the person gave a manual ``/compact`` (its arguments; real transcripts): the latest words
    #: they typed before the summary was written, which section 9 may quote (Claude Code writes the
    #: command's echo after the summary, so it is not in the summarised span).
    compact_args: str | None = None
    #: A real partial compaction (``/rewind`` -> "Summarize from here" / "up to here"): ``from`` or
    #: ``up_to`` (the summary's ``summarizeMetadata.direction``); None for a whole compaction.
    partial: str | None = None
    #: The scenario's planted facts (pytest_ctxeval.scenario.planted.PlantedFact), for facts_survive and stale_values.
    facts: list[PlantedFact] = field(default_factory=list, repr=False)

    @cached_property
    def sections(self) -> ParsedSummary:
        if self.summary_format is not None:
            return self.summary_format.parse(self.summary)
        return parse_summary(self.summary, titles=self.prompt_titles)

    @cached_property
    def prompt_titles(self) -> dict[str, str]:
        """The section titles of the compaction prompt this summary answered that the canonical
        titles do not name (a prompt that renamed ``7. Pending Tasks`` to ``7. Outstanding Tasks``),
        read from the compaction request (the instruction is the last text of its last message):
        the summary's sections are those its prompt asked for. {} without a request (a real
        transcript: Claude Code's own prompt) or for the built-in titles."""
        return prompt_titles(self.instruction) if self.instruction else {}

    @cached_property
    def instruction(self) -> str:
        """The compaction prompt this summary answered: the last text of the compaction request's
        last message ("" without a request: a real transcript)."""
        messages = (self.compaction_request or {}).get("messages") or []
        if not messages or not isinstance(messages[-1], dict) or messages[-1].get("role") != "user":
            return ""
        content = messages[-1].get("content")
        texts = [content] if isinstance(content, str) else \
            [b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"]
        return texts[-1] if texts and isinstance(texts[-1], str) else ""

    def section_name(self, kind: str) -> tuple[int, str]:
        """The number and title the compaction prompt gives section ``kind`` (a renamed prompt's
        ``7. Outstanding Tasks``), else Claude Code's (``7. Pending Tasks``): what a reason calls it."""
        if self.prompt_titles:  # a prompt whose titles differ from the built-in ones
            for entry in section_entries(self.instruction):
                if entry.kind == kind:
                    return entry.number, entry.title
        return SECTION_KINDS.index(kind) + 1, SECTION_TITLES[kind]

    @cached_property
    def section_order(self) -> list[str]:
        """The nine sections in the order the compaction prompt lists them (a prompt may move one),
        or the canonical order when the prompt does not list all nine (a real transcript)."""
        order = [e.kind for e in section_entries(self.instruction) if e.kind] if self.instruction else []
        return order if sorted(order) == sorted(SECTION_KINDS) else list(SECTION_KINDS)

    #: For a real transcript: what the compaction itself kept (the preserved segment, the attachments
    #: and reminders put in before the model's first reply), as opposed to ``post_messages``, which also
    #: holds what the model did next. A fact found only in the model's later work was not kept by the
    #: summary. None: every post-compact message counts (an engine run's post-compact context).
    kept_messages: list[Any] | None = field(default=None, repr=False)

    @cached_property
    def history_text(self) -> str:
        """Everything said or done before the compaction, lower-cased and whitespace-normalised: what
        the session has reached yet (an ``expect.files`` entry the agent only touches after this
        compaction cannot be in this summary). A mutant shares its case's (``Mutant.of`` changes the
        summary and the kept messages, never the history)."""
        return normalize_ws(plain_text(self.history)).lower()

    def reached(self, items: Iterable[str]) -> list[str]:
        """The ``items`` the session before the compaction holds (whitespace and case aside)."""
        return [i for i in items if normalize_ws(i).lower() in self.history_text]

    @cached_property
    def kept_text(self) -> str:
        """The text of what the compaction kept besides its summary: kept messages and attachments."""
        source = self.kept_messages if self.kept_messages is not None else self.post_messages
        return plain_text(m for m in source
                          if not isinstance(m, CompactBoundary)
                          and not (isinstance(m, UserMessage) and m.is_compact_summary))

    def region(self, kind: str) -> str | None:
        """Where the facts of section ``kind`` may live after this compaction, or None when the
        summary lacks that section.

        For a nine-section summary: the section's body, plus whatever the compaction kept verbatim
        (a user message kept as a message counts as much as one quoted in section 6). For a
        session-memory compaction (the notes have their own ten sections): the whole post-compact
        context. For another compactor's summary format: the section of that kind when the format has
        one (None when the summary lacks it), else the whole post-compact context — a format without
        a user-messages section (Codex keeps them as messages) is searched everywhere.
        """
        if self.kind == "session_memory":
            return self.summary + "\n" + self.kept_text
        if self.summary_format is not None and kind not in self.summary_format.kinds:
            return "\n".join(t for t in (self.summary, self.kept_text) if t)
        section = self.sections.get(kind)
        if section is None:
            return None
        return section.body + ("\n" + self.kept_text if self.kept_text else "")

    @property
    def label(self) -> str:
        at = f"turn {self.turn}" if self.turn is not None else (f"line {self.line}" if self.line else "")
        return f"compaction {self.index} ({self.trigger}{', ' + at if at else ''})"

    def person_messages(self) -> list[PersonMessage]:
        """Person-typed messages of the whole session up to this compaction."""
        return list(self.shared_view("people", lambda: person_messages(self.history), self.history))

    def conversation(self) -> Conversation | None:
        """The most recent conversation of what the summary covers
        (:func:`pytest_ctxeval.reading.quoting.recent_conversation` over :meth:`span`), None when no
        person typed anything in it. Read it, do not change it: the case's mutants share it."""
        def make() -> Conversation | None:
            span = self.span()
            people = self.span_people()
            if not people:
                return None
            convo = recent_conversation(span, people)
            if self.compact_args:
                convo = dataclasses.replace(convo, recent=convo.recent + [normalize(flat_lines(self.compact_args))])
            return convo
        return self.shared_view("conversation", make, self.history)

    def span(self) -> list[Any]:
        """The history up to the end of what the summary covers. The whole history, but for a partial
        compaction that kept the recent messages (``up_to``, seed 003:336): its summary ends where the
        kept messages start, so its "most recent conversation" is the end of the part it summarised
        (the later requests follow it verbatim)."""
        if self.kind != "partial" or not self.summarized or not self.history:
            return self.history
        last = self.summarized[-1]
        uid = getattr(last, "uuid", None)
        for i in range(len(self.history) - 1, -1, -1):
            m = self.history[i]
            if m is last or (uid is not None and getattr(m, "uuid", None) == uid):
                return self.history[: i + 1]
        return self.history

    def span_people(self) -> list[PersonMessage]:
        """Person-typed messages of :meth:`span` (those of the whole session but for an ``up_to``
        partial compaction)."""
        span = self.span()
        if span is self.history:
            return self.person_messages()
        return list(self.shared_view("span_people", lambda: person_messages(span), self.history))

    def shared_view(self, name: str, make: Callable[[], Any], *inputs: Any) -> Any:
        """``make()``, a view of ``inputs`` (fields a mutant never changes: ``history``,
        ``requests``, ``config``; :meth:`pytest_ctxeval.grading.mutants.Mutant.of` replaces only the
        summary and the kept messages), computed once and shared by the case and its mutants: the
        graders read the same history for every mutant of a compaction. Computed again when an input
        is replaced, or a list input changes length."""
        views = self.__dict__.get("shared_views")
        if views is None:
            views = self.__dict__["shared_views"] = {}
        stamp = tuple((x, len(x) if isinstance(x, list) else -1) for x in inputs)
        held = views.get(name)
        if held is not None and len(held[0]) == len(stamp) \
                and all(a is b and m == n for (a, m), (b, n) in zip(held[0], stamp)):
            return held[1]
        value = make()
        views[name] = (stamp, value)
        return value


@dataclass(frozen=True)
class GraderSpec:
    name: str
    kind: str
    func: Callable[[CompactionCase], Verdict]
    origin: str
    description: str = ""
    applies_to: tuple[str, ...] | None = None   # compaction kinds; None = all
    compactors: tuple[str, ...] | None = None   # compactors whose format it checks; None = all
    targets: tuple[str, ...] = ()               # mutation operators that break its invariant (ctxeval validate)
    expect_keys: tuple[str, ...] = ()           # the scenario expect: keys it reads


_MARK = "__ctxeval_grader__"


@renamed_keywords  # the keyword's name before the compactor rename, deprecated
def grader(name: str, kind: str = "rule", *, applies_to: Iterable[str] | None = None,
           compactors: Iterable[str] | None = None, targets: Iterable[str] = ()) -> Callable[[Callable], Callable]:
    """Mark a function as a grader named ``name`` (``kind`` is ``rule`` or ``llm``).

    ``applies_to`` names the compaction kinds it grades (``full``, ``partial``, ``session_memory``,
    ``transcript``); ``compactors`` the compactors whose summary format it checks
    (``("claude_code",)`` for the nine sections). Any other compaction gets ``n/a`` with the reason.
    ``targets`` names the mutation operators whose mutants it exists to catch (``ctxeval validate``
    measures how many it does; operators may also name the graders they target, see
    :func:`pytest_ctxeval.grading.mutants.mutation`).
    """
    if isinstance(targets, str):
        raise GraderError(f"grader {name!r}: targets must be a list of mutation operator names, got {targets!r}")
    if not name or not name.replace("_", "").isalnum():
        raise GraderError(f"grader name must be letters, digits and '_'; got {name!r}")
    if kind not in ("rule", "llm"):
        raise GraderError(f"grader {name!r}: kind must be 'rule' or 'llm', got {kind!r}")

    def mark(func: Callable) -> Callable:
        setattr(func, _MARK, (name, kind, tuple(applies_to) if applies_to else None,
                              tuple(compactors) if compactors else None, tuple(targets)))
        return func

    return mark


class GraderRegistry:
    """Graders by name, in load order."""

    def __init__(self) -> None:
        self._specs: dict[str, GraderSpec] = {}
        #: Mutation operators defined in the loaded grader files (``@mutation``), by name.
        self.mutations: dict[str, Any] = {}

    def add(self, spec: GraderSpec) -> None:
        if spec.name in self._specs:
            raise GraderError(f"grader {spec.name!r} is defined twice: {self._specs[spec.name].origin} and "
                              f"{spec.origin}; rename one")
        self._specs[spec.name] = spec

    def load_dir(self, folder: str | Path) -> None:
        folder = Path(folder)
        if not folder.is_dir():
            raise GraderError(f"graders folder {folder}: no such directory")
        for path in sorted(folder.glob("*.py")):
            if path.name.startswith("_"):
                continue
            module = _import_path(path)
            for attr in vars(module).values():
                mark = getattr(attr, _MARK, None)
                if mark and callable(attr):
                    name, kind, applies, compactors, targets = (*mark, None, ())[:5]
                    doc = " ".join((attr.__doc__ or "").strip().split("\n\n")[0].split())
                    self.add(GraderSpec(name, kind, attr, f"{path}:{attr.__code__.co_firstlineno}", doc, applies,
                                        compactors, tuple(targets or ()), _expect_keys(attr)))
                self._add_mutation(attr, path)

    def _add_mutation(self, attr: Any, path: Path) -> None:
        from .mutants import spec_of

        spec = spec_of(attr) if callable(attr) else None
        if spec is None:
            return
        old = self.mutations.get(spec.name)
        if old is not None and old.func is not spec.func:
            raise GraderError(f"mutation operator {spec.name!r} is defined twice: {old.origin} and {spec.origin}; "
                              "rename one")
        self.mutations[spec.name] = spec

    @property
    def names(self) -> list[str]:
        return list(self._specs)

    def __iter__(self):
        return iter(self._specs.values())

    def __len__(self) -> int:
        return len(self._specs)

    def get(self, name: str) -> GraderSpec:
        try:
            return self._specs[name]
        except KeyError:
            from ..core.near_names import near_miss

            near = near_miss(name, self.names)
            hint = f" (did you mean {near!r}?)" if near else ""
            raise GraderError(f"unknown grader {name!r}{hint}; known graders: {', '.join(self.names)} (a grader of your "
                              "own loads from its folder: ctxeval --graders-dir DIR; pytest: the ini key "
                              "ctxeval_graders or --ctxeval-graders DIR)") from None

    def select(self, names: Iterable[str] | None = None, kinds: Iterable[str] | None = None) -> list[GraderSpec]:
        specs = [self.get(n) for n in names] if names else list(self)
        if kinds is not None:
            allowed = set(kinds)
            specs = [s for s in specs if s.kind in allowed]
        return specs

    def run(self, case: CompactionCase, specs: Iterable[GraderSpec] | None = None) -> list[Verdict]:
        """Every selected grader on ``case``. A grader that raises gives an ``ungraded`` verdict
        with the error (a bug in a grader must not pass or fail a summary silently)."""
        out = []
        specs = list(specs) if specs is not None else list(self)
        case.graders = tuple(spec.name for spec in specs)
        for spec in specs:
            if spec.compactors is not None and not _writes_format_of(case, spec.compactors):
                fmt = getattr(case.summary_format, "name", None)
                verdict = Verdict.not_applicable(f"{spec.name} checks the format of the {', '.join(spec.compactors)} "
                                                 f"compactor; the {case.compactor} compactor writes "
                                                 + (_article(fmt) if fmt else "its own format"))
            elif spec.applies_to is not None and case.kind not in spec.applies_to:
                verdict = Verdict.not_applicable(f"{spec.name} applies to {', '.join(spec.applies_to)} "
                                                 f"compactions, not {case.kind}")
            else:
                try:
                    verdict = spec.func(case)
                except ProviderError:  # the endpoint cannot serve the run: one error, not a verdict
                    raise
                except Exception as exc:  # noqa: BLE001 - an error verdict: reported, never a pass or a skip
                    verdict = crash_verdict(spec, case, exc)
                if not isinstance(verdict, Verdict):
                    try:
                        raise GraderError(f"grader {spec.name} returned {type(verdict).__name__}, not a Verdict "
                                          f"({spec.origin})")
                    except GraderError as exc:
                        verdict = crash_verdict(spec, case, exc)
            verdict.grader = spec.name
            verdict.kind = spec.kind
            out.append(verdict)
        return out


def crash_verdict(spec: GraderSpec, case: CompactionCase, exc: BaseException) -> Verdict:
    """The ``error`` verdict of a grader that raised: "grader X crashed on scenario Y: ..." with the
    file and line it raised at; the exception travels with it (``verdict.exc``)."""
    frames = traceback.extract_tb(exc.__traceback__)
    at = f" ({Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""
    where = Path(case.source).name if case.source else "?"
    verdict = Verdict("error", 0.0, [f"grader {spec.name} crashed on scenario {where} ({case.label}): "
                                     f"{type(exc).__name__}: {exc}{at}"])
    verdict.exc = exc
    return verdict


_EXPECT_KEY = re.compile(r"\bexpect\.([a-z_]+)")


@lru_cache(maxsize=1024)  # per function: a grader module is imported once per process (_import_path)
def _expect_keys(func: Callable) -> tuple[str, ...]:
    """The ``expect:`` keys a grader reads (``case.expect.files`` in its source, helpers of its
    module included when it calls them by name), in schema order."""
    try:
        source = inspect.getsource(func)
    except (OSError, TypeError):
        return ()
    found = set(_EXPECT_KEY.findall(source))
    module = sys.modules.get(getattr(func, "__module__", ""), None)
    for name in set(re.findall(r"\b(_[a-z_]+)\(", source)):  # the module's helpers it calls
        helper = getattr(module, name, None)
        if callable(helper) and getattr(helper, "__module__", None) == func.__module__:
            try:
                found |= set(_EXPECT_KEY.findall(inspect.getsource(helper)))
            except (OSError, TypeError):
                pass
    order = list(Expectations.model_fields)
    return tuple(k for k in order if k in found)


def _writes_format_of(case: CompactionCase, compactors: tuple[str, ...]) -> bool:
    """Whether ``case``'s summary is in the format of one of ``compactors``: by name, or for
    ``claude_code`` by format (no ``summary_format``: Claude Code's nine sections, as a subclass of
    the ``claude_code`` compactor or a real transcript writes them)."""
    return case.compactor in compactors or ("claude_code" in compactors and case.summary_format is None)


def _article(text: str) -> str:
    return text if text.startswith(("no ", "a ", "an ")) else ("an " if text[:1].lower() in "aeiou" else "a ") + text


def _import_path(path: Path) -> Any:
    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:10]
    name = f"ctxeval_graders_{digest}_{path.stem}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise GraderError(f"{path}: cannot be imported as a grader module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001
        del sys.modules[name]
        tb = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == str(path)]
        line = f":{tb[-1].lineno}" if tb else ""
        raise GraderError(f"{path}{line}: grader module failed to import: {type(exc).__name__}: {exc}") from None
    return module


def builtin_graders_dir() -> Path:
    """The built-in grader folder: inside the installed package, else the source checkout's."""
    here = Path(__file__).resolve().parent.parent
    for candidate in (here / "_builtin" / "graders", here.parent / "graders"):
        if candidate.is_dir():
            return candidate
    raise GraderError("the built-in graders folder is missing from this installation")


def load_graders(extra_dirs: Iterable[str | Path] = (), *, builtins: bool = True) -> GraderRegistry:
    registry = GraderRegistry()
    if builtins:
        registry.load_dir(builtin_graders_dir())
    for folder in extra_dirs:
        registry.load_dir(folder)
    return registry


# ---------------------------------------------------------------------------------------------
# Building cases


def cases_from_run(run: RunResult) -> list[CompactionCase]:
    """One case per compaction of a :class:`~pytest_ctxeval.runner.RunResult`."""
    from ..engine.pipeline import shown_transcript_path

    expect = run.scenario.expect if run.scenario is not None else Expectations()
    out = []
    for rec in run.compactions:
        res = rec.result
        out.append(CompactionCase(
            source=run.source, index=rec.index, kind=res.kind, trigger=res.trigger, summary=res.summary,
            summary_message=text_of(res.summary_message.content) if res.summary_message is not None else "",
            summarized=res.summarized,
            history=rec.history, post_messages=res.post_messages, expect=expect, raw_reply=res.raw_reply,
            requests=rec.requests_after, compaction_request=res.request,
            # A recorded compaction's summary names the original session's transcript, not the replay's.
            transcript_path=None if res.kind == "transcript" else shown_transcript_path(run.transcript_path.stem),
            pre_tokens=res.pre_tokens, post_tokens=res.post_tokens,
            turn=rec.turn, origin="engine", config=run.config,
            compactor=getattr(run, "compactor", "claude_code"), summary_format=getattr(run, "summary_format", None),
            facts=list(run.scenario.facts) if run.scenario is not None else [],
            # the /compact text the summariser was given: a leave-out in it is obeyed by every
            # grader of the facts it leaves out, as for a real session's /compact
            compact_args=getattr(res, "custom_instructions", None)))
    _link(out)
    if out:
        out[-1].final_context = list(run.final_messages)
    return out


def _link(cases: list[CompactionCase]) -> None:
    for case in cases:
        case.is_last = case is cases[-1]
        case.generations = cases


def cases_from_transcript(transcript: Transcript, *, expect: Expectations | None = None,
                          summary_text: str | None = None) -> list[CompactionCase]:
    """Cases for a real transcript: one per compaction in it; or, with ``summary_text``, a single
    case grading that text as a summary of the whole conversation."""
    expect = expect or Expectations()
    source = str(transcript.path)
    if summary_text is not None:
        history = [m for m in transcript.messages if not isinstance(m, CompactBoundary)]
        # A summary copied from Claude Code's terminal loses the terminal's drawing; one that opens
        # with Claude Code's preamble is Claude Code's, held to what the session's version promised.
        summary_text = from_terminal(summary_text)
        return [CompactionCase(
            source=source, index=1, kind="transcript", trigger="manual", summary=summary_text,
            summary_message=summary_text, summarized=history, history=history, post_messages=[],
            expect=expect, origin="summary-file", pre_tokens=estimate_messages(history),
            post_tokens=estimate_messages([UserMessage(uuid="summary", content=summary_text)]),
            version=transcript.version if claude_code_summary(summary_text) else None)]
    out = []
    for comp in transcript.compactions:
        if not comp.gradable:
            # Copied in from a parent session (that session's to grade), or no summary after the
            # boundary (an absent summary is not an empty one): listed by `grade`, never graded.
            continue
        text = comp.summary_text
        post = estimate_messages([comp.summary]) if comp.summary is not None else 0
        out.append(CompactionCase(
            source=source, index=comp.index, kind="transcript", trigger=comp.boundary.trigger,
            summary=text, summary_message=text, summarized=comp.before, history=comp.history,
            # What the model saw right after it (summary, preserved messages, then up to the next
            # person-typed message), not the rest of the session.
            post_messages=comp.post_context, expect=expect, pre_tokens=comp.boundary.pre_tokens, post_tokens=post,
            origin="transcript", line=comp.summary_line or comp.boundary_line,
            version=getattr(comp, "version", None) or transcript.version,
            kept_messages=_kept_by_compaction(comp), compact_args=comp.compact_args,
            partial=getattr(comp, "partial", None)))
    _link(out)
    return out


def _kept_by_compaction(comp: Any) -> list[Any] | None:
    """What a real compaction kept: its preserved messages, then what came in before the model's
    first reply (attachments, reminders), not the model's own later work."""
    kept = getattr(comp, "kept", None)
    if kept is None:
        return None
    preserved = list(getattr(comp, "preserved", []) or [])
    out = list(preserved)
    for m in kept[len(preserved):]:
        if isinstance(m, AssistantMessage):
            break
        out.append(m)
    return out


def summary_user_message(case: CompactionCase) -> UserMessage | None:
    for m in case.post_messages:
        if isinstance(m, UserMessage) and m.is_compact_summary:
            return m
    return None
