"""Open tasks in a summary, as ``pending_tasks`` reads section 7: which items the summary marks as
finished or cancelled, and whether an item tells a task (its words, every number of it, and not its
opposite action).

* :func:`open_items`: section 7 without the items it marks as done or cancelled: a mark anywhere in
  the item (a tick, ``[DONE]``, ``— DONE ✅``, ``(already implemented and committed)``, ``(cancelled
  by the user — skip)``, struck through), the items under a sub-heading that files them as finished
  (``Done:``, ``Finished tasks (no action needed):``), and every item after a lead that declares the
  list done (``None — every task below was completed in this session:``). A mark said not to apply
  ("NOT YET DONE", "to be completed", "blocked until Phase 6 is complete", "IN PROGRESS") is none.
* :func:`task_told` / :func:`task_in_item`: one item holds most of a task's words, every number of
  the task ("Author all 15 manifests" is not "all 5"), the same action (a follow-up on the same
  object is another task: "Write tests for X" is not told by "Add X", :mod:`.task_actions`), and not
  the opposite of its action ("add <block>" is not told by "remove <block>").
"""

from __future__ import annotations

import re

from .extract import significant_tokens
from .summary import normalize_ws
from .task_actions import same_action

__all__ = ["open_items", "marked_items", "done_item", "called_done", "task_state", "task_told", "task_in_item",
           "TASK_OVERLAP"]

#: A task counts as told when this share of its subject's words is in one item (a summary tells a
#: task by its number and description: "Task #11: End-to-end test — regenerate InfiniteRunner via CLI").
TASK_OVERLAP = 0.6

# ---------------------------------------------------------------------------------------------
# Done and cancelled marks

_DONE_WORDS = (r"done|completed?|finished|cancell?ed|canceled|skipped|dropped|abandoned|descoped|obsolete|"
               r"shipped|resolved|superseded|no longer needed|not needed|wontfix|won't do")
#: Done words only as a stamp set apart and ending its clause ("(merged in #87)", "— closed",
#: "(removed from scope)"): in a sentence they are often words of the task ("closed connections").
_STAMP_WORDS = r"merged|closed|landed|out of scope|removed from scope|no longer planned|not planned|withdrawn"
#: The done words that hold a negation of their own ("no longer needed"): not a "not yet".
_SELF_NEGATED = re.compile(r"no longer needed|not needed|won't do|no longer planned|not planned", re.IGNORECASE)
#: A status stamp: a done word set apart (bracketed, after a dash, colon or comma, at the item's start
#: or end), "already implemented", "has been completed", or in capitals ("DONE", "COMPLETED").
_MARK = re.compile(
    rf"[(\[]\s*(?:already\s+|now\s+)?(?:{_DONE_WORDS})(?![\w-])|"
    rf"(?:[(\[]|(?:^|[—–:;,→]|\s-|->))\s*(?:already\s+|now\s+)?(?:{_STAMP_WORDS})"
    r"(?=\s*(?:$|[)\].,;:!—–✅✓✔])|\s+(?:in|into|to|by|via|as|per|on|with|upstream)\b)|"
    # after a separator, a participle only: ": Complete the migration" is an instruction
    rf"(?:^|[—–:;,→]|\s-|->)\s*(?:already\s+|now\s+|all\s+)?(?:{_DONE_WORDS.replace('completed?', 'completed')})(?![\w-])|"
    rf"\b(?:{_DONE_WORDS})\s*[)\].!✅✓✔]*\s*$|"
    # a label that leads the item: "- **Done:** Task #11 …", "Completed: …"
    rf"^[\W_]*(?:{_DONE_WORDS})[*_]*\s*:|"
    r"\balready\s+(?:been\s+)?(?:done|completed?|finished|implemented|committed|merged|shipped|fixed|resolved|"
    r"cancell?ed|canceled)(?![\w-])|"
    r"\b(?:was|were|has been|have been|is|are)\s+(?:now\s+|already\s+|fully\s+)*(?:done|completed|finished|"
    r"cancell?ed|canceled|skipped|dropped|abandoned)(?![\w-])|"
    r"(?-i:\b(?:DONE|COMPLETED?|FINISHED|CANCELL?ED|CANCELED|SKIPPED|DROPPED)(?![\w-]))|[✓✔✅☑]|\[[xX✓✔]\]",
    re.IGNORECASE)
#: Words in the clause before a mark that say it does not apply: "NOT YET DONE", "to be completed",
#: "blocked until Phase 6 is complete", "ready to mark complete", "once 7 is done".
_NOT_YET = re.compile(r"\b(?:not|never|yet|until|till|once|when|after|before|if|unless|to be|will be|ready to|"
                      r"needs?|must|should|mark|remaining|incomplete|partially|almost|nearly|ensure|sure|verify|check|"
                      r"confirm|wait|none|no|nothing|neither|nor)\b|n't\b", re.IGNORECASE)
_YET_AFTER = re.compile(r"\s*(?:yet|later|soon|next)\b", re.IGNORECASE)  # "none is finished yet"
#: The item says the task is still going: no mark in it finishes it.
_STILL_OPEN = re.compile(r"\bin[ -]progress\b|\bnot (?:yet )?(?:done|complete|completed|started|finished)\b|\bWIP\b",
                         re.IGNORECASE)
#: Struck through from the start of the item: crossed off the list.
_STRUCK = re.compile(r"^\s*(?:[-*+•]|\d+[.)])?\s*~~[^~]+~~")
_CLAUSE_START = re.compile(r"[(\[—–:;,.!?]|\s-\s")


#: A mark's clause that is about something else: its own subject before a copula ("Task #5 is already
#: done", "the old approach was dropped", "the deploy that was cancelled"), or a count of progress
#: ("0 of 15 done", "3/15 done").
_OWN_SUBJECT = re.compile(r"^(?P<subject>.*?)\b(?:is|are|was|were|has been|have been)\b", re.IGNORECASE)
_THE_TASK = re.compile(r"\W*(?:it|this|this task|(?:everything|every|all|each|none|these|the following)\b.*)?\W*",
                       re.IGNORECASE | re.DOTALL)   # the task, or the whole list ("every task below", "everything but one")
_PROGRESS = re.compile(r"\b\d+\s*(?:/|of)\s*\d+\b")
#: Marks that are words of the task itself anywhere but at the item's start or end ("prints DONE", a
#: "COMPLETED enum value", a "✅ icon", "[x] checkboxes").
_EDGE_ONLY = re.compile(r"(?-i:[A-Z]{4,})|[✓✔✅☑]|\[[xX✓✔]\]")


def _about_something_else(clause: str, mark: str, opened_by_bracket: bool) -> bool:
    text = clause + mark
    own = _OWN_SUBJECT.match(text.strip())
    if own and not _THE_TASK.fullmatch(own.group("subject")):
        return True
    if _PROGRESS.search(text):
        return True
    # "(Phase 1 done)": a bracket that names what is done before the word
    words = [w for w in re.findall(r"[\w#]+", clause) if w.lower() not in ("already", "now", "all", "it", "this")]
    return opened_by_bracket and bool(words)


def _marked(text: str) -> bool:
    """Whether ``text`` holds a done or cancelled mark about its own task that nothing in its clause
    says does not apply (a mark about something else: :func:`_about_something_else`)."""
    for m in _MARK.finditer(text):
        before = text[:m.start()]
        starts = [c for c in _CLAUSE_START.finditer(before)]
        # a mark set apart by its own bracket or dash starts its clause: "... before the totals — completed"
        set_apart = re.match(r"\s*(?:[(\[—–:;,]|-\s)", m.group(0)) is not None
        clause = "" if set_apart else before[starts[-1].end() if starts else 0:]
        bracket = not set_apart and bool(starts) and starts[-1].group(0) in "(["
        if _EDGE_ONLY.fullmatch(m.group(0).strip()) and not _at_edge(text, m):
            continue
        if _about_something_else(clause, m.group(0), bracket):
            continue
        if not _NOT_YET.search(clause) and not _NOT_YET.search(_SELF_NEGATED.sub("", m.group(0))) \
                and not _YET_AFTER.match(text, m.end()):
            return True
    return False


def _at_edge(text: str, m: re.Match[str]) -> bool:
    """The mark stands at the item's start (after its list marker) or its end."""
    head = re.sub(r"^[\s>*_~]*(?:[-*+•]|\d+[.)])?[\s*_]*", "", text[:m.start()])
    tail = text[m.end():]
    return not head.strip() or not re.sub(r"[\s.!)\]*_—–-]", "", tail)


def done_item(item: str) -> bool:
    """Whether a list item marks its task as finished or cancelled.

    >>> done_item("- Task #8: Scaffold the CLI project — DONE ✅")
    True
    >>> done_item("- Task #9: Implement init (cancelled by the user — skip)")
    True
    >>> done_item("  - Manual smoke test: NOT YET DONE (requires running server)")
    False
    >>> done_item("- Task #7: Author all manifests (blocked until Phase 6 is complete)")
    False
    """
    text = normalize_ws(item)
    if _STRUCK.match(text):
        return True
    return not _STILL_OPEN.search(text) and _marked(text)


#: A line that files what follows as finished: a sub-heading ("Done:", "**Completed tasks:**",
#: "Finished tasks (no action needed):") or a lead ("None — every task below was completed:").
_LEAD_SCOPE = re.compile(r":\s*[*_]*\s*$|\b(?:below|following|listed|these|every|each|all)\b|^\W*none\b", re.IGNORECASE)
_OPEN_WORDS = re.compile(r"\b(?:open|pending|remaining|still|left|to ?do|outstanding|next|upcoming|active|"
                         r"in[ -]progress|blocked|not yet)\b", re.IGNORECASE)
_LIST_START = re.compile(r"\s{0,3}(?:[-*+•]|\d+[.)])\s")
#: Any other sub-heading (a markdown heading, a bold line, a short line ending in a colon that is not
#: a list item: "### Active", "Still open:"), which ends a done list.
_SUB_HEADING = re.compile(r"^\s*(?:#+\s+\S[^\n]*|[*_]{2}[^\n*_]{1,60}[*_]{2}:?"
                          r"|(?![-*+•]\s|\d+[.)]\s)[^\n]{1,60}:\s*[*_]*)\s*$")


def _done_heading(line: str, at_start: bool) -> bool:
    """Whether a line that is not a list item files the items after it as done."""
    text = normalize_ws(line)
    if not text or _LIST_START.match(line) or len(text) > 160 or _OPEN_WORDS.search(text):
        return False
    if not (_SUB_HEADING.match(line) or (at_start and _LEAD_SCOPE.search(text))):
        return False
    return _marked(re.sub(r"^[#>\s*_]+", "", text))


def marked_items(text: str) -> list[tuple[str, bool]]:
    """``text`` in its parts (list items with their continuation lines; headings and other lines
    between them), each with whether the summary marks it as finished or cancelled: see the module
    docstring."""
    parts: list[tuple[str, bool]] = []
    item: list[str] = []
    under_done = dropped = False
    seen_item = False

    def close() -> None:
        if item:
            parts.append(("\n".join(item), dropped or done_item("\n".join(item))))
        item.clear()

    for line in text.split("\n"):
        if not _LIST_START.match(line) and (_SUB_HEADING.match(line) or (not seen_item and line.strip())):
            heading = _done_heading(line, at_start=not seen_item)
            if heading or _SUB_HEADING.match(line):
                close()
                under_done = dropped = heading
                parts.append((line, False))
                continue
        if _LIST_START.match(line):
            close()
            seen_item = True
            dropped = under_done
        item.append(line)
    close()
    return parts


def open_items(text: str) -> str:
    """``text`` without the items it marks as finished or cancelled (an open task written as done is
    not kept)."""
    return "\n".join(part for part, done in marked_items(text) if not done)


def task_state(subject: str, text: str, share: float = TASK_OVERLAP) -> str | None:
    r"""How section 7 (``text``) lists ``subject``: ``"open"``, ``"done"`` (the item that tells the most
    of it is marked finished or cancelled), or ``None`` (no item tells it). A sibling that shares a few
    of its words ("subcommands `init`/`add`" for the task "Implement `monodreams init`") does not
    reopen a task whose own item is marked cancelled.

    >>> task_state("Implement the init command", "- Scaffold the CLI with init and list\n- Implement the init command (cancelled)")
    'done'
    """
    scored = [(_share(subject, part), done) for part, done in marked_items(text) if task_in_item(subject, part, share)]
    if not scored:
        return None
    top = max(score for score, _ in scored)
    return "open" if any(not done for score, done in scored if score == top) else "done"


# ---------------------------------------------------------------------------------------------
# A task told by one item

_SPELLED = {str(n): w for n, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())} | {"30": "thirty", "40": "forty", "50": "fifty", "100": "hundred"}
#: Actions that undo each other: an item that swaps one for the other tells another task.
_OPPOSITES = [("add", "remove"), ("enable", "disable"), ("create", "delete"), ("install", "uninstall"),
              ("include", "exclude"), ("show", "hide"), ("lock", "unlock"), ("encrypt", "decrypt"),
              ("upgrade", "downgrade"), ("attach", "detach"), ("connect", "disconnect"), ("grant", "revoke"),
              ("increase", "decrease"), ("allow", "deny"), ("mount", "unmount"), ("insert", "delete")]


def _forms(verb: str) -> re.Pattern[str]:
    stem = verb[:-1] if verb.endswith("e") else verb
    return re.compile(rf"(?<![\w-]){re.escape(stem)}(?:e|es|ed|ing|s|{re.escape(verb[-1])}ed|{re.escape(verb[-1])}ing)?"
                      rf"(?![\w-])", re.IGNORECASE)


_OPPOSITE_FORMS = [(_forms(a), _forms(b)) for a, b in _OPPOSITES]


def _number(token: str) -> re.Pattern[str]:
    """A number of a task, whole ("15", not "150"), or spelled out ("fifteen"); a version's short
    prefix may stand before it ("v18", "py3" tell "Node 18", "Python 3")."""
    spelled = _SPELLED.get(token)
    alt = rf"|\b{spelled}\b" if spelled else ""
    return re.compile(rf"(?<![\d.])(?<![A-Za-z]{{3}}){re.escape(token)}(?![\d])" + alt, re.IGNORECASE)


def _opposite_action(subject: str, item: str) -> bool:
    """Whether ``item`` names the opposite of an action of ``subject`` and not the action itself."""
    for a, b in _OPPOSITE_FORMS:
        for mine, other in ((a, b), (b, a)):
            if mine.search(subject) and not other.search(subject) and other.search(item) and not mine.search(item):
                return True
    return False


def task_in_item(subject: str, item: str, share: float) -> bool:
    """Whether ``item`` tells ``subject``: ``share`` of its significant words, each at a word start
    (a number whole: "report" is in "reports", "finance" is not in "refinanced", "2" is not in "12"),
    every number of the subject (or its spelled form), the same action (a follow-up such as "Write
    tests for X" is not told by "Add X", nor "Add X" by "Document X": reading.task_actions), and not
    the opposite of its action.

    >>> task_in_item("Author all 15 manifests", "- Task #7: Author all 5 manifests", 0.6)
    False
    >>> task_in_item("Implement `add <block>` with dep resolution", "- Implement `remove <block>`, dep resolution", 0.6)
    False
    >>> task_in_item("Write tests for admin discounts endpoint", "- Add admin endpoint GET /admin/discounts", 0.6)
    False
    """
    tokens = significant_tokens(subject)
    if not tokens:
        return False
    low = item.lower()
    if normalize_ws(subject.lower()) not in normalize_ws(low):
        patterns = _patterns(subject)
        if sum(bool(p.search(low)) for p in patterns) / len(patterns) < share:
            return False
        if not all(p.search(low) for t, p in zip(tokens, patterns) if t.isdigit()):
            return False  # "Harden module 2" is not told by "harden module 12"
        if not same_action(subject, item):
            return False  # "Write tests for X" is not told by "Add X" (reading.task_actions)
    return not _opposite_action(subject, item)


def _patterns(subject: str) -> list[re.Pattern[str]]:
    return [_number(t) if t.isdigit() else re.compile(rf"(?<![\w]){re.escape(t)}") for t in significant_tokens(subject)]


def _share(subject: str, item: str) -> float:
    """The share of ``subject``'s significant words in ``item`` (1 and a bit when it is verbatim there)."""
    low = item.lower()
    if normalize_ws(subject.lower()) in normalize_ws(low):
        return 1.01
    patterns = _patterns(subject)
    return sum(bool(p.search(low)) for p in patterns) / len(patterns) if patterns else 0.0


_ITEMS = re.compile(r"\n(?=\s{0,6}(?:[-*•]|\d+[.)])\s)|\n[ \t]*\n")


def task_told(subject: str, *regions: str, share: float = TASK_OVERLAP) -> bool:
    """Whether one item of one region (a list item or a paragraph; regions are read apart) tells
    ``subject`` (:func:`task_in_item`).

    >>> task_told("Harden module 2", "- Next: harden module 2 (retry loop)")
    True
    >>> task_told("Harden module 2", "- Next: harden module 12")
    False
    """
    return any(task_in_item(subject, item, share) for r in regions for item in _ITEMS.split(r) if item.strip())


# ---------------------------------------------------------------------------------------------
# A task a sentence calls done

_SENTENCES = re.compile(r"(?<=[.!?;])\s+|\n+")
#: "<the task> is done", "<the task> has been completed": the task is the sentence's own subject.
_IS_DONE = re.compile(r"^(?P<subject>.+?)\s+(?:is|are|was|were|has been|have been)\s+(?:now\s+|already\s+|fully\s+)*"
                      r"(?:done|complete|completed|finished|implemented|in place)\b(?P<rest>.*)$", re.IGNORECASE)


def called_done(subject: str, text: str, share: float = TASK_OVERLAP) -> str | None:
    """The sentence of ``text`` (section 8, say) that calls ``subject`` done, or None: it tells the
    task (:func:`task_in_item`) and marks it finished (:func:`done_item`: "Finished adding the CSV
    export", "CSV export — DONE"), or makes the task its subject and says it is done ("The CSV export
    on the reports page is done"), with nothing that says it is not yet ("the download is not done
    yet", "once the tests pass").

    >>> called_done("Add CSV export to the reports page", "Tests pass. The CSV export on the reports page is done.")
    'The CSV export on the reports page is done.'
    >>> called_done("Add CSV export to the reports page", "The CSV export's button is done; the download is next.")
    """
    for sentence in _SENTENCES.split(text):
        said = sentence.strip(" -*•")
        if not said or not task_in_item(subject, said, share) or _STILL_OPEN.search(said):
            continue
        own = _IS_DONE.match(said.rstrip(" ."))
        if done_item(said) or (own is not None and task_in_item(subject, own.group("subject"), share)
                               and not _NOT_YET.search(own.group("subject") + own.group("rest"))):
            return said
    return None
