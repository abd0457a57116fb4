"""What the reference summary does with and without each instruction, on one small session (the
scenario-level regressions are in test_prompt_regression.py), including the two instructions the
built-in prompt does not give: a length limit and a language."""

from __future__ import annotations

from pytest_ctxeval.engine.prompt import PromptSet
from pytest_ctxeval.llm.summary_text import FAILED_HEADER, FINDINGS_HEADER, RULES_HEADER
from pytest_ctxeval.llm.reference import write_summary
from pytest_ctxeval.llm.rewording import PARAPHRASE_PREFIX, paraphrase
from pytest_ctxeval.core.messages import AssistantMessage, ToolResultBlock, ToolUseBlock, UserMessage, to_api
from pytest_ctxeval.reading.summary import format_compact_summary, parse_summary

from test_reference import MEMORY, say, user

REQUEST = "Please fix the flaky checkout test in tests/test_cart.py, and don't touch my fixtures."
LAST = "Now make coupons case-insensitive in src/shop/coupons.py"


def session() -> list:
    edit = ToolUseBlock(id="toolu_e1", name="Edit", input={"file_path": "src/shop/coupons.py",
                                                           "old_string": "return COUPONS[code]",
                                                           "new_string": "return COUPONS.get(code.upper())"})
    run = ToolUseBlock(id="toolu_b1", name="Bash", input={"command": "pytest -q tests/test_cart.py"})
    return [user(REQUEST), user(MEMORY, is_meta=True),
            AssistantMessage(uuid="a-run", content=[run]),
            UserMessage(uuid="u-res", content=[ToolResultBlock(tool_use_id="toolu_b1", is_error=True,
                                                                content="E   KeyError: 'coupon:SUMMER24'")]),
            say("coupons.get(key) did not fix it: the discount is not applied. Reverting."), user("go on"),
            say("The cache key in src/shop/cache.py is built from COUPON_PREFIX + code, 412 misses a minute."),
            AssistantMessage(uuid="a-edit", content=[edit]),
            UserMessage(uuid="u-edit", content=[ToolResultBlock(tool_use_id="toolu_e1", content="updated")]),
            user(LAST)]


def summarise(prompt: str) -> str:
    return format_compact_summary(write_summary(to_api(session()) + [{"role": "user", "content": prompt}]))


BUILTIN = PromptSet().render_compact()


def test_the_builtin_prompt_gets_every_behaviour() -> None:
    s = summarise(BUILTIN)
    assert f'"{REQUEST}"' in parse_summary(s).get("user_messages").body
    assert f'quoted verbatim: "{LAST}"' in s
    assert "changed `return COUPONS[code]` to `return COUPONS.get(code.upper())`" in s
    assert "failed: E   KeyError: 'coupon:SUMMER24' — still open" in s or "KeyError: 'coupon:SUMMER24'" in s
    assert RULES_HEADER in s and FAILED_HEADER in s and FINDINGS_HEADER in s
    assert "COUPON_PREFIX" in s and "412 misses" in s


def _without(*sentences: str) -> str:
    text = BUILTIN
    for sentence in sentences:
        assert sentence in text
        text = text.replace(sentence, "")
    return text


def test_without_the_verbatim_rule_user_messages_are_paraphrased_not_copied() -> None:
    s = summarise(_without(" verbatim,"))
    body = parse_summary(s).get("user_messages").body
    assert REQUEST not in body and paraphrase(REQUEST) in body
    assert paraphrase(REQUEST) == ("The user asked the assistant to fix the flaky checkout test in tests/test_cart.py, "
                                   "and do not touch their fixtures.")
    assert paraphrase(paraphrase(REQUEST)) == paraphrase(REQUEST)  # an earlier summary's is not reworded twice
    assert paraphrase(REQUEST).startswith(PARAPHRASE_PREFIX)


def test_without_the_quote_rule_the_next_step_quotes_nothing() -> None:
    s = summarise(_without(" include direct quotes from the most recent conversation showing exactly what task you "
                           "were working on and where you left off. This should be verbatim to ensure there's no drift "
                           "in task interpretation."))
    nxt = parse_summary(s).get("next").body
    assert '"' not in nxt and "Continue with the most recent request:" in nxt


def test_without_snippets_files_are_names_only() -> None:
    s = summarise(_without(" include full code snippets where applicable,", " Include file names and code snippets "
                                                                          "where applicable."))
    assert "src/shop/coupons.py — edited" in s and "COUPONS.get" not in parse_summary(s).get("files").body


def test_without_the_error_rule_errors_are_named_not_quoted() -> None:
    s = summarise(_without(" and how you fixed it (or that it is still open). Quote the key error line exactly.",
                           ", and the errors you ran into and how you fixed them"))
    errors = parse_summary(s).get("errors").body
    assert "Bash (pytest -q tests/test_cart.py) failed with a KeyError" in errors and "SUMMER24" not in errors


def test_without_rules_dead_ends_facts_or_identifiers() -> None:
    assert RULES_HEADER not in summarise(_without(" Keep the rules of memory files (CLAUDE.md) that still apply."))
    assert FAILED_HEADER not in summarise(_without(" Record the approaches that did not work, so they are not tried "
                                                   "again."))
    assert FINDINGS_HEADER not in summarise(_without(" Keep the facts you found along the way (from tool results and "
                                                     "your own findings)."))
    vague = parse_summary(summarise(_without(" Write identifiers (names, paths, numbers) exactly as they appear.")))
    body = vague.get("problem").body
    assert FINDINGS_HEADER in body and "COUPON_PREFIX" not in body and "a name" in body and "a file" in body


def test_a_length_limit_shortens_the_summary_to_fit() -> None:
    full = summarise(BUILTIN)
    limited = summarise(BUILTIN + "\n\nKeep the summary under 150 words.")
    assert len(limited.split()) <= 150 + 10  # the "Summary:" framing aside
    assert len(limited.split()) < len(full.split())
    assert len(parse_summary(limited).sections) == 9  # every section keeps its title


def test_a_language_translates_the_narration_and_leaves_quotes_alone() -> None:
    s = summarise(BUILTIN + "\n\nWrite the summary in French.")
    assert f'Poursuivre la demande la plus récente, citée mot pour mot : "{LAST}"' in s
    assert f'"{REQUEST}"' in s  # quotes are never translated


def test_other_compactors_prompts_keep_every_behaviour() -> None:
    """A prompt that asks for another compactor's sections (Codex's constraints, opencode's
    important details) is not read for instructions: it gets what the reference always wrote."""
    s = write_summary(to_api(session()) + [{"role": "user", "content": "1. Goal: the aim.\n2. Constraints: the rules.\n"
                                                                      "3. All user messages: list them.\n"
                                                                      "4. Next step: what comes next."}])
    assert f'"{REQUEST}"' in s and f'"{LAST}"' in s


def test_a_claude_code_prompt_without_tags_is_read_for_its_instructions() -> None:
    """The <analysis>/<summary> tags are optional to a model: a prompt that lists Claude Code's
    sections without them still has its instructions followed (the summary has no tags either)."""
    untagged = "\n".join(l for l in BUILTIN.split("\n") if "<analysis>" not in l and "<summary>" not in l
                         and "</analysis>" not in l and "</summary>" not in l)
    s = write_summary(to_api(session()) + [{"role": "user", "content": untagged}])
    assert "<summary>" not in s and f'"{REQUEST}"' in s  # as the tagged prompt: verbatim
    weak = untagged.replace("List ALL user messages that are not tool results, verbatim, one per item.",
                            "Each user message, briefly paraphrased.")
    body = parse_summary(write_summary(to_api(session()) + [{"role": "user", "content": weak}])).get("user_messages").body
    assert REQUEST not in body and paraphrase(REQUEST) in body


def test_a_language_never_rewrites_a_quote_that_looks_like_narration() -> None:
    messages = to_api([user("None."), say("Nothing to do then."), user(LAST)])
    s = format_compact_summary(write_summary(messages + [{"role": "user", "content": BUILTIN + "\n\nRespond in German."}]))
    assert '- "None."' in parse_summary(s).get("user_messages").body
    assert "Mit der letzten Anfrage fortfahren, wörtlich zitiert:" in s
