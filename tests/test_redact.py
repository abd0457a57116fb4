"""Secret redaction: each kind, labels kept, no false positives on ordinary session text."""

from __future__ import annotations

import unittest.mock

import hypothesis
import hypothesis.strategies as st
import pytest

from pytest_ctxeval.core.redact import KINDS, merge_counts, redact, redact_tree

# Shapes only: none of these is a real credential.
CASES = [
    ("anthropic", "key=sk-ant-api03-" + "aB3_-" * 8, "key=[REDACTED:anthropic]"),
    ("anthropic", "sk-ant-admin01-" + "x" * 30, "[REDACTED:anthropic]"),
    ("openai", "OPENAI_API_KEY=sk-proj-" + "Ab1" * 12, "OPENAI_API_KEY=[REDACTED:openai]"),
    ("openai", "sk-" + "A1b2" * 12, "[REDACTED:openai]"),
    ("aws-access-key", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE", "aws_access_key_id = [REDACTED:aws-access-key]"),
    ("aws-secret-key", "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
     "aws_secret_access_key=[REDACTED:aws-secret-key]"),
    ("aws-secret-key", '"SecretAccessKey": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"',
     '"SecretAccessKey": "[REDACTED:aws-secret-key]"'),
    ("github", "token ghp_" + "a1B2" * 9, "token [REDACTED:github]"),
    ("github", "github_pat_11ABCDEFG0" + "x" * 60, "[REDACTED:github]"),
    ("gitlab", "glpat-" + "x1" * 10, "[REDACTED:gitlab]"),
    ("slack", "xoxb-123456789012-abcdefABCDEF", "[REDACTED:slack]"),
    ("google", "AIza" + "Sy" * 17 + "Q", "[REDACTED:google]"),
    ("stripe", "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", "[REDACTED:stripe]"),
    ("jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
     "[REDACTED:jwt]"),
    ("bearer", "curl -H 'Authorization: Bearer abcdef0123456789ABCDEF'",
     "curl -H 'Authorization: Bearer [REDACTED:bearer]'"),
    ("private-key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\nAAAA==\n"
                    "-----END OPENSSH PRIVATE KEY-----\nnext line", "[REDACTED:private-key]\nnext line"),
    ("private-key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\n(truncated)",
     "[REDACTED:private-key](truncated)"),
]


@pytest.mark.parametrize("kind,text,expected", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_each_kind(kind, text, expected):
    out, counts = redact(text)
    assert out == expected
    assert counts == {kind: 1}
    assert kind in KINDS


@pytest.mark.parametrize("text", [
    "def test_ask_anthropic(): pass  # sk-ant is a prefix, not a key",
    "/home/user/projects/spotter/lib/spotter/services/transcript_renderer.ex:281:17",
    "uuid 8463c716-a2ea-4c14-9efa-87158ebd9f20 and sha256 " + "c2ba4b56d349" * 5,
    "toolu_01BYfGNktE4d25hZnxHwFh2s and msg_01FhDY1UiAGiH4aa5pFbzmhL",
    "Use a bearer token from the environment; the Bearer scheme is in RFC 6750.",
    "task-ant-1234, risk-score, desk-" + "a" * 40,
    "[REDACTED_IP] and /home/[USER] stay as their authors wrote them",
    "ghp_short and AKIA_NOT_A_KEY",
    "",
])
def test_ordinary_session_text_is_left_alone(text):
    assert redact(text) == (text, {})


def test_counts_add_up_and_redacting_twice_changes_nothing():
    text = "a sk-ant-api03-" + "k" * 30 + " b AKIAIOSFODNN7EXAMPLE c AKIAIOSFODNN7EXAMPL2 d Bearer " + "t" * 20
    once, counts = redact(text)
    assert counts == {"anthropic": 1, "aws-access-key": 2, "bearer": 1}
    assert redact(once) == (once, {})


def test_tree_redacts_strings_everywhere_but_media_data():
    fake = "sk-ant-api03-" + "q" * 30
    tree = {"turns": [{"user": [{"type": "text", "text": fake},
                                {"type": "image", "source": {"type": "base64", "data": "AKIAIOSFODNN7EXAMPLE" + fake}}]},
                      {"assistant": "", "tools": [{"name": "Bash", "input": {"env": {"KEY": fake}, "n": 3},
                                                   "result": [{"type": "text", "text": f"got {fake}"}]}]}]}
    counts: dict[str, int] = {}
    out = redact_tree(tree, counts)
    assert counts == {"anthropic": 3}
    assert out["turns"][0]["user"][0]["text"] == "[REDACTED:anthropic]"
    assert out["turns"][0]["user"][1] == tree["turns"][0]["user"][1]  # image data untouched
    assert out["turns"][1]["tools"][0]["input"] == {"env": {"KEY": "[REDACTED:anthropic]"}, "n": 3}
    assert merge_counts({"a": 1}, {"a": 2, "b": 1}) == {"a": 3, "b": 1}


# The prefilters skip the full expressions on text that cannot match: each must let through every
# text a full expression matches (built from the patterns' prefixes, look-alikes and filler).
_PIECES = ["sk-", "sk-ant-api03-", "task-", "task_", "akiasia", "İ", "secret_access", "xox", "AKIA", "Asia ", "ghp_", "github_pat_", "glpat-", "xoxb-", "AIza", "eyJ",
           ".eyJ", "Bearer ", "BEARER ", "aws_secret_access_key=", "SECRET_ACCESS_KEY: ", "sk_live_", "rk_test_",
           "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", "…", "...", "a", "Z", "0", "_", "-",
           " ", "\n", "/", "+", "=", ".", "x" * 20, "A1" * 10, "abcdefghij0123456789", "AB12" * 5]


@hypothesis.given(st.lists(st.sampled_from(_PIECES), max_size=25).map("".join))
def test_the_prefilters_pass_every_text_the_patterns_match(text: str) -> None:
    from pytest_ctxeval.core import redact as r

    if r._RE.search(text):
        assert r._may_hold_secret(text)
    # secret_values skips the full expression on the prefilter too: it finds exactly what _RE does
    assert len(r.secret_values(text)) == len(r._RE.findall(text))
    if r._CUT_RE.search(text):
        assert r._CUT_PREFILTER.search(text)
    # The prefilters are tried only where a trigger starts: the same answers as a search of the text,
    # trying each trigger or (past a few) searching from one.
    for pattern in (r._STARTS, r._CUT_PREFILTER):
        expected = r._TRIGGER_RE.search(text.lower()) is not None and pattern.search(text) is not None
        assert r._starts_at_a_trigger(pattern, text) is expected
        with unittest.mock.patch.object(r, "_TRIED_ONE_BY_ONE", 1):
            assert r._starts_at_a_trigger(pattern, text) is expected


_ONE_OF_EACH = {
    "private-key": "-----BEGIN RSA PRIVATE KEY-----\nMIIB", "anthropic": "sk-ant-api03-" + "a" * 30,
    "openai": "sk-proj-" + "a" * 30, "stripe": "sk_live_" + "a" * 24, "aws-access-key": "AKIA" + "A" * 16,
    "aws-secret-key": "aws_secret_access_key = " + "a1/+" * 10, "github": "ghp_" + "a" * 36,
    "gitlab": "glpat-" + "a" * 20, "slack": "xoxb-" + "1" * 12, "google": "AIza" + "a" * 35,
    "jwt": "eyJ" + "a" * 10 + ".eyJ" + "b" * 10 + "." + "c" * 10, "bearer": "Bearer " + "a1" * 10,
}


@pytest.mark.parametrize("kind", KINDS)
def test_the_prefilter_passes_each_kind_after_any_separator(kind: str) -> None:
    from pytest_ctxeval.core import redact as r

    for before in ("", " ", "-", "_x ", "(", "\n", "=", "'"):
        text = before + _ONE_OF_EACH[kind] + " tail"
        assert kind in redact(text)[1], (kind, before)
        assert r._may_hold_secret(text), (kind, before)
        cut = text[: len(before) + 12] + "…"
        if r._CUT_RE.search(cut):
            assert r._CUT_PREFILTER.search(cut), (kind, before)


def test_a_look_alike_skips_the_patterns_and_a_key_does_not() -> None:
    from pytest_ctxeval.core import redact as r

    assert not r._may_hold_secret("the task-runner in Fantasia reads disk-usage")
    assert r._may_hold_secret("the key sk-ant-api03-" + "a" * 30)


@hypothesis.given(st.lists(st.sampled_from(_PIECES + ["sk-ant-api03-" + "a" * 30, "ghp_" + "a" * 36]), max_size=25)
                  .map("".join))
def test_scrub_output_is_the_full_expressions_on_every_text(text: str) -> None:
    """scrub_output skips the patterns on a text without a trigger; the same output as running them."""
    from pytest_ctxeval.core import redact as r

    def by_the_expressions(text: str) -> str:
        text = r._RE.sub(lambda m: r._replace(m, {}, r._VALUE_GROUP, ""), text)
        return r._CUT_RE.sub(lambda m: r._replace(m, {}, r._CUT_VALUE, "cut_"), text)

    assert r._scrub(text, "") == by_the_expressions(text)
