"""The planted-fact graders (graders/planted.py): each passes a good summary and fails a bad one,
naming the fact, its type, the round and the place."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_ctxeval.grading import CompactionCase
from pytest_ctxeval.core.messages import AttachmentMessage
from pytest_ctxeval.scenario.planted import PlantedFact, has_token, survival, bars_of
from pytest_ctxeval.scenario.schema import Expectations

PORT_RULE = "The billing service listens on port 8080 in staging"
SAFETY = "Never run migrations against the amber_ledger database without a snapshot"


def facts(*items: dict[str, Any]) -> list[PlantedFact]:
    return [PlantedFact(**i) for i in items]


def session(kit) -> list[Any]:
    return [
        kit.user("Harden the billing service."),
        kit.meta("<system-reminder>\nContents of /srv/CLAUDE.md (project instructions):\n\n# Rules\n"
                 f"- {SAFETY}\n</system-reminder>"),
        *kit.tool("Read", {"file_path": "config/billing.toml"}, f"[server]\nworkers = 4\n# {PORT_RULE}\n"),
        kit.say("Finding: done means the garnet_signal suite passes with zero skips."),
        kit.user("Use httpx rather than requests in the billing client."),
    ]


FACTS = [
    {"id": "db", "type": "safety_rule", "planted": "memory", "tokens": ["amber_ledger"]},
    {"id": "port", "type": "fact", "planted": "tool", "tokens": ["8080"]},
    {"id": "goal", "type": "goal_state", "planted": "assistant", "tokens": ["garnet_signal"]},
    {"id": "lib", "type": "preference", "planted": "user", "tokens": ["httpx"]},
]


def case_for(kit, messages, summary: str, planted: list[PlantedFact] = (), *, index: int = 1, **kw: Any) -> CompactionCase:
    case = kit.case(messages, summary, post_messages=[kit.boundary("manual"), kit.summary_msg(summary)], **kw)
    case.facts = list(planted)
    case.index = index
    return case


def test_tokens_match_whole_words_case_insensitively() -> None:
    assert has_token("8080", "port 8080.") and has_token("Amber_Ledger", "the amber_ledger db")
    assert not has_token("8080", "port 18080") and not has_token("ledger", "amber_ledgers")
    assert has_token("900 ms", "under 900\n ms")


def test_facts_survive_passes_when_every_planted_fact_is_held(kit, grade) -> None:
    msgs = session(kit)
    good = kit.summary({"request": f"Rules: {SAFETY}. Port 8080. Goal: garnet_signal passes. Prefer httpx.",
                        "user_messages": '- "Harden the billing service."'})
    v = grade("facts_survive", case_for(kit, msgs, good, facts(*FACTS)))
    assert v.status == "pass", v.reasons
    assert "4/4 planted facts held" in v.reasons[0]
    assert v.evidence["survival"]["types"]["safety_rule"]["curve"] == [1.0]


def test_facts_survive_fails_naming_fact_type_round_and_place(kit, grade) -> None:
    msgs = session(kit)
    bad = kit.summary({"request": "Port 8080. Goal: garnet_signal. Prefer httpx."})  # the safety rule is gone
    v = grade("facts_survive", case_for(kit, msgs, bad, facts(*FACTS), index=3))
    assert v.status == "fail"
    (reason, *rest) = v.reasons
    assert "round 3" in reason and "safety_rule 'db'" in reason and "a memory file" in reason
    assert "'amber_ledger'" in reason and "0/1 held" in reason
    assert v.evidence["missing"] == ["db"]


def test_a_lost_fact_of_a_type_without_a_bar_is_reported_not_failed(kit, grade) -> None:
    msgs = session(kit)
    summary = kit.summary({"request": f"{SAFETY}. Goal garnet_signal. Prefer httpx."})  # the port is lost
    v = grade("facts_survive", case_for(kit, msgs, summary, facts(*FACTS)))
    assert v.status == "pass" and "lost (below no bar): fact 'port'" in v.reasons[0]
    # A bar in expect.survival gates it, and the reason names the tool call it came from.
    v = grade("facts_survive", case_for(kit, msgs, summary, facts(*FACTS), expect={"survival": {"fact": 1.0}}))
    assert v.status == "fail"
    assert "fact 'port' planted in a tool result (Read config/billing.toml, message 4)" in v.reasons[0]


def test_facts_not_planted_yet_are_not_counted(kit, grade) -> None:
    msgs = session(kit)[:1]
    v = grade("facts_survive", case_for(kit, msgs, kit.summary({"request": "Harden billing."}), facts(*FACTS)))
    assert v.status == "n/a" and "none of the 4 facts is planted yet" in v.reasons[0]
    # A fact planted in another place than the scenario says is not counted as planted there.
    wrong = facts({"type": "fact", "planted": "user", "tokens": ["8080"]})
    v = grade("facts_survive", case_for(kit, session(kit), kit.summary({"request": "x"}), wrong))
    assert v.status == "n/a"


def test_survival_curves_and_the_cliff_round(kit) -> None:
    msgs = session(kit)
    planted = facts(*FACTS)
    keep_all = kit.summary({"request": f"{SAFETY}. 8080 garnet_signal httpx"})
    drop_rule = kit.summary({"request": "8080 garnet_signal httpx"})
    cases = [case_for(kit, msgs, s, planted, index=i) for i, s in enumerate((keep_all, keep_all, drop_rule), 1)]
    curves = survival(planted, cases, bars_of(Expectations()))
    assert curves["rounds"] == [1, 2, 3]
    assert curves["types"]["safety_rule"] == {"bar": 1.0, "curve": [1.0, 1.0, 0.0], "held": [1, 1, 0],
                                              "planted": [1, 1, 1], "cliff": 3}
    assert curves["types"]["fact"]["cliff"] is None  # no bar


UPDATE = {"id": "port", "type": "fact", "planted": "user", "tokens": ["8080"],
          "update": {"tokens": ["9090"]}}


def updated_session(kit) -> list[Any]:
    return [kit.user("The billing API listens on port 8080; point the client at it."),
            *kit.tool("Bash", {"command": "curl localhost:8080/health"}, "ok"),
            kit.user("No, use port 9090: 8080 is the old gateway."),
            kit.say("Switching the client to 9090.")]


@pytest.mark.parametrize("summary_bodies", [
    {"current": "The client points at port 9090 (was 8080, now 9090)."},
    {"current": "The client points at port 9090.", "user_messages":
        '- "The billing API listens on port 8080; point the client at it."\n- "No, use port 9090: 8080 is the old gateway."'},
    {"request": 'The user first asked: "The billing API listens on port 8080; point the client at it."\n'
                'Later requests and corrections, oldest first:\n- "No, use port 9090: 8080 is the old gateway."'},
], ids=["marked-replaced", "verbatim-in-section-6", "quote-then-correction"])
def test_stale_values_passes_an_old_value_marked_as_replaced(kit, grade, summary_bodies) -> None:
    msgs = updated_session(kit)
    v = grade("stale_values", case_for(kit, msgs, kit.summary(summary_bodies), facts(UPDATE)))
    assert v.status == "pass", v.reasons
    v = grade("facts_survive", case_for(kit, msgs, kit.summary(summary_bodies), facts(UPDATE)))
    assert v.status == "pass" and "1/1" in v.reasons[0]  # the held value is the new one


def test_stale_values_fails_an_old_value_stated_as_current_with_its_place(kit, grade) -> None:
    msgs = updated_session(kit)
    bad = kit.summary({"current": "The client talks to the billing API on port 8080.",
                       "next": "Run the client against port 8080."})
    v = grade("stale_values", case_for(kit, msgs, bad, facts(UPDATE), index=2))
    assert v.status == "fail"
    assert "round 2: fact 'port' was updated to '9090' (message 4)" in v.reasons[0]
    assert "section 8 'Current Work' (summary line" in v.reasons[0] and "port 8080" in v.reasons[0]
    # A quote of the old request in section 6 is history, unless the new value is nowhere.
    quoted = kit.summary({"user_messages": '- "The billing API listens on port 8080; point the client at it."'})
    v = grade("stale_values", case_for(kit, msgs, quoted, facts(UPDATE)))
    assert v.status == "fail" and "new value '9090' is nowhere" in v.reasons[0]


def test_stale_values_is_na_before_the_update(kit, grade) -> None:
    msgs = updated_session(kit)[:2]
    v = grade("stale_values", case_for(kit, msgs, kit.summary({"current": "port 8080"}), facts(UPDATE)))
    assert v.status == "n/a"


def test_stale_values_checks_messages_the_compaction_kept(kit, grade) -> None:
    msgs = updated_session(kit)
    summary = "Summary: the client was being pointed at the billing API."
    written = kit.user("Context: the billing API is on port 8080.")
    case = case_for(kit, msgs, summary, facts(UPDATE))
    case.post_messages = [kit.boundary("manual"), kit.summary_msg(summary), written]
    v = grade("stale_values", case)
    assert v.status == "fail" and "a message the compaction wrote (post-compact message 3)" in v.reasons[0]
    # The conversation kept as it was, update included, is not stale.
    case = case_for(kit, msgs, summary, facts(UPDATE))
    case.post_messages = [kit.boundary("manual"), kit.summary_msg(summary), *msgs[2:]]
    assert grade("stale_values", case).status == "pass"


def big_session(kit, n: int = 12) -> list[Any]:
    out = [kit.user("Read the logs and tell me what broke.")]
    for i in range(n):
        out += kit.tool("Bash", {"command": f"tail -n 200 /var/log/app-{i}.log"}, ("line of log output " * 60))
    return out


def test_compresses_passes_a_summary_and_fails_one_that_grows_with_both_sizes(kit, grade) -> None:
    msgs = big_session(kit)
    v = grade("compresses", case_for(kit, msgs, "The logs show a timeout in app-3."))
    assert v.status == "pass" and "tokens replaced by" in v.reasons[0]
    bloated = "\n".join("Log said: " + "line of log output " * 60 for _ in range(14))
    v = grade("compresses", case_for(kit, msgs, bloated, index=2))
    assert v.status == "fail"
    assert v.reasons[0].startswith("round 2: the compaction replaced ")
    assert v.evidence["produced"] > v.evidence["replaced"] and "not under 0.5x" in v.reasons[0]


def test_compresses_share_and_floor_come_from_expect(kit, grade) -> None:
    msgs = big_session(kit)
    half = "\n".join("Log said: " + "line of log output " * 60 for _ in range(5))
    assert grade("compresses", case_for(kit, msgs, half)).status == "pass"
    assert grade("compresses", case_for(kit, msgs, half, expect={"compression": {"share": 0.2}})).status == "fail"
    small = big_session(kit, 1)
    v = grade("compresses", case_for(kit, small, "x " * 400))
    assert v.status == "n/a" and "under the 1,000 the gate applies from" in v.reasons[0]


def test_compresses_counts_kept_messages_and_restored_files_on_neither_side(kit, grade) -> None:
    msgs = big_session(kit)
    summary = "The logs show a timeout."
    restored = AttachmentMessage(uuid="att-1", attachment_type="file", path="/var/log/app-0.log",
                                 content="Contents of /var/log/app-0.log as last read before the compaction:\n"
                                         + "line of log output " * 60)
    case = case_for(kit, msgs, summary)
    case.post_messages = [kit.boundary("manual"), kit.summary_msg(summary), restored, *msgs[-6:]]
    v = grade("compresses", case)
    assert v.status == "pass", v.reasons
    assert v.evidence["carried"] > 0 and "files attached again" in v.reasons[0]


def test_the_scenario_schema_names_the_field_of_a_bad_fact(tmp_path) -> None:
    from pytest_ctxeval.errors import ScenarioError
    from pytest_ctxeval.scenario.schema import load_scenario

    cases = {
        "planted: chat": "facts[0].planted: Input should be 'user', 'memory', 'tool' or 'assistant'",
        "tokens: []": "facts[0].tokens: List should have at least 1 item",
        "type: Safety Rule": "facts[0].type: a fact type is one of safety_rule",
        "colour: red": "facts[0].colour: unknown field",
    }
    for line, message in cases.items():
        base = {"type": "fact", "planted": "user", "tokens": "[x1]"}
        key = line.split(":")[0]
        base[key] = line.split(": ", 1)[1]
        body = "\n".join(f"    {k}: {v}" for k, v in base.items())
        path = tmp_path / "s.yaml"
        path.write_text(f"turns:\n  - user: hi\nfacts:\n  -\n{body}\n")
        with pytest.raises(ScenarioError) as err:
            load_scenario(path)
        assert message in str(err.value) and "s.yaml:" in str(err.value), str(err.value)
    path.write_text("turns:\n  - user: hi\nexpect:\n  survival: {safety_rule: 1.5}\n")
    with pytest.raises(ScenarioError, match=r"survival.safety_rule: a bar is a share from 0 to 1"):
        load_scenario(path)
    path.write_text("turns:\n  - user: hi\nfacts:\n  - {type: fact, planted: user, tokens: [a], turn: 4}\n")
    with pytest.raises(ScenarioError, match=r"facts\[0\].turn: 4 is not a turn"):
        load_scenario(path)


def test_compresses_passes_every_real_compaction_of_the_corpus(registry) -> None:
    """No false alarm on Claude Code's own compactions: each replaced far more than its summary."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from shared_paths import CORPUS_DIR as CORPUS
    from pytest_ctxeval.grading.registry import cases_from_transcript
    from pytest_ctxeval.transcript import read_transcript

    files = sorted(CORPUS.glob("*.jsonl")) if CORPUS.is_dir() else []
    if not files:
        pytest.skip(f"the shared corpus is not at {CORPUS} (set CTXEVAL_SHARED)")
    graded = 0
    for path in files:
        for case in cases_from_transcript(read_transcript(path)):
            (v,) = registry.run(case, [registry.get("compresses")])
            assert v.status in ("pass", "n/a"), (path.name, case.index, v.reasons)
            graded += v.status == "pass"
    assert graded >= 10


def test_a_fact_never_planted_where_the_scenario_says_is_reported(kit, grade) -> None:
    msgs = session(kit)
    planted = facts(*FACTS, {"id": "ghost", "type": "fact", "planted": "tool", "tokens": ["zz_never_seen"]})
    summary = kit.summary({"request": f"{SAFETY}. 8080 garnet_signal httpx"})
    v = grade("facts_survive", case_for(kit, msgs, summary, planted))
    assert v.status == "pass" and v.evidence["not_planted"] == ["ghost"]
    assert "1 fact not planted before any compaction" in v.reasons[1] and "fact 'ghost' (a tool result)" in v.reasons[1]
