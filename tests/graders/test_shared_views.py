"""Views of a case's history (its person-typed messages, the most recent conversation, the sizes of
the requests sent after it) are computed once and shared by the case's mutants, which never change
the history; a case whose history or requests are replaced computes them again."""

from __future__ import annotations

from pytest_ctxeval.grading import Mutant
from pytest_ctxeval.reading.extract import person_messages
from pytest_ctxeval.reading.quoting import recent_conversation


def test_a_mutant_shares_its_cases_views_and_they_are_the_direct_reading(kit):
    msgs = [kit.user("fix the login bug"), kit.say("Fixed."), kit.user("now add a test for it")]
    case = kit.case(msgs, kit.summary({k: "x" for k in kit.SECTION_KINDS}))
    people = case.person_messages()
    assert people == person_messages(case.history) and [p.text for p in people][-1] == "now add a test for it"
    assert case.conversation() == recent_conversation(case.history, person_messages(case.history))
    mutant = Mutant.of(case, summary=case.summary.replace("x", "y"), what="changed").case
    assert mutant.conversation() is case.conversation()        # shared, not recomputed
    assert mutant.person_messages() == people
    people.pop()                                               # a caller's copy: the view is untouched
    assert len(case.person_messages()) == 2


def test_replacing_or_extending_the_history_computes_the_views_again(kit):
    case = kit.case([kit.user("fix the login bug")], kit.summary({k: "x" for k in kit.SECTION_KINDS}))
    assert [p.text for p in case.person_messages()] == ["fix the login bug"]
    case.history.append(kit.user("and the logout bug"))       # in place: the length changed
    assert [p.text for p in case.person_messages()][-1] == "and the logout bug"
    case.history = [kit.user("something else entirely")]       # replaced
    assert [p.text for p in case.person_messages()] == ["something else entirely"]
    assert case.conversation() is not None and case.conversation().run[-1].text == "something else entirely"
    case.history = [kit.say("no person spoke")]
    assert case.person_messages() == [] and case.conversation() is None


def test_a_view_of_several_inputs_is_recomputed_when_any_is_replaced(kit):
    case = kit.case([kit.user("a")], kit.summary({k: "x" for k in kit.SECTION_KINDS}))
    calls = []

    def make():
        calls.append(1)
        return len(case.requests)

    assert case.shared_view("n", make, case.requests, case.config) == 0
    assert case.shared_view("n", make, case.requests, case.config) == 0 and len(calls) == 1
    case.requests = [{"messages": []}]
    assert case.shared_view("n", make, case.requests, case.config) == 1 and len(calls) == 2
