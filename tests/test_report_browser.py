"""The HTML report of the built-in scenarios (plus a hostile-content scenario, a baseline and an A/B
run) in a real headless browser: Debian's Chromium.

What is checked: the page loads with no console message at all (the page has no script, so any
message is a problem: a script error, or a Content-Security-Policy violation, which is what an
escaping bug would produce); the title is still "ctxeval report" (the hostile scripts would set
it to PWNED); the DOM holds no script, img or event-handler attribute; the hostile text is
visible as text. Screenshots go to ``$CTXEVAL_ARTIFACTS`` (``.ci/run`` sets it; otherwise a
temporary folder) as ``ctxeval-report.png`` and ``ctxeval-report-hostile.png``, with the pages.

Runs with ``CTXEVAL_BROWSER_TESTS=1`` (``.ci/run``'s browser step, which installs Chromium),
not in the unit suite (the README's ``pytest -n auto``): it replays the library and starts a
browser, about a minute on 2 cores. Under that variable a missing Chromium is a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from pytest_ctxeval.cli import main
from pytest_ctxeval.options import builtin_scenarios_dir

HERE = Path(__file__).resolve().parent
HOSTILE = HERE / "fixtures" / "hostile_content.yaml"
NASTY = ["<script>document.title='PWNED';alert(1)</script>", "{{ 7*7 }}", "</html>", "\"><img src=x onerror=alert(1)>"]
NO_SECTION_6 = (HERE / "test_reports.py").read_text(encoding="utf-8").split('NO_SECTION_6 = textwrap.dedent("""\\\n')[1] \
    .split('""")')[0]
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--disable-extensions", "--hide-scrollbars", "--enable-logging=stderr", "--v=0"]


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


pytestmark = pytest.mark.skipif(os.environ.get("CTXEVAL_BROWSER_TESTS") != "1",
                                reason="the report in headless Chromium (about a minute): set CTXEVAL_BROWSER_TESTS=1 "
                                       "(.ci/run's browser step does)")


@pytest.fixture(scope="module")
def chromium() -> str:
    exe = _chromium()
    if exe is None:
        pytest.fail("Chromium is not installed (Debian: apt-get install chromium), so the report's browser check "
                    "cannot run; CTXEVAL_BROWSER_TESTS=1 requires it", pytrace=False)
    return exe


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = os.environ.get("CTXEVAL_ARTIFACTS")
    path = Path(where).absolute() if where else tmp_path_factory.mktemp("artifacts")
    path.mkdir(parents=True, exist_ok=True)
    return path


def browse(exe: str, page: Path, profile: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    if profile.exists():
        shutil.rmtree(profile)
    return subprocess.run([exe, *FLAGS, f"--user-data-dir={profile}", *extra, page.as_uri()],
                          capture_output=True, text=True, timeout=180, check=False)


def console_messages(stderr: str) -> list[str]:
    """Messages the page logged (Chromium prints them as ``INFO:CONSOLE`` lines with logging on)."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]


class Dom(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.handlers: list[str] = []
        self.ids: set[str] = set()
        self.text: list[str] = []
        self.title: list[str] = []
        self._in_title = False
        # The document's <title> only: the report's SVG charts carry <title> tooltips in the body.
        self._in_body = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self._in_body = self._in_body or tag == "body"
        self._in_title = tag == "title" and not self._in_body
        self.handlers += [n for n, _ in attrs if n.startswith("on")]
        self.ids |= {v for n, v in attrs if n == "id" and v}

    def handle_endtag(self, tag: str) -> None:
        self._in_title = False

    def handle_data(self, data: str) -> None:
        (self.title if self._in_title else self.text).append(data)


def check_page(exe: str, page: Path, profile: Path, screenshot: Path) -> Dom:
    loaded = browse(exe, page, profile, "--dump-dom")
    assert loaded.returncode == 0, loaded.stderr[-2000:]
    assert console_messages(loaded.stderr) == []
    dom = Dom()
    dom.feed(loaded.stdout)
    assert "".join(dom.title) == "ctxeval report"  # no hostile script ran
    assert not {"script", "img", "iframe", "object", "embed"} & set(dom.tags)
    assert dom.handlers == []
    shot = browse(exe, page, profile, f"--screenshot={screenshot}", "--window-size=1280,4000")
    assert shot.returncode == 0 and console_messages(shot.stderr) == []
    assert screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and screenshot.stat().st_size > 20_000
    return dom


def test_report_of_the_builtin_scenarios_in_chromium(pytester: pytest.Pytester, chromium: str,
                                                     artifacts: Path) -> None:
    scenarios = pytester.path / "scenarios"
    shutil.copytree(builtin_scenarios_dir(), scenarios)
    shutil.copy(HOSTILE, scenarios / HOSTILE.name)
    pytester.makefile(".j2", no6=NO_SECTION_6)
    common = ["--ctxeval", "-p", "no:cacheprovider", "-q"]
    pytester.runpytest(*common, "--ctxeval-prompt", "no6.j2", "--ctxeval-save-baseline", "weak.json")
    result = pytester.runpytest(*common, "--ctxeval-baseline", "weak.json", "--ctxeval-compare-prompt", "no6.j2",
                                "--ctxeval-report", "report.html", "--ctxeval-report", "results.json")
    # Whether every built-in verdict passes is the main job's business; here the page is.
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), result.stdout.str()[-3000:]
    result.stdout.fnmatch_lines(["ctxeval: wrote report.html"])
    page = pytester.path / "report.html"
    shutil.copy(page, artifacts / "ctxeval-report.html")

    dom = check_page(chromium, page, pytester.path / "profile", artifacts / "ctxeval-report.png")
    text = "".join(dom.text)
    for s in NASTY:
        assert s in text, s  # visible, as text
    assert {"hostile-content", "hostile-content-c1", "auth-refactor", "baseline", "ab"} <= dom.ids
    flat = " ".join(text.split())
    assert "What was lost (1)" in flat and "Against the baseline" in flat and "A/B: two prompts" in flat

    # The hostile scenario alone, rendered outside pytest: its screenshot shows the escaped text.
    doc = json.loads((pytester.path / "results.json").read_text(encoding="utf-8"))
    doc["scenarios"] = [s for s in doc["scenarios"] if s["name"] == "hostile_content"]
    doc.pop("ab"), doc.pop("comparison")
    (pytester.path / "hostile.json").write_text(json.dumps(doc), encoding="utf-8")
    assert main(["report", str(pytester.path / "hostile.json"), "-o", str(pytester.path / "hostile.html")]) == 0
    shutil.copy(pytester.path / "hostile.html", artifacts / "ctxeval-report-hostile.html")
    dom = check_page(chromium, pytester.path / "hostile.html", pytester.path / "profile",
                     artifacts / "ctxeval-report-hostile.png")
    text = "".join(dom.text)
    for s in NASTY:
        assert s in text, s
    print(f"screenshots: {artifacts / 'ctxeval-report.png'}, {artifacts / 'ctxeval-report-hostile.png'}")


def test_the_check_would_catch_a_script(chromium: str, tmp_path: Path) -> None:
    """The detector itself: an unescaped script shows in the title and in the console."""
    page = tmp_path / "bad.html"
    page.write_text("<!doctype html><title>ctxeval report</title><p>x</p>"
                    "<script>document.title='PWNED'; undefinedFn();</script>", encoding="utf-8")
    loaded = browse(chromium, page, tmp_path / "profile", "--dump-dom")
    dom = Dom()
    dom.feed(loaded.stdout)
    assert "".join(dom.title) == "PWNED"
    assert any("undefinedFn" in m for m in console_messages(loaded.stderr))
