"""Review 7: a lookup the shell refused as typed, then fixed, is an error the summary keeps.

A multi-line lookup script (``cd``, ``echo``, ``grep`` lines) whose ``grep --include=*.cs`` zsh refused
(``no matches found``: the glob is unquoted, so grep never ran), then run again with the glob quoted.
It is no probe: nothing was looked up, and a real session (monodreams 2.1.183) made the same
mistake again right after its compaction. The refusal sits after the script's echo output, not on
its first line. Hand-built in words written for the test; each rule passes a good summary and
fails a defective one with a reason that names the failing part."""

from __future__ import annotations

import pytest

SCRIPT = ("cd /srv/orchard/app\necho \"=== Tree locations ===\"\ngrep -rl \"class TreeNode\" --include={glob} .\n"
          "echo \"\"\necho \"=== Leaf builders ===\"\ngrep -rl \"LeafBuilder\" --include={glob} src | sort")


def _case(kit, errors: str, *, refusal: str = "(eval):3: no matches found: --include=*.kt",
          glob: str = "*.kt", fixed: str = '"*.kt"', worked: bool = True):
    messages = [kit.user("where do TreeNode and the leaf builders live?"),
                *kit.tool("Bash", {"command": SCRIPT.format(glob=glob)},
                          f"Exit code 1\n=== Tree locations ===\n{refusal}", is_error=True)]
    if worked:
        messages += kit.tool("Bash", {"command": SCRIPT.format(glob=fixed)},
                             "=== Tree locations ===\nsrc/tree/TreeNode.kt\n\n=== Leaf builders ===\nsrc/leaf/Builder.kt")
    messages.append(kit.say("TreeNode is in src/tree/TreeNode.kt; the leaf builders in src/leaf/."))
    bodies = {k: "x" for k in kit.SECTION_KINDS}
    bodies["errors"] = errors
    return kit.case(messages, kit.summary(bodies))


def test_a_lookup_refused_as_typed_then_fixed_is_an_error_the_summary_keeps(grade, kit):
    good = grade("errors_preserved", _case(kit, "- zsh: `no matches found: --include=*.kt` (unquoted glob); "
                                                "quoted it"))
    assert good.status == "pass", good.reasons
    bad = grade("errors_preserved", _case(kit, "- None."))
    assert bad.status == "fail", bad.reasons
    [reason] = bad.reasons
    # named from the script's line the error names (--include), not its `cd` line
    assert reason.startswith('error line from a failing Bash result of `… grep -rl "class TreeNode" --include=*.kt')
    assert reason.endswith('): "no matches found: --include=*.kt"'), reason


@pytest.mark.parametrize("case", [
    # never fixed: nothing was worked around, so no lesson is shown
    {"worked": False},
    # zsh's unmatched glob in a path is an answer: there are no such files
    {"refusal": "zsh:1: no matches found: src/*.kt", "glob": "src/*.kt", "fixed": "src/"},
    # a lookup's program that is not installed stays a probe
    {"refusal": "grep: command not found"},
], ids=["not-fixed", "glob-in-a-path", "program-not-installed"])
def test_a_lookup_that_was_answered_or_not_fixed_is_still_a_probe(grade, kit, case):
    verdict = grade("errors_preserved", _case(kit, "- None.", **case))
    assert verdict.status == "n/a", verdict.reasons
    assert "probe that found nothing" in verdict.reasons[0]
