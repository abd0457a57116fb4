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
    return kit.case(messages, kit.summary_of(errors=errors))


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


# -- a build whose exit code a pipe hid ------------------------------------------------------------
# `dotnet build | tail -25` exits 0 (tail's status), so its result is not marked as an error; its
# output reports a compile error all the same (review 7, A2: Claude Code runs builds this way).

BUILD_OUT = ("/src/orchard/Ui/Panel.cs(115,39): error CS1736: Default parameter value for 'target' must be a "
             "compile-time constant [/src/orchard/Ui/Ui.csproj]\n"
             "/home/u/.nuget/mgcb/Content.targets(155,5): error MSB3073: The command \"mgcb\" exited with code 1.\n"
             "    0 Warning(s)\n    2 Error(s)\n")


def _build_case(kit, errors: str, *, command: str = "cd /src/orchard\ndotnet build Ui/Ui.csproj -v q 2>&1 | tail -25",
                output: str = BUILD_OUT):
    messages = [kit.user("make the panel take a render target"),
                *kit.tool("Bash", {"command": command}, output),
                kit.say("The default must be a constant; making it nullable."),
                *kit.tool("Bash", {"command": "dotnet build Ui/Ui.csproj -v q 2>&1 | tail -5"},
                          "    0 Warning(s)\n    0 Error(s)\n")]
    return kit.case(messages, kit.summary_of(errors=errors))


def test_a_build_that_printed_compile_errors_is_an_error_though_it_exited_0(grade, kit):
    good = grade("errors_preserved", _build_case(kit, "- CS1736 in Panel.cs: a default parameter value must be a "
                                                      "compile-time constant; made it nullable"))
    assert good.status == "pass", good.reasons
    bad = grade("errors_preserved", _build_case(kit, "- None."))
    assert bad.status == "fail", bad.reasons
    [reason] = bad.reasons
    # named by the build (not the script's `cd` line), said why it counts, and keyed on the C# error,
    # not on MSBuild's wrapper line that follows it
    assert reason.startswith("error line from a failing Bash build of `dotnet build Ui/Ui.csproj -v q 2>&1 | tail -25` "
                             "(it exited 0, its output reports compile errors) is not in section 4"), reason
    assert "error CS1736" in reason and "MSB3073" not in reason


@pytest.mark.parametrize("command, output", [
    ("dotnet build -v q 2>&1 | tail -5", "/src/Ui/Panel.cs(12,3): warning CS0168: unused\n    0 Error(s)\n"),
    ("cat build.log | tail -20", BUILD_OUT),                      # a log read back, not a build
    ("grep -rn 'error CS' docs/ | head", BUILD_OUT),
], ids=["warnings-only", "log-read-back", "grep"])
def test_a_build_without_compile_errors_or_not_a_build_is_no_error(grade, kit, command, output):
    verdict = grade("errors_preserved", _build_case(kit, "- None.", command=command, output=output))
    assert verdict.status == "n/a", verdict.reasons


@pytest.mark.parametrize("command, line", [
    ("npx tsc --noEmit 2>&1 | head -20", "src/app.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'."),
    ("pnpm --filter web build 2>&1 | tail -30", "src/app.ts:3:7 - error TS2322: Type 'string' is not assignable."),
    ("cargo build 2>&1 | tail -20", "error[E0308]: mismatched types\n --> src/main.rs:4:18"),
    ("make 2>&1 | tail", "src/io.c:41:9: error: 'buf' undeclared (first use in this function)"),
], ids=["tsc", "tsc-via-pnpm", "rustc", "gcc"])
def test_compile_errors_of_other_compilers(command, line):
    from pytest_ctxeval.reading.session_facts import build_error_line, failed_build

    assert failed_build(command, f"building...\n{line}\n")
    assert build_error_line(f"building...\n{line}\n") == line.splitlines()[0]


# -- a message kept but for an acknowledgement --------------------------------------------------------
# "this is good. commit and push the plan, then open a PR" quoted without "this is good.": all it asks
# is kept. last_request_intact accepted it; verbatim_user_messages read it as lost (review 7, B2).

ACK = "this is good. commit and push the release plan, then open a PR against main"


def _ack_case(kit, quoted: str):
    messages = [kit.user("draft a release plan for the billing service"), kit.say("Drafted RELEASE.md."),
                kit.user(ACK), kit.say("Committing.")]
    return kit.case(messages, kit.summary_of(user_messages=f'- "draft a release plan for the billing service"\n'
                                                           f'- "{quoted}"'))


def test_a_message_kept_but_for_its_acknowledgement_is_kept_by_both_graders(grade, kit):
    case = _ack_case(kit, "commit and push the release plan, then open a PR against main")
    verdict = grade("verbatim_user_messages", case)
    assert verdict.status == "pass", verdict.reasons
    assert "kept but for an acknowledgement" in verdict.reasons[0]
    assert grade("last_request_intact", case).status == "pass"


@pytest.mark.parametrize("quoted", [
    "commit and push the release plan",                       # its request cut short
    "v2 is good. commit and push the release plan, then open a PR",   # not the person's words
], ids=["cut-short", "other-words"])
def test_a_message_missing_more_than_an_acknowledgement_fails(grade, kit, quoted):
    verdict = grade("verbatim_user_messages", _ack_case(kit, quoted))
    assert verdict.status == "fail", verdict.reasons
    assert verdict.reasons[0].startswith("user message 2 of 2 is not verbatim in section 6")


def test_an_acknowledgement_that_names_something_is_no_acknowledgement(grade, kit):
    messages = [kit.user("auth.py is fine. commit and push the release plan, then open a PR against main"),
                kit.say("Committing.")]
    case = kit.case(messages, kit.summary_of(user_messages='- "commit and push the release plan, then open a PR against main"'))
    verdict = grade("verbatim_user_messages", case)
    assert verdict.status == "fail", verdict.reasons


@pytest.mark.parametrize("grader", ["verbatim_user_messages", "last_request_intact"])
def test_a_short_rule_or_refusal_is_no_acknowledgement(grade, kit, grader):
    # "don't push." ending a message is a rule the next context needs; "No." turns something down
    for typed, quoted in (("run the migration on staging. don't push.", "run the migration on staging."),
                          ("No. use the staging database for the migration", "use the staging database for the migration")):
        case = kit.case([kit.user(typed), kit.say("Running it.")], kit.summary_of(user_messages=f'- "{quoted}"'))
        verdict = grade(grader, case)
        assert verdict.status == "fail", (typed, verdict.reasons)
