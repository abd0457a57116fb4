"""Writes the crafted transcripts under ``tests/hostile/inputs/`` (kept in the repository; rerun
``python -m tests.hostile.make_inputs`` after changing this file). Each is a small valid session with
one hostile record, so every verb reaches the part under test."""

from __future__ import annotations

import json
from pathlib import Path

from tests.session_kit import SUMMARY, Session

HERE = Path(__file__).parent / "inputs"


def _session(tool_input: dict, *, text: str = "Reading the config.", start_ts: str | None = None) -> Session:
    s = Session()
    s.user("Please fix the config loader in src/app.py")
    s.assistant(text=text, tools=[("toolu_1", "Bash", tool_input)])
    s.result("toolu_1", "ok")
    s.assistant(text="Done with the first step.")
    s.compact(SUMMARY)
    s.user("thanks, continue")
    s.assistant(text="Continuing.")
    if start_ts:
        s.records[0]["timestamp"] = start_ts
    return s


def _raw(s: Session, path: Path, replace: tuple[str, str] | None = None) -> None:
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in s.records)
    if replace:
        text = text.replace(*replace)
    path.write_text(text, encoding="utf-8")


def main() -> None:
    HERE.mkdir(exist_ok=True)
    # JSON numbers Python reads as inf: a tool input with 1e999 and Infinity.
    _raw(_session({"command": "ls", "timeout": 12345}), HERE / "inf_tool_input.jsonl",
         ("\"timeout\": 12345", "\"timeout\": 1e999, \"retries\": Infinity"))
    # A timestamp outside the calendar (year 10000 in UTC).
    _raw(_session({"command": "ls"}, start_ts="9999-12-31T23:59:59-23:59"), HERE / "date_overflow.jsonl")
    # A tool input nested 400 levels deep.
    deep: dict = {"leaf": 1}
    for _ in range(400):
        deep = {"a": deep}
    _raw(_session({"command": "ls", "filter": deep}), HERE / "deep_tool_input.jsonl")
    # Terminal escapes in what the model said (clear screen, window title, OSC-8 link).
    _raw(_session({"command": "ls"}, text="Done \x1b[2J\x1b]0;pwned\x07 \x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\"),
         HERE / "terminal_escapes.jsonl")
    # Labelled secrets (a Bearer token, an AWS secret after its label, a GitHub token) in a user
    # message, a tool input and a tool result that the summary loses: the lost identifiers, excerpts
    # and reasons must not pull them out of their labels or cut them below the pattern's length.
    s = Session()
    s.user(f'Call the API with curl -H "Authorization: Bearer {BEARER}" and put aws_secret_access_key={AWS} in '
           f"~/.aws/credentials; the token is {GHP}. " + "Keep the retry limit at 5 and never touch src/legacy.py. " * 8)
    s.assistant(text="Calling it.", tools=[("toolu_1", "Bash", {
        "command": f"curl -H 'Authorization: Bearer {BEARER}' https://api.example/v1 && export AWS_SECRET_ACCESS_KEY={AWS}"})])
    s.result("toolu_1", f"error: 401 for Bearer {BEARER}; aws_secret_access_key={AWS} rejected")
    s.assistant(text="Done with the first step.")
    s.compact(SUMMARY)
    s.user("thanks, continue")
    s.assistant(text="Continuing.")
    _raw(s, HERE / "leaky_tokens.jsonl")


#: The secrets of ``leaky_tokens.jsonl`` (fake, key-shaped).
AWS = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
GHP = "ghp_" + "A1b2C3d4" * 5
BEARER = "abcdefABCDEF0123456789xyzXYZ"


if __name__ == "__main__":
    main()
