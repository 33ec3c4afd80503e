"""Exit codes a CI can believe (docs/reference/exit-codes.md), decided in one place for every command:

1 when a gate failed whatever its failed calls would have said; else 3 when the results are incomplete (every
call failed, the run stopped early, more failed results than --max-failed); else 1 for a gate that failed through
failed calls the user tolerates; else 0. An answer that could not be judged is never a pass.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from ragfacts.cli import app
from tests.methods.test_lface4rag import REFERENCE, SEG1
from tests.scripted_server import Reply, ScriptedServer

runner = CliRunner()
NO_RETRIES = ["-M", "max_retries=0", "--no-cache"]


def invoke(server: ScriptedServer, *args: str):
    return runner.invoke(app, ["--model", "openai:scripted", "--base-url", server.base_url, *NO_RETRIES, *args])


def every_call_fails(server: ScriptedServer) -> None:
    server.when("", Reply.error(500))


def verdict(text: str) -> Reply:
    return Reply.json({"problems": [text] if text else [], "verdict": "inconsistent" if text else "consistent"})


def dataset(tmp_path: Path, *answers: str) -> Path:
    path = tmp_path / "data.jsonl"
    rows = [{"id": f"r{n}", "reference": REFERENCE, "answer": answer} for n, answer in enumerate(answers)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_check_of_one_answer_exits_3_when_every_call_failed(server):
    every_call_fails(server)
    result = invoke(server, "check", "-r", REFERENCE, "-a", SEG1)
    assert result.exit_code == 3, result.output
    assert "UNSCORED" in result.stderr and "not fully judged (--max-failed 0.05)" in result.stderr


def test_check_of_one_answer_honours_max_failed(server):
    every_call_fails(server)
    assert invoke(server, "check", "-r", REFERENCE, "-a", SEG1, "--max-failed", "1").exit_code == 0


def test_recall_of_one_answer_exits_3_when_every_call_failed(server):
    every_call_fails(server)
    result = invoke(server, "recall", "-a", "Paris is in France.", "-f", '["Paris is in France."]')
    assert result.exit_code == 3, result.output


def test_a_gate_that_failed_whatever_the_failed_call_says_exits_1(server, tmp_path):
    """One answer judged inconsistent, one whose call failed: 0 of 2 consistent, and at best 1 of 2 were the
    failed call to succeed, still under 0.9: the gate failed, exit 1, though a call failed too."""
    server.when("The Seine flows", verdict("The answer names the wrong river."))
    server.when("The Loire flows", Reply.error(500))
    data = dataset(tmp_path, "The Seine flows north.", "The Loire flows east.")
    result = invoke(
        server, "check", str(data), "-o", str(tmp_path / "run"), "--method", "holistic", "--min-consistent", "0.9"
    )
    assert result.exit_code == 1, result.output
    assert "--min-consistent 0.9 failed" in result.stderr and "undecided" not in result.stderr


def test_a_gate_that_fails_only_through_failed_calls_is_undecided_and_exits_3(server, tmp_path):
    """Every call failed: nothing was judged, so the gate neither passed nor failed on a verdict: exit 3, rerun."""
    every_call_fails(server)
    data = dataset(tmp_path, "The Seine flows north.", "The Loire flows east.")
    result = invoke(
        server, "check", str(data), "-o", str(tmp_path / "run"), "--method", "holistic", "--min-consistent", "0.5"
    )
    assert result.exit_code == 3, result.output
    assert "undecided" in result.stderr and "--max-failed" in result.stderr


def test_a_gate_failed_through_tolerated_failures_exits_1(server, tmp_path):
    server.when("The Seine flows", verdict(""))
    server.when("The Loire flows", Reply.error(500))
    data = dataset(tmp_path, "The Seine flows north.", "The Loire flows east.")
    args = ["--method", "holistic", "--min-consistent", "0.9", "--max-failed", "1"]
    result = invoke(server, "check", str(data), "-o", str(tmp_path / "run"), *args)
    assert result.exit_code == 1, result.output


def test_facts_whose_generation_failed_exit_3_not_as_a_gate(server):
    every_call_fails(server)
    assert invoke(server, "facts", "-g", "Paris is the capital of France.").exit_code == 3


def test_a_failed_explanation_neither_fails_the_run_nor_is_retried_on_resume(server, tmp_path):
    """The verdict is made by the score; the generated explanation (explain=generate) times out or fails: the
    run exits 0, counts no failed result toward --max-failed, and a rerun judges nothing again."""
    import math

    yes = Reply.first_token_logprobs({"Yes": math.log(0.2), "No": math.log(0.8)})
    server.enqueue(Reply.first_token_logprobs({"Yes": math.log(0.9), "No": math.log(0.1)}))  # the probe
    server.when("<segment>", Reply.error(500))  # the fact stage, explaining
    server.when("", yes)
    data = dataset(tmp_path, "The Seine flows north.", "The Loire flows east.")
    args = ["check", str(data), "-o", str(tmp_path / "run"), "--method", "lface4rag:strategy=holistic_score"]
    result = invoke(server, *args, "-O", "explain=generate")
    assert result.exit_code == 0, result.output
    assert "have a failed call" not in result.stderr and "best effort" in result.stderr
    calls = len(server.requests)
    again = invoke(server, *args, "-O", "explain=generate")
    assert again.exit_code == 0 and "2 reused, 0 judged now" in again.stderr
    assert len(server.requests) == calls + 1  # the probe for log-probabilities, which every run asks once
