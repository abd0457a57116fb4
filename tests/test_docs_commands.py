"""Every command in the docs that can run offline is run here (issue 22).

The convention, for README.md and docs/*.md:

* a fenced ``bash`` block is a list of commands; a ``console`` block's commands are its ``$ `` lines;
* ``<!-- docs: not run (REASON) -->`` on the line above a block exempts it; REASON is required and
  says why (it needs an API key or the network, it is a server, it is a placeholder for your own
  session...); ``<!-- docs: exit N (REASON) -->`` runs it and expects exit status N;
* ``text`` blocks (usage synopses, output) are not commands.

Each page's blocks run in order, in one scratch folder made from a template: ``scenarios/`` holds
one small scenario (the "complete small example" of docs/scenarios.md), ``examples/own-project``
and ``tests/fixtures/weak_prompt.j2`` are copied, ``HOME`` holds a Claude Code projects folder with
one synthetic session, and the files the commands name (``SESSION.jsonl``, ``results.json``,
``ctxeval-baseline.json``, ``new.j2`` ...) exist. Each page is one test item (pytest-xdist runs pages
on its workers side by side). No API key is set and nothing leaves 127.0.0.1.

The run of the commands takes about 2 minutes on 2 busy cores (about 110 s of commands, 35
processes), so it runs with ``CTXEVAL_DOCS_TESTS=1``: ``.ci/run`` runs it in its docs step, beside
``mkdocs build --strict``, not in the unit suite (the README's ``pytest -n auto``). The checks of
the blocks and their marks always run.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from session_kit import Session

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MARK = re.compile(r"<!-- docs: (not run|exit (\d+)) \((.+)\) -->")
FENCE = re.compile(r"^```(\S*)\s*$")
PROJECT = "-home-me-src-app"
SESSION_ID = "8463c716-a2ea-4c14-9efa-87158ebd9f20"
TIMEOUT = 300
# docs/running.md grades this text as a summary of the whole session (`--summary my_summary.md`).
MY_SUMMARY = """\
1. Primary Request and Intent:
   Fix the failing login test in tests/test_login.py, run the whole suite, then commit.
2. Key Technical Concepts:
   - pytest
3. Files and Code Sections:
   - src/app/src/app.py: edited to read user_id safely
4. Errors and fixes:
   - FAILED tests/test_login.py::test_login - KeyError: 'user_id' (fixed)
5. Problem Solving:
   The login test failed on a missing user_id key; fixed, and the suite passes.
6. All user messages:
   - Fix the failing login test in tests/test_login.py.
   - Now run the whole suite.
   - Thanks, commit it.
7. Pending Tasks:
   - none
8. Current Work:
   Committed the fix.
9. Optional Next Step:
   None: the last request (\"Thanks, commit it.\") is done.

If you need specific details from before compaction (like exact code snippets, error messages, or content you generated), read the full transcript at: /home/me/.claude/projects/-home-me-src-app/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl
"""


@dataclass
class Block:
    page: Path
    line: int
    lang: str
    script: str
    run: bool
    exit: int
    reason: str

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The ``bash``/``console`` blocks of one page, with their marks."""
    out: list[Block] = []
    lines = page.read_text(encoding="utf-8").split("\n")
    i = 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        lang, start = fence.group(1), i
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        body = lines[i + 1:j]
        i = j + 1
        if lang not in ("bash", "console", "sh", "shell"):
            continue
        above = next((lines[k] for k in range(start - 1, -1, -1) if lines[k].strip()), "")
        mark = MARK.search(above)
        if lang == "console":
            body = [line[2:] for line in body if line.startswith("$ ")]
        out.append(Block(page, start + 1, lang, "\n".join(body) + "\n",
                         run=not (mark and mark.group(1) == "not run"),
                         exit=int(mark.group(2)) if mark and mark.group(2) else 0,
                         reason=mark.group(3) if mark else ""))
    return out


def good_session(path: Path) -> Path:
    """A small Claude Code session with one manual compaction whose summary every grader passes."""
    s = Session()
    s.user("Fix the failing login test in tests/test_login.py.")
    s.assistant(text="Running the test.", tools=[("t1", "Bash", {"command": "pytest tests/test_login.py -q"})])
    s.result("t1", "FAILED tests/test_login.py::test_login - KeyError: 'user_id'", is_error=True)
    s.assistant(text="Fixing src/app.py.", tools=[("t2", "Edit", {"file_path": "/home/me/src/app/src/app.py",
                                                                  "old_string": "a", "new_string": "b"})])
    s.result("t2", "The file /home/me/src/app/src/app.py has been updated.")
    s.user("Now run the whole suite.")
    s.assistant(text="All 12 tests pass.")
    s.compact("This session is being continued from a previous conversation that ran out of context. The "
              "conversation is summarized below:\nSummary:\n"
              "1. Primary Request and Intent:\n   Fix the failing login test in tests/test_login.py, then run "
              "the whole suite.\n"
              "2. Key Technical Concepts:\n   - pytest\n"
              "3. Files and Code Sections:\n   - src/app/src/app.py: edited to read user_id safely\n"
              "4. Errors and fixes:\n   - FAILED tests/test_login.py::test_login - KeyError: 'user_id' (fixed)\n"
              "5. Problem Solving:\n   The login test failed on a missing user_id key; fixed.\n"
              "6. All user messages:\n   - Fix the failing login test in tests/test_login.py.\n"
              "   - Now run the whole suite.\n"
              "7. Pending Tasks:\n   - none\n"
              "8. Current Work:\n   Ran the whole suite: all 12 tests pass.\n"
              "9. Optional Next Step:\n   None: the last request (\"Now run the whole suite.\") is done.\n")
    s.user("Thanks, commit it.")
    s.assistant(text="Committed.")
    return s.write(path)


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "PYTEST_", "COV_"))}
    env.update(HOME=str(home), EDITOR="true", PAGER="cat", NO_COLOR="1",
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}")
    return env


def _sh(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=cwd, env=env, text=True,
                          capture_output=True, timeout=TIMEOUT)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The scratch folder every page starts from (see the module docstring)."""
    t = tmp_path_factory.mktemp("docs-template")
    home = t / "home"
    project = home / ".claude" / "projects" / PROJECT
    project.mkdir(parents=True)
    (home / ".claude" / "projects" / "my-project").mkdir()
    session = good_session(project / f"{SESSION_ID}.jsonl")
    (t / "scenarios").mkdir()
    shutil.copy(ROOT / "examples" / "own-project" / "scenarios" / "cache_ttl.yaml", t / "scenarios")
    shutil.copytree(ROOT / "examples" / "own-project", t / "examples" / "own-project")
    (t / "tests" / "fixtures").mkdir(parents=True)
    shutil.copy(ROOT / "tests" / "fixtures" / "weak_prompt.j2", t / "tests" / "fixtures")
    for name in ("SESSION.jsonl", "a.jsonl", "b.jsonl"):
        shutil.copy(session, t / name)
    (t / "old-sessions").mkdir()
    shutil.copy(session, t / "old-sessions" / "c.jsonl")
    shutil.copy(session, home / ".claude" / "projects" / "my-project" / "d.jsonl")
    prompt = ROOT / "pytest_ctxeval" / "prompts" / "compact.j2"
    for name in ("new.j2", "my_compact.j2"):
        shutil.copy(prompt, t / name)
    shutil.copy(ROOT / "tests" / "fixtures" / "weak_prompt.j2", t / "old.j2")
    (t / "my_summary.md").write_text(MY_SUMMARY, encoding="utf-8")
    (t / "expect.yaml").write_text("files: [src/app.py]\n", encoding="utf-8")
    done = _sh("ctxeval run scenarios/ --json results.json && "
               "pytest --ctxeval -q -p no:cacheprovider --ctxeval-save-baseline ctxeval-baseline.json",
               t, _env(home))
    assert done.returncode == 0, done.stdout + done.stderr
    return t


def run_page(page: Path, template: Path, scratch: Path) -> list[str]:
    """Run the runnable blocks of ``page`` in order in a copy of the template; the failures."""
    work = scratch / page.stem
    shutil.copytree(template, work, symlinks=True)
    env = _env(work / "home")
    failures = []
    for block in blocks(page):
        if not block.run:
            continue
        done = _sh(block.script, work, env)
        if done.returncode != block.exit:
            failures.append(f"{block.where}: exit {done.returncode}, expected {block.exit}\n{block.script}\n"
                            f"--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}")
    return failures


def test_every_block_not_run_says_why():
    for page in PAGES:
        for block in blocks(page):
            if not block.run:
                assert len(block.reason.split()) >= 2, f"{block.where}: 'not run' needs a reason"


def test_blocks_are_found_and_marked():
    """The parser sees the blocks this module relies on (a parser that found nothing would pass)."""
    found = {(b.page.name, b.run) for page in PAGES for b in blocks(page)}
    assert ("getting-started.md", True) in found
    assert ("sessions.md", True) in found and ("sessions.md", False) in found
    readme = blocks(ROOT / "README.md")
    assert readme and not readme[0].run    # the two install commands: CI runs them (.ci/run)


def test_the_small_example_is_the_example_project_scenario():
    """docs/scenarios.md's complete example is examples/own-project/scenarios/cache_ttl.yaml (run below)."""
    text = (ROOT / "docs" / "scenarios.md").read_text(encoding="utf-8")
    section = text.split("## A complete small example", 1)[1]
    code = re.search(r"```yaml\n(.*?)```", section, re.DOTALL)
    assert code, "docs/scenarios.md: the complete small example has no yaml block"
    assert code.group(1) == (ROOT / "examples/own-project/scenarios/cache_ttl.yaml").read_text(encoding="utf-8")


RUN_PAGES = [p for p in PAGES if any(b.run for b in blocks(p))]


def test_pages_with_commands_are_found():
    assert {p.name for p in RUN_PAGES} >= {"getting-started.md", "sessions.md"}


# One item per page, so pytest-xdist spreads the pages over its workers.
@pytest.mark.skipif(os.environ.get("CTXEVAL_DOCS_TESTS") != "1",
                    reason="runs every docs command (about 2 minutes): set CTXEVAL_DOCS_TESTS=1 (.ci/run's docs step does)")
@pytest.mark.parametrize("page", RUN_PAGES, ids=[p.name for p in RUN_PAGES])
def test_the_docs_commands_run(page: Path, template: Path, tmp_path: Path):
    failures = run_page(page, template, tmp_path)
    assert not failures, "\n\n".join(failures)
