"""``ctxeval grade-output SUMMARY.txt --scenario S.yaml [--round N]``: grade a saved compaction output.

Any compactor's output — a summary text, or the post-compact context as a JSON list of Messages-API
messages — is graded as if it had been the scenario's compaction number N (default 1): the scenario
is replayed offline through the reference engine up to that compaction point, and the saved output
takes the place of what the engine made there. The graders then see the conversation before that
point (``history``), the scenario's ``expect:`` and ``facts:``, and the saved output as the whole
post-compact context. An output with any of Claude Code's nine sections is read as that format (a
section it lost fails ``nine_sections``); only one with none of them as a free-form summary (facts
searched in all of it), and the output says which. By default every rule grader runs except
``continuation`` (it checks the message Claude Code wraps a summary in, not the output itself).
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any
from collections.abc import Sequence

__all__ = ["add_grade_output_command", "run_grade_output", "grade_output", "nine_section_shape", "read_as"]


def nine_section_shape(text: str) -> bool:
    """Whether a saved output is an attempt at Claude Code's nine sections: two of them found, or one
    under a numbered header (``6. All user messages:``). Such an output is graded as the nine-section
    format however many sections it lost (``nine_sections`` names the missing ones); only an output
    with nothing of that shape is a free-form summary."""
    from ..reading.summary import parse_summary

    if not text:
        return False
    found = parse_summary(text).sections
    lines = text.split("\n")
    return len(found) >= 2 or any(re.match(r"^[ \t]*(?:#{1,6}[ \t]*)?[*_]*[ \t]*(?:section[ \t]+)?\d",
                                           lines[s.line - 1] if 0 < s.line <= len(lines) else "", re.IGNORECASE)
                                  for s in found)


def read_as(case: Any) -> str:
    """The line ``grade-output`` prints on how it read the output."""
    from ..reading.summary import SECTION_KINDS, parse_summary

    if case.compactor == "claude_code":
        found = parse_summary(case.summary).kinds
        return (f"read as Claude Code's nine-section summary ({len(set(found))} of {len(SECTION_KINDS)} "
                "sections found)")
    return ("read as a free-form summary: none of Claude Code's nine sections was found, so nine_sections and "
            "next_step_quote do not apply and facts are looked for in the whole text")


def add_grade_output_command(sub: Any) -> None:
    """Register ``ctxeval grade-output``."""
    p = sub.add_parser("grade-output", help="grade a saved compaction output against a scenario's facts and expectations",
                       description="Grade a saved compaction output (a summary text, or a JSON list of Messages-API "
                                   "messages: the post-compact context) as the scenario's compaction number N: the "
                                   "scenario is replayed offline up to that point and the output takes the place of "
                                   "the engine's. Exit 0 if every verdict passes, 1 if one fails, 2 on bad input.")
    p.add_argument("output", metavar="SUMMARY.txt", help="the saved output ('.json': a list of messages)")
    p.add_argument("--scenario", required=True, metavar="S.yaml", help="the scenario the output was made from")
    p.add_argument("--round", type=int, default=1, metavar="N",
                   help="which compaction of the scenario the output stands for (default 1)")
    p.add_argument("--graders", default=None, metavar="a,b", help="run only these graders (default: every rule grader)")
    p.add_argument("--graders-dir", action="append", default=None, metavar="DIR",
                   help="a folder of your own graders (repeatable)")
    p.add_argument("--json", dest="json_out", metavar="OUT", help="write the versioned results JSON here")
    p.add_argument("-v", "--verbose", action="store_true", help="print every verdict, not only failures")


def _read_output(path: Path) -> tuple[str, list[dict[str, Any]] | None]:
    """``(summary text, messages or None)`` of a saved output."""
    from ..errors import UsageError

    from ..core.userfiles import read_user_text

    text = read_user_text(path, "output", "pass the saved summary (.txt/.md) or messages (.json) in it")
    if not text.strip():
        raise UsageError(f"{path}: the output is empty")
    if path.suffix.lower() != ".json":
        return text, None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}:{exc.lineno}: not JSON ({exc.msg}); a .json output is a list of "
                         "{\"role\", \"content\"} messages (or save a summary as .txt)") from None
    if isinstance(data, str):
        return data, None
    if not isinstance(data, list) or not all(isinstance(m, dict) and m.get("role") in ("user", "assistant")
                                             and "content" in m for m in data) or not data:
        raise UsageError(f"{path}: a .json output is a non-empty list of {{\"role\": \"user\"|\"assistant\", "
                         "\"content\": ...}} messages")
    return "", data


def grade_output(output: Path, scenario_path: Path, *, round: int = 1, graders: list[str] | None = None,
                 graders_dirs: Sequence[Path] = ()) -> Any:
    """The :class:`~pytest_ctxeval.evaluation.Outcome` of grading ``output`` as compaction ``round``."""
    import tempfile

    from ..compaction.formats import FREE_FORM
    from ..errors import UsageError
    from ..evaluation import Outcome
    from ..grading.registry import cases_from_run, load_graders
    from ..core.messages import CompactBoundary, UserMessage, from_api, text_of, validate_api
    from ..runner import run_scenario
    from ..scenario.schema import load_scenario
    from ..core.tokens import estimate_messages

    text, messages = _read_output(output)
    scenario = load_scenario(scenario_path)
    run = run_scenario(scenario, session_dir=tempfile.mkdtemp(prefix="ctxeval-grade-output-"))
    cases = cases_from_run(run)
    if not cases:
        raise UsageError(f"{scenario_path}: the scenario never compacts, so there is no round to grade against "
                         "(add a '- compact: true' step)")
    if not 1 <= round <= len(cases):
        raise UsageError(f"--round must be from 1 to {len(cases)} ({scenario_path} compacts {len(cases)} "
                         f"time{'s' if len(cases) > 1 else ''}). Current input: {round}")
    base = cases[round - 1]
    boundary = CompactBoundary(uuid="saved-output-boundary", trigger="manual", pre_tokens=base.pre_tokens)
    if messages is not None:
        problems = validate_api(messages, allow_pending_tool_use=True)
        if problems:
            raise UsageError(f"{output}: the messages would be refused by the API: {problems[0]}")
        post = from_api(messages, uuid_prefix="saved-output")
        first = post[0]
        if isinstance(first, UserMessage) and text_of(first.content).strip():
            text = text_of(first.content)
            post[0] = first.model_copy(update={"is_compact_summary": True})
    else:
        post = [UserMessage(uuid="saved-output-summary", content=text, is_compact_summary=True)]
    nine = nine_section_shape(text)
    config = base.config
    case = replace(base, summary=text, summary_message=text, post_messages=[boundary, *post], raw_reply=text,
                   requests=[], compaction_request=None, post_tokens=estimate_messages(post, config) if config else estimate_messages(post),
                   origin="summary-file", compactor="claude_code" if nine else "saved_output",
                   summary_format=None if nine else FREE_FORM, is_last=True, generations=[])
    case.generations = [case]
    registry = load_graders(list(graders_dirs))
    # By default every rule grader but continuation, which checks the message Claude Code wraps a
    # summary in (transcript path, continue instruction), not the compactor's output.
    specs = registry.select(graders) if graders else [s for s in registry.select(kinds=["rule"])
                                                      if s.name != "continuation"]
    return Outcome(name=f"{output.name} as round {round} of {scenario.display_name}", source=str(output),
                   kind="scenario", cases=[case], verdicts=[registry.run(case, specs)],
                   graders=[s.name for s in specs], context_window=config.context_window if config else None)


def run_grade_output(args: argparse.Namespace) -> int:
    """Run ``ctxeval grade-output``."""
    from .common import EXIT_FAIL, EXIT_OK, print_outcomes
    from ..results import results_document, write_results

    graders = [g.strip() for g in args.graders.split(",") if g.strip()] if args.graders else None
    outcome = grade_output(Path(args.output), Path(args.scenario), round=args.round, graders=graders,
                           graders_dirs=[Path(d) for d in (args.graders_dir or [])])
    print_outcomes([outcome], args.verbose)
    case = outcome.cases[0]
    print(read_as(case))
    facts = [v for v in outcome.verdicts[0] if v.grader == "facts_survive"]
    if facts and "shares" in facts[0].evidence:
        shares = ", ".join(f"{t} {s:.0%}" for t, s in facts[0].evidence["shares"].items())
        print(f"planted facts held at round {case.index}: {shares}")
    if args.json_out:
        doc = results_document([outcome], usage={}, backend="offline", model=None)
        print(f"results written to {write_results(args.json_out, doc)}")
    return EXIT_FAIL if outcome.failed else EXIT_OK
