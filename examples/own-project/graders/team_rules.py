"""This project's own grader: the rule "don't touch cdn/" must survive every compaction.

pytest --ctxeval loads it from the folder named by ``ctxeval_graders`` in pyproject.toml, next to
the built-in graders.
"""

from pytest_ctxeval import Verdict, grader


def says_keep_out_of_cdn(text):
    """Whether a line tells the agent to keep out of cdn/."""
    return "cdn/" in text and any(word in text.lower() for word in ("don't", "do not", "never", "keep out"))


@grader("cdn_rule_kept", kind="rule")
def cdn_rule_kept(case):  # case: pytest_ctxeval.CompactionCase
    """The summary still tells the agent to keep out of cdn/ (another team owns it)."""
    if not any(says_keep_out_of_cdn(m.text) for m in case.person_messages()):
        return Verdict.not_applicable("the person never set the cdn/ rule before this compaction")
    if not case.summary:
        return Verdict.not_applicable("this compaction wrote no summary")
    for line in case.summary.splitlines():
        if says_keep_out_of_cdn(line):
            return Verdict.passed_(f"the cdn/ rule survived: {line.strip()[:120]}")
    return Verdict.failed("the summary no longer says to keep out of cdn/ (the user's rule for this task)")
