"""pytest_ctxeval.grading.lost: what a compaction lost (pure, on hand-built conversations)."""

from __future__ import annotations

from pytest_ctxeval.grading.lost import MAX_IDENTIFIERS, identifiers, lost_facts, message_ref
from pytest_ctxeval.core.messages import (
    AssistantMessage, AttachmentMessage, CompactBoundary, TextBlock, ToolResultBlock, ToolUseBlock, UserMessage,
)


def user(uid: str, text: str) -> UserMessage:
    return UserMessage(uuid=uid, content=text)


def asst(uid: str, text: str = "", *uses: ToolUseBlock) -> AssistantMessage:
    return AssistantMessage(uuid=uid, content=([TextBlock(text=text)] if text else []) + list(uses))


def use(tid: str, name: str, **inp: object) -> ToolUseBlock:
    return ToolUseBlock(id=tid, name=name, input=inp)


def result(uid: str, tid: str, text: str, error: bool = False) -> UserMessage:
    return UserMessage(uuid=uid, content=[ToolResultBlock(tool_use_id=tid, content=text, is_error=error)])


def summary(uid: str, text: str) -> UserMessage:
    return UserMessage(uuid=uid, content=text, is_compact_summary=True)


def post(text: str, *kept: object) -> list[object]:
    return [CompactBoundary(uuid="b"), summary("s", text), *kept]


SESSION = [
    user("u1", "Rename parse_date() in src/util.py and keep MAX_RETRIES at 30."),
    asst("a1", "Reading it.", use("t1", "Read", file_path="src/util.py")),
    result("r1", "t1", "def only_in_the_body(x):\n    return x\n" * 50),
    asst("a2", "Renaming.", use("t2", "Edit", file_path="src/util.py", old_string="def pd(", new_string="def parse_date(")),
    result("r2", "t2", "ok"),
    asst("a3", "Running the tests.", use("t3", "Bash", command="pytest tests/test_util.py -q")),
    result("r3", "t3", "Traceback (most recent call last):\n  File 'x'\nKeyError: 'user_id'", error=True),
    asst("a4", "Planning.", use("t4", "TodoWrite", todos=[
        {"content": "Fix the KeyError", "status": "in_progress"},
        {"content": "Update the callers", "status": "pending"},
        {"content": "Read the module", "status": "completed"}])),
    result("r4", "t4", "Todos updated"),
    user("u2", "Also add a docstring."),
]

EVERYTHING = ("Rename parse_date() in src/util.py and keep MAX_RETRIES at 30. Also add a docstring. "
              "KeyError: 'user_id' Fix the KeyError. Update the callers. pytest tests/test_util.py -q "
              "(the edit replaced `def pd(` by `def parse_date(`)")


def test_nothing_lost_when_the_summary_holds_every_fact() -> None:
    lost = lost_facts(SESSION, post(EVERYTHING), SESSION)
    assert lost.count == 0, lost.as_dict()
    assert lost.messages == []


def test_each_kind_of_fact_is_reported_with_the_message_it_came_from() -> None:
    lost = lost_facts(SESSION, post("The user wants a rename."), SESSION).as_dict()
    assert [(f["text"], f["message"]) for f in lost["user_messages"]] == [
        ("Rename parse_date() in src/util.py and keep MAX_RETRIES at 30.", 1), ("Also add a docstring.", 10)]
    assert lost["files"] == [{"text": "src/util.py", "message": 4}]          # where it was first changed
    assert lost["errors"] == [{"text": "KeyError: 'user_id'", "message": 7}]  # the failing result
    assert [t["text"] for t in lost["todos"]] == ["Fix the KeyError", "Update the callers"]  # open ones only
    assert {t["message"] for t in lost["todos"]} == {8}
    texts = [f["text"] for f in lost["identifiers"]]
    assert {"parse_date", "MAX_RETRIES", "30", "tests/test_util.py"} <= set(texts)
    assert "src/util.py" not in texts  # reported once, as a file
    assert "pd" in texts  # from the Edit's input
    assert "only_in_the_body" not in texts  # tool-result bodies are not searched for identifiers
    assert lost["identifiers_total"] == len(texts)


def test_a_fact_kept_as_a_message_is_not_lost() -> None:
    lost = lost_facts(SESSION, post(EVERYTHING.replace("Also add a docstring.", ""), SESSION[-1]), SESSION)
    assert lost.facts["user_messages"] == []


def test_facts_an_earlier_summary_carried_count_as_held() -> None:
    # Compaction 2: the context holds summary 1 (which quoted the first request) and new messages.
    first = summary("s1", "6. All user messages:\n - \"Rename parse_date() in src/util.py and keep MAX_RETRIES at 30.\"")
    later = [user("u3", "Now the callers.")]
    history = SESSION + [CompactBoundary(uuid="b1"), first] + later
    context = [first] + later
    lost = lost_facts(context, post("6. All user messages:\n - \"Now the callers.\""), history).as_dict()
    # The first request was held (quoted by summary 1) and is gone now: lost, linked to message 1.
    assert [(f["text"], f["message"]) for f in lost["user_messages"]] == [
        ("Rename parse_date() in src/util.py and keep MAX_RETRIES at 30.", 1)]
    # "Also add a docstring." was already lost at compaction 1: not held, not reported again.
    assert all("docstring" not in f["text"] for f in lost["user_messages"])


def test_identifiers_are_matched_as_whole_tokens() -> None:
    ctx = [user("u", "Set the limit to 500 and call load_rows().")]
    lost = lost_facts(ctx, post("Set the limit to 5000 and call load_rows_fast()."), ctx).as_dict()
    assert {f["text"] for f in lost["identifiers"]} == {"500", "load_rows"}


def test_identifier_list_is_capped_but_counted() -> None:
    names = " ".join(f"field_{i}" for i in range(MAX_IDENTIFIERS + 15))
    ctx = [user("u", names)]
    lost = lost_facts(ctx, post("nothing"), ctx).as_dict()
    assert len(lost["identifiers"]) == MAX_IDENTIFIERS
    assert lost["identifiers_total"] == MAX_IDENTIFIERS + 15
    assert lost["identifiers"][0]["context"].startswith("field_0")


def test_long_pasted_message_counts_as_kept_by_head_and_tail() -> None:
    """The graders' long-message policy: a long message that is mostly pasted output is kept by its
    head and tail; the person's own long prose only in full."""
    log = "\n".join(f"2026-01-02 19:20:{i % 60:02d} ERROR worker[{i}] connection refused: db:5432 (retry {i})"
                    for i in range(60))
    long = "the worker keeps failing, here is the log:\n" + log
    ctx = [user("u", long)]
    assert lost_facts(ctx, post(long[:300] + " […] " + long[-300:]), ctx).facts["user_messages"] == []
    assert len(lost_facts(ctx, post(long[:300]), ctx).facts["user_messages"]) == 1
    prose = " ".join(f"Sentence {i} of the spec says the export must keep column {i} in order." for i in range(60))
    ctx = [user("u", prose)]
    assert len(lost_facts(ctx, post(prose[:300] + " […] " + prose[-300:]), ctx).facts["user_messages"]) == 1
    assert lost_facts(ctx, post(prose), ctx).facts["user_messages"] == []


def test_identifiers_examples() -> None:
    assert identifiers("see `user_id` in orders.created_at, getUserById(), docs/api/v2.md; port 8080, version 3.11.2") == [
        "user_id", "orders.created_at", "getUserById", "docs/api/v2.md", "8080", "3.11.2"]
    assert identifiers("toolu_0123456789abcdef and a 1 digit") == []


def test_message_ref_roles() -> None:
    assert message_ref(SESSION[0])["role"] == "user"
    assert message_ref(SESSION[1])["role"] == "assistant"
    assert message_ref(SESSION[1])["excerpt"].endswith("[tools: Read]")
    assert message_ref(SESSION[2])["role"] == "tool result"
    assert message_ref(summary("s", "x"))["role"] == "summary"
    assert message_ref(AttachmentMessage(uuid="a", attachment_type="file", content="y"))["role"] == "attachment (file)"
    assert len(message_ref(user("u", "z" * 1000))["excerpt"]) == 281


def test_a_message_the_verbatim_grader_finds_kept_is_not_lost() -> None:
    # the summary drops the space before "?" and flattens the line break: verbatim_user_messages
    # counts it verbatim, so the panel must not list it; a message whose words are gone is still lost,
    # and so is the paste of a message kept by its typed lead only (its text is gone)
    typed = "Make the two buttons more visible, on the left side ?\nand frame the content below"
    paste = "The tree view breaks the page:\n" + "\n".join(f"    at frame{i} (chunk.js:{i}:7)" for i in range(40))
    history = [user("u1", typed), asst("a1", "On it."), user("u2", "Also drop the legacy exporter."),
               asst("a2", "Noted."), user("u3", paste), asst("a3", "Looking.")]
    kept = post("6. All user messages:\n   - Make the two buttons more visible, on the left side? and frame the "
                "content below\n   - The tree view breaks the page: [a long stack trace pasted]")
    lost = lost_facts(history, kept, history)
    assert [f.text for f in lost.facts["user_messages"]] == ["Also drop the legacy exporter.", paste]
