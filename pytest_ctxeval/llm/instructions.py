"""The instructions the offline reference model follows, read from the prompt's wording.

The reference model (:mod:`.reference`) writes the sections a prompt asks for; *how* it writes
them depends on the instructions the prompt gives, matched here against one table,
:data:`VOCABULARY`. Each entry names the instruction, how a prompt may phrase it (a matcher, not a
list of sentences), what the reference does when the prompt asks for it and what it does when it
does not, and the grader that sees the difference. A behaviour happens **only when the prompt asks
for it**, so deleting or weakening an instruction changes the summary the way a model's would:
user messages are paraphrased (a deterministic rewording, not a copy), the next step loses its
quote, files lose their snippets, errors are described instead of quoted, and so on.

How a sentence is matched. The prompt is split into sentences; each sentence belongs to the
section entry it is written in (``6. All user messages: ...`` and its continuation lines), so
"quote each one exactly" under section 6 is about user messages. A sentence asks for an
instruction when it names the instruction's *subject* (or sits in the instruction's section) and
one of its *ask* terms, and that term is not negated right before it ("do not quote", "no need to
keep them verbatim", "without snippets"). Matching is case-, markdown- and apostrophe-insensitive.
Sentences that ask for the opposite ("briefly paraphrased") are recorded too, for the
``prompt-change coverage`` note (:mod:`pytest_ctxeval.reporting.prompt_coverage`).

Two instructions carry a value: a **length limit** ("keep the summary under 600 words") and a
**language** ("write the summary in French"). The built-in prompt sets neither.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from .prompt_blocks import BULLET, custom_lines, lead_in

__all__ = ["Instruction", "VOCABULARY", "Reading", "read_prompt", "read_sentences", "sentences", "LengthLimit", "LANGUAGES",
           "limit_of"]

#: "remove", "delete" as an instruction; not as a permission ("can delete", "may remove", "fine to remove").
_REMOVE = r"(?<!can )(?<!may )(?<!could )(?<!to )(?:remove|delete)"
#: Words that negate the term right after them (up to three words later, no punctuation between).
_NEGATOR = (r"(?:not|never|no|without|don't|do not|doesn't|does not|need not|needn't|no need to|avoid|skip|"
            r"omit|drop|discard|disregard|ignore|throw away|throw out|get rid of|" + _REMOVE + r"|leave out|rather than|instead of|nor|"
            r"neither)")


@dataclass(frozen=True)
class Instruction:
    """One entry of the vocabulary (see the module docstring)."""

    name: str
    #: What the prompt asks for, in a few words (shown in the coverage note).
    title: str
    #: Where the instruction's subject is named (regex over a normalised sentence).
    subject: str
    #: The words that make it an instruction rather than a mention (regex).
    ask: str
    #: What the reference does when the prompt asks / does not ask.
    when_asked: str
    otherwise: str
    #: The grader that sees the difference.
    grader: str
    #: The section kind whose entry supplies the subject implicitly (None: any sentence).
    section: str | None = None
    #: Words that ask for the opposite (the coverage note calls such a line a weakening).
    opposite: str | None = None

    @functools.cached_property
    def _subject(self) -> re.Pattern[str]:
        return re.compile(self.subject)

    @functools.cached_property
    def _ask(self) -> re.Pattern[str]:
        return re.compile(self.ask)

    @functools.cached_property
    def _opposite(self) -> re.Pattern[str] | None:
        return re.compile(self.opposite) if self.opposite else None

    def about(self, sentence: Sentence) -> bool:
        """Whether the sentence is about this instruction's subject."""
        return (self.section is not None and sentence.section == self.section) or _unnegated(self._subject, sentence.text)

    def asks(self, sentence: Sentence) -> bool:
        """Whether the sentence asks for this instruction: about its subject, with an un-negated ask
        term or a negated opposite ("never paraphrase them", "do not omit any")."""
        if not self.about(sentence):
            return False
        return any(not _negated(sentence.text, m.start(), m.end()) and not self._keeps_other(sentence.text, m)
                   for m in self._ask.finditer(sentence.text)) or (
            self._opposite is not None and any(_negated(sentence.text, m.start(), m.end())
                                               for m in self._opposite.finditer(sentence.text)))

    def _keeps_other(self, text: str, m: re.Match[str]) -> bool:
        """Whether the ask term keeps something else only: "tool outputs (can delete, keep pass/fail
        only)" keeps the pass/fail, not the tool outputs."""
        obj = _ONLY_OBJECT.match(text[m.end():])
        if obj is None:
            return False
        what = (obj.group("a") or obj.group("b") or "").strip()
        return bool(what) and not _BACK_REFERENCE.match(what) and self._subject.search(what) is None

    def targets(self, text: str, m: re.Match[str]) -> bool:
        """Whether the opposite term ``m`` is said of this instruction's subject: followed in its
        clause by the subject ("paraphrase the user's messages"), by a word pointing back to it
        ("summarise the rest", "paraphrase them", "each later one"), or by nothing else (a section's
        "briefly paraphrased"); not by another object ("summarise the surrounding context", "its
        long output", "any pasted logs"), and not as the subject of a reason ("Paraphrasing loses
        the user's intent")."""
        after = text[m.end():]
        if _REASON_VERB.match(after):
            return False
        clause = _CLAUSE_END.split(after, 1)[0]
        words = clause.split()[:8]
        head = " ".join(words)
        if not words or _BACK_REFERENCE.match(head) or _ONLY_MANNER.fullmatch(head):
            return True
        # its object may be a list joined by "and" ("resolved debug output and stack traces"), up
        # to a verb that starts another clause ("summarise the context and quote the messages")
        head = " ".join(_OBJECT_END.split(after, 1)[0].split()[:12])
        said = self._subject.search(head)
        # "drop repeated tool output", "discard verbose logs": the noise around it, not the subject
        return said is not None and not _NOISE.search(re.split(r",| and | or ", head[:said.start()])[-1])

    def against(self, sentence: Sentence) -> bool:
        """Whether the sentence also speaks against the instruction for part of its subject: an
        un-negated opposite term that is not the ask term itself ("quote the first message
        verbatim; summarise the rest"). Leaving something out counts only when the sentence names
        the subject ("leave out errors that were fixed", not "do not include tool results")."""
        if self._opposite is None:
            return False
        asks = [m.span() for m in self._ask.finditer(sentence.text)]
        leave_out = [m.span() for m in _LEAVE_OUT_RE.finditer(sentence.text)]
        for m in self._opposite.finditer(sentence.text):
            if _negated(sentence.text, m.start(), m.end()) or any(a < m.end() and m.start() < b for a, b in asks):
                continue
            if m.span() in leave_out and not self._subject.search(sentence.text):
                continue
            if not self.targets(sentence.text, m):
                continue
            return True
        return False

    def limited(self, sentence: Sentence) -> str:
        """How the sentence that asks limits its own ask (an exception, a condition, a scope, a
        transformation), or ``""``: "verbatim, except short acknowledgements", "verbatim only when
        they are short", "drop any message older than the last three", "translated into English".
        The ask then covers part of the subject only, or changes its words: not what the
        instruction asks (read as asked in part)."""
        if self.name in ("length_limit", "language"):
            return ""
        for m in _LIMITS.finditer(sentence.text):
            if not _negated(sentence.text, m.start()):
                return next(k for k, v in m.groupdict().items() if v)
        return ""

    def opposes(self, sentence: Sentence) -> bool:
        """Whether the sentence is about the subject and asks for the opposite (or negates the ask)."""
        if not (self.about(sentence) or self._subject.search(sentence.text)):  # "no code": still about code
            return False
        negated_ask = any(_negated(sentence.text, m.start(), m.end()) for m in self._ask.finditer(sentence.text))
        return negated_ask or (self._opposite is not None and not self.asks(sentence) and any(
            not _negated(sentence.text, m.start(), m.end()) and self.targets(sentence.text, m)
            for m in self._opposite.finditer(sentence.text)))


_NUMBER = r"(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|twelve|twenty|few|several|couple of)"
#: What limits an ask in its own sentence (see :meth:`Instruction.limited`), by kind.
_LIMITS = re.compile(
    r"(?P<an_exception>\b(?:except(?:ing)?(?: for)?|excluding|other than|apart from|aside from|save for|unless|"
    r"with the exception of)\b(?!\s+(?:the\s+)?(?:tool|system|command)\b))|"
    r"(?P<a_condition>\bonly (?:when|if|where|while|for|those|the ones|short|long|messages|the messages)\b|"
    r"(?<!\beven )\b(?:when|if|while|as long as|provided(?: that)?|whenever) (?:they|it|each|the message|a message|the messages)"
    r"(?:'re| are| is| were| was| fits?| has| have)\b)|"
    r"(?P<a_scope>\b(?:older|newer|earlier|later|longer|shorter) than\b|"
    r"\b(?:the |only )?(?:last|first|latest|most recent|earliest|oldest|newest) " + _NUMBER + r"\b|"
    r"\b(?:up to|at most|no more than) " + _NUMBER + r" (?:user )?(?:messages|items|requests|errors|quotes)\b)|"
    r"(?P<a_transformation>\btranslat\w*|\bin (?:english|french|german|spanish|japanese|chinese|another language)\b|"
    r"\bwith (?:the )?(?:typos|spelling|grammar|mistakes) (?:fixed|corrected)\b|\b(?:typos|spelling|grammar) "
    r"(?:fixed|corrected)\b|\bcorrect(?:ed|ing)? (?:the |their |any )?(?:typos|spelling|grammar)\b|"
    r"\bcleaned[- ]up\b|\bnormali[sz]ed\b|\bin (?:the )?third person\b|\bin reported speech\b)")

#: After an opposite term: a verb that makes the term the subject of a reason ("Paraphrasing loses
#: the user's intent", "summaries drop detail").
_REASON_VERB = re.compile(r"^\s+(?:loses?|lose|drops?|hides?|blurs?|changes?|distorts?|is|are|was|can|could|may|"
                          r"might|will|would|tends?|makes?|risks?|costs?)\b", re.IGNORECASE)
_CLAUSE_END = re.compile(r"[;:,.!?()]|\s(?:and|but|while|whereas|so)\s")
#: The end of an opposite term's object: a clause end, or "and" before a verb of its own.
_OBJECT_END = re.compile(r"[;:,.!?()]|\s(?:but|while|whereas|so|then)\s|\s(?:and|or)\s(?=(?:also |then )?(?:keep|preserve|"
                         r"include|list|record|quote|retain|note|write|say|describe|give|copy|show|add|mention|"
                         r"summar\w*|paraphras\w*|explain|state|name)\b)")
#: Words pointing back to the section's subject: "summarise the rest", "paraphrase them".
_BACK_REFERENCE = re.compile(r"(?:of\s+)?(?:(?:each|every|all|any|the|such|those|these|its|their)\s+)?"
                             r"(?:(?:long|longer|short|later|older|earlier|remaining|other|subsequent|following|previous|"
                             r"user'?s?|person'?s?)\s+)*"
                             r"(?:them|it|these|those|the rest|rest|others?|ones?|messages?|requests?|items?|entries|"
                             r"errors?|tasks?|steps?|quotes?)\b", re.IGNORECASE)
#: After an ask term: its object, limited by "only" ("keep pass/fail only", "keep only the plan").
_ONLY_OBJECT = re.compile(r"^\s+(?:only\s+(?!(?:when|if|where|while|for|as|those|the ones)\b)(?P<a>[^,;:.()]+)|"
                          r"(?P<b>[^,;:.()]+?)\s+only\b(?!\s+(?:when|if|where|while|for|as)\b))")
#: Before the subject, after a word that leaves it out: only its noise is meant ("drop repeated tool
#: output", "discard verbose error logs", "raw command outputs"), not the subject itself.
_NOISE = re.compile(r"\b(?:repeated|repetitive|redundant|duplicated?|duplicates? of|verbose|raw|noisy|lengthy|long|large|"
                    r"full|bulky|intermediate (?:\w+ )?(?:output|logs?))\b")
#: Nothing but how to do it: "briefly", "in one line", "in your own words".
_ONLY_MANNER = re.compile(r"(?:(?:briefly|concisely|shortly|loosely|faithfully|accurately|succinctly|clearly|carefully|"
                          r"instead|here|too|also|only|in (?:one|a single|"
                          r"a few|two) (?:line|sentence)s?|in (?:your|their|the assistant's) own words|as needed|"
                          r"where (?:needed|possible)|if (?:needed|possible|long))\s*)*", re.IGNORECASE)

#: A negation before a term: a negator up to three words before it, or up to two words after an
#: "or" that follows one ("no need to quote them or say how they were fixed").
_NEGATED_BEFORE = re.compile(rf"\b{_NEGATOR}\b:?(?:\s+[\w'-]+){{0,3}}(?:\s+(?:or|nor)(?:\s+[\w'-]+){{0,2}})?\s*$")
#: A discouragement after a term, anywhere in its clause: "quoting them verbatim is discouraged",
#: "verbatim copies should be avoided", "exact quotes are not recommended".
_DISCOURAGED = (r"^[^.;:,()]*?\b(?:(?:is|are|be)\s+(?:(?:strongly|generally|usually)\s+)?(?:discouraged|unwanted|undesirable|"
                r"frowned upon|(?:to be )?avoided|a bad idea|not (?:recommended|advised|advisable|wanted|desired|"
                r"preferred|helpful|useful|a good idea|welcome))|(?:isn't|aren't)\s+(?:recommended|advised|wanted|"
                r"desired|preferred|helpful|useful)|should (?:be avoided|not be used)|(?:is|are) to be avoided)\b")
#: A negation after a term: "exact wording is not needed", "verbatim is optional".
#: Up to four words may come between ("verbatim quoting of them is not required").
_NEGATED_AFTER = re.compile(r"^(?:\s+[\w'-]+){0,4}?\s*(?:(?:is|are)\s+(?:not|n't)\s+(?:needed|necessary|required|important|"
                            r"essential)|(?:isn't|aren't)\s+(?:needed|necessary|required|important|essential)|"
                            r"(?:is|are)\s+(?:optional|unnecessary))\b|" + _DISCOURAGED)


#: A negation farther before a term, in the same sentence, with no "but" between: "it is not
#: necessary, given the token budget, to keep them verbatim"; "not only the ones you were asked".
_FAR_NEGATED = re.compile(r"\b(?:(?:is|are|was|it's) (?:not|no longer) (?:necessary|needed|required|essential)|no need|"
                          r"unnecessary|not (?:only|just|merely))\b(?:(?!\b(?:but|however|though|yet|instead)\b)[^.;])*$")


#: A verb that leaves out its whole object, farther before a term in the same clause: "discard
#: exploratory searches that led to dead ends" (not past a verb that keeps: "drop the logs, keep ...").
_CLAUSE_LEFT_OUT = re.compile(r"\b(?:discard|drop|exclude|omit|ignore|disregard|leave out|throw away|throw out|get rid of|"
                              + _REMOVE + r")\b"
                              r"(?:(?!\b(?:but|keep|preserve|include|retain|record|list|however|instead)\b)[^.;,()])*$")


def _negated(text: str, at: int, end: int | None = None) -> bool:
    if (_NEGATED_BEFORE.search(text[max(0, at - 60):at]) or _FAR_NEGATED.search(text[:at])
            or _CLAUSE_LEFT_OUT.search(text[:at])):
        return True
    return end is not None and bool(_NEGATED_AFTER.match(text[end:end + 60]))


def _unnegated(pattern: re.Pattern[str], text: str) -> bool:
    return any(not _negated(text, m.start(), m.end()) for m in pattern.finditer(text))


#: The verbs that ask for something to be kept ("keep", "preserve", "include", "carry forward"...),
#: shared by the instructions whose subject is a kind of content.
_KEEP = r"\bkeep\w*|\bpreserv\w*|\binclud\w*|\bquot\w*|\blist\w*|\bcarry\w*|\bretain\w*|\bcapture\w*|"
_VERBATIM = (r"verbatim|word[- ]for[- ]word|exactly as (?:\w+ ){0,2}(?:written|typed|sent|given|said|wrote|they were)|"
             r"without (?:chang|alter|edit|rewrit|reword)\w* (?:a |any |one )?(?:single )?(?:word|thing|character)s?|"
             r"without (?:any )?(?:edits?|changes?|alterations?|rewording)\b|"
             r"(?:in|to|with|using|keeping) (?:the|their|his|her|(?:the )?(?:user|person|human)(?:'s|s'))"
             r" (?:original|own|exact) (?:words|wording|text|phrasing)|\bin full\b|"
             r"(?:keep\w*|preserv\w*|retain\w*) (?:the |their )?(?:original|exact) (?:words|wording|text|phrasing)|"
             r"(?:their |the |his |her )?exact (?:words|wording|text)|unchanged|unedited|as[- ]is\b|literally|"
             r"character[- ](?:for|by)[- ]character|(?:direct|exact|literal|full) quot\w*|"
             r"quot\w* (?:\w+ ){0,3}(?:exactly|in full|verbatim|word for word)|(?:in|with) quotation marks|"
             r"(?:^|,\s*)exactly\s*[.!]?$")

#: Words that ask to leave the subject out ("omit errors", "do not include code"): the opposite of
#: every instruction that keeps a kind of content.
_LEAVE_OUT = (r"\bomit\w*(?! (?:nothing|none)\b)|\bskip(?:ping)?\b(?! (?:nothing|none|no)\b)|\bdiscard\w*|\bdisregard\w*|\bignor(?:e|ing)\b|\bdrop\b(?! (?:nothing|none)\b)|\bthrow (?:away|out)\b|\bget rid of\b|\b" + _REMOVE + r"\b|\bleave (?!nothing\b)(?:\w+ )?out\b|\bleft out\b|\bexclud\w*|"
              r"(?:do not|don't|never|no need to) (?:include|list|mention|record|keep|quote|write|copy)\w*")

#: Words that ask for a count instead of the content ("only give the number of errors").
_COUNT_ONLY = r"\b(?:only|just) (?:\w+ ){0,2}(?:the )?(?:number|count)\b|\bhow many\b"

_LEAVE_OUT_RE = re.compile(_LEAVE_OUT)

VOCABULARY: tuple[Instruction, ...] = (
    Instruction(
        name="user_messages_verbatim", title="user messages verbatim",
        subject=r"\buser(?:'s)? (?:messages?|requests?|words|prompts?|input)|messages? (?:from|of|by|sent by|typed by) "
                r"(?:the )?(?:user|person|human)|what the (?:user|person) (?:said|wrote|typed|asked)|"
                r"\b(?:human|person)(?:'s)? messages?",
        ask=_VERBATIM + r"|\bquot(?:e|es|ed|ing|ations?)\b|\breproduc\w*|\btranscrib\w*|\bcop(?:y|ies)\b|\bpaste\w*",
        section="user_messages",
        opposite=r"paraphras\w*|summar(?:is|iz)\w*|\bbrief\w*|\bsuccinct\w*|\bterse\w*|condens\w*|\bgist\b|\byour own words|shorten\w*|reword\w*|"
                 r"\bcut\b|\btruncat\w*|\bclip\w*|\b(?:first|last|latest|earliest|oldest) (?:\d+ |few )?(?:user )?messages?\b|"
                 r"\bonly (?:the )?(?:first|last|latest)\b|" + _COUNT_ONLY + "|" + _LEAVE_OUT,
        when_asked="every person-typed message, quoted verbatim, one per item",
        otherwise="each message paraphrased (a deterministic rewording in reported speech, not a copy)",
        grader="verbatim_user_messages"),
    Instruction(
        name="next_step_quotes", title="next step with direct quotes",
        subject=r"next step|where (?:you|we) left off|(?:most recent|latest|last) (?:request|message|conversation|"
                r"exchange)|what (?:task )?you were (?:doing|working on)",
        ask=_VERBATIM + r"|\bquot\w*|\bcit(?:e|es|ed|ing)\b|quotation marks", section="next",
        opposite=r"paraphras\w*|summar(?:is|iz)\w*|\byour own words|"
                 r"\b(?:first|earliest|original|initial|oldest) (?:\w+ )?(?:messages?|requests?)\b|\bnot the (?:latest|last|most recent)\b",
        when_asked="the next step quotes the most recent request verbatim",
        otherwise="the next step describes the latest request in its own words, without a quote",
        grader="next_step_quote"),
    Instruction(
        name="code_snippets", title="full code snippets",
        subject=r"\bsnippets?\b|(?<!exit )(?<!error )(?<!status )(?<!return )(?<!response )(?<!zip )\bcode\b(?! (?:reviews?|owners?|freeze)\b)|\bdiffs?\b|\bthe (?:edits?|changes?) (?:themselves|made)",
        ask=r"\binclud\w*|\b(?:full|complete|entire|whole)\b(?= (?:\w+ )?(?:code|snippets?|diffs?|source|files?|contents?|changes?)\b)|"
            r"\bshow\w*|\bquot\w*|\bpaste\w*|\bkeep\w*|\bpreserv\w*|"
            r"\bwith (?:(?:the|their|its|relevant|full|complete)\s+){0,2}(?:code|snippets?|diffs?)\b|\badd\b|\bcopy\b|\breproduc\w*",
        section=None, opposite=r"(?:file )?names? only|only (?:the )?(?:file )?names?|just (?:the )?(?:file )?names?|"
                                + _LEAVE_OUT,
        when_asked="each changed file with what changed (old and new code)",
        otherwise="file names with how they were touched, no code",
        grader="probes"),
    Instruction(
        name="errors_quoted_and_fixed", title="errors quoted, with how they were fixed",
        subject=r"\berrors?\b|\bfailures?\b|\bexceptions?\b|\btracebacks?\b|what went wrong|\bbugs?\b|\bstack ?traces?\b|"
                r"\bdebugging\b(?! (?:dead ends?|steps?|attempts?|approach\w*|paths?|direction|tips?|tools?)\b)",
        ask=_VERBATIM + r"|\bquot\w*|how (?:you |it |they |each |we )?(?:was |were )?(?:fixed|resolved|solved|handled)|"
                        r"\bfix(?:es)?\b|\bresolution\b|\bpaste\w*|\bcop(?:y|ies)\b|"
                        r"how (?:you |it |they |we )?(?:got|get|worked) (?:past|around|over)|\bworkarounds?\b",
        section="errors", opposite=r"\bbrief\w*|summar(?:is|iz)\w*|in general terms|paraphras\w*|" + _COUNT_ONLY + "|"
                                   + _LEAVE_OUT,
        when_asked="the key line of each failing result, quoted, and how it was fixed (or that it is open)",
        otherwise="each error described in a few words (its kind), not quoted, no fix",
        grader="errors_preserved"),
    Instruction(
        name="pending_explicit", title="pending tasks only when explicitly asked",
        subject=r"\bpending\b|\btasks?\b|\btodos?\b|to-do|what (?:is|remains) left|remaining work",
        ask=r"explicitly (?:been )?(?:asked|requested|told|given)|(?:asked|requested|told) (?:you )?(?:to do|for|"
            r"explicitly)|only (?:the )?(?:tasks?|items?|todos?|ones?) (?:the user|you were|that were|you have been)|"
            r"(?:the )?user (?:has |had )?(?:explicitly )?(?:asked|requested)\b|(?:asked|requested) (?:for )?by (?:the )?user|"
            r"(?:still )?open (?:todo|task)s?|not (?:yet )?(?:done|completed|finished)|"
            r"(?:the )?user (?:still )?wants?(?: (?:done|finished|completed))?|still (?:wanted|wants|needs|needed)",
        section="pending", opposite=r"\bany\b|\ball (?:tasks|todos|ideas)|everything mentioned|\bpossible\b|\bever\b|"
                                    r"\binclud\w* (?:\w+ ){0,5}(?:cancel\w*|dropped|abandoned|superseded|withdrawn)",
        when_asked="the open items of the latest todo list (or the earlier summary's), nothing else",
        otherwise="every task ever put on a todo list and not completed, including ones the user dropped",
        grader="no_superseded_work"),
    Instruction(
        name="memory_rules", title="rules of memory files (CLAUDE.md)",
        subject=r"claude\.md|agents\.md|memory files?|(?:project|repository|repo|team|coding) (?:rules|instructions|"
                r"conventions|guidelines)|standing (?:rules|instructions)|house rules",
        ask=_KEEP +
            r"still (?:apply|applies|in force|hold)|\brecord\w*|\bmention\w*|\brestat\w*|\brepeat\w*",
        section=None, opposite=r"\bignor\w*|\bdrop\w*",
        when_asked="the memory files' rules quoted in section 1, carried from summary to summary",
        otherwise="memory-file rules left out (they were a system reminder, not a request)",
        grader="constraints_preserved"),
    Instruction(
        name="failed_approaches", title="approaches that did not work",
        subject=r"approach\w*|attempts?\b|\b(?:tried|attempted)\b|dead ends?|\bruled out\b|"
                r"what did ?n[o']t (?:work|help|pan out|succeed)|\bdebugging\b|\bexploration paths?\b|"
                r"\brejected (?:alternatives|ideas|options|fixes)\b",
        ask=r"did ?n[o']t work|did not work|\bfailed\b|not work\w*|dead ends?|\bruled out\b|\brevert\w*|"
            r"\babandon\w*|(?:are |is )?not (?:be )?(?:re)?tried|(?:is|are)n't (?:re)?tried|not (?:to )?(?:retry|repeat|try)|"
            r"\bwrong\b|\bunsuccessful\b|did ?n[o']t (?:succeed|pan out|help)|\bfruitless\b|\bfell through\b",
        section=None, opposite=r"only (?:what|the ones that) worked|" + _LEAVE_OUT,
        when_asked="what the assistant found did not work, listed as failed in section 5",
        otherwise="dead ends left out (only what is in progress is described)",
        grader="failed_approaches_preserved"),
    Instruction(
        name="identifiers", title="exact identifiers",
        subject=r"identifiers?|function names?|(?:variable|class|method|symbol|setting|key|table|column|branch|"
                r"commit) names?|\bnames of\b|\bsignatures?\b|\bhashes\b|\bids\b|\bpaths?\b|\bversions? numbers?|"
                r"\bnumbers\b|\bvalues\b",
        ask=r"\bexact\w*|verbatim|as (?:they )?(?:appear\w*|written)|\bprecise\w*|unchanged|character[- ]for[- ]character|"
            r"\bspell\w* out|\bliteral\w*|(?:never|not|don't|do not) (?:abbreviat|shorten|truncat|round)\w*|"
            r"in full\b|\b(?:real|actual|original|concrete|specific|full) (?:names?|paths?|values?|identifiers?|numbers?)\b",
        section=None, opposite=r"\bgeneral terms\b|\bgeneri\w*|\bapproximat\w*",
        when_asked="the assistant's findings keep names, paths, numbers and IDs as written",
        otherwise="the findings say 'the function', 'a file', 'a value' instead of the identifiers",
        grader="probes"),
    Instruction(
        name="keep_facts", title="facts the session relied on (tool results, findings)",
        subject=r"\bfindings?\b|\bfacts?\b|what (?:you|the assistant) (?:found|learned|discovered|concluded)|"
                r"tool (?:results?|outputs?)|\b(?:results?|outputs?) of (?:tools?|commands?)|\bmeasurements?\b|\bconclusions?\b|"
                r"\bobservations?\b|\bcommand outputs?\b|"
                r"what (?:you|the assistant) (?:found|learned|discovered) (?:out|along the way)",
        ask=_KEEP +
            r"\brecord\w*|\bdocument\w*|\bnot lose\b|\bsurviv\w*|\bmention\w*|\bnote\w*|\bwrite down\b|"
            r"\bjot\w*|\bsav(?:e|ing)\b|\bhold on to\b",
        section=None, opposite=r"\bdrop\w*|" + _LEAVE_OUT,
        when_asked="the assistant's findings (its own words, the last 16) in section 5, carried forward",
        otherwise="findings left out (the problem-solving section counts the tool calls only)",
        grader="probes"),
    Instruction(
        name="length_limit", title="a length limit",
        subject=r"\bsummary\b|\breply\b|\bresponse\b|\boutput\b|\bit\b|\bwords?\b|\btokens?\b",
        ask=r"(?:under|below|at most|no more than|not more than|fewer than|less than|within|maximum of|max\.?|"
            r"limit(?:ed)?(?: (?:it|this|the summary|the reply|yourself))? to|not (?:to )?exceed(?:ing)?|up to|shorter than)\s+(?:about\s+)?\d[\d,]*\s*"
            r"(?:words?|tokens?|characters?|chars?|lines?)\b",
        when_asked="the summary cut to the limit (the longest sections lose their last items first)",
        otherwise="no limit",
        grader="fits_window"),
    Instruction(
        name="language", title="a language",
        subject=r"\bsummary\b|\breply\b|\brespond\b|\bwrite\b|\banswer\b|\boutput\b|\blanguage\b",
        ask=r"\bin (?:french|german|spanish|japanese|chinese|english|fran[cç]ais|deutsch|espa[nñ]ol)\b|"
            r"language:\s*\w+|same language as the user",
        when_asked="the narration (not the quotes) in that language",
        otherwise="narration in English",
        grader="verbatim_user_messages"),
)

_BY_NAME = {i.name: i for i in VOCABULARY}

#: The narration phrases the reference writes, per language (quotes are never translated).
LANGUAGES: dict[str, dict[str, str]] = {
    "french": {"None.": "Aucun.", "Continue with the most recent request, quoted verbatim:":
               "Poursuivre la demande la plus récente, citée mot pour mot :",
               "Continue with the most recent request:": "Poursuivre la demande la plus récente :",
               "Last assistant message:": "Dernier message de l'assistant :", "Last tool calls:": "Derniers appels d'outils :"},
    "german": {"None.": "Keine.", "Continue with the most recent request, quoted verbatim:":
               "Mit der letzten Anfrage fortfahren, wörtlich zitiert:",
               "Continue with the most recent request:": "Mit der letzten Anfrage fortfahren:",
               "Last assistant message:": "Letzte Nachricht des Assistenten:", "Last tool calls:": "Letzte Werkzeugaufrufe:"},
    "spanish": {"None.": "Ninguno.", "Continue with the most recent request, quoted verbatim:":
                "Continuar con la solicitud más reciente, citada literalmente:",
                "Continue with the most recent request:": "Continuar con la solicitud más reciente:",
                "Last assistant message:": "Último mensaje del asistente:", "Last tool calls:": "Últimas llamadas a herramientas:"},
    "japanese": {"None.": "なし。", "Continue with the most recent request, quoted verbatim:": "最新の依頼を続ける（原文のまま引用）：",
                 "Continue with the most recent request:": "最新の依頼を続ける：",
                 "Last assistant message:": "アシスタントの最後のメッセージ：", "Last tool calls:": "最後のツール呼び出し："},
    "chinese": {"None.": "无。", "Continue with the most recent request, quoted verbatim:": "继续最近的请求（逐字引用）：",
                "Continue with the most recent request:": "继续最近的请求：",
                "Last assistant message:": "助手的最后一条消息：", "Last tool calls:": "最后的工具调用："},
}
_LANGUAGE_NAMES = {"français": "french", "francais": "french", "deutsch": "german", "español": "spanish",
                   "espanol": "spanish"}


@dataclass(frozen=True)
class Sentence:
    """A sentence of the prompt, normalised, with the line it starts on and its section entry."""

    text: str
    line: int
    section: str | None
    #: As written (for display), and whether it is a section entry's title (``6. All user messages:``).
    raw: str = ""
    title: bool = False
    #: Said in the /compact instructions (below ``Additional Instructions:``): the user's own word
    #: for this compaction, followed over the template (see :mod:`.prompt_blocks`).
    custom: bool = False


@dataclass(frozen=True)
class LengthLimit:
    amount: int
    unit: str  # words, tokens, characters, lines
    #: What it limits: ``summary`` (the whole reply), ``section`` (each section on its own) or
    #: ``user_messages`` (each quoted user message, said in section 6's entry).
    scope: str = "summary"

    def __str__(self) -> str:
        return f"{self.amount} {self.unit}" + {"section": " per section", "user_messages": " per user message"}.get(
            self.scope, "")


@dataclass
class Reading:
    """What a prompt asks for: the instructions it gives (by name, with the lines that give them),
    the ones it contradicts, and the length limit and language it sets."""

    asked: dict[str, list[int]] = field(default_factory=dict)
    opposed: dict[str, list[int]] = field(default_factory=dict)
    #: Instructions asked for in general but opposed in their own section (which wins): the lines
    #: that asked.
    overridden: dict[str, list[int]] = field(default_factory=dict)
    limit: LengthLimit | None = None
    language: str | None = None
    #: Instructions asked for only in part (some user messages verbatim, the rest summarised; every
    #: task "including the ones the user cancelled"): read as not asking, the lines that said it.
    partial: dict[str, list[int]] = field(default_factory=dict)
    #: A limit on each item of a section, by section kind (only section 6's messages are modelled).
    item_limits: dict[str, LengthLimit] = field(default_factory=dict)
    #: Lines with a length limit on a part of the summary (one item, a quote, "why each edit
    #: matters"): not the summary's length, and not modelled offline.
    part_limits: list[int] = field(default_factory=list)
    #: Lines that ask to reword the user's requests in section 1 (said in section 1's entry or
    #: outside the section list). Section 6's own wording ("briefly paraphrased", the verbatim ask
    #: removed) is about section 6: a model keeps section 1's requests and constraints as they were.
    requests_reworded: list[int] = field(default_factory=list)
    #: Instructions decided by the /compact instructions over the template: the lines that decided.
    custom_won: dict[str, list[int]] = field(default_factory=dict)
    #: Instructions not asked for whose subject a sentence asks to leave out ("leave out the
    #: errors", "drop the test debugging", "omit them"), not only to shorten: the lines that said it.
    #: A model leaves the subject out altogether (an earlier summary's items of it too), where
    #: "briefly" or "in general terms" only shortens it.
    left_out: dict[str, list[int]] = field(default_factory=dict)

    def __contains__(self, name: str) -> bool:
        if name not in _BY_NAME:
            raise KeyError(f"unknown instruction {name!r}; the vocabulary has: {', '.join(_BY_NAME)}")
        return name in self.asked

    def lines_for(self) -> dict[int, list[str]]:
        """Line number → the instructions (``name``, or ``name (opposite)``) read on it."""
        out: dict[int, list[str]] = {}
        for name, lines in self.asked.items():
            for n in lines:
                out.setdefault(n, []).append(name)
        for name, lines in self.opposed.items():
            for n in lines:
                if name not in out.get(n, []):
                    out.setdefault(n, []).append(f"{name} (opposite)")
        return out


def normalise(text: str) -> str:
    """Lower case, markdown emphasis and code marks dropped, curly quotes straightened."""
    text = text.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')
    text = re.sub(r"[*_`]+", "", text)
    return re.sub(r"\s+", " ", text).strip().lower()


_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+(?=[\"'(\[]?[A-Za-z0-9])")
_ENTRY = re.compile(r"^[ \t]*(?:#{1,6}[ \t]+)?(?:\d{1,2}[.)][ \t]+)(?P<title>[^:\n—–]{3,60}?)[ \t]*"
                    r"(?::|[ \t](?:--?|[–—])[ \t]|[–—]|$)")  # the title ends at a colon, a dash or the line's end
_BULLET_MARK = re.compile(r"^[-*•+]\s+")
_TAG = re.compile(r"^\s*</?(?:summary|analysis)>\s*$")
#: A line that starts something of its own (a bullet, a heading, a tag, a quoted or bracketed line),
#: never the rest of the sentence above it.
_OWN_LINE = re.compile(r"^\s*(?:[-*•+]\s|#{1,6}\s|\[|\d{1,2}[.)]\s|\{[{%#])")
#: The end of a line that ends its sentence (a colon does not: "reply with plain text only:\n an ...").
_ENDS = re.compile(r"[.!?;][\"')\]]*\s*$")


def sentences(prompt: str) -> list[Sentence]:
    """The prompt's sentences with their line numbers (1-based: where the sentence starts) and the
    section entry they are in.

    A numbered line whose title names a section kind (``6. All user messages: ...``) opens that
    section's entry; indented continuation lines stay in it; a blank line, an unindented line or a
    ``<summary>`` tag closes it. A sentence ends at ``.``, ``!``, ``?`` or ``;``, not at a line
    break: a paragraph re-wrapped at another width (an editor's ``gq``, ``fmt``, an indented
    continuation) reads the same. A line that ends without such a mark goes on in the next line
    of the same paragraph, unless that line starts something of its own (a bullet, an entry, a tag).

    The /compact instructions (below ``Additional Instructions:``) are marked ``custom`` and open no
    section entry; a bullet under a lead-in that ends in a colon ("When compacting, drop:") is read
    with it ("when compacting, drop resolved debug output"), shown as written (:mod:`.prompt_blocks`).
    """
    from ..reading.summary import plain_spaces, section_entries, section_kind

    prompt = plain_spaces(prompt)
    custom = custom_lines(prompt.split("\n"))
    # The section list's entries (a renamed one keeps its place's kind; a heading's text below it
    # belongs to it), by 1-based line; other numbered lines are read by _ENTRY as before.
    entries = section_entries(prompt)
    heads = {e.line + 1: e for e in entries}
    spans = {n + 1: e.kind for e in entries for n in range(e.line + 1, e.end)}
    out: list[Sentence] = []
    section: str | None = None
    # The unfinished last sentence of the line above: (text as written, its line, its section).
    open_: tuple[str, int, str | None] | None = None
    # The lead-in the bullets of the current list are read with, and one that may open a list below.
    lead: str | None = None
    pending: str | None = None
    tail = ""

    def read(text: str) -> str:
        return f"{lead} {_BULLET_MARK.sub('', text)}" if lead and text else text

    def flush() -> None:
        nonlocal open_
        if open_ is not None:
            raw, line, kind = open_
            text = normalise(raw)
            if text:
                out.append(Sentence(read(text), line, kind, raw.strip(), custom=line in custom))
            open_ = None

    for number, raw in enumerate(prompt.split("\n"), start=1):
        if not raw.strip() or _TAG.match(raw):
            flush()
            section = lead = None
            continue
        head = heads.get(number)
        entry = None if head is not None or number in custom else _ENTRY.match(raw)
        if head is not None or entry or _OWN_LINE.match(raw) or (number in custom and number - 1 not in custom):
            flush()  # (the /compact instructions start a sentence of their own, with no lead-in)
            if number in custom and number - 1 not in custom:
                pending = lead = None
        if BULLET.match(raw):  # a bullet: read with the lead-in above it, if any
            lead, pending = pending if pending is not None else lead, None
        elif not raw[:1].isspace() or head is not None or entry:
            lead = pending = None
        if head is not None:  # the title itself asks for the section, not for how to write it
            section = head.kind
            out.append(Sentence(normalise(raw[:head.rest]), number, section, raw[:head.rest].strip(), title=True))
            raw = raw[head.rest:]
        elif number in spans:
            if spans[number] != section:
                flush()
            section = spans[number]
        elif entry:
            section = section_kind(normalise(entry.group("title")))
            out.append(Sentence(normalise(entry.group(0)), number, section, entry.group(0).strip(), title=True))
            raw = raw[entry.end():]
        elif not raw[:1].isspace():
            if section is not None:
                flush()
            section = None
        parts = _SENTENCE_END.split(raw.strip())
        # the words a list below may be led by: this line's, and the line above's when this one
        # goes on with its sentence in lower case (a re-wrapped "... thoughts. In\nthe analysis:")
        tail = f"{tail} {raw.strip()}" if open_ is not None and raw.strip()[:1].islower() else raw.strip()
        if open_ is not None:  # the sentence of the line above goes on here
            parts[0] = f"{open_[0].rstrip()} {parts[0]}"
            start, open_ = open_[1], None
        else:
            start = number
        heading = raw.lstrip().startswith("#")  # a Markdown heading is a line of its own
        for i, part in enumerate(parts):
            line = start if i == 0 else number
            if i == len(parts) - 1 and part.strip() and not _ENDS.search(part) and not heading:
                open_ = (part, line, section)
                continue
            text = normalise(part)
            if text:
                out.append(Sentence(read(text), line, section, part.strip(), custom=line in custom))
        pending = lead_in(normalise(tail))  # if it ends in a colon
    flush()
    return out


#: After the number: what it counts is a part of something ("200 characters of it", "2 lines of the
#: output"), or a clause ("in under 15 words why each edit matters").
_PART_OF = re.compile(r"^\s*(?:of|from|per|for each|for every|why|what|how|that|which|each)\b")
#: Before the number, in the same clause: a condition ("verbatim only if shorter than 10 words").
_CONDITION = re.compile(r"\b(?:if|when|whenever|unless|once|where)\b(?:\s+[\w'-]+){0,4}\s*$")
#: Each section on its own.
_PER_SECTION = re.compile(r"\b(?:each|every|per|any) (?:single )?(?:section|part|heading)\b")
#: Each of something else (an item, a message, a file): a limit on items, not on the summary.
_PER_ITEM = re.compile(r"\b(?:each|every|per|any)\b")
#: Each item of section 6 ("keep each item under 30 words", "each message at most 2 lines").
_EACH_MESSAGE = re.compile(r"\b(?:each|every|per) (?:single )?(?:item|message|entry|bullet|one|quote)\b")
#: The whole reply named ("the whole summary", "the entire response").
_WHOLE = re.compile(r"\b(?:whole|entire|total|overall|complete) (?:summary|reply|response|answer|output)\b|"
                    r"\bin total\b|\baltogether\b")


def limit_of(s: Sentence) -> LengthLimit | None:
    """The length limit a sentence sets on the whole summary (or on each section), or None when
    the number it gives is about something else: a part ("up to 200 characters of it"), a clause
    ("in under 15 words why each edit matters"), a condition ("verbatim only if shorter than 10
    words"), each item ("keep each item under 30 words"; in section 6, each user message: scope
    ``user_messages``) or one section's content.

    >>> [limit_of(x) for x in sentences("Keep the summary under 400 words. Keep each section under 50 words.")]
    [LengthLimit(amount=400, unit='words', scope='summary'), LengthLimit(amount=50, unit='words', scope='section')]
    >>> [limit_of(x) for x in sentences("Quote the error (up to 200 characters of it). Keep each item under 30 words.")]
    [None, None]
    """
    for m in _BY_NAME["length_limit"]._ask.finditer(s.text):
        if _negated(s.text, m.start(), m.end()):
            continue
        amount = _LIMIT.search(m.group(0))
        if amount is None:
            continue
        before, after = s.text[:m.start()], s.text[m.end():]
        clause = re.split(r"[,;:()]", before)[-1]
        if _PART_OF.match(after) or _CONDITION.search(clause):
            continue
        whole = bool(_WHOLE.search(s.text))
        if _PER_SECTION.search(s.text) and not whole:
            scope = "section"
        elif not whole and s.section == "user_messages" and _EACH_MESSAGE.search(s.text):
            scope = "user_messages"  # each message cut to the limit: not verbatim any more
        elif not whole and (_PER_ITEM.search(s.text) or s.section is not None):
            continue  # each item, or one section's content: not modelled (shown as not seen offline)
        else:
            scope = "summary"
        unit = amount.group(2).rstrip("s")
        unit = {"char": "character"}.get(unit, unit) + "s"
        return LengthLimit(int(amount.group(1).replace(",", "")), unit, scope)
    return None


_LIMIT = re.compile(r"(\d[\d,]*)\s*(words?|tokens?|characters?|chars?|lines?)\b")
_LANG = re.compile(r"\bin (french|german|spanish|japanese|chinese|english|fran[cç]ais|deutsch|espa[nñ]ol)\b|"
                   r"language:\s*(\w+)")


@functools.lru_cache(maxsize=64)
def read_prompt(prompt: str) -> Reading:
    """What ``prompt`` asks for (see :class:`Reading`).

    >>> r = read_prompt("6. All user messages: list each one verbatim.\\n9. Next step: describe it briefly.")
    >>> "user_messages_verbatim" in r, "next_step_quotes" in r
    (True, False)
    """
    return read_sentences(tuple(sentences(prompt)))


@functools.lru_cache(maxsize=256)
def read_sentences(units: tuple[Sentence, ...]) -> Reading:
    """:func:`read_prompt` over the prompt's sentences (:func:`sentences`): the prompt-change
    coverage note reads a prompt without one of them to see what that sentence does offline."""
    reading = Reading()
    # instruction -> lines of its section that ask / oppose / ask for part and against the rest
    in_section: dict[str, tuple[set[int], set[int], set[int]]] = {}
    in_custom: dict[str, tuple[set[int], set[int], set[int]]] = {}  # the same, said in the /compact instructions
    partly: set[str] = set()  # a section's opposing sentence that is about the subject itself
    for s in units:
        if s.title:
            continue
        for inst in VOCABULARY:
            # Said in the instruction's own section; for one no section owns (code, identifiers,
            # facts, memory rules), said in any section's entry rather than in general.
            scoped = s.section == inst.section if inst.section is not None else s.section is not None
            if inst.asks(s) and inst.name not in ("length_limit", "language") and (inst.against(s) or inst.limited(s)):
                # one sentence asks for part and against the rest ("every task you were ever asked
                # to do, including the cancelled ones"): not what the instruction asks
                reading.partial.setdefault(inst.name, []).append(s.line)
                if scoped:
                    in_section.setdefault(inst.name, (set(), set(), set()))[2].add(s.line)
                if s.custom:
                    in_custom.setdefault(inst.name, (set(), set(), set()))[2].add(s.line)
            elif inst.asks(s):
                if scoped:
                    in_section.setdefault(inst.name, (set(), set(), set()))[0].add(s.line)
                if s.custom:
                    in_custom.setdefault(inst.name, (set(), set(), set()))[0].add(s.line)
                reading.asked.setdefault(inst.name, []).append(s.line)
                if inst.name == "length_limit":
                    limit = limit_of(s)
                    if limit is None:  # a limit on part of the summary: not the summary's length
                        reading.asked["length_limit"].remove(s.line)
                        if not reading.asked["length_limit"]:
                            del reading.asked["length_limit"]
                        reading.part_limits.append(s.line)
                    elif limit.scope == "user_messages":
                        reading.item_limits.setdefault(limit.scope, limit)
                    elif reading.limit is None:
                        reading.limit = limit
                if inst.name == "language" and reading.language is None:
                    m = _LANG.search(s.text)
                    if m:
                        name = (m.group(1) or m.group(2) or "").lower()
                        reading.language = _LANGUAGE_NAMES.get(name, name)
            elif inst.opposes(s):
                if inst.name == "user_messages_verbatim" and s.section in (None, "request"):
                    reading.requests_reworded.append(s.line)
                if scoped:
                    in_section.setdefault(inst.name, (set(), set(), set()))[1].add(s.line)
                    if _names_subject(inst.name, s):
                        partly.add(inst.name)
                if s.custom:
                    in_custom.setdefault(inst.name, (set(), set(), set()))[1].add(s.line)
                reading.opposed.setdefault(inst.name, []).append(s.line)
                if _LEAVE_OUT_RE.search(s.text):
                    reading.left_out.setdefault(inst.name, []).append(s.line)
    # The section's own word wins over a general one: "4. Errors: omit them entirely" is not undone by
    # an analysis bullet about "the errors you ran into" (a model follows the specific instruction);
    # nor is section 3's "include full code snippets" by a general "never include code". Two
    # general sentences, or two sections, that disagree: the one that asks is followed, and the
    # contradiction is named (``contradictions``) as not seen offline.
    # A section that asks for part and against the rest ("quote the first message verbatim;
    # summarise the later ones") asks for it in part only: read as not asking (the graders want all).
    for name, (asks, opposes, mixed) in in_section.items():
        if (opposes or mixed) and not asks and name in reading.asked:
            reading.overridden[name] = reading.asked.pop(name)
        elif asks and _BY_NAME[name].section is not None and (mixed or (opposes and name in partly)):
            reading.partial[name] = sorted(set(reading.partial.get(name, [])) | asks | opposes)
            reading.asked.pop(name, None)
    _follow_custom(reading, in_custom)
    for name in reading.partial:
        reading.asked.pop(name, None)
    for name in [n for n in reading.left_out if n in reading.asked or n in reading.partial]:
        del reading.left_out[name]  # asked for (in part) after all: kept, not left out
    if reading.language == "english":
        reading.language = None
    return reading


def _follow_custom(reading: Reading, in_custom: dict[str, tuple[set[int], set[int], set[int]]]) -> None:
    """The /compact instructions are the user's own word for this compaction, said last: a model
    follows them over the template, section entries included. One that speaks only against an
    instruction ("drop the test debugging", "Discard: dead ends") makes the template's asks
    overridden; one that asks for part only makes it asked in part; one that only asks for it wins
    over the template's word against it. When the /compact instructions disagree among themselves,
    the rules above stand."""
    for name, (asks, opposes, mixed) in in_custom.items():
        if (opposes or mixed) and not asks:
            if name in reading.asked:
                reading.overridden[name] = sorted(set(reading.overridden.get(name, [])) | set(reading.asked.pop(name)))
            reading.partial.pop(name, None)
            if mixed:
                reading.partial[name] = sorted(mixed)
            reading.custom_won[name] = sorted(opposes | mixed)
        elif asks and not (opposes or mixed) and (name in reading.overridden or name in reading.partial):
            reading.overridden.pop(name, None)
            reading.partial.pop(name, None)
            reading.asked[name] = sorted(set(reading.asked.get(name, [])) | asks)
            reading.custom_won[name] = sorted(asks)


def _names_subject(name: str, s: Sentence) -> bool:
    """Whether an opposing sentence of the section is about the section's subject (it names it, or
    speaks of rewording rather than leaving something out): "leave out errors that were fixed",
    "summarise the later ones"; not "do not include tool results"."""
    inst = _BY_NAME[name]
    if inst._subject.search(s.text):
        return True
    return inst._opposite is not None and any(m.span() not in [x.span() for x in _LEAVE_OUT_RE.finditer(s.text)]
                                              for m in inst._opposite.finditer(s.text)
                                              if not _negated(s.text, m.start(), m.end()) and inst.targets(s.text, m))


def sentence_reading(s: Sentence) -> list[str]:
    """The instructions one sentence asks for (``name``) or against (``name (opposite)``); a length
    limit on part of the summary is ``length_limit (part)``."""
    if s.title:
        return []
    out = [i.name if i.name != "length_limit" or limit_of(s) else "length_limit (part)" for i in VOCABULARY if i.asks(s)]
    return out + [f"{i.name} (opposite)" for i in VOCABULARY if i.name not in out and i.opposes(s)]


def instruction(name: str) -> Instruction:
    """The vocabulary entry called ``name``."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"unknown instruction {name!r}; the vocabulary has: {', '.join(_BY_NAME)}") from None
