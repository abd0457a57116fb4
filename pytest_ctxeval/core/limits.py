"""The ceilings every input is held to, in one place (``docs/reliability.md`` lists them with the
measured cost at each one).

A limit is a named setting, never a literal in the code that enforces it: the readers, the template
sandbox, the fillers and the options import it from here, and ``tests/hostile/`` checks each at its
boundary (the value itself passes, one more is refused with a message naming the limit).

Whatever crosses a limit is refused with :class:`~pytest_ctxeval.errors.CtxEvalError` (exit 2 on
the command line) naming the file, the line or field and the limit; nothing is truncated silently.
"""

from __future__ import annotations

from datetime import datetime, UTC

__all__ = [
    "MAX_YAML_ALIASES", "MAX_YAML_NODES", "MAX_NESTING", "MAX_FIELD_CHARS", "MAX_TOTAL_CHARS",
    "MAX_STEPS", "MAX_LOOP_STEPS", "MAX_FILLER_LINES", "MAX_FILLER_ITEMS", "MAX_FILLER_WORDS", "MAX_FILLER_DEPTH",
    "MAX_FILLER_NAME", "MAX_FILLER_TEXT", "MAX_PAD_WIDTH", "MAX_JUDGE_VOTES", "MAX_SUMMARY_BYTES", "PIPE_WAIT_SECONDS", "MAX_JSON_BYTES", "FILLER_RANGES", "check_range", "check_text",
    "EARLIEST_TIME", "LATEST_TIME", "check_time", "MAX_LINE_BYTES",
]

#: Alias references (``*name``) to lists or mappings in one YAML document (an alias to a scalar
#: cannot multiply anything). Real scenarios use none (``ctxeval import``
#: writes none); a "billion laughs" file needs thousands.
MAX_YAML_ALIASES = 1_000
#: Nodes of one YAML document once aliases are expanded: a small file whose aliases multiply into
#: millions of values is refused before any of them is built.
MAX_YAML_NODES = 5_000_000
#: Nesting of lists and mappings in any structured input (YAML, a tool input in a transcript, a
#: results, baseline or cassette JSON file). Real tool inputs nest under 20.
MAX_NESTING = 100
#: Characters one template field may render to.
MAX_FIELD_CHARS = 16 * 1024 * 1024
#: Characters a whole scenario may render to.
MAX_TOTAL_CHARS = 256 * 1024 * 1024
#: Steps (turns after ``repeat``) a scenario may expand to.
MAX_STEPS = 200_000
#: Loop iterations one template render may run, nested loops multiplied, whether or not they print.
MAX_LOOP_STEPS = 1_000_000
#: Upper bound of the ``lines`` argument of the file and log fillers.
MAX_FILLER_LINES = 200_000
#: Upper bound of the ``items``/``n``/``passed`` arguments of the list-like fillers.
MAX_FILLER_ITEMS = 100_000
#: Upper bound of ``lorem(words=…)``.
MAX_FILLER_WORDS = 1_000_000
#: Upper bound of ``stack_trace(depth=…)``.
MAX_FILLER_DEPTH = 10_000
#: Characters of a filler's name-like text argument (``name``, ``service``, ``table``, ``resource``,
#: ``pattern``, ``lang``, a string ``seed``): repeated on every line, so kept short.
MAX_FILLER_NAME = 200
#: Characters of a filler's free-text argument (``error``, ``exc``, ``text``, each ``failed`` name)
#: and items of a list argument (``failed``).
MAX_FILLER_TEXT = 10_000
#: Widths of ``center``, ``indent``, ``ljust``/``rjust``/``zfill`` and ``%``/``format`` padding.
MAX_PAD_WIDTH = 100_000
#: ``--judge-votes``: independent judgements per verdict.
MAX_JUDGE_VOTES = 25
#: Bytes of a ``grade --summary`` file (read in chunks, so a FIFO that never ends stops here).
MAX_SUMMARY_BYTES = 64 * 1024 * 1024
#: Seconds ``grade --summary PIPE`` waits for data before giving up (a FIFO nobody writes to).
PIPE_WAIT_SECONDS = 10.0
#: Bytes of a results, baseline or cassette JSON file.
MAX_JSON_BYTES = 512 * 1024 * 1024
#: Bytes of one line (one record) of a transcript. Real records reach a few MB (a pasted image, a
#: huge tool result); a longer line is reported with its number and skipped, read in bounded
#: chunks so it never sits in memory whole.
MAX_LINE_BYTES = 128 * 1024 * 1024

#: The span a timestamp (a scenario's ``start:``/``at:``, a transcript record's) must lie in, in UTC:
#: the replay clock adds up to ten years of gaps and must stay a valid date.
EARLIEST_TIME = datetime(1970, 1, 1, tzinfo=UTC)
LATEST_TIME = datetime(9000, 1, 1, tzinfo=UTC)


def check_time(value: datetime) -> datetime:
    """``value`` (made aware: UTC when it has no offset), or ``ValueError`` when it lies outside
    :data:`EARLIEST_TIME`..:data:`LATEST_TIME` (``9999-12-31T23:59:59-23:59`` is in year 10000 in UTC).

    >>> check_time(datetime(9999, 12, 31, 23, 59))
    Traceback (most recent call last):
    ...
    ValueError: 9999-12-31T23:59:00+00:00 is outside 1970-01-01..9000-01-01 UTC (limits.EARLIEST_TIME, limits.LATEST_TIME)
    """
    aware = value if value.tzinfo else value.replace(tzinfo=UTC)
    try:
        ok = EARLIEST_TIME <= aware <= LATEST_TIME  # the comparison is done in UTC; it cannot overflow
    except OverflowError:
        ok = False
    if not ok:
        raise ValueError(f"{aware.isoformat()} is outside {EARLIEST_TIME.date()}..{LATEST_TIME.date()} UTC "
                         "(limits.EARLIEST_TIME, limits.LATEST_TIME)")
    return aware


#: The integer arguments of each filler and their ranges (inclusive).
FILLER_RANGES: dict[str, dict[str, tuple[int, int]]] = {
    "lorem": {"words": (0, MAX_FILLER_WORDS)},
    "python_file": {"lines": (0, MAX_FILLER_LINES)},
    "typescript_file": {"lines": (0, MAX_FILLER_LINES)},
    "go_file": {"lines": (0, MAX_FILLER_LINES)},
    "javascript_file": {"lines": (0, MAX_FILLER_LINES)},
    "sql_file": {"lines": (0, MAX_FILLER_LINES)},
    "log": {"lines": (0, MAX_FILLER_LINES), "error_at": (-MAX_FILLER_LINES, MAX_FILLER_LINES)},
    "grep_hits": {"n": (0, MAX_FILLER_ITEMS)},
    "test_output": {"passed": (0, MAX_FILLER_ITEMS)},
    "json_response": {"items": (0, MAX_FILLER_ITEMS)},
    "api_response": {"items": (0, MAX_FILLER_ITEMS), "status": (100, 599)},
    "stack_trace": {"depth": (0, MAX_FILLER_DEPTH)},
}


_NAME_ARGS = ("name", "service", "table", "resource", "pattern", "lang", "seed")


def check_text(helper: str, name: str, value: object) -> None:
    """Raise ``ValueError`` when a string (or list of strings) argument of a filler is too long."""
    if isinstance(value, (list, tuple)):
        if len(value) > MAX_FILLER_ITEMS:
            raise ValueError(f"{helper}: {name} may have at most {MAX_FILLER_ITEMS} items (limits.MAX_FILLER_ITEMS)")
        for item in value:
            check_text(helper, name, item)
        return
    if not isinstance(value, str):
        return
    limit, setting = ((MAX_FILLER_NAME, "limits.MAX_FILLER_NAME") if name in _NAME_ARGS
                      else (MAX_FILLER_TEXT, "limits.MAX_FILLER_TEXT"))
    if len(value) > limit:
        raise ValueError(f"{helper}: {name} may be at most {limit} characters ({setting}), not {len(value)}")


def check_range(helper: str, name: str, value: object) -> None:
    """Raise ``ValueError`` naming ``helper``'s argument ``name`` when ``value`` is outside its range
    in :data:`FILLER_RANGES` (or not an integer).

    >>> check_range("lorem", "words", 10)
    >>> check_range("lorem", "words", 10**9)
    Traceback (most recent call last):
    ...
    ValueError: lorem: words must be an integer from 0 to 1000000 (limits.MAX_FILLER_WORDS), not 1000000000
    """
    low, high = FILLER_RANGES[helper][name]
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{helper}: {name} must be an integer from {low} to {high}, not {value!r}")
    if not low <= value <= high:
        setting = _SETTING.get((helper, name), "limits.FILLER_RANGES")
        raise ValueError(f"{helper}: {name} must be an integer from {low} to {high} ({setting}), not {value!r}")


_SETTING = {(h, n): {"words": "limits.MAX_FILLER_WORDS", "lines": "limits.MAX_FILLER_LINES",
                     "depth": "limits.MAX_FILLER_DEPTH"}.get(n, "limits.MAX_FILLER_ITEMS")
            for h, args in FILLER_RANGES.items() for n in args if n not in ("status", "error_at")}
