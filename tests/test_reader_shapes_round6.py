"""Record shapes of real Claude Code 2.1.2xx transcripts the shared corpus does not hold (round 6 of
reading unseen sessions): the note the client writes beside a pasted image it resized
(``[Image: original 1206x2622, displayed at 920x2000. Multiply coordinates by 1.31 to map to
original image.]``), the note ``/fork`` leaves in the parent session, and a manual ``/compact`` that
2.1.205 also records as a plain ``/compact`` message before its boundary, whose boundary keeps a
preserved segment. Each file is written by the test (``transcript_builder``); the words are the
test's own."""

from __future__ import annotations

from pytest_ctxeval.core.messages import UserMessage, person_text
from pytest_ctxeval.grading import load_graders
from pytest_ctxeval.grading.registry import cases_from_transcript
from pytest_ctxeval.transcript import read_transcript

from transcript_builder import Builder, bash_result

NOTE = "[Image: original 1206x2622, displayed at 920x2000. Multiply coordinates by 1.31 to map to original image.]"
PNG = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
FORK = ("The fork runs as its own separate session — nothing it does arrives in this conversation, and it does "
        "not see what happens here after the fork point.")
ASK = "the swipe from the left edge opens the menu only half of the time, make it reliable"
LOOK = "here it is on the simulator"
LAST = "ok now the same for the swipe up"


def _summary(listed: list[str]) -> str:
    items = "\n".join(f'   - "{m}"' for m in listed)
    return ("This session is being continued from a previous conversation that ran out of context. The summary "
            "below covers the earlier portion of the conversation.\n\nSummary:\n"
            f"1. Primary Request and Intent:\n   {ASK}\n2. Key Technical Concepts:\n   - gesture arenas\n"
            "3. Files and Code Sections:\n   - none changed yet\n4. Errors and fixes:\n   - none\n"
            "5. Problem Solving:\n   The native back gesture wins the arena.\n"
            f"6. All user messages:\n{items}\n7. Pending Tasks:\n   - the swipe up\n"
            "8. Current Work:\n   Measuring the gesture arena.\n"
            f"9. Optional Next Step:\n   As asked: \"{LAST}\"\n")


def _session(tmp_path, listed: list[str]):
    b = Builder("2.1.205")
    b.typed(ASK)
    b.tool("Bash", {"command": "flutter test"}, bash_result("All tests passed!"), "All tests passed!")
    b.reply(text="Send me a screenshot?")
    b.typed([PNG, {"type": "text", "text": NOTE}])                         # an image alone: nothing typed
    b.reply(text="I see the menu half open.")
    b.typed([{"type": "text", "text": LOOK}, PNG, {"type": "text", "text": NOTE}])
    b.reply(text="Forking a session to try the other recogniser.")
    b.user(FORK)                                                             # /fork's note, not typed
    b.typed(LAST)
    last = b.reply(text="Looking at the swipe up.")[-1]
    b.typed("/compact")                                                     # 2.1.205 records the command itself
    b.boundary("manual", 180_000, logical=last,
               metadata={"preservedSegment": {"headUuid": last, "anchorUuid": "s-1", "tailUuid": last},
                         "preservedMessages": {"anchorUuid": "s-1", "uuids": [last]}})
    b.user(_summary(listed), uuid="s-1", advance=0.01, isCompactSummary=True, isVisibleInTranscriptOnly=True)
    b.slash_compact()
    return b.write(tmp_path / "fork.jsonl")


def _verdict(path, name: str):
    registry = load_graders()
    (case,) = cases_from_transcript(read_transcript(path))
    (verdict,) = registry.run(case, [registry.get(name)])
    return verdict


def test_the_client_notes_on_images_and_forks_are_not_typed():
    """A real 2.1.2xx session listed, among the person's prompts, one ``[Image: original …]`` note per
    pasted screenshot and the ``/fork`` note: both were read as typed messages that section 6 must
    quote verbatim (a summary keeping every message the person typed would fail)."""
    assert person_text(UserMessage(uuid="u", content=[PNG, {"type": "text", "text": NOTE}])) is None
    assert person_text(UserMessage(uuid="u", content=f"{LOOK}\n\n{NOTE}")) == LOOK
    sourced = ("[Image: source: /tmp/shots/1.png, original 2940x1912, displayed at 2000x1301. Multiply coordinates "
               "by 1.47 to map to original image.]")
    assert person_text(UserMessage(uuid="u", content=sourced)) is None
    assert person_text(UserMessage(uuid="u", content="[Image converted from image/heic to image/jpeg.]")) is None
    assert person_text(UserMessage(uuid="u", content=FORK)) is None
    # what the person writes in brackets is theirs
    assert person_text(UserMessage(uuid="u", content="[Image: the menu I drew] like this")) is not None


def test_a_summary_of_the_typed_messages_passes(tmp_path):
    good = _verdict(_session(tmp_path, [ASK, LOOK, LAST]), "verbatim_user_messages")
    assert good.status == "pass", good.reasons
    assert "all 3 person-typed messages" in good.reasons[0]


def test_a_summary_that_drops_a_message_typed_with_an_image_fails(tmp_path):
    bad = _verdict(_session(tmp_path, [ASK, LAST]), "verbatim_user_messages")
    assert bad.status == "fail" and LOOK in bad.reasons[0], bad.reasons


def test_the_recorded_slash_compact_is_not_the_last_request(tmp_path):
    """2.1.205 writes the typed ``/compact`` as a plain user record before the boundary (and its
    echo after the summary, as before): the last request is the message typed before it."""
    path = _session(tmp_path, [ASK, LOOK, LAST])
    t = read_transcript(path)
    assert len(t.compactions) == 1 and t.compactions[0].trigger == "manual"
    verdict = _verdict(path, "last_request_intact")
    assert verdict.status == "pass" and LAST in verdict.reasons[0], verdict.reasons
