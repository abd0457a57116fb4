"""How the offline reference model writes when the prompt does *not* ask for exactness.

A model that is not told to quote paraphrases; not told to keep identifiers, it writes "the
function"; not told to quote errors, it names their kind; given a word limit, it drops detail.
These functions are those habits, made deterministic (the same input always gives the same text),
so a prompt that drops an instruction (:mod:`.instructions`) gets a summary that differs the way a
model's would, and the graders see it. None of them copies its input: a paraphrase is a rewording.
"""

from __future__ import annotations

import re

from ..reading.summary import normalize_ws

__all__ = ["paraphrase", "is_paraphrase", "gist", "PARAPHRASE_PREFIX", "error_gist", "generalise_identifiers", "trim_to_limit", "translate",
           "drop_snippets_and_repeats", "size_of", "names_something",
           "cut_to"]

#: How a paraphrased user message starts (an earlier summary's paraphrase is not reworded twice).
PARAPHRASE_PREFIX = "The user"
#: The openings :func:`paraphrase` writes (and :func:`is_paraphrase` recognises).
_OPENING = re.compile(r"^The user (?:asked|said|wanted to know)\b")
#: A long message keeps its first sentence and every sentence that names something (a value, a
#: path, a name) or sets a rule, up to about this many words; the rest is left out, and says so.
_MAX_WORDS = 90

_POLITE = re.compile(r"^(?:(?:ok(?:ay)?|so|now|hey|hi|please|pls|thanks?|thank you|great|good|fine|nice|cool|"
                     r"alright|right|well|also|and|but|actually|agreed|perfect|makes sense|sounds good|looks right)"
                     r"(?:[,!.]+|\s+[-—–])?\s+)+", re.IGNORECASE)
_REQUEST = re.compile(r"^(?:(?:could|can|would|will) you(?: please)?|i(?:'d| would) like you to|i want you to|"
                      r"i need you to|let's|let us|please)\s+", re.IGNORECASE)
_PRONOUNS = {"i": "they", "i'm": "they are", "i've": "they have", "i'd": "they would", "i'll": "they will",
             "me": "them", "my": "their", "mine": "theirs", "myself": "themselves", "we": "they", "we're": "they are",
             "we've": "they have", "us": "them", "our": "their", "you": "the assistant", "your": "the assistant's",
             "you're": "the assistant is", "yourself": "itself", "don't": "do not", "doesn't": "does not",
             "can't": "cannot", "won't": "will not", "isn't": "is not", "it's": "it is", "that's": "that is",
             "aren't": "are not", "didn't": "did not", "shouldn't": "should not", "wasn't": "was not"}
_WORD = re.compile(r"[A-Za-z][A-Za-z']*")
#: Wordings a writer in their own words trades for another of the same meaning.
_SWAPS = {"instead of": "rather than", "rather than": "instead of", "so that": "so", "make sure": "ensure",
          "ensure": "make sure", "a bit": "slightly", "right now": "at the moment", ", then ": ", and then "}
_SWAP = re.compile("|".join(re.escape(k) for k in sorted(_SWAPS, key=len, reverse=True)), re.IGNORECASE)
#: Where one sentence ends and the next begins (not after "e.g." and the like, nor inside a path).
_SENTENCE = re.compile(r"(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\betc\.)(?<!\bvs\.)(?<=[.!?])\s+(?=[\"'A-Z0-9])")
#: A short label before a colon that opens a sentence: "Change of plan: ...", "Note: ...".
_LABEL = re.compile(r"^(?P<label>[A-Za-z][A-Za-z0-9',\- ]{1,40}?):\s+(?P<rest>\S.*)$")
#: What makes a sentence worth keeping in a long message: a name or value, or a rule.
_RULE = re.compile(r"\b(?:never|always|not|no|must|only|without|don't|do not|keep|avoid|except)\b", re.IGNORECASE)


def is_paraphrase(text: str) -> bool:
    """Whether ``text`` is already one of :func:`paraphrase`'s sentences (an earlier summary's)."""
    return _OPENING.match(text.lstrip()) is not None


def _swap_persons(text: str) -> str:
    """Politeness dropped, the person's "I"/"we" and the assistant's "you" swapped, contractions
    expanded."""
    t = _POLITE.sub("", text + " ").rstrip()
    t = _REQUEST.sub("", t)
    return _WORD.sub(lambda m: _PRONOUNS.get(m.group(0).lower(), m.group(0)), t)


def _courtesy(sentence: str) -> bool:
    """Whether a sentence is only courtesy ("Thanks.", "Good find.", "Makes sense.")."""
    rest = _POLITE.sub("", sentence + " ").strip(" .!?,;:—–-")
    return not rest or (rest != sentence.strip(" .!?,;:—–-") and len(rest.split()) <= 1)


#: "the assistant go on" once "you" is swapped: the verb agrees.
_AGREE = re.compile(r"\bthe assistant (go|do|look|stop|change|start|finish|continue|work|touch|make|run|try|see)\b")


def _agree(text: str) -> str:
    return _AGREE.sub(lambda m: f"the assistant {m.group(1)}{'es' if m.group(1) in ('go', 'do') else 's'}", text)


def _reported(sentence: str, first: bool) -> str:
    """One sentence in reported speech: an instruction as "asked the assistant to ...", a question as
    "wanted to know ...", anything else as "said that ..."; every word that carries a fact kept."""
    t = _swap_persons(sentence.strip())
    label = ""
    m = _LABEL.match(t)
    if m and len(m.group("label").split()) <= 6 and "/" not in m.group("label"):
        text = m.group("label").strip()
        text = text[0].lower() + text[1:] if text[:2].isupper() is False else text
        label = " (" + _agree(text) + ")"
        t = _swap_persons(m.group("rest"))
    t = _agree(_SWAP.sub(lambda m: _SWAPS[m.group(0).lower()], t))
    body = t.rstrip(" .!;:,")
    if body[:1].isupper() and not body[:2].isupper():
        body = body[0].lower() + body[1:]
    word = body.split(" ", 1)[0].strip(",")
    head = "" if len(word) > 1 and word.isupper() else word.lower()  # "GET /export takes 9 s": a name, not a verb
    who = "The user" if first else "and"
    if sentence.rstrip().endswith("?"):
        return f"{who} wanted to know{label}: {body.rstrip('?')}"
    asked = f"{who} asked{' the assistant' if first else ''}{label}"
    if head in ("never", "always") or body.lower().startswith(("do not ", "not ")):
        if body.lower().startswith(("do not ", "not ")):
            body = "not to " + body.split(" not ", 1)[1] if body.lower().startswith("do not ") else "not to " + body[4:]
        else:
            body = head + " to " + body.split(" ", 1)[1] if " " in body else body
        return f"{asked} {body}"
    if head in _VERBS:
        return f"{asked} to {body}"
    return f"{who} said{label} that {body}"


def paraphrase(text: str) -> str:
    """A user message in the writer's own words: reported speech, sentence by sentence (politeness
    dropped, persons swapped, contractions expanded, a few wordings traded for others of the same
    meaning), every value, name and rule kept. A long message keeps its first sentence and those
    that name something or set a rule, and says that it left the rest out.

    >>> paraphrase("Please don't touch my tests, just fix the parser!")
    'The user asked the assistant not to touch their tests, just fix the parser.'
    >>> paraphrase("Change of plan: the billing service moved: it listens on port 6311 now, no longer 5287.")
    'The user said (change of plan) that the billing service moved: it listens on port 6311 now, no longer 5287.'
    """
    t = normalize_ws(text.replace("’", "'"))
    if is_paraphrase(t):
        return t
    sentences = [s for s in _SENTENCE.split(t) if not _courtesy(s)]
    if not sentences:  # nothing but courtesy ("Thanks!")
        return "The user said thanks."
    kept, words, left_out = [], 0, False
    for n, s in enumerate(sentences):
        size = len(s.split())
        if n and words + size > _MAX_WORDS and (words + size > 3 * _MAX_WORDS or not (_IDENT.search(s) or _RULE.search(s))):
            left_out = True
            continue
        kept.append(s)
        words += size
    parts = [_reported(s, n == 0) for n, s in enumerate(kept)]
    out = "; ".join(parts) if len(parts) > 2 else ", ".join(parts)
    return out + ("; the rest of the message is left out." if left_out else ".")


#: Small words a gist leaves out.
_STOP = frozenset("a an the to of in on at for from by with and or but so that this these those it its is are was "
                  "were be been being as into onto than then there here which who whom what when where".split())
_GIST_WORDS = 7


def gist(text: str) -> str:
    """What a request was about, in a few words and no run of its own wording: the message with
    persons swapped and without its small words, cut after seven (how a model not told to quote
    writes the next step: "continue with the cache fix", not the request word for word).

    >>> gist("Makes sense. Fix it in the cache layer so old keys keep working during the rollout.")
    'The user asked about: fix cache layer old keys keep working…'
    """
    body = _swap_persons(normalize_ws(text.replace("’", "'")))
    words = [w for w in body.split() if w.lower().strip(".,;:!?…'\"") not in _STOP]
    out = " ".join(words[:_GIST_WORDS]).rstrip(".!?,;:…")
    if out[:1].isupper() and not out[:2].isupper():
        out = out[0].lower() + out[1:]
    return f"{PARAPHRASE_PREFIX} asked about: {out}{'…' if len(words) > _GIST_WORDS else '.'}"


#: Imperative openings that read as "asked to <verb>".
_VERBS = {"add", "build", "change", "check", "clean", "continue", "convert", "create", "debug", "delete", "deploy",
          "do", "document", "drop", "find", "finish", "fix", "go", "implement", "improve", "investigate", "keep",
          "look", "make", "merge", "migrate", "move", "optimise", "optimize", "profile", "refactor", "remove",
          "rename", "replace", "revert", "review", "rewrite", "run", "split", "start", "stop", "switch", "test",
          "try", "update", "upgrade", "use", "write", "not", "commit", "push", "read", "explain", "show", "tell",
          "set", "get", "list", "skip", "bump", "count", "ship", "remember", "bound", "prepare", "search", "figure",
          "focus", "wait", "leave", "open", "tighten", "summarise", "summarize", "give", "put", "send", "mark",
          "return", "raise", "lower", "cap", "pin", "tag", "pull", "install", "uninstall", "configure", "enable",
          "disable", "turn", "wire", "parse", "handle", "print", "format", "sort", "filter", "call", "compute",
          "store", "save", "load", "squash", "rebase", "restart", "reload", "rerun", "retry", "measure", "compare",
          "verify", "ensure", "extract", "expose", "hide", "wrap", "tidy", "trim", "shorten", "translate",
          "regenerate", "generate", "scaffold", "stub", "mock", "patch", "apply", "accept", "reject", "approve",
          "answer", "describe", "plan", "draft", "outline", "ask", "let", "double-check", "port", "release",
          "publish", "archive", "close", "resolve", "reply", "paste", "copy", "include", "exclude", "ignore",
          "retire", "deprecate", "inline", "benchmark", "validate", "audit", "trace", "log", "key", "cache",
          "remind", "consider", "avoid", "revisit", "reorder", "bundle", "unify", "fold", "collapse", "expand"}

_ERROR_KIND = re.compile(r"\b([A-Z][A-Za-z]*(?:Error|Exception|Denied|Timeout|Failure))\b|"
                         r"\b(timed out|permission denied|not found|no such file|syntax error|conflict|refused)\b",
                         re.IGNORECASE)


def error_gist(tool: str, target: str, key_line: str) -> str:
    """An error named by its kind, not quoted: ``Bash (pytest -q) failed with a KeyError``.

    >>> error_gist("Bash", "pytest -q", "E   KeyError: 'coupon:SUMMER24'")
    'Bash (pytest -q) failed with a KeyError'
    """
    m = _ERROR_KIND.search(key_line)
    kind = (m.group(1) or m.group(2).lower()) if m else "an error"
    article = "" if kind == "an error" else ("an " if kind[:1].lower() in "aeiou" else "a ")
    return f"{tool}{' (' + target + ')' if target else ''} failed with {article}{kind}"


_IDENT = re.compile(
    r"`[^`\n]+`"                                      # code spans
    r"|(?:~|\.{1,2})?/?(?:[\w.-]+/)+[\w.-]+"           # paths
    r"|\b[A-Za-z_][\w.]*\([^()\n]{0,40}\)"            # calls
    r"|\b[A-Za-z_]+(?:\.[A-Za-z_][\w]*)+\b"            # dotted names
    r"|\b[a-z]+(?:_[a-z0-9]+)+\b|\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b"  # snake_case, CONSTANT_CASE
    r"|\b[a-z]+[A-Z]\w*\b|\b[A-Z][a-z]+[A-Z]\w*\b"    # camelCase, CamelCase
    r"|\b[0-9a-f]{7,40}\b"                            # hashes
    r"|\b\d+(?:[.,:]\d+)*(?:\s?(?:ms|s|kb|mb|gb|%|px))?\b")  # numbers


def names_something(text: str) -> bool:
    """Whether ``text`` names an identifier: a path, a call, a dotted or snake_case name, a hash
    or a number (what makes a finding a fact rather than narration)."""
    return _IDENT.search(text) is not None


def _generic(token: str) -> str:
    if "/" in token:
        return "a file"
    if "(" in token:
        return "a function"
    if token[:1].isdigit():
        return "a value" if not re.fullmatch(r"[0-9a-f]{7,40}", token) or token.isdigit() else "a hash"
    return "a name"


def generalise_identifiers(text: str) -> str:
    """Identifiers replaced by what they are ("a file", "a function", "a name", "a value").

    >>> generalise_identifiers("coupons.get(key) in src/shop/cart.py took 7.8 s")
    'a function in a file took a value'
    """
    return _IDENT.sub(lambda m: _generic(m.group(0)), text)


def _size(text: str, unit: str) -> int:
    if unit == "words":
        return len(text.split())
    if unit == "characters":
        return len(text)
    if unit == "lines":
        return len([l for l in text.split("\n") if l.strip()])
    return max(1, len(text) // 4)  # tokens: the engine's rough estimate (4 characters a token)


def cut_to(text: str, amount: int, unit: str) -> str:
    """``text`` cut to ``amount`` ``unit`` (words, characters, lines, tokens), with an ellipsis when
    cut.

    >>> cut_to("one two three four", 2, "words")
    'one two…'
    """
    if _size(text, unit) <= amount:
        return text
    if unit == "words":
        return " ".join(text.split()[:amount]) + "…"
    if unit == "lines":
        return "\n".join([l for l in text.split("\n") if l.strip()][:amount]) + "…"
    chars = amount if unit == "characters" else amount * 4
    return text[:max(1, chars - 1)].rstrip() + "…"


#: A code line under a file of section 3 ("  changed `a` to `b`", "  wrote: `...`").
_SNIPPET = re.compile(r"^\s+(?:changed `|wrote: `)")
#: What makes two lines the same for a reader short of room: the command in parentheses, numbers.
_DUP_NOISE = re.compile(r"\([^()]*\)|\d+")


def _dup_key(line: str) -> str:
    return normalize_ws(_DUP_NOISE.sub("", line)).lower()


def size_of(text: str, unit: str) -> int:
    """The length of ``text`` in ``unit`` (words, characters, lines, tokens: 4 characters a token)."""
    return _size(text, unit)


def drop_snippets_and_repeats(sections: list[tuple[str, list[str]]], amount: int, unit: str,
                              repeats: list[bool] | None = None) -> list[tuple[str, list[str]]]:
    """What a writer short of room drops before anything else: the code snippets, then the lines
    that repeat another of their section but for a command or a number (five failures of one
    error are one); each step only while ``sections`` are over ``amount`` ``unit``. ``repeats``
    says which sections may lose repeats (default: all): "Harden module 3" and "Harden module 4"
    differ only by a number and are two open tasks."""
    out = [(h, list(lines)) for h, lines in sections]

    def total() -> int:
        return _size("\n".join(h + "\n" + "\n".join(ls) for h, ls in out), unit)

    if total() > amount:
        out = [(h, [l for l in ls if not _SNIPPET.match(l)] or ls[:1]) for h, ls in out]
    if total() > amount:
        deduped = []
        for n, (h, ls) in enumerate(out):
            if repeats is not None and not repeats[n]:
                deduped.append((h, ls))
                continue
            seen: set[str] = set()
            keep = []
            for l in ls:
                if l.lstrip().startswith("- ") and _dup_key(l) in seen:
                    continue
                seen.add(_dup_key(l))
                keep.append(l)
            deduped.append((h, keep))
        out = deduped
    return out


def trim_to_limit(sections: list[tuple[str, list[str]]], amount: int, unit: str,
                  repeats: list[bool] | None = None) -> list[tuple[str, list[str]]]:
    """Sections (heading, body lines) cut to ``amount`` ``unit`` the way a writer short of room cuts:
    first the code snippets, then lines that repeat another of their section but for a command or
    a number (five failures of one error are one), then the section with the most lines loses its
    last line, the files section last and its files only read first (a changed file's name takes a
    few words), until the whole
    fits (each section keeps at least one line, cut short if need be). Nothing changes when the
    sections fit."""
    out = drop_snippets_and_repeats(sections, amount, unit, repeats)

    def total() -> int:
        return _size("\n".join(h + "\n" + "\n".join(ls) for h, ls in out), unit)

    files = {i for i, (h, _) in enumerate(out) if re.search(r"\bfiles?\b", h, re.IGNORECASE)}
    while total() > amount:
        longest = max(range(len(out)), key=lambda i: (i not in files or all(len(out[j][1]) <= 1 for j in range(len(out))
                                                                             if j not in files),
                                                      len(out[i][1]), sum(len(l) for l in out[i][1])))
        lines = out[longest][1]
        if len(lines) > 1:
            reads = [n for n, l in enumerate(lines) if l.rstrip().endswith(" — read")] if longest in files else []
            lines.pop(reads[-1] if reads else -1)  # a file only read goes before one changed
            continue
        i = max(range(len(out)), key=lambda i: len(out[i][1][0]) if out[i][1] else 0)
        line = out[i][1][0] if out[i][1] else ""
        if len(line) <= 12:
            break  # nothing left to cut: a limit below the section titles cannot be met
        out[i][1][0] = line[: max(8, len(line) * 2 // 3)].rstrip() + "…"
    return out


def translate(text: str, table: dict[str, str] | None) -> str:
    """The reference's fixed narration phrases in another language. Only a phrase that opens a line
    (after its indent and list mark) is narration; the same words inside a quote are left alone.

    >>> translate('   - None.', {"None.": "Aucun."}), translate('   - "None."', {"None.": "Aucun."})
    ('   - Aucun.', '   - "None."')
    """
    if not table:
        return text
    phrases = sorted(table, key=len, reverse=True)
    lines = []
    for line in text.split("\n"):
        lead = re.match(r"^\s*(?:- )?", line)  # always matches (every part is optional)
        head = lead.group(0) if lead else ""
        rest = line[len(head):]
        for english in phrases:
            if rest.startswith(english):
                rest = table[english] + rest[len(english):]
                break
        lines.append(head + rest)
    return "\n".join(lines)
