"""The compaction prompt templates (jinja2, in ``pytest_ctxeval/prompts/``).

A user's own prompt (``--ctxeval-prompt PATH``) replaces ``compact.j2``; it may ``{% include %}``
the built-in parts (``_no_tools_preamble.j2``, ``_sections.j2``, ``_no_tools_trailer.j2``). Templates
render in a sandbox with undefined variables as errors. Conversation content is never rendered as
a template: it travels as the request's messages, and model output enters the continuation message
as a plain variable value.
"""

from __future__ import annotations

import copy

import hashlib
from pathlib import Path
from types import CodeType

import jinja2
from jinja2.sandbox import SandboxedEnvironment

from ..core.bytecode import MemoryBytecodeCache, from_source
from ..core.userfiles import not_utf8, read_user_text
from ..errors import UsageError

#: Every run makes a PromptSet: its templates are compiled once per process and source text.
_COMPILED = MemoryBytecodeCache()
#: The session-memory template (read as a string, not through the loader), compiled, by source.
_FROM_STRING: dict[str, CodeType] = {}

__all__ = ["BUILTIN_PROMPTS", "PromptSet", "NOT_PASSED"]

#: ``prompt.instructions`` of a results document whose prompt drops the ``/compact`` instructions.
NOT_PASSED = "not passed"

BUILTIN_PROMPTS = Path(__file__).resolve().parent.parent / "prompts"


class PromptSet:
    """The templates one run uses.

    >>> p = PromptSet()
    >>> "6. All user messages" in p.render_compact()
    True
    """

    def __init__(self, compact_template: str | Path | None = None,
                 session_memory_template: str | Path | None = None):
        self.compact_path = Path(compact_template) if compact_template else BUILTIN_PROMPTS / "compact.j2"
        # Read once before jinja2 does: a folder, an unreadable file or a Latin-1 save is one error
        # naming the file, the line and how to fix it (jinja2 would raise a bare UnicodeDecodeError).
        read_user_text(self.compact_path, "compaction prompt",
                       f"pass the template file in it, e.g. {self.compact_path / 'compact.j2'}")
        search = [str(self.compact_path.parent), str(BUILTIN_PROMPTS)]
        self.env = SandboxedEnvironment(
            loader=jinja2.FileSystemLoader(search), undefined=jinja2.StrictUndefined,
            keep_trailing_newline=False, autoescape=False, bytecode_cache=_COMPILED)
        self._compact = self._load(self.compact_path.name, self.compact_path)
        self._continuation = self._load("continuation.j2", BUILTIN_PROMPTS / "continuation.j2")
        self._partial = self._load("partial_compact.j2", BUILTIN_PROMPTS / "partial_compact.j2")
        self.sm_template_path = Path(session_memory_template) if session_memory_template else \
            BUILTIN_PROMPTS / "session_memory_template.j2"
        sm_text = read_user_text(self.sm_template_path, "session-memory template",
                                 f"pass the template file in it, e.g. {self.sm_template_path / 'session_memory_template.j2'}")
        self._sm_template = self._load_path(self.sm_template_path, sm_text)
        self._sm_update = self._load("session_memory_update.j2", BUILTIN_PROMPTS / "session_memory_update.j2")
        self.system_compact = (BUILTIN_PROMPTS / "system_compact.j2").read_text(encoding="utf-8").strip()
        # Rendered once now, with and without instructions: a template error (an undefined name) is
        # one usage error naming the file and line before any run, not a failure in every scenario.
        self.render_compact()
        self.render_compact("check")
        self.session_memory_template()

    def with_system_compact(self, system: str) -> PromptSet:
        """A copy of this set whose summariser system prompt is ``system`` (the templates shared):
        a scenario's memory files join it (:func:`pytest_ctxeval.engine.context_prefix.compaction_system`)."""
        other = copy.copy(self)
        other.system_compact = system
        return other

    def _load(self, name: str, path: Path) -> jinja2.Template:
        try:
            return self.env.get_template(name)
        except jinja2.TemplateSyntaxError as exc:
            where = exc.filename or str(path)
            raise UsageError(f"{where}:{exc.lineno}: template error: {exc.message}") from None
        except UnicodeDecodeError as exc:
            raise self._not_utf8(exc, path) from None
        except jinja2.TemplateNotFound as exc:
            raise UsageError(f"{path}: includes {exc.name!r}, which is neither next to it nor a "
                             f"built-in prompt ({', '.join(sorted(p.name for p in BUILTIN_PROMPTS.glob('*.j2')))})") from None

    def _not_utf8(self, exc: UnicodeDecodeError, path: Path) -> UsageError:
        """The error for a template (``path`` or a file it includes) that is not UTF-8."""
        raw = exc.object if isinstance(exc.object, bytes) else b""
        for folder in (path.parent, self.compact_path.parent):
            try:
                found = next((f for f in sorted(folder.iterdir()) if f.is_file() and f.stat().st_size == len(raw)
                              and f.read_bytes() == raw), None)
            except OSError:
                found = None
            if found is not None:
                return UsageError(f"{not_utf8(found, raw, exc)} (included by {path})" if found != path
                                  else not_utf8(found, raw, exc))
        return UsageError(f"{path}: a template it includes is not UTF-8 ({exc.reason} at byte {exc.start}); "
                          "save the file as UTF-8")

    def _load_path(self, path: Path, text: str) -> jinja2.Template:
        try:
            return from_source(self.env, text, _FROM_STRING, 64)
        except jinja2.TemplateSyntaxError as exc:
            raise UsageError(f"{path}:{exc.lineno}: template error: {exc.message}") from None

    def _render(self, tpl: jinja2.Template, path: Path, **variables: object) -> str:
        try:
            return tpl.render(**variables).strip()
        except jinja2.TemplateError as exc:
            lineno = getattr(exc, "lineno", None) or _template_line(exc, tpl)
            raise UsageError(f"{path}{':' + str(lineno) if lineno else ''}: template error: {exc}") from None
        except UnicodeDecodeError as exc:  # an {% include %} read at render time
            raise self._not_utf8(exc, path) from None
        except Exception as exc:  # noqa: BLE001 - the template's own expression failed (1/0, a bad index...)
            lineno = _template_line(exc, tpl)
            raise UsageError(f"{path}{':' + str(lineno) if lineno else ''}: template error: "
                             f"{type(exc).__name__}: {exc}") from None

    def render_compact(self, custom_instructions: str | None = None) -> str:
        return self._render(self._compact, self.compact_path, custom_instructions=custom_instructions or "")

    def render_continuation(self, summary: str, transcript_path: str, auto: bool, portion: str = "earlier") -> str:
        return self._render(self._continuation, BUILTIN_PROMPTS / "continuation.j2",
                            summary=summary, transcript_path=transcript_path, auto=auto, portion=portion)

    def render_partial(self, direction: str, custom_instructions: str | None = None) -> str:
        return self._render(self._partial, BUILTIN_PROMPTS / "partial_compact.j2", direction=direction,
                            custom_instructions=custom_instructions or "", sections=self.section_list())

    def section_list(self) -> str:
        """The numbered section list of the compaction prompt in use (its first run of numbered
        section entries and their continuation lines), so a partial compaction asks for the
        sections the user's prompt asks for; "" when the prompt has none."""
        return section_list(self.render_compact())

    def session_memory_template(self) -> str:
        return self._render(self._sm_template, self.sm_template_path)

    def render_session_memory_update(self, notes: str | None) -> str:
        return self._render(self._sm_update, BUILTIN_PROMPTS / "session_memory_update.j2",
                            notes=notes or "", template=self.session_memory_template())

    @property
    def passes_instructions(self) -> bool:
        """Whether the compaction prompt passes ``/compact <instructions>`` (and PreCompact hook
        output) on to the model: a prompt without ``{{ custom_instructions }}`` drops them, and
        renders the same as one that passes them when there are none."""
        probe = "ctxeval-probe-of-custom-instructions"
        return probe in self.render_compact(probe)

    @property
    def fingerprint(self) -> str:
        """A short hash of the rendered compaction prompt (to tell prompt versions apart); a
        prompt that drops the ``/compact`` instructions hashes apart from one that passes them."""
        text = self.render_compact() + ("" if self.passes_instructions else "\n[custom instructions not passed]")
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    def record(self, path: str) -> dict[str, str]:
        """The ``prompt`` object of a results document: path, fingerprint, rendered text, and
        ``instructions: "not passed"`` when the prompt drops the ``/compact`` instructions."""
        out = {"path": path, "fingerprint": self.fingerprint, "text": self.render_compact()}
        if not self.passes_instructions:
            out["instructions"] = NOT_PASSED
        return out


def section_list(prompt: str) -> str:
    """The numbered section list of ``prompt`` (see :meth:`PromptSet.section_list`): every entry of
    the list :func:`~pytest_ctxeval.reading.summary.section_entries` finds, with its continuation
    lines, whatever its title (a section the user renamed is still asked for)."""
    from ..reading.summary import section_entries

    entries = section_entries(prompt)
    if not entries:
        return ""
    lines = prompt.split("\n")
    out: list[str] = []
    for entry in entries:
        out += lines[entry.line:entry.end]
    return "\n".join(out)


def _template_line(exc: BaseException, tpl: jinja2.Template) -> int | None:
    """The template line a render-time error came from: jinja2 rewrites the traceback so the
    template's own frames carry its file name and line numbers."""
    import traceback

    names = {tpl.filename or "<template>", "<template>"}
    lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if f.filename in names]
    return lines[-1] if lines else None
