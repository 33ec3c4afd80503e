"""`ragfacts evaluate QUESTIONS --endpoint URL`: ask a live RAG service over HTTP, then judge its answers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragfacts.cli import app, hoist_global_options
from ragfacts.text import delimit
from tests.conftest import TEST_KEY
from tests.rag_server import RagReply, RagServer, running_rag_server
from tests.scripted_server import ScriptedServer

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]
RAG_SECRET = "rag-SECRET-bearer-9876543210"
ENDPOINT = ["--endpoint-body", '{"query": "{question}", "top_k": 2}', "--answer-path", "answer"]
CONTEXTS = ["--contexts-path", "sources[*].text"]


@pytest.fixture(scope="module")
def _rag() -> Iterator[RagServer]:
    with running_rag_server() as server:
        yield server


@pytest.fixture
def rag(_rag: RagServer) -> Iterator[RagServer]:
    _rag.reset()
    yield _rag


@pytest.fixture
def judge(scripted_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch) -> ScriptedServer:
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
    return scripted_server


def invoke(judge: ScriptedServer, *args: str):
    options = ["--model", "openai:scripted", "--base-url", judge.base_url, "--no-cache"]
    return runner.invoke(app, hoist_global_options([*options, *args]))  # global options anywhere, as in `main`


def evaluate(judge: ScriptedServer, rag: RagServer, data: Path, run: Path, *args: str):
    return invoke(judge, "evaluate", str(data), "-o", str(run), "--endpoint", rag.url, *ENDPOINT, *CONTEXTS, *args)


def questions(tmp_path: Path, count: int = 2) -> Path:
    path = tmp_path / "questions.jsonl"
    rows = [{"id": f"q{n}", "question": f"Question {n}?", "ground_truth": f"Truth {n}."} for n in range(count)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_questions_are_asked_then_judged_against_their_contexts_and_ground_truth(judge, rag, tmp_path):
    result = evaluate(judge, rag, questions(tmp_path), tmp_path / "run", "--json")
    assert result.exit_code == 0, result.output
    assert [r.body for r in rag.requests if r.question == "Question 0?"] == [{"query": "Question 0?", "top_k": 2}]
    prompts = [request.prompt for request in judge.requests]
    contexts = "[1] Question 0? context one\n\n[2] Question 0? context two"
    assert any(delimit("reference", contexts) in p for p in prompts)  # precision: against the retrieved contexts
    assert any(delimit("answer", "Answer to Question 0?") in p for p in prompts)
    assert any(delimit("reference_answer", "Truth 0.") in p for p in prompts)  # recall against the ground truth
    document = json.loads(result.stdout)
    assert {row["id"] for row in document["rows"]} == {"q0", "q1"}
    assert [s["judged"] for s in document["summary"]] == [2, 2]
    endpoint = document["endpoint"]
    assert (endpoint["rows"], endpoint["answered"], endpoint["failed"]) == (2, 2, 0) and endpoint["latency_s"][
        "max"
    ] > 0
    stored = [json.loads(line) for line in (tmp_path / "run" / "answers.jsonl").read_text().splitlines()]
    assert {line["answer"] for line in stored} == {"Answer to Question 0?", "Answer to Question 1?"}
    assert stored and all(line["latency_s"] > 0 and len(line["contexts"]) == 2 for line in stored)
    assert "Endpoint" in result.stderr and "answer ← endpoint answer" in result.stderr


def test_a_rerun_asks_the_service_nothing_for_answered_questions_and_reuses_the_judgements(judge, rag, tmp_path):
    data = questions(tmp_path)
    assert evaluate(judge, rag, data, tmp_path / "run").exit_code == 0
    rag.reset()
    judge.reset()
    # --keep-failed: results the scripted judge left unscored are not retried, so any judging would be a new item
    again = evaluate(judge, rag, data, tmp_path / "run", "--keep-failed")
    assert again.exit_code == 0, again.output
    assert rag.requests == [] and judge.requests == []
    assert "2 answered before, 0 asked now" in again.stderr and "4 results: 4 reused, 0 judged now" in again.stderr


def test_a_500_and_a_timeout_are_failed_rows_counted_shown_and_retried_by_the_next_run(judge, rag, tmp_path):
    data = questions(tmp_path, 3)
    rag.script("Question 1?", RagReply(500, {"error": "index offline"}))
    rag.script("Question 2?", RagReply(delay_s=3.0))
    first = evaluate(judge, rag, data, tmp_path / "run", "--json", "--endpoint-option", "max_retries=0",
                     "--endpoint-option", "timeout_s=0.5")  # fmt: skip
    assert first.exit_code == 3, first.output
    document = json.loads(first.stdout)
    assert [row["id"] for row in document["rows"]] == ["q0"]  # only the answered row is judged
    endpoint = document["endpoint"]
    assert (endpoint["answered"], endpoint["failed"]) == (1, 2)
    assert endpoint["failures"] == {'HTTP 500: {"error": "index offline"}': 1, "timed out after 0.5 s": 1}
    assert "2 of 3 questions have no answer from the service" in first.stderr
    assert "failed ×1: HTTP 500" in " ".join(first.stderr.split())
    stored = [json.loads(line) for line in (tmp_path / "run" / "answers.jsonl").read_text().splitlines()]
    assert sorted(line["ok"] for line in stored) == [False, False, True]
    rag.reset()
    second = evaluate(judge, rag, data, tmp_path / "run", "--json")
    assert second.exit_code == 0, second.output
    assert sorted(r.question for r in rag.requests) == ["Question 1?", "Question 2?"]
    assert len(json.loads(second.stdout)["rows"]) == 3


def test_keep_failed_accepts_failed_rows_without_asking_again(judge, rag, tmp_path):
    data = questions(tmp_path, 2)
    rag.script("Question 1?", RagReply(404, "no such index"))
    assert evaluate(judge, rag, data, tmp_path / "run").exit_code == 3
    rag.reset()
    kept = evaluate(judge, rag, data, tmp_path / "run", "--keep-failed")
    assert kept.exit_code == 0, kept.output
    assert rag.requests == [] and "failed ×1: HTTP 404: no such index" in " ".join(kept.stderr.split())


def test_an_unreachable_service_stops_after_n_failures_in_a_row_and_judges_nothing(judge, tmp_path):
    data = questions(tmp_path, 8)
    down = ["--endpoint", "http://127.0.0.1:9/ask", "--stop-after", "2", "--endpoint-option", "max_retries=0"]
    result = invoke(
        judge, "evaluate", str(data), "-o", str(tmp_path / "run"), *down, "--endpoint-option", "concurrency=1"
    )
    assert result.exit_code == 3, result.output
    assert "stopped early: 2 questions in a row failed at http://127.0.0.1:9/ask" in result.stderr
    assert judge.requests == [] and not (tmp_path / "run" / "results.jsonl").exists()


def test_a_changed_endpoint_configuration_is_refused_until_forced(judge, rag, tmp_path):
    data = questions(tmp_path, 1)
    assert evaluate(judge, rag, data, tmp_path / "run").exit_code == 0
    rag.reset()
    changed = evaluate(judge, rag, data, tmp_path / "run", "--endpoint-header", "X-Index: v2")
    assert changed.exit_code == 2 and 'another endpoint configuration (headers [] → ["x-index"])' in changed.stderr
    assert "--force" in changed.stderr and rag.requests == []
    forced = evaluate(judge, rag, data, tmp_path / "run", "--endpoint-header", "X-Index: v2", "--force")
    assert forced.exit_code == 0, forced.output
    assert rag.asked() == 1 and rag.requests[0].headers["x-index"] == "v2"


def test_the_auth_header_comes_from_the_environment_and_never_reaches_the_run_directory(
    judge, rag, tmp_path, monkeypatch
):
    monkeypatch.setenv("RAG_TOKEN", RAG_SECRET)
    rag.script("Question 1?", RagReply(401, {"error": f"Bearer {RAG_SECRET} is revoked"}))
    result = evaluate(judge, rag, questions(tmp_path), tmp_path / "run", "--json",
                      "--endpoint-header", "Authorization: Bearer ${RAG_TOKEN}")  # fmt: skip
    assert result.exit_code == 3, result.output
    assert {r.headers["authorization"] for r in rag.requests} == {f"Bearer {RAG_SECRET}"}
    files = [path for path in (tmp_path / "run").rglob("*") if path.is_file()]
    assert {path.name for path in files} >= {"answers.jsonl", "endpoint.json", "results.jsonl", "manifest.json"}
    for path in files:
        assert RAG_SECRET not in path.read_text(encoding="utf-8", errors="replace"), path
    assert RAG_SECRET not in result.stdout and RAG_SECRET not in result.stderr
    assert json.loads(result.stdout)["endpoint"]["failures"] == {'HTTP 401: {"error": "[redacted] is revoked"}': 1}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--answer-path", "data..answer"], "--answer-path: path 'data..answer': a key is missing before the dot"),
        (["--contexts-path", "sources[x].text"], "--contexts-path: path 'sources[x].text': unexpected '['"),
        (["--answer-path", "docs[*].text"], "the answer is one value; [*] is for the contexts"),
        (["--endpoint-body", '{"query": {question}}'], 'put the placeholder in quotes: "{question}"'),
        (["--endpoint-body", '{"query": "{q}"}'], "unknown placeholder {q}"),
        (["--endpoint-body", '{"query": "fixed"}'], "--endpoint-body has no {question}"),
        (["--endpoint-body", "@missing.json"], "--endpoint-body @missing.json: no such file"),
        (["--endpoint-header", "Authorization: Bearer ${UNSET_TOKEN}"], "UNSET_TOKEN is not set"),
        (["--endpoint-option", "timeout=3"], "--endpoint-option timeout: Extra inputs are not permitted"),
        (["--endpoint-option", "url=http://x"], "--endpoint-option url: use --endpoint"),
        (["--map", "answer=question"], "with --endpoint the answer comes from the service"),
    ],
)
def test_bad_paths_templates_and_options_exit_2_with_a_clear_message_and_nothing_written(
    judge, rag, tmp_path, args, message
):
    data = questions(tmp_path)
    command = ["evaluate", str(data), "-o", str(tmp_path / "run"), "--endpoint", rag.url, *args]
    result = invoke(judge, *command)
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.stderr.split()) and "Traceback" not in result.output
    assert not (tmp_path / "run").exists() and rag.requests == [] and judge.requests == []


def test_endpoint_flags_without_endpoint_are_bad_usage(judge, tmp_path):
    result = invoke(judge, "evaluate", str(questions(tmp_path)), "-o", str(tmp_path / "run"), "--answer-path", "x")
    assert result.exit_code == 2 and "--answer-path: only with --endpoint URL" in result.stderr


def test_questions_without_ground_truth_and_a_service_without_contexts_cannot_be_judged(judge, rag, tmp_path):
    data = tmp_path / "bare.jsonl"
    data.write_text('{"question": "Q?"}\n', encoding="utf-8")
    result = invoke(judge, "evaluate", str(data), "-o", str(tmp_path / "run"), "--endpoint", rag.url,
                    "--contexts-path", "none")  # fmt: skip
    assert result.exit_code == 2 and "cannot be judged" in result.stderr
    assert rag.requests == [] and not (tmp_path / "run").exists()


def test_a_run_killed_with_sigkill_loses_no_answer_and_the_rerun_asks_only_the_rest(judge, rag, tmp_path):
    data = questions(tmp_path, 8)
    for n in range(8):
        rag.script(f"Question {n}?", RagReply(delay_s=0.2))
    env = {**os.environ, "OPENAI_API_KEY": TEST_KEY, "RAGFACTS_HOME": str(tmp_path / "home")}
    command = [sys.executable, "-m", "ragfacts", "--model", "openai:m", "--base-url", judge.base_url, "evaluate",
               str(data), "-o", str(tmp_path / "run"), "--endpoint", rag.url, *ENDPOINT, *CONTEXTS,
               "--endpoint-option", "concurrency=1", "--precision", "none"]  # fmt: skip
    process = subprocess.Popen(command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    answers = tmp_path / "run" / "answers.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not answers.exists() or len(answers.read_bytes().splitlines()) < 3):
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.wait()
    kept = {json.loads(line)["question"] for line in answers.read_text().splitlines()}
    assert 3 <= len(kept) < 8, "the run was not killed mid-way"
    rag.reset()
    resumed = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    asked = {request.question for request in rag.requests}
    assert not asked & kept and len(asked | kept) == 8


def test_a_missing_api_key_is_refused_before_the_service_is_asked(judge, rag, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    args = ["--model", "openai:gpt-4o-mini", "--no-cache", "evaluate", str(questions(tmp_path)), "-o"]
    result = runner.invoke(app, [*args, str(tmp_path / "run"), "--endpoint", rag.url, *ENDPOINT, *CONTEXTS])
    assert result.exit_code == 2 and "no API key" in result.stderr
    assert rag.requests == [] and not (tmp_path / "run").exists()
