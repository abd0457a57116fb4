"""Peak memory of reading and importing a large Claude Code transcript (not a test: run by hand).

    python benchmarks/transcript_memory.py [--size-mb 100] [--conversation-mb 8] [--keep FILE]

Generates a session file of about ``--size-mb`` MB in which the conversation (user/assistant/tool
result records) takes about ``--conversation-mb`` MB and the rest is what real 2.1 sessions are
mostly made of: progress records (hook and bash progress with their full output) and
file-history snapshots. Each measurement runs in a fresh interpreter and reports its peak RSS
(``resource.getrusage``): the interpreter with the package imported, ``read_transcript``, and
``import_transcript`` + writing the scenario YAML. Reading is streamed, so the peak should follow
the conversation kept, not the file size.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

_PROBE = r"""
import resource, sys, time
mode, path = sys.argv[1], sys.argv[2]
import pytest_ctxeval.transcript as t, pytest_ctxeval.importer as imp
t0 = time.time()
if mode == "read":
    tr = t.read_transcript(path)
    info = f"{len(tr.messages)} messages"
elif mode == "import":
    res = imp.import_transcript(path)
    text = imp.scenario_yaml(res)
    info = f"{len(res.document['turns'])} turns, scenario {len(text.encode()) / 1e6:.1f} MB"
else:
    info = "baseline"
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
print(f"{mode}\t{peak:.0f}\t{time.time() - t0:.1f}\t{info}")
"""


def generate(path: Path, size_mb: float, conversation_mb: float) -> None:
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
        def emit(rec: dict) -> None:
            nonlocal written
            line = json.dumps(rec) + "\n"
            fh.write(line)
            written += len(line)

        base = {"isSidechain": False, "userType": "external", "sessionId": session, "version": "2.1.39",
                "cwd": "/work", "gitBranch": "main"}
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
                                              "input": {"file_path": f"/work/file_{n}.py"}}],
                                 "usage": {"input_tokens": 10, "output_tokens": 5}}},
                    {**base, "type": "user", "uuid": r, "parentUuid": a, "timestamp": ts,
                     "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid,
                                                               "content": body}]},
                     "toolUseResult": {"type": "text", "file": {"filePath": f"/work/file_{n}.py", "content": body}}},
                ]
                for rec in recs:
                    emit(rec)
                    conv += len(json.dumps(rec)) + 1
                parent = r
            # what dominates real files: progress (with full outputs) and snapshots, in the share
            # that makes the file --size-mb with --conversation-mb of conversation
            if conv < conv_target and written > conv * target / conv_target:
                continue
            for k in range(6):
                emit({**base, "type": "progress", "uuid": str(uuid.uuid5(rnd, f"p{n}-{k}")), "parentUuid": parent,
                      "timestamp": ts, "data": {"type": "bash_progress", "output": noise, "fullOutput": noise * 3},
                      "toolUseID": f"bash-progress-{k}", "parentToolUseID": f"toolu_{n:020d}"})
            emit({"type": "file-history-snapshot", "messageId": str(uuid.uuid5(rnd, f"s{n}")),
                  "snapshot": {"trackedFileBackups": {f"/work/file_{n}.py": {"content": noise * 2}}},
                  "isSnapshotUpdate": False})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mb", type=float, default=100)
    ap.add_argument("--conversation-mb", type=float, default=8)
    ap.add_argument("--keep", help="write the generated file here instead of a temporary folder")
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="ctxeval-mem-"))
    path = Path(args.keep) if args.keep else folder / "big-session.jsonl"
    t0 = time.time()
    generate(path, args.size_mb, args.conversation_mb)
    print(f"generated {path} ({path.stat().st_size / 1e6:.1f} MB, conversation ~{args.conversation_mb} MB) "
          f"in {time.time() - t0:.1f}s")
    print("mode\tpeak RSS (MiB)\tseconds\tresult")
    for mode in ("baseline", "read", "import"):
        out = subprocess.run([sys.executable, "-c", _PROBE, mode, str(path)], capture_output=True, text=True,
                             env={**os.environ, "PYTHONHASHSEED": "0"})
        print(out.stdout.strip() or out.stderr.strip()[-500:])
    if not args.keep:
        path.unlink()


if __name__ == "__main__":
    main()
