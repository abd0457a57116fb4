"""Review 6: hand-built sessions in words written for the test. Each rule is shown passing a good
summary and failing a defective one with a reason that says what is wrong."""

from __future__ import annotations

# -- a refusal that closes the output of a longer command line, then worked around -----------------
# `tally show 12 && tally diff 12 --totals`: the first part prints the record, the second is refused
# ("unknown flag: --totals"); the agent then runs `tally diff 12 --summary`, which works. The same
# lesson as a refusal on the output's first line (review 5, #4): the next context will pass --totals
# again unless the summary keeps it.

SHOW_THEN_REFUSED = ("Exit code 1\nid:\t12\nowner:\tpayments\nstate:\topen\nrows:\t480\n"
                     "unknown flag: --totals\n\nUsage:  tally diff <id> [flags]\n")


def _case(kit, errors: str, *, worked: bool = True):
    messages = [kit.user("compare ledger 12 with last week's"),
                *kit.tool("Bash", {"command": "tally show 12 --format=table --with-owner && echo '---' && "
                                           "tally diff 12 --totals"},
                          SHOW_THEN_REFUSED, is_error=True)]
    if worked:
        messages += kit.tool("Bash", {"command": "tally diff 12 --summary"}, "+14 rows, -3 rows")
    messages.append(kit.say("Ledger 12 gained 14 rows and lost 3."))
    return kit.case(messages, kit.summary_of(errors=errors))


def test_a_refusal_after_other_output_worked_around_is_an_error_the_summary_keeps(grade, kit):
    good = grade("errors_preserved", _case(kit, "- `tally diff` has no `--totals` (unknown flag: --totals); "
                                                "used `--summary`"))
    assert good.status == "pass", good.reasons
    bad = grade("errors_preserved", _case(kit, "- None."))
    assert bad.status == "fail", bad.reasons
    [reason] = bad.reasons
    # the long command line is shown from the part the error line names (--totals), where to look
    assert reason.startswith("error line from a failing Bash result of `… tally diff 12 --totals` is not in "
                             "section 4 'Errors and fixes' (line ")
    assert reason.endswith('): "unknown flag: --totals"')


def test_a_refusal_after_other_output_nothing_worked_around_stays_a_probe(grade, kit):
    # the answer was "not there" and the agent moved on: nothing to keep
    verdict = grade("errors_preserved", _case(kit, "- None.", worked=False))
    assert verdict.status == "n/a", verdict.reasons
