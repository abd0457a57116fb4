"""An existence check answered "not there" is a probe, not an error a summary must quote (review 3, F6):
``pip show``, ``git rev-parse --verify``, ``docker inspect``, ``kubectl get``, ``python -c "import X"``
join ``ls``/``cat``/``which``. A real failure stays an error: a check that also runs something, or
whose output says anything but "not found", and an import error while running the app."""

from __future__ import annotations

import pytest

from pytest_ctxeval.reading.session_facts import error_kind

TRACEBACK = 'Traceback (most recent call last):\n  File "<string>", line 1, in <module>\n'
PROBES = [
    ("pip show reportlab", "WARNING: Package(s) not found: reportlab"),
    ("python -m pip show reportlab 2>&1 | head -3", "WARNING: Package(s) not found: reportlab"),
    ("git rev-parse --verify origin/feature-x", "fatal: Needed a single revision"),
    ("git show-ref --verify refs/heads/release", "fatal: 'refs/heads/release' - not a valid ref"),
    ("docker inspect shop-db", "[]\nError: No such object: shop-db"),
    ("kubectl get deploy shop -n staging", 'Error from server (NotFound): deployments.apps "shop" not found'),
    ('python -c "import reportlab"', TRACEBACK + "ModuleNotFoundError: No module named 'reportlab'"),
    ("python3 -c 'import weasyprint; print(weasyprint.__version__)'",
     TRACEBACK + "ModuleNotFoundError: No module named 'weasyprint'"),
    ("which wkhtmltopdf || echo 'not installed'", "not installed"),
    ("command -v pandoc", "Exit code 1"),
    ("cat config/local.yaml", "cat: config/local.yaml: No such file or directory"),
    ("dpkg -s libpango-1.0-0", "dpkg-query: package 'libpango-1.0-0' is not installed and no information is available"),
]
ERRORS = [
    # it also ran something: the sync's failure is the error
    ("which uv && uv sync", "error: Failed to fetch: `https://pypi.org/simple/reportlab/`"),
    # the check could not ask: no answer was given
    ("kubectl get pods -n staging", "Unable to connect to the server: dial tcp 10.0.0.1:6443: connect: connection refused"),
    ("pip show reportlab", "ERROR: Exception:\nTraceback (most recent call last):\nPermissionError: [Errno 13] Permission denied"),
    # running the app, or importing the project's own module that is broken
    ('python -c "import app; app.main()"', TRACEBACK + "ModuleNotFoundError: No module named 'yaml'"),
    ('python -c "import shop.views"', '  File "/repo/shop/views.py", line 3\n    def f(\n         ^\nSyntaxError: invalid syntax'),
    ('python -c "from shop import views"', TRACEBACK + "ImportError: cannot import name 'views' from partially initialized module 'shop'"),
    ("python app.py", TRACEBACK + "ModuleNotFoundError: No module named 'reportlab'"),
    ("cat orders.csv | python scripts/load.py", TRACEBACK + "KeyError: 'customer_id'"),
]


@pytest.mark.parametrize("command, output", PROBES)
def test_a_not_found_answer_is_a_probe(command, output):
    assert error_kind("Bash", output, {"command": command}) == "probe"


@pytest.mark.parametrize("command, output", ERRORS)
def test_a_real_failure_stays_an_error(command, output):
    assert error_kind("Bash", output, {"command": command}) == "error"


def _case(kit, command, output, errors_body):
    messages = [kit.user("Add a PDF export of the orders")]
    messages += kit.tool("Bash", {"command": command}, "Exit code 1\n" + output, is_error=True)
    bodies = {k: "x" for k in kit.SECTION_KINDS}
    bodies["errors"] = errors_body
    bodies["solving"] = "The PDF library is not installed; the user dropped the PDF export."
    return kit.case(messages, kit.summary(bodies))


@pytest.mark.parametrize("command, output", PROBES[:8])
def test_errors_preserved_does_not_ask_for_the_answer(grade, kit, command, output):
    verdict = grade("errors_preserved", _case(kit, command, output, "None."))
    assert verdict.status in ("pass", "n/a"), verdict.reasons


@pytest.mark.parametrize("command, output", ERRORS[1:5])
def test_errors_preserved_still_asks_for_a_real_failure(grade, kit, command, output):
    verdict = grade("errors_preserved", _case(kit, command, output, "None."))
    assert verdict.status == "fail", verdict.reasons
