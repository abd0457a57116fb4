"""Bedrock and Vertex through the SDK's own clients, against the local server (issue 16).

Bedrock requests are signed by botocore (SigV4), as a user's are, and the server verifies the
signature as AWS does (``pytest_ctxeval.llm.wire_auth``); Vertex requests carry an access token, so
no Google login is needed. botocore comes with ``pytest-ctxeval[bedrock]``, which the ``test``
extra includes: without it the SigV4 tests skip, naming the extra.
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import sys
from pathlib import Path

import httpx2
import pytest

from pytest_ctxeval.cli import main
from pytest_ctxeval.errors import UsageError
from pytest_ctxeval.llm import make_llm
from pytest_ctxeval.llm.server import ApiServer
from pytest_ctxeval.llm.wire_auth import AwsKeys, plain_model, sigv4_problem
from pytest_ctxeval.options import builtin_scenarios_dir

needs_botocore = pytest.mark.skipif(
    importlib.util.find_spec("botocore") is None,
    reason="SigV4 signing needs botocore: pip install -e '.[test]' (it includes pytest-ctxeval[bedrock])")

HI = [{"role": "user", "content": "hi"}]
#: Two built-in scenarios (a full compaction with a PTL retry, and tool calls in flight): every
#: request kind of a run (summaries, probes, judge votes) over each provider's paths.
LIBRARY = ("auth_refactor", "tool_calls_in_flight")
BEDROCK_MODEL = "us.anthropic.claude-sonnet-5-5-v1:0"  # Bedrock's own id form (a ':' in the signed path)


def use(monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> None:
    for name in ("AWS_BEARER_TOKEN_BEDROCK", "AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")  # never ask a metadata service for keys
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/ctxeval-aws-config")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/ctxeval-aws-credentials")
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    if importlib.util.find_spec("boto3") is not None:  # the SDK caches one boto3 session (and its keys) per process
        from anthropic.lib.aws._auth import _get_session

        _get_session.cache_clear()


def run_library(tmp_path: Path, *extra: str) -> tuple[int, dict]:
    paths = [str(builtin_scenarios_dir() / f"{name}.yaml") for name in LIBRARY]
    code = main(["run", *paths, "--backend", "anthropic", "--cassettes", str(tmp_path / "c"),
                 "--json", str(tmp_path / "r.json"), *extra])
    doc = json.loads((tmp_path / "r.json").read_text()) if (tmp_path / "r.json").exists() else {}
    return code, doc


def assert_whole_run(doc: dict) -> None:
    assert [s["name"] for s in doc["scenarios"]] == list(LIBRARY)
    assert all(s.get("error") is None and not s.get("skipped") for s in doc["scenarios"])
    ungraded = [(s["name"], n, g.get("reason")) for s in doc["scenarios"] for n, g in s["graders"].items()
                if g["status"] == "ungraded"]
    assert not ungraded, ungraded
    assert doc["usage"]["api_calls"] > 0 and doc["usage"]["usd"] > 0 and not doc["usage"].get("unpriced")


# Bedrock ---------------------------------------------------------------------------------------------

@needs_botocore
def test_the_library_runs_on_bedrock_with_sigv4_signed_requests(api_server: ApiServer, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    use(monkeypatch, api_server.bedrock_environ())
    code, doc = run_library(tmp_path, "--provider", "bedrock", "--model", BEDROCK_MODEL,
                            "--judge-model", BEDROCK_MODEL)
    assert code == 0, capsys.readouterr()
    assert_whole_run(doc)
    sent = api_server.wire.messages_requests()
    assert sent and {r["provider"] for r in sent} == {"bedrock"}
    assert {r["path"] for r in sent} == {f"/model/{BEDROCK_MODEL}/invoke"}
    assert all("x-amz-date" in r["headers"] for r in sent)  # signed (the server verified each signature)


@needs_botocore
@pytest.mark.parametrize("what", ["secret", "access-key"])
def test_wrong_aws_credentials_are_one_error_naming_them(api_server: ApiServer, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str], what: str) -> None:
    env = api_server.bedrock_environ()
    if what == "secret":
        env["AWS_SECRET_ACCESS_KEY"] = "wrong-secret-value-123"
    else:
        env["AWS_ACCESS_KEY_ID"] = "AKIAWRONGWRONGWRONG1"
    use(monkeypatch, env)
    code, _ = run_library(tmp_path, "--provider", "bedrock")
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    kind = "InvalidSignatureException" if what == "secret" else "UnrecognizedClientException"
    assert f"Bedrock refused the AWS credentials ({kind})" in err and "AWS_SECRET_ACCESS_KEY" in err, err
    assert "wrong-secret-value-123" not in err
    # A 403 is not retried and the run stops: at most the first request of each scenario running side by side.
    assert len(api_server.wire.log) <= len(LIBRARY)


@needs_botocore
def test_the_server_verifies_sigv4_as_aws_does(api_server: ApiServer) -> None:
    """A signature is checked, not just its shape: the body, a signed header, the date, the key."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    keys = api_server.wire.aws
    url = f"{api_server.url}/model/{BEDROCK_MODEL}/invoke"
    body = b'{"anthropic_version":"x","max_tokens":10,"messages":[]}'

    def signed(secret: str = keys.secret_key, access: str = keys.access_key) -> httpx2.Request:
        aws = AWSRequest(method="POST", url=url, data=body, headers={"content-type": "application/json",
                                                                    "x-ctxeval-task": "chat"})
        SigV4Auth(Credentials(access, secret), "bedrock", "us-east-1").add_auth(aws)
        return httpx2.Request("POST", url, headers=dict(aws.headers.items()), content=body)

    good = signed()
    assert sigv4_problem(good, keys) is None
    tampered = httpx2.Request("POST", url, headers=good.headers, content=body.replace(b"10", b"99"))
    assert "signature we calculated does not match" in (sigv4_problem(tampered, keys) or "")
    header = httpx2.Request("POST", url, headers={**good.headers, "x-ctxeval-task": "judge"}, content=body)
    assert "does not match" in (sigv4_problem(header, keys) or "")
    assert "does not match" in (sigv4_problem(signed(secret="other"), keys) or "")
    assert "security token included in the request is invalid" in (sigv4_problem(signed(access="AKIAOTHER"), keys) or "")
    later = dt.datetime.now(dt.UTC) + dt.timedelta(minutes=20)
    assert "Signature expired" in (sigv4_problem(good, keys, now=later) or "")
    assert "scoped to correct service: 'sagemaker'" in (sigv4_problem(good, keys, service="sagemaker") or "")
    assert sigv4_problem(good, AwsKeys(keys.access_key, keys.secret_key)) is None


def test_bedrock_without_botocore_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "botocore", None)  # as if pytest-ctxeval[bedrock] were not installed
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK", raising=False)
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    with pytest.raises(UsageError, match=r"needs botocore .*pip install 'pytest-ctxeval\[bedrock\]'"):
        make_llm("anthropic", provider="bedrock", base_url="http://127.0.0.1:9")


def test_vertex_without_a_token_or_google_auth_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "google.auth", None)
    monkeypatch.delenv("ANTHROPIC_VERTEX_ACCESS_TOKEN", raising=False)
    monkeypatch.setenv("CLOUD_ML_REGION", "us-east5")
    with pytest.raises(UsageError, match=r"needs google-auth .*pytest-ctxeval\[vertex\].*ANTHROPIC_VERTEX_ACCESS_TOKEN"):
        make_llm("anthropic", provider="vertex", base_url="http://127.0.0.1:9")


def test_bedrock_and_vertex_bodies_are_checked_like_theirs(api_server: ApiServer) -> None:
    """The model travels in the path, never in the body, as Bedrock and Vertex require."""
    env = api_server.vertex_environ()
    url = (f"{env['ANTHROPIC_VERTEX_BASE_URL']}/projects/p/locations/us-east5/publishers/anthropic/models/"
           "claude-sonnet-5-5:rawPredict")
    auth = {"authorization": f"Bearer {env['ANTHROPIC_VERTEX_ACCESS_TOKEN']}"}
    body = {"anthropic_version": "v", "max_tokens": 2_000, "messages": HI}
    assert httpx2.post(url, json=body, headers=auth).status_code == 200
    with_model = httpx2.post(url, json={**body, "model": "claude-sonnet-5-5"}, headers=auth)
    assert with_model.status_code == 400 and "extraneous key [model]" in with_model.text
    no_version = httpx2.post(url, json={k: v for k, v in body.items() if k != "anthropic_version"}, headers=auth)
    assert no_version.status_code == 400 and "anthropic_version" in no_version.text
    assert plain_model("bedrock", BEDROCK_MODEL) == "claude-sonnet-5-5"


# Vertex ----------------------------------------------------------------------------------------------

def test_the_library_runs_on_vertex(api_server: ApiServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    use(monkeypatch, api_server.vertex_environ())
    code, doc = run_library(tmp_path, "--provider", "vertex", "--model", "claude-sonnet-5-5@20261001",
                            "--judge-model", "claude-sonnet-5-5@20261001")
    assert code == 0, capsys.readouterr()
    assert_whole_run(doc)
    sent = api_server.wire.messages_requests()
    assert sent and {r["provider"] for r in sent} == {"vertex"}
    assert all(r["path"].endswith("/models/claude-sonnet-5-5@20261001:rawPredict") for r in sent)


def test_a_wrong_vertex_token_is_one_error_naming_it(api_server: ApiServer, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    use(monkeypatch, {**api_server.vertex_environ(), "ANTHROPIC_VERTEX_ACCESS_TOKEN": "ya29.expired-token"})
    code, _ = run_library(tmp_path, "--provider", "vertex")
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "Vertex refused the access token (UNAUTHENTICATED)" in err and "gcloud auth print-access-token" in err
    assert "ya29.expired-token" not in err
    assert len(api_server.wire.log) <= len(LIBRARY)


# Streaming: a summary asking for over 21,333 tokens is streamed, in each provider's own format -----

@pytest.mark.parametrize("provider, verb", [
    pytest.param("bedrock", "invoke-with-response-stream", marks=needs_botocore),  # an AWS event stream
    ("vertex", "streamRawPredict"),  # server-sent events
])
def test_a_large_max_tokens_is_streamed_through_the_provider(api_server: ApiServer, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str],
                                                             provider: str, verb: str) -> None:
    use(monkeypatch, api_server.bedrock_environ() if provider == "bedrock" else api_server.vertex_environ())
    path = str(builtin_scenarios_dir() / "auth_refactor.yaml")
    code = main(["run", path, "--backend", "anthropic", "--provider", provider, "--cassettes", str(tmp_path / "c"),
                 "--graders", "nine_sections", "--context-window", "1000000", "--json", str(tmp_path / "r.json")])
    assert code == 0, capsys.readouterr()
    compacts = [r for r in api_server.wire.messages_requests() if r["headers"].get("x-ctxeval-task") == "compact"]
    assert compacts and all(r["path"].endswith(verb) and r["body"]["max_tokens"] >= 100_000 for r in compacts)
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["scenarios"][0]["graders"]["nine_sections"]["status"] == "pass"


# Under pytest ------------------------------------------------------------------------------------------

@needs_botocore
def test_pytest_ctxeval_runs_on_bedrock(pytester: pytest.Pytester, api_server: ApiServer,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """``pytest --ctxeval --ctxeval-provider bedrock``: the plugin's own run, signed requests, and a
    wrong secret stops the session with the one credentials error. Both runs are in this process:
    the second must sign with the keys the environment holds now (the SDK keeps a boto3 session per
    set of keys it is given, so keys it read from the environment itself stayed in use)."""
    from tests.scenario_texts import TINY

    pytester.makefile(".yaml", **{"scenarios/tiny": TINY})
    use(monkeypatch, api_server.bedrock_environ())
    args = ["--ctxeval", "--ctxeval-backend", "anthropic", "--ctxeval-provider", "bedrock", "--ctxeval-model",
            BEDROCK_MODEL, "--ctxeval-judge-model", BEDROCK_MODEL]
    result = pytester.runpytest(*args, "--ctxeval-cassettes", str(pytester.path / "c"))
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert {r["provider"] for r in api_server.wire.messages_requests()} == {"bedrock"}
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wrong-secret-value-123")
    result = pytester.runpytest(*args, "--ctxeval-cassettes", str(pytester.path / "fresh"))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stdout.fnmatch_lines(["*Bedrock refused the AWS credentials (InvalidSignatureException)*"])
    assert "wrong-secret-value-123" not in result.stdout.str() + result.stderr.str()
