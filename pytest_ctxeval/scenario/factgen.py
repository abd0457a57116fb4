"""Planted-fact scenarios, generated: ``ctxeval facts generate --seed N``.

A generated scenario is a coding session on a small service (reads, edits, test runs, a todo list),
with typed facts planted early — in the user's messages, a memory file (CLAUDE.md shown in a
``<system-reminder>``), tool results (a notes file, a config file, command output) and the
assistant's own findings — then ``rounds`` blocks of work, each ending in a manual ``/compact``, so
every fact must survive ``rounds`` compactions, each of a summary of the one before. ``updates`` of the
facts get a new value in the second block (a user's correction or a changed config), so the old value
must not be carried as current afterwards (``stale_values``).

The same arguments always give the same bytes (one seeded ``random.Random``); other seeds draw other
names and values, so a held-out set is a list of seeds. Compaction-conformance-kit plants 20 canaries, four
each of five types, and compacts 5 times (PEERS.md); the defaults do the same with the kit's five types.
"""

from __future__ import annotations

import random
from typing import Any

import yaml

from ..errors import UsageError
from .planted import FACT_TYPES, PLACES

__all__ = ["generate", "generate_yaml", "DEFAULT_TYPES"]

#: The kit's five types (PEERS.md); ``identifier`` is ours, add it with --types.
DEFAULT_TYPES = ("safety_rule", "constraint", "fact", "goal_state", "preference")

_ADJ = ("amber", "basalt", "cobalt", "dune", "ember", "fjord", "garnet", "harbor", "indigo", "juniper", "kelp",
        "lumen", "maple", "nickel", "onyx", "pine", "quartz", "russet", "sable", "tundra", "umber", "violet",
        "willow", "zephyr")
_NOUN = ("ledger", "relay", "beacon", "vault", "ridge", "harvest", "signal", "anchor", "orbit", "canyon", "meadow",
         "summit", "lantern", "compass", "glacier", "quarry", "thicket", "harbour", "falcon", "otter")
_LIBS = (("httpx", "requests"), ("orjson", "json"), ("structlog", "logging"), ("pydantic", "marshmallow"),
         ("polars", "pandas"), ("tenacity", "backoff"), ("typer", "argparse"), ("ruff", "flake8"))
_SERVICES = ("billing", "search", "payments", "inventory", "notifications", "reports", "accounts", "shipping")


class _Names:
    """Distinct values for one seed: a name or number is never drawn twice."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.used: set[str] = set()

    def _fresh(self, make: Any) -> str:
        for _ in range(1000):
            value = make()
            if value not in self.used:
                self.used.add(value)
                return value
        raise UsageError("ran out of distinct fact values; ask for fewer facts")

    def name(self) -> str:
        return self._fresh(lambda: f"{self.rng.choice(_ADJ)}_{self.rng.choice(_NOUN)}")

    def number(self, lo: int, hi: int) -> str:
        return self._fresh(lambda: str(self.rng.randint(lo, hi)))

    def flag(self) -> str:
        return self._fresh(lambda: f"{self.rng.choice(_ADJ).upper()}_{self.rng.choice(_NOUN).upper()}_"
                                   f"{self.rng.randint(10, 99)}")


def _fact(kind: str, n: _Names, rng: random.Random) -> tuple[str, list[str], Any]:
    """``(sentence, tokens, new_value_maker)`` of one fact of ``kind``. ``new_value_maker()`` gives
    ``(sentence, old_tokens, new_tokens)`` for an update."""
    svc = rng.choice(_SERVICES)
    if kind == "safety_rule":
        db = n.name()
        return (f"Never run migrations against the {db} database without taking a snapshot first", [db],
                lambda: (lambda new: (f"the production database is now {new}, not {db}: never run migrations "
                                      f"against {new} without a snapshot", [db], [new]))(n.name()))
    if kind == "constraint":
        ms = n.number(120, 980)
        return (f"Responses of the {svc} API must stay under {ms} ms at p99", [f"{ms} ms"],
                lambda: (lambda new: (f"the {svc} latency budget is now {new} ms at p99, not {ms} ms",
                                      [ms], [f"{new} ms"]))(n.number(120, 980)))
    if kind == "fact":
        port = n.number(5000, 9899)
        return (f"The {svc} service listens on port {port} in staging", [port],
                lambda: (lambda new: (f"the {svc} service moved: it listens on port {new} in staging now, "
                                      f"no longer {port}", [port], [new]))(n.number(5000, 9899)))
    if kind == "goal_state":
        suite = n.name()
        return (f"Done means the {suite} contract suite passes with zero skipped tests", [suite],
                lambda: (lambda new: (f"done now means the {new} contract suite passes (the {suite} suite is "
                                      f"retired)", [suite], [new]))(n.name()))
    if kind == "preference":
        lib, other = rng.choice(_LIBS)
        tag = n.name()
        return (f"In the {tag} module, use {lib} rather than {other}", [tag, lib],
                lambda: (lambda: (f"in the {tag} module, use {other} after all, not {lib}", [lib], [tag, other]))())
    if kind == "identifier":
        flag = n.flag()
        return (f"The rollout is guarded by the feature flag {flag}", [flag],
                lambda: (lambda new: (f"the feature flag was renamed to {new} (it was {flag})", [flag], [new]))(
                    n.flag()))
    word = n.name()  # a user's own type
    return (f"Remember the {kind.replace('_', ' ')} {word}", [word],
            lambda: (lambda new: (f"the {kind.replace('_', ' ')} is now {new}, not {word}", [word], [new]))(n.name()))


def _tool_block(place_facts: list[str], how: int, seed: int, k: int) -> tuple[str, dict[str, Any], str]:
    """A tool call whose result carries ``place_facts`` among ordinary lines: a notes file, a config
    file or command output (``how`` picks which)."""
    if how == 0:
        body = "\n".join([f"# Service notes ({k})", "", "{{ lorem(words=120, seed='notes-%d-%d') }}" % (seed, k), ""]
                         + [f"- {f}." for f in place_facts]
                         + ["", "{{ lorem(words=160, seed='notes-tail-%d-%d') }}" % (seed, k)])
        return "Read", {"file_path": f"docs/notes/ops-{k}.md"}, body
    if how == 1:
        lines = [f"[service]\nname = \"svc-{k}\"\nworkers = {4 + k}\ntimeout_s = {30 + k}"]
        lines += [f"# {f}." for f in place_facts]
        lines += ["{{ lorem(words=90, seed='cfg-%d-%d') }}" % (seed, k)]
        return "Read", {"file_path": f"config/settings-{k}.toml"}, "\n".join(lines)
    out = ["{{ log(lines=30, seed='ops-%d-%d') }}" % (seed, k)] + [f"NOTE: {f}." for f in place_facts]
    return "Bash", {"command": f"./scripts/ops-status --verbose --section {k}"}, "\n".join(out)


def generate(seed: int, *, rounds: int = 5, types: tuple[str, ...] = DEFAULT_TYPES, per_type: int = 4,
             planted_in: tuple[str, ...] = PLACES, updates: int = 0, name: str | None = None) -> dict[str, Any]:
    """The scenario as a mapping (see :func:`generate_yaml`)."""
    if not 1 <= rounds <= 20:
        raise UsageError(f"--rounds must be from 1 to 20. Current input: {rounds}")
    if not 1 <= per_type <= 10:
        raise UsageError(f"--per-type must be from 1 to 10. Current input: {per_type}")
    bad = [p for p in planted_in if p not in PLACES]
    if bad or not planted_in:
        raise UsageError(f"--planted-in takes some of {', '.join(PLACES)} (comma-separated). Current input: "
                         f"{','.join(planted_in) or '(empty)'}")
    import re

    bad = [t for t in types if not re.fullmatch(r"[a-z][a-z0-9_]{0,39}", t)]
    if bad or not types:
        raise UsageError(f"--types takes fact types ({', '.join(FACT_TYPES)}, or your own lower-case names). "
                         f"Current input: {','.join(types) or '(empty)'}")
    total = len(types) * per_type
    if not 0 <= updates <= total:
        raise UsageError(f"--updates must be from 0 to the number of facts ({total}). Current input: {updates}")
    if updates and rounds < 2:
        raise UsageError("--updates needs at least 2 rounds: the new value comes after the first compaction")
    rng = random.Random(f"ctxeval-facts:{seed}")
    names = _Names(rng)
    facts: list[dict[str, Any]] = []
    planned: list[tuple[Any, ...]] = []  # (fact entry, sentence, place, updater)
    for t in types:
        for i in range(per_type):
            sentence, tokens, updater = _fact(t, names, rng)
            place = planted_in[(len(planned) + seed) % len(planted_in)]
            entry: dict[str, Any] = {"id": f"{t}-{i + 1}", "type": t, "planted": place, "text": sentence,
                                     "tokens": tokens}
            facts.append(entry)
            planned.append((entry, sentence, place, updater))
    updated = sorted(rng.sample(range(len(planned)), updates)) if updates else []

    project = f"{rng.choice(_SERVICES)}-svc"
    turns: list[dict[str, Any]] = []
    turns.append({"user": f"We're hardening the {project} service this week. Start by reading the ops notes and "
                          f"the config, then work through the open todos."})
    turns.append({"assistant": "Setting up the todo list.", "tools": [{"name": "TodoWrite", "input": {"todos": [
        {"content": f"Harden module {m}", "status": "pending", "activeForm": f"Hardening module {m}"}
        for m in range(1, rounds + 1)]}, "result": "Todos have been modified successfully."}]})
    by_place: dict[str, list[tuple[dict[str, Any], str]]] = {p: [] for p in PLACES}
    for entry, sentence, place, _ in planned:
        by_place[place].append((entry, sentence))

    def at(entry: dict[str, Any]) -> None:
        entry["turn"] = len(turns)

    if by_place["memory"]:
        for entry, _ in by_place["memory"]:
            at(entry)
        rules = "\n".join(f"- {s}." for _, s in by_place["memory"])
        turns.append({"user": f"<system-reminder>\nAs you answer the user's questions, you can use the following "
                              f"context:\nContents of /home/dev/{project}/CLAUDE.md (project instructions, checked "
                              f"into the codebase):\n\n# Project rules\n{rules}\n\n      IMPORTANT: this context may "
                              f"or may not be relevant to your tasks. You should not respond to this context unless "
                              f"it is highly relevant to your task.\n</system-reminder>", "meta": True})
    tool_facts = by_place["tool"]
    for k in range(0, len(tool_facts), 3):
        chunk = tool_facts[k:k + 3]
        for entry, _ in chunk:
            at(entry)
        tool, inp, body = _tool_block([s for _, s in chunk], (k // 3 + seed) % 3, seed, k // 3 + 1)
        turns.append({"assistant": f"Reading {inp.get('file_path') or 'the ops status'}.",
                      "tools": [{"name": tool, "input": inp, "result": body}]})
    for _j, (entry, sentence) in enumerate(by_place["user"]):
        at(entry)
        turns.append({"user": rng.choice(("Before you go on: ", "One thing to keep in mind: ", "Note: ", "Also, "))
                      + sentence[0].lower() + sentence[1:] + "."})
        turns.append({"assistant": "Understood, I will keep that in mind."})
    for entry, sentence in by_place["assistant"]:
        at(entry)
        turns.append({"assistant": rng.choice(("From what I have read so far: ", "Worth remembering: ",
                                                "Finding: ")) + sentence + "."})

    for r in range(1, rounds + 1):
        module = f"src/{project.replace('-', '_')}/module_{r}.py"
        if r > 1:
            turns.append({"user": f"Next, module {r}: tighten its error handling and add tests."})
        if r == 2:
            for idx in updated:
                entry, _sentence, place, updater = planned[idx]
                new_sentence, old, new = updater()
                entry["update"] = {"turn": len(turns), "tokens": new, "replaces": old}
                if place == "tool":
                    turns.append({"assistant": "Re-reading the ops notes: they changed since this morning.",
                                  "tools": [{"name": "Read", "input": {"file_path": f"docs/notes/changes-{idx}.md"},
                                             "result": f"# Changed today\n\n- Update: {new_sentence}.\n"}]})
                else:
                    turns.append({"user": f"Change of plan: {new_sentence}."})
                    turns.append({"assistant": "Got it, I will use the new value from now on."})
        turns.append({"assistant": f"Reading {module}.", "tools": [{"name": "Read", "input": {"file_path": module},
                      "result": "{{ python_file(lines=260, seed='facts-%d-%d', name='module_%d') }}" % (seed, r, r)}]})
        turns.append({"assistant": "Running its tests.", "tools": [{"name": "Bash", "input": {
            "command": f"pytest tests/test_module_{r}.py -q"}, "result": "{{ test_output(passed=%d, failed=["
                      "'tests/test_module_%d.py::test_retry_budget'], seed='facts-%d-%d') }}" % (18 + r, r, seed, r)}]})
        turns.append({"assistant": f"test_retry_budget fails in module {r}: the retry loop has no upper bound. "
                                   f"Fixing it.", "tools": [{"name": "Edit", "input": {
                                       "file_path": module, "old_string": "while True:",
                                       "new_string": f"for _attempt in range({3 + r}):"},
                                       "result": f"The file {module} has been updated."}]})
        turns.append({"assistant": "Re-running the tests.", "tools": [{"name": "Bash", "input": {
            "command": f"pytest tests/test_module_{r}.py -q"},
            "result": "{{ test_output(passed=%d, seed='facts-ok-%d-%d') }}" % (19 + r, seed, r)}]})
        turns.append({"assistant": f"Reading tests/test_module_{r}.py to add a case.", "tools": [{"name": "Read",
                      "input": {"file_path": f"tests/test_module_{r}.py"},
                      "result": "{{ python_file(lines=180, seed='facts-t-%d-%d', name='test_module_%d') }}" % (
                          seed, r, r)}]})
        turns.append({"assistant": "Adding a test for the retry bound.", "tools": [{"name": "Edit", "input": {
            "file_path": f"tests/test_module_{r}.py", "old_string": "# end of tests",
            "new_string": "def test_retry_is_bounded():\n    assert run_with_retries(fail_always) is None\n# end of tests"},
            "result": f"The file tests/test_module_{r}.py has been updated."}]})
        turns.append({"assistant": "Updating the todo list.", "tools": [{"name": "TodoWrite", "input": {"todos": [
            {"content": f"Harden module {m}", "status": "completed" if m <= r else "pending",
             "activeForm": f"Hardening module {m}"} for m in range(1, rounds + 1)]},
            "result": "Todos have been modified successfully."}]})
        turns.append({"assistant": f"Module {r} is done: the retry loop is bounded at {3 + r} attempts and tested."})
        turns.append({"compact": True})
    turns.insert(len(turns) - 1, {"user": f"Good. Once all {rounds} modules are done, summarise what changed."})

    touched = [f"src/{project.replace('-', '_')}/module_{r}.py" for r in range(1, rounds + 1)]
    first = planned[0]
    scenario: dict[str, Any] = {
        "name": name or f"facts_seed{seed}",
        "description": (f"Generated by `ctxeval facts generate --seed {seed} --rounds {rounds}`: a coding session "
                        f"with {len(facts)} planted facts ({', '.join(types)}; planted in {', '.join(planted_in)}"
                        f"{f'; {updates} updated' if updates else ''}), then {rounds} rounds of work, each ending "
                        f"in /compact."),
        "context_window": 40000,
        "turns": turns,
        "facts": facts,
        "expect": {
            "intent": f"harden the {project} service",
            "files": touched,
            "probes": [
                {"kind": "recall", "question": f"What did we note about {first[0]['type'].replace('_', ' ')} "
                                               f"'{first[0]['id']}'?", "answer": first[1]},
                {"kind": "artifact", "question": "Which files were edited?", "answer": ", ".join(touched)},
                {"kind": "continuation", "question": "What is left to do?",
                 "answer": f"Summarise what changed once all {rounds} modules are done."},
                {"kind": "decision", "question": "How was test_retry_budget fixed?",
                 "answer": "The retry loop got an upper bound on attempts instead of while True."},
            ],
        },
    }
    return scenario


def generate_yaml(seed: int, **options: Any) -> str:
    """The scenario as YAML text, with a header comment naming the command that made it."""
    data = generate(seed, **options)
    head = ("# Generated by ctxeval facts generate (pytest_ctxeval/scenario/factgen.py); the same seed and options\n"
            "# always give the same file. Facts: see docs/facts.md.\n")
    return head + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=110, default_flow_style=False)
