"""Reading large Claude Code transcripts: throughput and peak memory (issue 7; not a test).

    python benchmarks/transcript_io.py [--size-mb 100] [--conversation-mb 8] [--import] [--keep DIR]

Generates synthetic session files the way real 2.1 sessions are made: a conversation
(user / assistant / tool-result records, each tool result also in ``toolUseResult``) among what
takes most of a real file, progress records carrying full command output and file-history
snapshots. Three files: ``--size-mb`` MB holding ``--conversation-mb`` MB of conversation, the same
size holding four times the conversation, and a quarter of the size holding the same conversation.

Each file is read with :func:`pytest_ctxeval.transcript.jsonl.read_transcript` in a fresh interpreter,
which reports the time and its peak RSS (``ru_maxrss``); an interpreter that only imports the
package gives the baseline. The reader streams the file twice (the record tree, then the chosen
chain's records by offset), so the peak above the baseline should follow the conversation kept,
not the file size. With ``--import`` the first file also goes through ``import_transcript`` and the
scenario YAML is written (``ctxeval import``).

(This folds in the former ``benchmarks/transcript_memory.py``.)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

_PROBE = r"""
import json, resource, sys, time
mode, path = sys.argv[1], sys.argv[2]
import pytest_ctxeval.transcript as t, pytest_ctxeval.scenario.importer as imp
t0 = time.perf_counter()
out = {"mode": mode}
if mode == "read":
    tr = t.read_transcript(path)
    out["messages"] = len(tr.messages)
    out["problems"] = len(tr.problems)
elif mode == "import":
    res = imp.import_transcript(path)
    out["turns"] = len(res.document["turns"])
    out["scenario_mb"] = len(imp.scenario_yaml(res).encode()) / 1e6
out["seconds"] = time.perf_counter() - t0
out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
print(json.dumps(out))
"""


def generate(path: Path, size_mb: float, conversation_mb: float) -> None:
    """A session file of about ``size_mb`` MB in which the conversation takes ``conversation_mb``."""
    rnd = uuid.UUID(int=1)
    session = str(uuid.UUID(int=2))
    parent = None
    written = 0
    conv = 0
    n = 0
    target = size_mb * 1e6
    conv_target = conversation_mb * 1e6
    noise = "x" * 3_000
    with path.open("w", encoding="utf-8") as fh:
        def emit(rec: dict) -> int:
            nonlocal written
            line = json.dumps(rec) + "\n"
            fh.write(line)
            written += len(line)
            return len(line)

        base = {"isSidechain": False, "userType": "external", "sessionId": session, "version": "2.1.39",
                "cwd": "/home/dev/app", "gitBranch": "main"}
        while written < target:
            n += 1
            ts = f"2026-02-11T10:{(n // 60) % 60:02d}:{n % 60:02d}.000Z"
            if conv < conv_target:
                u = str(uuid.uuid5(rnd, f"u{n}"))
                a = str(uuid.uuid5(rnd, f"a{n}"))
                r = str(uuid.uuid5(rnd, f"r{n}"))
                tid = f"toolu_{n:020d}"
                body = f"line {n}\n" * 400
                recs = [
                    {**base, "type": "user", "uuid": u, "parentUuid": parent, "timestamp": ts,
                     "message": {"role": "user", "content": f"step {n}: please look at file_{n}.py"}},
                    {**base, "type": "assistant", "uuid": a, "parentUuid": u, "timestamp": ts,
                     "message": {"id": f"msg_{n}", "role": "assistant", "model": "claude-sonnet-4-5",
                                 "content": [{"type": "tool_use", "id": tid, "name": "Read",
                                              "input": {"file_path": f"/home/dev/app/file_{n}.py"}}],
                                 "usage": {"input_tokens": 10, "output_tokens": 5}}},
                    {**base, "type": "user", "uuid": r, "parentUuid": a, "timestamp": ts,
                     "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid,
                                                               "content": body}]},
                     "toolUseResult": {"type": "text", "file": {"filePath": f"/home/dev/app/file_{n}.py", "content": body}}},
                ]
                for rec in recs:
                    conv += emit(rec)
                parent = r
            # what dominates real files: progress (with full outputs) and snapshots, in the share
            # that makes the file size_mb with conversation_mb of conversation
            if conv < conv_target and written > conv * target / conv_target:
                continue
            for k in range(6):
                emit({**base, "type": "progress", "uuid": str(uuid.uuid5(rnd, f"p{n}-{k}")), "parentUuid": parent,
                      "timestamp": ts, "data": {"type": "bash_progress", "output": noise, "fullOutput": noise * 3},
                      "toolUseID": f"bash-progress-{k}", "parentToolUseID": f"toolu_{n:020d}"})
            emit({"type": "file-history-snapshot", "messageId": str(uuid.uuid5(rnd, f"s{n}")),
                  "snapshot": {"trackedFileBackups": {f"/home/dev/app/file_{n}.py": {"content": noise * 2}}},
                  "isSnapshotUpdate": False})


def probe(mode: str, path: Path | str) -> dict:
    out = subprocess.run([sys.executable, "-c", _PROBE, mode, str(path)], capture_output=True, text=True,
                         env={**os.environ, "PYTHONHASHSEED": "0"})
    if out.returncode:
        raise SystemExit(out.stderr[-2000:])
    return json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mb", type=float, default=100)
    ap.add_argument("--conversation-mb", type=float, default=8)
    ap.add_argument("--import", dest="imp", action="store_true", help="also time ctxeval import on the first file")
    ap.add_argument("--keep", help="write the generated files into this folder (else a temporary one, removed)")
    args = ap.parse_args()
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="ctxeval-io-"))
    folder.mkdir(parents=True, exist_ok=True)
    cases = [(args.size_mb, args.conversation_mb), (args.size_mb, args.conversation_mb * 4),
             (args.size_mb / 4, args.conversation_mb)]
    print(f"machine: {platform.machine()}, {len(os.sched_getaffinity(0))} cores, Python {platform.python_version()}")
    base = probe("baseline", "-")
    print(f"baseline (interpreter + package imported): peak RSS {base['peak_rss_mb']:.0f} MB\n")
    print(f"{'file MB':>8} {'conversation MB':>16} {'messages':>9} {'read s':>7} {'MB/s':>6} {'peak RSS MB':>12} "
          f"{'above baseline':>15}")
    rows = []
    for size, conv in cases:
        path = folder / f"session-{size:g}MB-{conv:g}MB.jsonl"
        generate(path, size, conv)
        mb = path.stat().st_size / 1e6
        r = probe("read", path)
        above = r["peak_rss_mb"] - base["peak_rss_mb"]
        rows.append((mb, conv, r, above))
        print(f"{mb:>8.0f} {conv:>16g} {r['messages']:>9,} {r['seconds']:>7.2f} {mb / r['seconds']:>6.0f} "
              f"{r['peak_rss_mb']:>12.0f} {above:>15.0f}")
        if args.imp and len(rows) == 1:
            i = probe("import", path)
            rows[0] = (*rows[0][:3], above, i)
        if not args.keep:
            path.unlink()
    (mb0, c0, r0, a0, *imp), (_, c1, _, a1), (mb2, _, _, a2) = rows[0], rows[1], rows[2]
    print(f"\nthroughput: {mb0 / r0['seconds']:.0f} MB/s on the {mb0:.0f} MB file")
    print(f"peak above baseline, same conversation ({c0:g} MB), file {mb2:.0f} MB -> {mb0:.0f} MB: "
          f"{a2:.0f} -> {a0:.0f} MB (x{a0 / a2:.2f} for x{mb0 / mb2:.1f} the file)")
    print(f"peak above baseline, same file ({mb0:.0f} MB), conversation {c0:g} -> {c1:g} MB: "
          f"{a0:.0f} -> {a1:.0f} MB (x{a1 / a0:.2f})")
    if imp:
        i = imp[0]
        print(f"ctxeval import of the {mb0:.0f} MB file: {i['seconds']:.2f} s, {i['turns']:,} turns, "
              f"scenario {i['scenario_mb']:.1f} MB, peak RSS {i['peak_rss_mb']:.0f} MB")
    if not args.keep:
        folder.rmdir()


if __name__ == "__main__":
    main()
