"""``ctxeval prompt show|init``: see the whole prompt a run sends, and get the templates to edit.

* ``ctxeval prompt show [compact|partial|session_memory] [--prompt PATH]`` prints the fully rendered
  prompt, each line with the template file and line it comes from (``compact.j2:19``, or
  ``_no_tools_preamble.j2:1 (built-in)`` for an included part), then what the offline reference
  model reads in it: the sections it asks for and the instructions of
  :mod:`pytest_ctxeval.llm.instructions`. ``--plain`` prints the prompt alone.
* ``ctxeval prompt init DIR`` copies the built-in templates into DIR (never over a file that is
  there, unless ``--force``). A prompt in DIR includes its parts from DIR first, then the built-ins.
"""

from __future__ import annotations

import argparse
import re
import shutil
from pathlib import Path
from typing import Any
from collections.abc import Sequence

from ..errors import UsageError

__all__ = ["add_prompt_command", "run_prompt", "origins"]

KINDS = ("compact", "partial", "session_memory")
_INCLUDE = re.compile(r"""\{%-?\s*include\s+["']([^"']+)["']""")


def add_prompt_command(sub: Any) -> None:
    """Register ``ctxeval prompt``."""
    p = sub.add_parser("prompt", help="show the rendered compaction prompt, or copy the built-in templates to edit",
                       description="Show the fully rendered prompt a run sends (and where each line comes from), "
                                   "or copy the built-in templates into a folder to edit.")
    verbs = p.add_subparsers(dest="prompt_command", metavar="show|init")
    show = verbs.add_parser("show", help="print the rendered prompt with the file and line of each part",
                            description="Print the fully rendered prompt, each line with the template file and "
                                        "line it comes from, then what the offline reference model reads in it.")
    show.add_argument("which", nargs="?", choices=KINDS, default="compact",
                      help="compact (default): the full compaction prompt; partial: the partial compaction "
                           "prompt; session_memory: the session-memory update request")
    show.add_argument("--prompt", metavar="PATH", help="your compaction prompt (default: the built-in compact.j2)")
    show.add_argument("--session-memory-prompt", metavar="PATH", help="your session-memory notes template")
    show.add_argument("--plain", action="store_true", help="the rendered prompt only, no origins, no reading")
    init = verbs.add_parser("init", help="copy the built-in templates into DIR for editing",
                            description="Copy the built-in prompt templates into DIR. Pass DIR/compact.j2 as "
                                        "--ctxeval-prompt; its includes resolve from DIR first.")
    init.add_argument("folder", metavar="DIR")
    init.add_argument("--force", action="store_true", help="overwrite templates already in DIR")


def run_prompt(args: argparse.Namespace) -> int:
    """Run ``ctxeval prompt``."""
    if args.prompt_command == "init":
        return _init(Path(args.folder), args.force)
    if args.prompt_command != "show":
        raise UsageError("ctxeval prompt: say 'show' or 'init' (ctxeval prompt --help)")
    from ..engine.prompt import PromptSet

    prompts = PromptSet(args.prompt, args.session_memory_prompt)
    if args.which == "compact":
        text, top = prompts.render_compact(), prompts.compact_path
    elif args.which == "partial":
        from ..engine.prompt import BUILTIN_PROMPTS

        text, top = prompts.render_partial("up_to"), BUILTIN_PROMPTS / "partial_compact.j2"
    else:
        from ..engine.prompt import BUILTIN_PROMPTS

        text, top = prompts.render_session_memory_update(None), BUILTIN_PROMPTS / "session_memory_update.j2"
    if args.plain:
        print(text)
        return 0
    extra = [prompts.sm_template_path] if args.which == "session_memory" else []
    if args.which == "partial":
        extra = [prompts.compact_path]  # its section list comes from the compaction prompt in use
    rows = origins(text, top, search=[prompts.compact_path.parent], extra=extra)
    width = max((len(o) for o, _ in rows), default=0)
    for origin, line in rows:
        print(f"{origin:<{width}} | {line}")
    print()
    for line in _reading(text, [o for o, _ in rows]):
        print(line)
    return 0


def _sources(top: Path, search: list[Path], extra: list[Path]) -> list[tuple[str, Path]]:
    """``(label, path)`` of ``top`` and every template it includes (recursively), then ``extra``."""
    from ..engine.prompt import BUILTIN_PROMPTS

    out: list[tuple[str, Path]] = []
    todo = [top, *extra]
    while todo:
        path = todo.pop(0)
        if any(p == path for _, p in out) or not path.is_file():
            continue
        builtin = path.parent.resolve() == BUILTIN_PROMPTS.resolve()
        out.append((f"{path.name}{' (built-in)' if builtin else ''}", path))
        for name in _INCLUDE.findall(path.read_text(encoding="utf-8")):
            for folder in [*search, BUILTIN_PROMPTS]:
                if (folder / name).is_file():
                    todo.append(folder / name)
                    break
    return out


def origins(text: str, top: Path, *, search: list[Path], extra: Sequence[Path] = ()) -> list[tuple[str, str]]:
    """Each rendered line with ``file:line`` of the template line it comes from (found by its text;
    the first template in include order wins), or ``(rendered value)`` for text a variable or an
    expression produced."""
    index: dict[str, str] = {}
    for label, path in _sources(top, search, list(extra)):
        for n, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
            key = line.strip()
            if key and key not in index:
                name, _, tag = label.partition(" ")
                index[key] = f"{name}:{n}{' ' + tag if tag else ''}"
    rows = []
    for line in text.split("\n"):
        key = line.strip()
        rows.append(("" if not key else index.get(key, "(rendered value)"), line))
    return rows


def _reading(text: str, where: list[str]) -> list[str]:
    from ..llm.instructions import instruction, read_prompt
    from ..llm.reference import prompt_sections, requested_sections, skeleton_sections

    reading = read_prompt(text)
    sections = prompt_sections(text)
    out = ["# what the offline reference model reads in this prompt",
           "# sections: " + (", ".join(t for _, t in sections) or "none (a short generic summary)")]
    from ..reading.summary import SECTION_TITLES, other_section_lists, section_entries, section_kind, unread_lists
    from ..llm.reference import reads_instructions

    entries = section_entries(text)
    if not sections:
        for run in unread_lists(text):
            out.append(f"# note: the numbered list at {where[run[0][0]].split(' ')[0]} ("
                       + ", ".join(f"{n}. {t}" for _, n, t in run) + ") is not read as the section list: its titles "
                       "name fewer than two sections and it is not numbered 1 to 9; the offline model writes a short "
                       "generic summary instead (use the nine titles, or number the list 1 to 9)")
    for other in other_section_lists(text):
        out.append(f"# note: another numbered list ({where[other[0].line].split(' ')[0]}: "
                   + ", ".join(f"{e.number}. {e.title}" for e in other)
                   + ") is not taken for the section list: the list above names more sections (an example or a "
                     "checklist is not the list to write)")
    if entries and all(section_kind(e.title) is None for e in entries):
        out.append("# note: no title of the list names a section the vocabulary knows; the list is numbered 1 to 9, "
                   "so each entry is read as the section of its number (a translated list): check that this is meant")
    unread = [e for e in entries if e.kind is None]
    if unread:
        out.append("# note: not read as a section (its title names none, and the list is not numbered as the "
                   "nine sections are): " + "; ".join(f"{where[e.line].split(' ')[0]} '{e.title}'" for e in unread)
                   + "; the offline model leaves it out, and the graders look for the built-in titles")
    renamed = [(e, e.kind) for e in entries if e.kind and section_kind(e.title) is None]  # kind by its place
    if renamed:
        out.append("# renamed sections, read by their place in the list: " + "; ".join(
            f"{e.number}. '{e.title}' as '{SECTION_TITLES[kind]}'" for e, kind in renamed))
    listed, shown = requested_sections(text), skeleton_sections(text)
    if shown and [k for k, _ in listed] != [k for k, _ in shown]:
        out.append("# note: the reply skeleton in <summary> asks for other sections than the list "
                   f"({', '.join(t for _, t in listed)}); the offline model writes the skeleton's, as a model "
                   "copying the reply's structure would: keep the two in step, or keep one")
    def at(lines: list[int]) -> str:
        # a variable's text (the /compact instructions) has no template line: its rendered line instead
        return ", ".join(dict.fromkeys(f"rendered line {n}" if where[n - 1].startswith("(") else where[n - 1].split(" ")[0]
                                       for n in sorted(lines)))

    if not reads_instructions(text):
        out.append("# instructions: not read: the prompt asks for another compactor's sections, so the offline "
                   "model writes them as it always does (every behaviour on)" if sections else
                   "# instructions: not read: without sections the offline model writes a short generic summary")
        out.append("# anything else (tone, emphasis, examples) is seen only by a real model: --ctxeval-backend anthropic")
        return out
    asked = [f"{instruction(n).title} ({at(ls)})" for n, ls in reading.asked.items()]
    out.append("# instructions: " + ("; ".join(asked) or "none"))
    for n, ls in reading.overridden.items():
        if n in reading.custom_won:
            out.append(f"# contradiction: {instruction(n).title}: asked for ({at(ls)}), but the /compact instructions "
                       f"ask otherwise ({at(reading.custom_won[n])}); followed offline: the /compact instructions")
            continue
        out.append(f"# contradiction: {instruction(n).title}: asked for ({at(ls)}), but its own section asks the "
                   f"opposite ({at(reading.opposed.get(n, []))}); followed offline: the section, not asking")
    for n, ls in reading.opposed.items():
        if n in reading.asked:
            out.append(f"# contradiction: {instruction(n).title}: asked for ({at(reading.asked[n])}) and against "
                       f"({at(ls)}); followed offline: asking; a real model may not: --ctxeval-backend anthropic")
        elif n not in reading.overridden and n not in reading.partial:
            out.append(f"# asks the opposite: {instruction(n).title} ({at(ls)})")
    for n, ls in reading.partial.items():
        out.append(f"# asked for in part only: {instruction(n).title} ({at(ls)}); read as not asking (the graders "
                   "want all of it); what a real model keeps is not seen offline")
    if reading.limit:
        whole = "each section" if reading.limit.scope == "section" else "the whole summary"
        out.append(f"# length limit: {reading.limit.amount} {reading.limit.unit} ({whole})")
    for limit in reading.item_limits.values():
        out.append(f"# length limit: {limit.amount} {limit.unit} on each quoted user message (each is cut to it)")
    if reading.part_limits:
        out.append(f"# not seen offline: a length limit on part of the summary, not on its length ({at(reading.part_limits)})")
    if reading.language:
        out.append(f"# language: {reading.language}")
    out.append("# anything else (tone, emphasis, examples) is seen only by a real model: --ctxeval-backend anthropic")
    return out


def _init(folder: Path, force: bool) -> int:
    from ..engine.prompt import BUILTIN_PROMPTS

    if folder.exists() and not folder.is_dir():
        raise UsageError(f"prompt init: {folder} is a file, not a folder")
    sources = sorted(BUILTIN_PROMPTS.glob("*.j2"))
    clash = [folder / s.name for s in sources if (folder / s.name).exists()]
    if clash and not force:
        raise UsageError(f"prompt init: {', '.join(str(c) for c in clash)} already exist{'s' if len(clash) == 1 else ''}; "
                         "edit them, choose another folder, or pass --force to overwrite")
    folder.mkdir(parents=True, exist_ok=True)
    for s in sources:
        shutil.copyfile(s, folder / s.name)
    print(f"copied {len(sources)} templates into {folder}: {', '.join(s.name for s in sources)}")
    print(f"test your edits: pytest --ctxeval --ctxeval-prompt {folder / 'compact.j2'}")
    print(f"(compact.j2 holds the section list, which the partial prompt reuses; with that prompt, every template "
          f"and part is looked up in {folder} first, then among the built-ins)")
    return 0
