"""Secret redaction for imported sessions.

A real session holds whatever the agent saw: ``.env`` files, ``curl -H "Authorization: Bearer …"``,
keys pasted by the person. ``ctxeval import`` replaces strings shaped like common API keys and
tokens with ``[REDACTED:<kind>]`` before anything is written (``--no-redact`` turns it off):

=================  =====================================================================
kind               shape
=================  =====================================================================
``anthropic``      ``sk-ant-api03-…`` (any ``sk-ant-<kind>-`` prefix)
``openai``         ``sk-proj-…``, ``sk-svcacct-…``, ``sk-admin-…``, legacy ``sk-`` + 32+
``aws-access-key`` ``AKIA…``/``ASIA…`` + 16 upper-case letters or digits
``aws-secret-key`` 40 base64 characters after ``aws_secret_access_key =``/``:``
``github``         ``ghp_``/``gho_``/``ghu_``/``ghs_``/``ghr_`` tokens, ``github_pat_…``
``gitlab``         ``glpat-…``
``slack``          ``xoxb-``/``xoxp-``/``xoxa-``/``xoxr-``/``xoxs-``/``xoxo-`` tokens
``google``         ``AIza`` + 35
``stripe``         ``sk_live_``/``sk_test_``/``rk_live_``/``rk_test_`` keys
``jwt``            three base64url parts, the first two starting ``eyJ``
``bearer``         the token after ``Bearer `` (the word is kept)
``private-key``    a PEM ``-----BEGIN … PRIVATE KEY-----`` block (to its END line, or the
                   base64 that follows when the block is cut short)
=================  =====================================================================

The patterns are shapes, not a secret scanner: a key with an unusual shape passes, and a long
random identifier shaped like one is redacted. :func:`redact` is one pass of one compiled
expression over the text.
"""

from __future__ import annotations

import logging
import re
from typing import Any
from collections.abc import Callable

__all__ = ["redact", "redact_tree", "scrub_output", "scrub_tree", "scrub_logs", "secret_values", "excerpt", "KINDS",
           "merge_counts"]

# A token starts where no letter or digit precedes it: ``\b`` would miss one after ``_`` (a Slack
# token in ``logs/run_xoxb-…``), which is a word character.
_START = r"(?<![A-Za-z0-9])"
_PATTERNS: list[tuple[str, str]] = [
    ("private_key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
                    r"(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s]*)"),
    ("anthropic", _START + r"sk-ant-[a-z0-9]{2,12}-[A-Za-z0-9_\-]{20,}"),
    ("openai", _START + r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{20,}|" + _START + r"sk-(?!ant-)[A-Za-z0-9]{32,}\b"),
    ("stripe", _START + r"[sr]k_(?:live|test)_[A-Za-z0-9]{20,}\b"),
    ("aws_access_key", _START + r"(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|APKA)[A-Z0-9]{16}(?![A-Za-z0-9])"),
    ("aws_secret_key", r"(?i:aws_?secret_?access_?key|secret_?access_?key)[\"']?\s*[:=]\s*[\"']?"
                       r"(?P<aws_secret_value>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])"),
    ("github", _START + r"(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}\b|" + _START + r"github_pat_[A-Za-z0-9_]{22,255}\b"),
    ("gitlab", _START + r"glpat-[A-Za-z0-9_\-]{20,}"),
    ("slack", _START + r"xox[abposr]-[A-Za-z0-9\-]{10,}"),
    ("google", _START + r"AIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])"),
    ("jwt", _START + r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    ("bearer", r"(?i:\bbearer)\s+(?P<bearer_value>(?!\[REDACTED)[A-Za-z0-9._~+/\-]{16,}=*)"),
]
_RE = re.compile("|".join(f"(?P<{name}>{pattern})" for name, pattern in _PATTERNS))
#: The kinds, as they appear in ``[REDACTED:<kind>]``.
KINDS: tuple[str, ...] = tuple(name.replace("_", "-") for name, _ in _PATTERNS)
_VALUE_GROUP = {"aws_secret_key": "aws_secret_value", "bearer": "bearer_value"}

# What is left of a token someone else cut short: its unmistakable prefix and a few characters,
# then an ellipsis (or the end of the text). Only :func:`scrub_output` uses these: an excerpt made
# without redacting first must not leak the first 27 characters of a key.
_CUT_END = r"(?=…|\.\.\.|\Z)"
_CUT: list[tuple[str, str]] = [
    ("anthropic", _START + r"sk-ant-[A-Za-z0-9_\-]{4,}"),
    ("openai", _START + r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{4,}"),
    ("stripe", _START + r"[sr]k_(?:live|test)_[A-Za-z0-9]{4,}"),
    ("aws_access_key", _START + r"(?:AKIA|ASIA)[A-Z0-9]{4,15}"),
    ("aws_secret_key", r"(?i:aws_?secret_?access_?key|secret_?access_?key)[\"']?\s*[:=]\s*[\"']?"
                       r"(?P<cut_aws_value>(?=[A-Za-z]*[0-9/+])[A-Za-z0-9/+]{6,39})"),
    ("github", _START + r"(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{4,}|" + _START + r"github_pat_[A-Za-z0-9_]{4,}"),
    ("gitlab", _START + r"glpat-[A-Za-z0-9_\-]{4,}"),
    ("slack", _START + r"xox[abposr]-[A-Za-z0-9\-]{4,}"),
    ("google", _START + r"AIza[0-9A-Za-z_\-]{4,}"),
    ("jwt", _START + r"eyJ[A-Za-z0-9_\-]{8,}(?:\.[A-Za-z0-9_\-]*){0,2}"),
    ("bearer", r"(?i:\bbearer)\s+(?P<cut_bearer_value>(?!\[REDACTED)(?=[A-Za-z._~+/\-]*[0-9])[A-Za-z0-9._~+/\-]{10,})"),
]
_CUT_RE = re.compile("|".join(f"(?P<cut_{name}>(?:{pattern}){_CUT_END})" for name, pattern in _CUT))
_CUT_VALUE = {"cut_aws_secret_key": "cut_aws_value", "cut_bearer": "cut_bearer_value"}


def redact(text: str) -> tuple[str, dict[str, int]]:
    """``text`` with every key- or token-shaped string replaced by ``[REDACTED:<kind>]``, and the
    number of replacements per kind.

    >>> redact("export ANTHROPIC_API_KEY=sk-ant-api03-" + "a" * 40)
    ('export ANTHROPIC_API_KEY=[REDACTED:anthropic]', {'anthropic': 1})
    >>> redact("curl -H 'Authorization: Bearer abcdef0123456789abcdef'")
    ("curl -H 'Authorization: Bearer [REDACTED:bearer]'", {'bearer': 1})
    >>> redact("nothing here")
    ('nothing here', {})
    """
    counts: dict[str, int] = {}
    if not _may_hold_secret(text):
        return text, counts
    out = _RE.sub(lambda m: _replace(m, counts, _VALUE_GROUP, ""), text)
    return out, counts


# Every pattern contains one of these (case-folded): checking them with ``in`` (memmem speed) lets
# the text that holds none skip the regex, which costs microseconds per character (25x faster on
# ordinary tool output; ``import`` spent 40 % of its time here).
_TRIGGERS = ("-----begin", "sk-", "sk_", "rk_", "akia", "asia", "abia", "acca", "agpa", "aida", "aroa", "anpa",
             "anva", "apka", "secret", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "xox", "aiza",
             "eyj", "bearer")


# Where a match of _RE can start, exactly as the patterns spell it (case included): a text with a
# trigger above but none of these (``task-`` holds ``sk-``, ``Fantasia`` holds ``asia``) skips the
# full expression, which costs far more per character than this one.
_STARTS = re.compile(
    r"-----BEGIN |" + _START + r"(?:sk-|[sr]k_|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|APKA|gh[pousr]_|github_pat_|"
    r"glpat-|xox[abposr]-|AIza|eyJ)|(?i:secret_?access_?key|bearer)")


#: Any of _TRIGGERS (one search instead of a loop of ``in`` tests: twice as fast on the short
#: strings of a results document, which are most of what is scrubbed).
_TRIGGER_RE = re.compile("|".join(map(re.escape, _TRIGGERS)))


def _may_hold_secret(text: str) -> bool:
    return _starts_at_a_trigger(_STARTS, text)


def _starts_at_a_trigger(pattern: re.Pattern[str], text: str) -> bool:
    """Whether ``pattern.search(text)`` finds a match, for a pattern whose every match starts
    where ``text.lower()`` holds one of _TRIGGERS (_STARTS, _CUT_PREFILTER): it is tried only at
    those places. A long text with a look-alike (``task_`` holds ``sk_``) was scanned in full by
    the pattern, which costs far more per character than finding the triggers."""
    low = text.lower()
    first = _TRIGGER_RE.search(low)
    if first is None:
        return False
    if len(low) != len(text):  # a character that lowercases to two: places in ``low`` are not in ``text``
        return pattern.search(text) is not None
    # Each trigger found, and every place inside it (where an overlapping one may start: ``akiasia``);
    # where look-alikes are dense (a trigger every few characters), one search from the next on is
    # cheaper than trying each.
    for n, m in enumerate(_TRIGGER_RE.finditer(low, first.start()), 1):
        if any(pattern.match(text, at) for at in range(m.start(), m.end())):
            return True
        if n % _TRIED_ONE_BY_ONE == 0 and m.end() - first.start() < n * _SPARSE:
            return pattern.search(text, m.end()) is not None
    return False


#: Trigger look-alikes tried one by one before their density is checked, and the average distance
#: between them under which the rest of the text is searched instead (a try costs about what a
#: search costs over this many characters).
_TRIED_ONE_BY_ONE = 8
_SPARSE = 32


def _replace(match: re.Match[str], counts: dict[str, int], values: dict[str, str], prefix: str) -> str:
    name = match.lastgroup or ""
    kind = name[len(prefix):].replace("_", "-")
    counts[kind] = counts.get(kind, 0) + 1
    value = values.get(name)
    if value is None:
        return f"[REDACTED:{kind}]"
    # Keep the label ("Bearer ", "aws_secret_access_key = "), replace the value only.
    start, end = match.span(value)
    whole = match.group(0)
    base = match.start()
    return whole[: start - base] + f"[REDACTED:{kind}]" + whole[end - base:]


def secret_values(text: str) -> list[tuple[str, str]]:
    """``(kind, value)`` of every key- or token-shaped string in ``text``: the value alone, without
    its label (the token after ``Bearer``, the secret after ``aws_secret_access_key=``).

    >>> secret_values("curl -H 'Authorization: Bearer abcdef0123456789abcdef'")
    [('bearer', 'abcdef0123456789abcdef')]
    """
    out: list[tuple[str, str]] = []
    if not _may_hold_secret(text):  # no match can start anywhere in it (the prefilter redact uses)
        return out
    for m in _RE.finditer(text):
        name = m.lastgroup or ""
        group = _VALUE_GROUP.get(name, name)
        out.append((name.replace("_", "-"), m.group(group)))
    return out


def excerpt(text: str, limit: int, *, mark: str = "…") -> str:
    """The first ``limit`` characters of ``text`` with secrets redacted *before* the cut, and the
    cut never inside a ``[REDACTED:…]`` marker (so no cut token falls below a pattern's length).

    >>> excerpt("token ghp_" + "a" * 40 + " and more", 20)
    'token [REDACTED:github]…'
    """
    clean = redact(text)[0]
    if len(clean) <= limit:
        return clean
    cut = limit
    opened = clean.rfind("[REDACTED:", 0, cut)
    if opened >= 0 and clean.find("]", opened) >= cut:
        cut = clean.find("]", opened) + 1
    return clean[:cut] + mark


def scrub_output(text: str) -> str:
    """``text`` as it may be written to a results file, report, cassette or log: the API key in
    use (``ANTHROPIC_API_KEY``, whatever its shape) and every key-shaped string replaced.

    A key reaches our outputs only by echo (a person pasted it, a judge quoted it); this is the last
    guard before disk or terminal, not a reason to skip the first ones.

    >>> scrub_output("key sk-ant-api03-" + "b" * 30)
    'key [REDACTED:anthropic]'
    """
    return _scrub(text, _api_key())


def _api_key() -> str:
    import os

    return os.environ.get("ANTHROPIC_API_KEY", "")


def _scrub(text: str, key: str) -> str:
    if len(key) >= 8 and key in text:
        text = text.replace(key, "[REDACTED:anthropic]")
    if _TRIGGER_RE.search(text.lower()) is None:
        return text  # what neither redact's patterns nor the cut ones can match (the common text)
    text = redact(text)[0]
    if _starts_at_a_trigger(_CUT_PREFILTER, text):
        text = _CUT_RE.sub(lambda m: _replace(m, {}, _CUT_VALUE, "cut_"), text)
    return text


# Where a match of _CUT_RE can start (each pattern's prefix, with its _START where it has one).
_CUT_PREFILTER = re.compile(_START + r"(?:sk-|[sr]k_|AKIA|ASIA|gh[pousr]_|github_pat_|glpat-|xox[abposr]-|AIza|eyJ)|"
                            r"(?i:secret_?access|bearer)")


def scrub_tree(value: Any) -> Any:
    """``value`` (JSON-like) with :func:`scrub_output` applied to every string, keys included, so a
    token cut at the end of a string is recognised there (walks with a stack, not recursion)."""
    if isinstance(value, str):
        return scrub_output(value)
    if not isinstance(value, (list, dict)):
        return value
    key = _api_key()  # read once for the tree
    seen: dict[str, str] = {}  # a document repeats its keys and short values thousands of times

    def scrub(text: str) -> str:
        out = seen.get(text)
        if out is None:
            out = _scrub(text, key)
            if len(text) <= 200:
                seen[text] = out
        return out

    root: list[Any] = [value]
    stack: list[Any] = [root]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            pairs = list(item.items())
            item.clear()
            for k, v in pairs:
                k = scrub(k) if isinstance(k, str) else k
                item[k] = _copy(v, stack, scrub)
        else:
            for i, v in enumerate(item):
                item[i] = _copy(v, stack, scrub)
    return root[0]


def _copy(v: Any, stack: list[Any], scrub: Callable[[str], str]) -> Any:
    if isinstance(v, str):
        return scrub(v)
    if isinstance(v, dict):
        v = dict(v)
        stack.append(v)
    elif isinstance(v, (list, tuple)):
        v = list(v)
        stack.append(v)
    return v


class _ScrubFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        scrubbed = scrub_output(message)
        if scrubbed != message:
            record.msg, record.args = scrubbed, None
        return True


_SCRUBBED_LOGGERS = ("anthropic._base_client", "anthropic._response", "httpx2", "pytest_ctxeval")


def scrub_logs() -> None:
    """Scrub the records of the SDK's and our loggers with :func:`scrub_output` (idempotent).

    At DEBUG the SDK logs every request body; a key a person pasted into a session would be in it.
    The filter sits on the loggers that emit, so it holds for any handler the user attaches."""
    for name in _SCRUBBED_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, _ScrubFilter) for f in logger.filters):
            logger.addFilter(_ScrubFilter())


def merge_counts(into: dict[str, int], more: dict[str, int]) -> dict[str, int]:
    for kind, n in more.items():
        into[kind] = into.get(kind, 0) + n
    return into


def redact_tree(value: Any, counts: dict[str, int]) -> Any:
    """``value`` (JSON-like: dicts, lists, strings) with every string redacted, counting into
    ``counts``. The ``source`` of an image or document block (base64 data) is left alone: random
    base64 can look like a key, and it is not text anyone typed."""
    if isinstance(value, str):
        text, found = redact(value)
        merge_counts(counts, found)
        return text
    if isinstance(value, list):
        return [redact_tree(v, counts) for v in value]
    if isinstance(value, dict):
        media = value.get("type") in ("image", "document")
        return {k: (_source(v, counts) if media and k == "source" else redact_tree(v, counts)) for k, v in value.items()}
    return value


def _source(source: Any, counts: dict[str, int]) -> Any:
    """An image/document ``source``: its base64 ``data`` kept as is, the rest (a ``url`` may carry
    a token in its query) redacted."""
    if not isinstance(source, dict):
        return redact_tree(source, counts)
    return {k: (v if k == "data" else redact_tree(v, counts)) for k, v in source.items()}
