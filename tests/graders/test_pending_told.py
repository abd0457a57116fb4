"""pending_tasks: when a task counts as told in other words (the sections 7-9 fallback)."""

from __future__ import annotations

from graders.future_work import _task_told


def test_words_must_be_whole_words_of_one_item():
    assert _task_told("Email the report to finance on the 1st", "- Email the monthly reports to finance, 1st")
    # letters inside other words (file contents kept after the summary) do not tell the task
    assert not _task_told("Email the report to finance on the 1st", "- refinanced email_reporter 10")


def test_a_number_of_the_subject_must_be_there():
    assert not _task_told("Harden module 2", "Module 1 is done. We're hardening the service this week.")
    assert _task_told("Harden module 2", "- Next: harden module 2 (retry loop)")
    assert not _task_told("Harden module 2", "- Next: harden module 12")
