"""Mutation audit of the real-API tests (issue 16): each defect the issue listed is put back into
the code in place (one small edit), the test that guards it is run, and the edit is undone.

    python scripts/mutation_audit_real_api.py            # all defects
    python scripts/mutation_audit_real_api.py 3 8        # only defects 3 and 8

Prints one line per mutant: CAUGHT (the test failed, as it must), MISSED (the test passed with the
defect back: the test cannot fail and needs fixing), or STALE (the code changed; update the edit).
Run it on a clean checkout: it rewrites files while it runs and restores them after each mutant.
"""
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
T = "tests/llm/test_real_api.py::"
P = "tests/llm/test_providers.py::"
#: (defect, file, the fixed code, the defect put back, the tests that must then fail)
M = [
 ("1", "pytest_ctxeval/grading/judging.py", "return transform_schema(JudgeReply)", "return JudgeReply.model_json_schema()",
  [T+"test_judge_requests_pass_structured_output_validation"]),
 ("2 room", "pytest_ctxeval/core/config.py", "return self.summary_output_reserve_tokens + self.summary_thinking_tokens",
  "return self.summary_output_reserve_tokens", [T+"test_the_summariser_has_room_to_think"]),
 ("2 retry", "pytest_ctxeval/llm/base.py", 'if reply.stop_reason == "max_tokens":\n            room =',
  'if False:\n            room =', [T+"test_a_summary_cut_at_max_tokens_is_retried_with_more_room"]),
 ("2 cut", "pytest_ctxeval/llm/base.py", 'if reply.stop_reason == "max_tokens":\n            raise',
  'if False:\n            raise', [T+"test_a_summary_still_cut_is_reported_never_graded"]),
 ("2 window", "pytest_ctxeval/llm/base.py", 'if reply.stop_reason == "model_context_window_exceeded":', 'if False:',
  [T+"test_a_reply_cut_by_the_context_window_is_an_error"]),
 ("2 refusal", "pytest_ctxeval/llm/base.py", 'if reply.stop_reason == "refusal":', 'if False:',
  [T+"test_a_refusal_is_one_error_for_the_run"]),
 ("2 pause", "pytest_ctxeval/llm/base.py", 'if reply.stop_reason != "pause_turn":', 'if True:',
  [T+"test_a_paused_turn_is_continued"]),
 ("3", "pytest_ctxeval/llm/base.py", '"messages": without_thinking(messages)', '"messages": messages',
  [T+"test_scripted_thinking_is_never_sent_with_a_made_up_signature"]),
 ("4 judge resend", "pytest_ctxeval/grading/judging.py", "elif isinstance(reply, ModelError):  # the SDK", "elif False:  # the SDK",
  [T+"test_a_client_error_is_sent_once", T+"test_a_judge_prompt_too_long_is_sent_once"]),
 ("4 ptl resend", "pytest_ctxeval/grading/judging.py", "elif isinstance(reply, ModelError):  # the SDK", "elif False:  # the SDK",
  [T+"test_a_judge_prompt_too_long_is_sent_once"]),
 ("4+5 run level", "pytest_ctxeval/llm/base.py", 'self.run_level = backend != "offline"', "self.run_level = False",
  [T+"test_a_sustained_outage_is_retried_by_the_sdk_only", T+"test_an_unusable_endpoint_is_one_usage_error"]),
 ("5 pytest", "pytest_ctxeval/llm/base.py", 'self.run_level = backend != "offline"', "self.run_level = False",
  [T+"test_under_pytest_a_bad_key_stops_the_session"]),
 ("6", "pytest_ctxeval/llm/__init__.py", 'extra["http_client"] = httpx2.Client(transport=network)',
  'extra["http_client"] = httpx2.Client(transport=network)\n    else:\n        extra["http_client"] = httpx2.Client(transport=httpx2.HTTPTransport())',
  [T+"test_the_sdk_http_client_keeps_proxies_and_connections"]),
 ("7", "pytest_ctxeval/llm/base.py", "STREAM_ABOVE_TOKENS = 21_333", "STREAM_ABOVE_TOKENS = 10**9",
  [T+"test_a_large_max_tokens_is_streamed"]),
 ("8 cached", "pytest_ctxeval/llm/base.py", "self.usage.add_cached(name)", "self.usage.add(name, usage, batch=batch)",
  [T+"test_a_cached_rerun_makes_no_request_and_costs_nothing"]),
 ("8 unpriced", "pytest_ctxeval/llm/usage.py", "unpriced.append(model)", "pass", [T+"test_an_unpriced_model_is_flagged"]),
 ("8 batch", "pytest_ctxeval/llm/pricing.py", "total -= 0.5 *", "total -= 0.0 *", [T+"test_batch_replies_cost_half"]),
 ("9 gate", "pytest_ctxeval/options.py", "gate = Gate(self.concurrency)\n            object.__setattr__(self, \"_gate\", gate)",
  "return Gate(self.concurrency)", [T+"test_concurrency_bounds_every_request_in_flight"]),
 ("10 stage", "pytest_ctxeval/evaluate.py", "self.staged = bool(staged and self.options.batch and self.wants_judge)",
  "self.staged = False", [T+"test_batch_sends_one_batch_per_run_stage"]),
 ("10 errored", "pytest_ctxeval/llm/batching.py", "results[i] = ModelError(f\"{task} request in batch {batch.id} errored ({detail})\")",
  "results[i] = ModelError(f\"{task} request in batch {batch.id} errored\")", [T+"test_an_errored_batch_result_keeps_the_api_message"]),
 ("P sigv4", "pytest_ctxeval/llm/wire.py", 'return sigv4_problem(request, self.aws, service="bedrock")', "return None",
  [P+"test_wrong_aws_credentials_are_one_error_naming_them"]),
 ("P stream", "pytest_ctxeval/llm/wire.py", 'if provider == "bedrock":\n                return httpx2.Response(200, content=aws_event_stream',
  'if False:\n                return httpx2.Response(200, content=aws_event_stream', [P+"test_a_large_max_tokens_is_streamed_through_the_provider"]),
 ("P creds msg", "pytest_ctxeval/llm/failures.py", "if run_level and status in (401, 403) and (fix := _credentials_problem(exc)):",
  "if False:", [P+"test_wrong_aws_credentials_are_one_error_naming_them", P+"test_a_wrong_vertex_token_is_one_error_naming_it"]),
 ("9 loop", "pytest_ctxeval/llm/base.py",
  "        with ThreadPoolExecutor(max_workers=min(self.gate.limit, len(requests))) as pool:\n            futures = [pool.submit(one, r) for r in requests]\n            return first + [f.result() for f in futures]",
  "        import asyncio\n\n        async def _all():\n            return await asyncio.gather(*[asyncio.to_thread(one, r) for r in requests])\n        return first + list(asyncio.run(_all()))",
  [T+"test_concurrent_calls_from_inside_a_running_event_loop"]),
 ("5 cli", "pytest_ctxeval/llm/base.py", 'self.run_level = backend != "offline"', "self.run_level = False",
  [T+"test_an_unusable_endpoint_is_one_usage_error"]),
]
only = sys.argv[1:]
env = dict(os.environ)
for name, rel, old, new, tests in M:
    if only and name.split()[0] not in only and name not in only:
        continue
    path = ROOT / rel
    text = path.read_text()
    if text.count(old) != 1:
        print(f"defect {name:16s} STALE: the edit no longer matches {rel}", flush=True)
        continue
    path.write_text(text.replace(old, new))
    try:
        r = subprocess.run([sys.executable, "-m", "pytest", *tests, "-q", "-x", "-p", "no:cacheprovider"],
                           cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
        last = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else r.stderr[-200:]
        print(f"defect {name:16s} {'CAUGHT' if r.returncode else 'MISSED'}: {last}", flush=True)
    finally:
        path.write_text(text)
