"""Tests for pytest_ctxeval.core.messages: parsing, to_api normalisation, validate_api, person_text, strip_media."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from pytest_ctxeval.engine.dedupe import strip_media
from pytest_ctxeval.strategies import conversations

from shared_paths import CORPUS_DIR as CORPUS, needs_shared
from pydantic import TypeAdapter, ValidationError

from pytest_ctxeval.core.messages import (
    AssistantMessage, AttachmentMessage, CompactBoundary, ContentBlock, DocumentBlock, ImageBlock, Message,
    TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock, UserMessage, from_api, is_person_typed, person_text,
    result_text, text_of, to_api, tool_results, tool_uses, RequestValidator, validate_api,
)

MESSAGE = TypeAdapter(Message)
BLOCKS = TypeAdapter(list[ContentBlock])
IMG = {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}


def user(uid, content, **kw):
    return UserMessage(uuid=uid, content=content, **kw)


def asst(uid, *blocks):
    return AssistantMessage(uuid=uid, content=list(blocks))


def use(tid, name="Bash", **inp):
    return ToolUseBlock(id=tid, name=name, input=inp)


def res(tid, content="ok", **kw):
    return ToolResultBlock(tool_use_id=tid, content=content, **kw)


# --- parsing ----------------------------------------------------------------------------------

def test_blocks_parse_by_type_discriminator():
    blocks = BLOCKS.validate_python([
        {"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}, "citations": None},
        {"type": "image", "source": IMG},
        {"type": "document", "source": {"type": "text", "data": "d"}, "title": "T"},
        {"type": "thinking", "thinking": "hmm", "signature": "s"},
        {"type": "redacted_thinking", "data": "zzz"},
        {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/a"}, "caller": "x"},
        {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "r"},
                                                                 {"type": "image", "source": IMG}],
         "is_error": True},
    ])
    assert [type(b).__name__ for b in blocks] == [
        "TextBlock", "ImageBlock", "DocumentBlock", "ThinkingBlock", "RedactedThinkingBlock",
        "ToolUseBlock", "ToolResultBlock"]
    assert blocks[0].text == "hi"
    assert blocks[2].title == "T"
    assert blocks[5].input == {"file_path": "/a"}
    assert blocks[6].is_error is True
    assert [type(b).__name__ for b in blocks[6].content] == ["TextBlock", "ImageBlock"]


def test_block_defaults():
    (tu, tr) = BLOCKS.validate_python([{"type": "tool_use", "id": "t", "name": "X"},
                                       {"type": "tool_result", "tool_use_id": "t"}])
    assert tu.input == {}
    assert tr.content == "" and tr.is_error is False


@pytest.mark.parametrize("bad", [
    {"type": "video", "url": "x"},
    {"text": "no type"},
    {"type": "tool_use", "name": "X"},  # no id
    {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "tool_use", "id": "t", "name": "X"}]},
])
def test_invalid_blocks_are_rejected(bad):
    with pytest.raises(ValidationError):
        BLOCKS.validate_python([bad])


def test_messages_parse_by_kind_discriminator():
    u = MESSAGE.validate_python({"kind": "user", "uuid": "u1",
                                 "content": [{"type": "text", "text": "hi"}], "is_meta": True})
    a = MESSAGE.validate_python({"kind": "assistant", "uuid": "a1", "message_id": "msg_1",
                                 "content": [{"type": "tool_use", "id": "t1", "name": "Bash"}],
                                 "usage": {"input_tokens": 5, "output_tokens": 2}})
    b = MESSAGE.validate_python({"kind": "compact_boundary", "uuid": "b1", "trigger": "manual",
                                 "pre_tokens": 1234})
    at = MESSAGE.validate_python({"kind": "attachment", "uuid": "x1", "attachment_type": "file",
                                  "content": "body", "path": "/a.py"})
    assert isinstance(u, UserMessage) and u.is_meta and isinstance(u.content[0], TextBlock)
    assert isinstance(a, AssistantMessage) and a.usage.context_tokens == 7
    assert isinstance(a.content[0], ToolUseBlock)
    assert isinstance(b, CompactBoundary) and b.trigger == "manual" and b.pre_tokens == 1234
    assert isinstance(at, AttachmentMessage) and at.path == "/a.py"
    assert u.timestamp.tzinfo is not None


@pytest.mark.parametrize("bad", [
    {"kind": "bogus", "uuid": "x", "content": "hi"},
    {"kind": "user", "uuid": "x", "content": "hi", "extra_field": 1},
    {"kind": "compact_boundary", "uuid": "b", "trigger": "sometimes"},
    {"kind": "user", "content": "no uuid"},
])
def test_invalid_messages_are_rejected(bad):
    with pytest.raises(ValidationError):
        MESSAGE.validate_python(bad)


# --- to_api -----------------------------------------------------------------------------------

def test_to_api_simple_alternation():
    msgs = [user("u1", "go"), asst("a1", use("t1", command="ls")), user("u2", [res("t1", "files")]),
            asst("a2", TextBlock(text="done"))]
    api = to_api(msgs)
    assert api == [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash",
                                           "input": {"command": "ls"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "files"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "done"}]},
    ]
    assert validate_api(api) == []


def test_to_api_drops_boundaries():
    msgs = [CompactBoundary(uuid="b"), user("s", "summary", is_compact_summary=True), asst("a", TextBlock(text="k"))]
    assert to_api(msgs) == [{"role": "user", "content": "summary"},
                            {"role": "assistant", "content": [{"type": "text", "text": "k"}]}]


def test_to_api_attachment_becomes_system_reminder_user_message():
    api = to_api([AttachmentMessage(uuid="x", attachment_type="file", content="print(1)", path="a.py")])
    assert api == [{"role": "user", "content": "<system-reminder>\nprint(1)\n</system-reminder>"}]


def test_to_api_merges_consecutive_same_role():
    api = to_api([user("u1", "a"), user("u2", [TextBlock(text="b")]),
                  asst("a1", TextBlock(text="x")), asst("a2", TextBlock(text="y"))])
    assert api == [
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "x"}, {"type": "text", "text": "y"}]},
    ]


def test_to_api_moves_tool_results_first_in_merged_user_message():
    msgs = [
        user("u1", "go"),
        asst("a1", use("t1"), use("t2")),
        AttachmentMessage(uuid="x", attachment_type="todo", content="ctx"),
        user("r1", [res("t1", "one")]),
        user("r2", [TextBlock(text="note"), res("t2", "two", is_error=True)]),
    ]
    api = to_api(msgs)
    assert len(api) == 3
    content = api[2]["content"]
    assert [b["type"] for b in content] == ["tool_result", "tool_result", "text", "text"]
    assert [b.get("tool_use_id") for b in content[:2]] == ["t1", "t2"]
    assert content[0] == {"type": "tool_result", "tool_use_id": "t1", "content": "one"}  # is_error False dropped
    assert content[1]["is_error"] is True
    assert content[2]["text"] == "<system-reminder>\nctx\n</system-reminder>"
    assert content[3]["text"] == "note"
    assert validate_api(api) == []


def test_to_api_boundary_between_same_roles_still_merges():
    api = to_api([user("u1", "a"), CompactBoundary(uuid="b"), user("u2", "b")])
    assert len(api) == 1 and [b["text"] for b in api[0]["content"]] == ["a", "b"]


def test_to_api_does_not_mutate_messages():
    first = user("u1", [TextBlock(text="a")])
    msgs = [first, user("u2", "b")]
    to_api(msgs)
    to_api(msgs)
    assert first.content == [TextBlock(text="a")]


def test_from_api_round_trip():
    api = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    msgs = from_api(api, uuid_prefix="p")
    assert [m.uuid for m in msgs] == ["p-0", "p-1"]
    assert isinstance(msgs[1], AssistantMessage) and msgs[1].content == [TextBlock(text="hello")]
    assert to_api(msgs) == [{"role": "user", "content": "hi"},
                            {"role": "assistant", "content": [{"type": "text", "text": "hello"}]}]


# --- validate_api: one test per invariant ----------------------------------------------------

def U(content):
    return {"role": "user", "content": content}


def A(content):
    return {"role": "assistant", "content": content}


def TU(tid):
    return {"type": "tool_use", "id": tid, "name": "Bash", "input": {}}


def TR(tid):
    return {"type": "tool_result", "tool_use_id": tid, "content": "ok"}


def T(text):
    return {"type": "text", "text": text}


VALID = [U("hi"), A([T("let me look"), TU("t1"), TU("t2")]), U([TR("t1"), TR("t2"), T("more")]),
         A([T("done")])]


def test_validate_valid_conversation():
    assert validate_api(VALID) == []
    assert validate_api(VALID, allow_pending_tool_use=True) == []


def test_validate_empty_list():
    problems = validate_api([])
    assert len(problems) == 1 and "empty" in problems[0]


def test_validate_first_message_must_be_user():
    problems = validate_api([A([T("hi")]), U("x")])
    assert problems == ["messages[0]: starts with role 'assistant', must be 'user'"]


@pytest.mark.parametrize("msgs,index,role", [
    ([U("a"), U("b")], 1, "user"),
    ([U("a"), A([T("x")]), A([T("y")])], 2, "assistant"),
])
def test_validate_roles_must_alternate(msgs, index, role):
    problems = validate_api(msgs)
    assert problems == [f"messages[{index}]: two {role} messages in a row (roles must alternate)"]


def test_validate_unknown_role():
    problems = validate_api([U("a"), {"role": "system", "content": "x"}])
    assert problems == ["messages[1]: unknown role 'system'"]


def test_validate_tool_result_must_answer_previous_assistant():
    msgs = [U("a"), A([TU("t1")]), U([TR("t1")]), A([T("x")]), U([TR("t1")])]
    problems = validate_api(msgs)
    assert problems == ["messages[4]: tool_result t1 answers no tool_use in messages[3]"]


def test_validate_tool_result_with_wrong_id():
    problems = validate_api([U("a"), A([TU("t1")]), U([TR("t9")])])
    assert "messages[2]: tool_result t9 answers no tool_use in messages[1]" in problems
    assert "messages[1]: tool_use t1 not answered in messages[2]" in problems
    assert len(problems) == 2


def test_validate_tool_result_in_first_message():
    problems = validate_api([U([TR("t1")])])
    assert problems == ["messages[0]: tool_result t1 with no assistant message before it"]


def test_validate_tool_use_must_be_answered_in_next_message():
    problems = validate_api([U("a"), A([TU("t1"), TU("t2")]), U([TR("t1"), T("x")]), A([T("y")])])
    assert problems == ["messages[1]: tool_use t2 not answered in messages[2]"]


def test_validate_last_tool_use_pending_only_when_allowed():
    msgs = [U("a"), A([T("calling"), TU("t1")])]
    assert validate_api(msgs) == ["messages[1]: tool_use t1 never answered (last message)"]
    assert validate_api(msgs, allow_pending_tool_use=True) == []


def test_validate_pending_allowance_is_only_for_last_message():
    msgs = [U("a"), A([TU("t1")]), U("no result"), A([T("y")])]
    assert validate_api(msgs, allow_pending_tool_use=True) == [
        "messages[1]: tool_use t1 not answered in messages[2]"]


def test_validate_tool_result_after_text():
    problems = validate_api([U("a"), A([TU("t1")]), U([T("first"), TR("t1")])])
    assert problems == ["messages[2]: tool_result t1 after other content (tool_result blocks must come first)"]


def test_validate_duplicate_tool_use_id():
    msgs = [U("a"), A([TU("t1")]), U([TR("t1")]), A([TU("t1")]), U([TR("t1")])]
    assert validate_api(msgs) == ["messages[3]: duplicate tool_use id t1 (first in messages[1])"]


def test_validate_duplicate_tool_use_id_in_one_message():
    problems = validate_api([U("a"), A([TU("t1"), TU("t1")]), U([TR("t1")])])
    assert problems == ["messages[1]: duplicate tool_use id t1 (first in messages[1])"]


@pytest.mark.parametrize("content,expected", [
    ("", ["messages[1]: empty content", "messages[1]: empty text block"]),
    ([], ["messages[1]: empty content"]),
    ("   \n", ["messages[1]: empty content"]),
    ([T("")], ["messages[1]: empty content", "messages[1]: empty text block"]),
])
def test_validate_empty_content(content, expected):
    assert validate_api([U("a"), A(content)]) == expected


def test_validate_empty_text_block_next_to_content():
    assert validate_api([U([T("x"), T("")])]) == ["messages[0]: empty text block"]


# --- person_text -------------------------------------------------------------------------------

@pytest.mark.parametrize("message,expected", [
    (user("u", "fix the login bug"), "fix the login bug"),
    (user("u", [TextBlock(text="a"), TextBlock(text="b")]), "a\nb"),
    (user("u", [ImageBlock(source=IMG), TextBlock(text="what's this?")]), "what's this?"),
    (user("u", [TextBlock(text="<system-reminder>\nctx\n</system-reminder>"), TextBlock(text="real")]), "real"),
    (user("u", [TextBlock(text="<ide_opened_file>The user opened a.py</ide_opened_file>"),
                TextBlock(text="what is this?")]), "what is this?"),
    (user("u", [TextBlock(text="[Request interrupted by user]"), TextBlock(text="stop, do X")]), "stop, do X"),
])
def test_person_text_counts(message, expected):
    assert person_text(message) == expected
    assert is_person_typed(message) is True


@pytest.mark.parametrize("message", [
    user("u", "Caveat: the messages below were generated by local commands", is_meta=True),
    user("u", "This session is being continued from a previous conversation", is_compact_summary=True),
    user("u", [res("t1", "output")]),
    user("u", "<command-name>/compact</command-name>\n<command-message>compact</command-message>\n<command-args></command-args>"),
    user("u", "<local-command-stdout>Compacted</local-command-stdout>"),
    user("u", "[Request interrupted by user]"),
    user("u", "[Request interrupted by user for tool use]"),
    user("u", "<system-reminder>\nfile changed\n</system-reminder>"),
    user("u", [TextBlock(text="<ide_opened_file>The user opened a.py</ide_opened_file>")]),
    user("u", [ImageBlock(source=IMG)]),
    user("u", "   \n"),
    asst("a", TextBlock(text="assistant text")),
    AttachmentMessage(uuid="x", attachment_type="file", content="hello"),
    CompactBoundary(uuid="b"),
])
def test_person_text_does_not_count(message):
    assert person_text(message) is None
    assert is_person_typed(message) is False


def test_person_text_tool_result_with_text_counts_the_text():
    assert person_text(user("u", [res("t1", "out"), TextBlock(text="also do Y")])) == "also do Y"


# --- helpers ----------------------------------------------------------------------------------

def test_text_of_and_result_text():
    content = [TextBlock(text="a"), res("t1", [TextBlock(text="r"), ImageBlock(source=IMG),
                                              DocumentBlock(source={})]), ThinkingBlock(thinking="h")]
    assert text_of(content) == "a"
    assert text_of(content, include_results=True) == "a\nr\n[image]\n[document]"
    assert text_of("plain") == "plain"
    assert result_text(res("t", "str")) == "str"


def test_tool_uses_and_results():
    a = asst("a", TextBlock(text="x"), use("t1"), use("t2"))
    u = user("u", [res("t1"), TextBlock(text="y")])
    assert [b.id for b in tool_uses(a)] == ["t1", "t2"]
    assert tool_uses(u) == []
    assert [b.tool_use_id for b in tool_results(u)] == ["t1"]
    assert tool_results(user("u", "string")) == []
    assert tool_results(a) == []


# --- strip_media ------------------------------------------------------------------------------

def test_strip_media_replaces_images_and_documents():
    content = [ImageBlock(source=IMG), TextBlock(text="look"), DocumentBlock(source={"type": "text", "data": "d"}),
               res("t1", [TextBlock(text="r"), ImageBlock(source=IMG), DocumentBlock(source={})], is_error=True),
               res("t2", "string result"), use("t3")]
    out = strip_media(content)
    assert out[0] == TextBlock(text="[image]")
    assert out[1] == TextBlock(text="look")
    assert out[2] == TextBlock(text="[document]")
    assert isinstance(out[3], ToolResultBlock)
    assert out[3].tool_use_id == "t1" and out[3].is_error is True
    assert out[3].content == [TextBlock(text="r"), TextBlock(text="[image]"), TextBlock(text="[document]")]
    assert out[4] == res("t2", "string result")
    assert out[5] == use("t3")
    # the input is untouched
    assert isinstance(content[0], ImageBlock) and isinstance(content[3].content[1], ImageBlock)


def test_strip_media_string_passthrough():
    assert strip_media("just text") == "just text"


@needs_shared
def test_person_text_real_record_with_pasted_image():
    """moredip line 3: an IDE injection, a pasted image and the typed question in one message."""
    import json
    path = CORPUS / "moredip__session-share__images-in-user-messages.jsonl"
    record = json.loads(path.read_text(encoding="utf-8").splitlines()[2])
    blocks = BLOCKS.validate_python(record["message"]["content"])
    assert [b.type for b in blocks] == ["text", "image", "text"]
    message = user(record["uuid"], blocks)
    assert person_text(message) == "what's this an image of?"
    stripped = strip_media(blocks)
    assert stripped[1] == TextBlock(text="[image]")


# --- RequestValidator: validate_api over a sequence of requests -------------------------------

_ODD = [  # messages that break one rule each
    {"role": "system", "content": "x"}, {"role": "user", "content": "  "}, {"role": "assistant", "content": []},
    {"role": "user", "content": [{"type": "text", "text": ""}, {"type": "text", "text": "a"}]},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_01", "name": "Bash", "input": {}}]},
    {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "tool_result", "tool_use_id": "toolu_01"}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "nope"}]},
]


@st.composite
def _request_sequences(draw):
    """Requests that share message objects the way a session's do: the next one extends, replaces,
    drops from, cuts or repeats the last (valid conversations and messages breaking every rule)."""
    pool = draw(conversations(max_turns=4, as_api=True)) + _ODD
    current = list(draw(st.lists(st.sampled_from(pool), max_size=6)))
    out = [current]
    for _ in range(draw(st.integers(1, 8))):
        op = draw(st.sampled_from(["append", "replace", "drop", "cut", "same", "copy"]))
        nxt = list(current)
        if op == "append":
            nxt += draw(st.lists(st.sampled_from(pool), min_size=1, max_size=3))
        elif op == "replace" and nxt:
            nxt[draw(st.integers(0, len(nxt) - 1))] = dict(draw(st.sampled_from(pool)))
        elif op == "drop" and nxt:
            del nxt[draw(st.integers(0, len(nxt) - 1))]
        elif op == "cut":
            nxt = nxt[:draw(st.integers(0, len(nxt)))]
        elif op == "copy":
            nxt = [dict(m) for m in nxt]  # equal, not the same objects
        out.append(current if op == "same" else nxt)
        current = out[-1]
    return out


@given(_request_sequences(), st.booleans())
def test_request_validator_agrees_with_validate_api(requests, pending):
    """Whatever changes between requests, each request gets exactly validate_api's problems."""
    check = RequestValidator(allow_pending_tool_use=pending)
    for request in requests:
        assert check(request) == validate_api(request, allow_pending_tool_use=pending)


def test_request_validator_checks_only_what_changed(monkeypatch):
    """A growing conversation: each request is checked from the last message it shares with the
    one before (which reads its new successor), not from the start. The control, a sequence of
    equal copies, is checked whole every time."""
    import pytest_ctxeval.core.messages as messages

    calls = [0]
    real = messages._problems_at

    def counted(*a, **kw):
        calls[0] += 1
        return real(*a, **kw)

    monkeypatch.setattr(messages, "_problems_at", counted)
    turn = [{"role": "user", "content": "go"}, {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}]
    check, body, per_request = RequestValidator(), [], []
    for _ in range(200):
        body = body + [dict(m) for m in turn]
        calls[0] = 0
        assert check(body) == []
        per_request.append(calls[0])
    assert max(per_request[1:]) == 3, "the shared last message and the two new ones"
    calls[0] = 0
    assert check([dict(m) for m in body]) == []
    assert calls[0] == len(body), "control: a list of copies is checked whole"
