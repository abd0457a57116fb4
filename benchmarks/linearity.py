"""Linear cost of ``grade``, ``import``, ``lint`` and ``compare-real`` (issue 23; not a test).

    python benchmarks/linearity.py [--records 2000] [--message-mb 4] [--steps 3] [--repeat 1] [--only grade,lint]

Each verb runs on an input, then on inputs twice, four and eight times as large (``--steps``
doublings), each in a fresh interpreter that reports its own CPU time (user + system, from
``resource``), wall time and peak RSS (``ru_maxrss``). Printed per verb: the CPU time, the wall time
and the peak memory above an interpreter that only imports the package, each with the ratio of each
step to the one before. Linear means every ratio is about 2; the target is at most 2.3 for CPU time
and memory. Wall time is printed too, but on a shared machine it measures the other processes as
much as this one (at a load of 11 on 2 cores, wall time was 2-4x the CPU time, and varied by 2x
between identical runs); CPU time does not count the time the process waited for a core.
With ``--repeat N`` every step runs N times and the run with the least CPU time is kept (the least
disturbed one; its wall time and memory are the same run's).

* ``grade``: a session of ``--records`` records (user turns, tool calls with results of a few KB,
  edits of many files, errors, a TodoWrite) ending in a compaction whose summary names half of it;
* ``import``: the same session, ``import_transcript`` and the scenario YAML written;
* ``lint``: the scenario that import wrote (``ctxeval lint``'s whole check);
* ``compare-real``: a session whose one tool result is ``--message-mb`` MB, doubled each step.

Ratios, not absolute times, are the claim: the machine is shared and noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from datetime import datetime, timedelta, UTC
from pathlib import Path

_PROBE = r"""
import io, json, resource, sys, time, contextlib
verb, path, out_dir = sys.argv[1], sys.argv[2], sys.argv[3]
from pytest_ctxeval.cli import main
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
argv = {"grade": ["grade", path, "--graders", "verbatim_user_messages,files_preserved,errors_preserved,pending_tasks"],
        "import": ["import", path, "-o", out_dir + "/imported.yaml", "--force", "--all"],
        "lint": ["lint", path],
        "compare-real": ["compare-real", path, "--graders", "verbatim_user_messages,files_preserved"],
        "none": None}[verb]
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
t0, c0 = time.perf_counter(), cpu()
sink = io.StringIO()
rc = None
if argv is not None:
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        rc = main(argv)
seconds, cpu_seconds = time.perf_counter() - t0, cpu() - c0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"rc": rc, "seconds": seconds, "cpu": cpu_seconds, "peak_mb": peak / 1024, "base_mb": base / 1024,
                  "tail": sink.getvalue()[-300:]}))
"""

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


class _Writer:
    def __init__(self, fh) -> None:
        self.fh, self.parent, self.n, self.clock = fh, None, 0, START

    def add(self, rec: dict) -> str:
        self.n += 1
        self.clock += timedelta(seconds=3)
        uid = f"00000000-0000-4000-8000-{self.n:012d}"
        base = {"parentUuid": self.parent, "isSidechain": False, "userType": "external", "cwd": "/w",
                "sessionId": "11111111-2222-4333-8444-555555555555", "version": "2.1.50", "uuid": uid,
                "timestamp": self.clock.isoformat(timespec="milliseconds").replace("+00:00", "Z")}
        self.fh.write(json.dumps({**base, **rec}) + "\n")
        self.parent = uid
        return uid

    def user(self, content: object, **extra: object) -> str:
        return self.add({"type": "user", "message": {"role": "user", "content": content}, **extra})

    def assistant(self, blocks: list[dict]) -> None:
        mid = f"msg_{self.n:08d}"
        for b in blocks:
            self.add({"type": "assistant", "requestId": "req_" + mid, "message": {
                "id": mid, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": [b],
                "usage": {"input_tokens": 100, "output_tokens": 20}}})


def session(path: Path, records: int, *, big_mb: float = 0.0) -> None:
    """A session of about ``records`` records (or, with ``big_mb``, one tool result that large)."""
    mentioned: list[str] = []
    with path.open("w", encoding="utf-8") as fh:
        w = _Writer(fh)
        w.user("Refactor the loaders across the project and keep the tests green")
        i = 0
        while (i < 8) if big_mb else (w.n < records):
            i += 1
            f = f"src/pkg{i % 50}/module_{i}.py"
            if i % 10 == 1:
                w.user(f"Now handle case {i}: keep MAX_RETRIES_{i} at {i % 90 + 10} in {f}")
            tid = f"toolu_{i:08d}"
            kind = i % 4
            if kind == 0:
                w.assistant([{"type": "text", "text": f"Editing {f}."},
                             {"type": "tool_use", "id": tid, "name": "Edit",
                              "input": {"file_path": f"/w/{f}", "old_string": f"a{i}", "new_string": f"b{i}"}}])
                mentioned.append(f)
                w.user([{"type": "tool_result", "tool_use_id": tid, "content": "The file has been updated."}])
            elif kind == 1:
                w.assistant([{"type": "tool_use", "id": tid, "name": "Bash", "input": {"command": f"pytest tests/test_{i}.py"}}])
                w.user([{"type": "tool_result", "tool_use_id": tid, "is_error": True,
                         "content": f"FAILED tests/test_{i}.py::test_case_{i} - KeyError: 'key_{i}'"}])
            elif kind == 2:
                body = "x" * int(big_mb * 1e6) if big_mb and i == 2 else ("    line of code = value  # note\n" * 60)
                w.assistant([{"type": "tool_use", "id": tid, "name": "Read", "input": {"file_path": f"/w/{f}"}}])
                w.user([{"type": "tool_result", "tool_use_id": tid, "content": body}])
            else:
                w.assistant([{"type": "tool_use", "id": tid, "name": "TodoWrite", "input": {"todos": [
                    {"content": f"fix module {j}", "status": "pending", "activeForm": "Fixing"} for j in range(i % 7 + 1)]}}])
                w.user([{"type": "tool_result", "tool_use_id": tid, "content": "Todos have been modified successfully."}])
        last = w.parent
        w.parent = None
        w.add({"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
               "logicalParentUuid": last, "level": "info", "isMeta": False,
               "compactMetadata": {"trigger": "auto", "preTokens": 150_000}})
        summary = ("This session is being continued from a previous conversation.\nSummary:\n"
                   "1. Primary Request and Intent:\n   Refactor the loaders.\n3. Files and Code Sections:\n"
                   + "".join(f"   - {m}\n" for m in mentioned[::2])
                   + "6. All user messages:\n   - Refactor the loaders across the project and keep the tests green\n"
                   + "9. Optional Next Step:\n   Continue.\n")
        w.user(summary, isCompactSummary=True, isVisibleInTranscriptOnly=True)
        w.user("thanks, continue")
        w.assistant([{"type": "text", "text": "Continuing."}])


def probe(verb: str, path: Path, out_dir: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", _PROBE, verb, str(path), str(out_dir)], capture_output=True,
                          text=True, check=False, env={**os.environ, "PYTHONHASHSEED": "0"})
    if done.returncode != 0 or not done.stdout.strip():
        raise SystemExit(f"{verb} {path}: the probe failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _r(ratio: float | None) -> str:
    return f"{ratio:.2f}" if ratio else "-"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=2000, help="records of the smallest session (default 2000)")
    ap.add_argument("--message-mb", type=float, default=4.0, help="compare-real: the smallest big message (MB)")
    ap.add_argument("--steps", type=int, default=3, help="doublings (default 3: x1, x2, x4, x8)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per step; the one with the least CPU time is kept")
    ap.add_argument("--only", default="grade,import,lint,compare-real", help="verbs to measure, comma-separated")
    args = ap.parse_args()
    verbs = [v.strip() for v in args.only.split(",") if v.strip()]
    worst = worst_wall = 0.0
    with tempfile.TemporaryDirectory(prefix="ctxeval-linearity-") as tmp:
        root = Path(tmp)
        base = probe("none", root, root)["peak_mb"]
        print(f"interpreter with the package imported: {base:.0f} MB peak RSS")
        for verb in verbs:
            rows = []
            for k in range(args.steps + 1):
                scale = 2 ** k
                folder = root / f"{verb}-{scale}"
                folder.mkdir()
                src = folder / "session.jsonl"
                if verb == "compare-real":
                    session(src, 0, big_mb=args.message_mb * scale)
                    size = f"{args.message_mb * scale:g} MB message"
                else:
                    session(src, args.records * scale)
                    size = f"{args.records * scale:,} records"
                if verb == "lint":
                    probe("import", src, folder)
                    src = folder / "imported.yaml"
                r = min((probe(verb, src, folder) for _ in range(max(args.repeat, 1))), key=lambda x: x["cpu"])
                rows.append((size, r["cpu"], r["seconds"], max(r["peak_mb"] - base, 0.1), r["rc"]))
            print(f"\n{verb}")
            print(f"  {'input':>22} {'cpu s':>7} {'ratio':>6} {'wall s':>7} {'ratio':>6} {'peak MB':>8} {'ratio':>6}  rc")
            for i, (size, cpu, sec, mem, rc) in enumerate(rows):
                prev = rows[i - 1] if i else None
                cr, tr, mr = (cpu / prev[1], sec / prev[2], mem / prev[3]) if prev else (None, None, None)
                worst = max(worst, cr or 0, mr or 0)
                worst_wall = max(worst_wall, tr or 0)
                print(f"  {size:>22} {cpu:7.2f} {_r(cr):>6} {sec:7.2f} {_r(tr):>6} {mem:8.1f} {_r(mr):>6}  {rc}")
    print(f"\nworst step ratio, CPU time and peak memory: {worst:.2f} (target <= 2.3)")
    print(f"worst step ratio, wall time: {worst_wall:.2f} (load average now: {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
