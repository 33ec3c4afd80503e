"""`ragfacts evaluate`: precision and recall of a dataset in one resumable run, end to end over HTTP."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from typer.testing import CliRunner

from ragfacts.cli import app
from ragfacts.text import delimit
from tests.conftest import TEST_KEY
from tests.scripted_server import Reply, ScriptedServer

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]


def invoke(url: str, *args: str, cache: bool = False):
    options = ["--model", "openai:scripted", "--base-url", url, *([] if cache else ["--no-cache"])]
    return runner.invoke(app, [*options, *args])


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def ragas_rows(count: int) -> list[dict]:
    return [
        {
            "user_input": f"Question {n}?",
            "response": f"Response {n}.",
            "retrieved_contexts": [f"context {n} one", f"context {n} two"],
            "reference": f"Ground truth {n}.",
        }
        for n in range(count)
    ]


def test_a_ragas_v02_file_is_judged_against_its_contexts_and_recalled_against_its_reference(server, tmp_path):
    data = write_jsonl(tmp_path / "ragas.jsonl", ragas_rows(1))
    result = invoke(server.base_url, "--json", "evaluate", str(data), "-o", str(tmp_path / "run"))
    assert result.exit_code == 0, result.output
    assert "ragas-v0.2 layout" in result.stderr and "ground truth, not the context" in result.stderr
    prompts = [request.prompt for request in server.requests]
    numbered = delimit("reference", "[1] context 0 one\n\n[2] context 0 two")
    assert any(numbered in prompt for prompt in prompts)  # precision: against the retrieved contexts
    assert any(delimit("reference_answer", "Ground truth 0.") in prompt for prompt in prompts)  # recall: the GT
    assert not any(delimit("reference", "Ground truth 0.") in prompt for prompt in prompts)
    (row,) = json.loads(result.stdout)["rows"]
    assert (row["label"], row["faithfulness"], row["recall"], row["failures"]) == ("consistent", 1.0, 1.0, 0)


def test_map_reads_a_file_with_its_own_column_names(server, tmp_path):
    data = write_jsonl(tmp_path / "own.jsonl", [{"q": "Q?", "out": "An answer.", "ctx": "Context.", "gold": "G."}])
    result = invoke(
        server.base_url, "--json", "evaluate", str(data), "-o", str(tmp_path / "run"),
        "--map", "question=q,answer=out", "--map", "reference=ctx,ground_truth=gold",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert any(delimit("reference", "Context.") in request.prompt for request in server.requests)
    assert [s["method"] for s in json.loads(result.stdout)["summary"]] == ["lface4rag", "faaf"]


def test_the_summary_comes_before_the_ledger_and_states_its_rule(server, tmp_path):
    data = write_jsonl(tmp_path / "ragas.jsonl", ragas_rows(2))
    result = invoke(server.base_url, "evaluate", str(data), "-o", str(tmp_path / "run"))
    stderr = result.stderr
    assert stderr.index("Summary") < stderr.index("Usage ledger")
    assert "every judged row is in every denominator" in " ".join(stderr.split())
    assert result.stdout == ""


def test_rows_with_only_a_context_or_only_a_ground_truth_get_the_method_that_applies(server, tmp_path):
    data = write_jsonl(
        tmp_path / "mixed.jsonl",
        [{"answer": "A.", "reference": "R."}, {"answer": "B.", "ground_truth": "G."}],
    )
    result = invoke(server.base_url, "--json", "evaluate", str(data), "-o", str(tmp_path / "run"))
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["rows"]
    assert ("recall" not in rows[0]) and ("label" not in rows[1])
    summary = {s["method"]: (s["applicable"], s["judged"]) for s in json.loads(result.stdout)["summary"]}
    assert summary == {"lface4rag": (1, 1), "faaf": (1, 1)}


def test_answers_and_contexts_alone_are_judged_for_precision_and_the_default_recall_is_skipped(server, tmp_path):
    """The most common file of a RAG team (no ground truth): precision is judged, one line says recall was skipped
    and how to have it; a recall method the user named is still refused."""
    data = write_jsonl(tmp_path / "plain.jsonl", [{"answer": f"A{n}.", "reference": f"R{n}."} for n in range(5)])
    result = invoke(server.base_url, "--json", "evaluate", str(data), "-o", str(tmp_path / "run"))
    assert result.exit_code == 0, result.output
    assert "recall skipped: none of the 5 rows has a ground_truth" in result.stderr.replace("\n", " ")
    assert "--map ground_truth=COLUMN" in result.stderr.replace("\n", "")  # no column's name suggests one
    assert [s["method"] for s in json.loads(result.stdout)["summary"]] == ["lface4rag"]
    named = invoke(server.base_url, "evaluate", str(data), "-o", str(tmp_path / "run2"), "--recall", "faaf")
    assert named.exit_code == 2 and "faaf" in named.stderr and not (tmp_path / "run2").exists()


def test_a_field_mapped_twice_is_refused_not_resolved_silently(server, tmp_path):
    data = write_jsonl(tmp_path / "two.jsonl", [{"a": "A.", "b": "B.", "reference": "R."}])
    for maps in (["--map", "answer=a,answer=b"], ["--map", "answer=a", "--map", "answer=b"]):
        result = invoke(server.base_url, "evaluate", str(data), "-o", str(tmp_path / "run"), *maps)
        assert result.exit_code == 2 and "--map maps answer twice" in result.stderr
    assert server.requests == [] and not (tmp_path / "run").exists()


def test_a_row_no_method_can_judge_is_bad_input(server, tmp_path):
    data = write_jsonl(tmp_path / "bare.jsonl", [{"answer": "A.", "question": "Q?"}])
    result = invoke(server.base_url, "evaluate", str(data), "-o", str(tmp_path / "run"))
    assert result.exit_code == 2 and "cannot be judged" in result.output
    assert not (tmp_path / "run").exists() and server.requests == []


def test_a_gate_exits_1_naming_the_gate_and_the_measured_value(server, tmp_path):
    server.when("<passage>", Reply.schema_valid(overrides={"fact_0": "False"}))
    data = write_jsonl(tmp_path / "ragas.jsonl", ragas_rows(2))
    result = invoke(server.base_url, "evaluate", str(data), "-o", str(tmp_path / "run"), "--min-recall", "0.5")
    assert result.exit_code == 1
    assert "gate --min-recall 0.5 failed: faaf measured 0.000" in result.stderr


def test_other_options_on_an_existing_run_are_refused_until_forced(server, tmp_path):
    data = write_jsonl(tmp_path / "ragas.jsonl", ragas_rows(1))
    assert invoke(server.base_url, "evaluate", str(data), "-o", str(tmp_path / "run")).exit_code == 0
    server.reset()
    refused = invoke(server.base_url, "evaluate", str(data), "-o", str(tmp_path / "run"), "--recall", "faaf:mode=tf")
    assert refused.exit_code == 2 and "--force" in refused.output and server.requests == []
    forced = invoke(
        server.base_url, "evaluate", str(data), "-o", str(tmp_path / "run"), "--recall", "faaf:mode=tf", "--force"
    )
    assert forced.exit_code == 0 and "1 reused, 1 judged now" in forced.stderr


def test_o_options_go_to_the_methods_that_take_them(server, tmp_path):
    data = write_jsonl(tmp_path / "ragas.jsonl", ragas_rows(1))
    result = invoke(server.base_url, "evaluate", str(data), "-o", str(tmp_path / "run"), "-O", "logic=false")
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["methods"][0]["key"] == "lface4rag:logic_stage=false"
    bad = invoke(server.base_url, "evaluate", str(data), "-o", str(tmp_path / "other"), "-O", "nonsense=1")
    assert bad.exit_code == 2 and "none of lface4rag, faaf takes this option" in bad.output


def test_failed_rows_are_retried_by_the_next_run_and_every_row_comes_out(server, tmp_path):
    rows = ragas_rows(20)
    data = write_jsonl(tmp_path / "ragas.jsonl", rows)
    for n in (3, 7, 11):
        server.when(delimit("answer", f"Response {n}."), Reply.error(500))
    first = invoke(server.base_url, "--max-retries", "0", "--json", "evaluate", str(data), "-o", str(tmp_path / "run"))
    # 3 of 40 results (precision and recall of 20 rows) failed: above --max-failed 0.05, so exit 3, with why
    assert first.exit_code == 3, first.output
    assert "3 of 40 results (8%) have a failed call, more than --max-failed 0.05" in first.stderr
    assert "3 × transient: HTTP 500" in first.stderr
    document = json.loads(first.stdout)
    assert len(document["rows"]) == 20 and document["report"]["incomplete"] == 3
    assert sorted(row["id"] for row in document["rows"] if not row["complete"]) == sorted(
        row["id"] for row in document["rows"] if row.get("label") == "unscored"
    )
    server.reset()
    second = invoke(server.base_url, "--json", "evaluate", str(data), "-o", str(tmp_path / "run"))
    document = json.loads(second.stdout)
    assert document["report"]["ran"] == 3 and document["report"]["reused"] == 37
    assert document["rows"] and all(row["complete"] for row in document["rows"]) and len(document["rows"]) == 20
    assert len((tmp_path / "run" / "results.jsonl").read_text().splitlines()) == 40


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_an_unreachable_endpoint_exits_3_naming_it_and_a_rerun_resumes(server, tmp_path):
    data = write_jsonl(tmp_path / "ragas.jsonl", ragas_rows(30))
    port = free_port()
    url = f"http://127.0.0.1:{port}/v1"
    down = invoke(url, "--max-retries", "0", "evaluate", str(data), "-o", str(tmp_path / "run"), "--stop-after", "3")
    assert down.exit_code == 3, down.output
    assert f"calls in a row to {url}" in down.stderr and "rerun to resume" in down.stderr
    lines = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert len(lines) < 60 and not any(line["complete"] for line in lines)
    back = ScriptedServer(port).start()  # the endpoint is back
    try:
        up = invoke(back.base_url, "--json", "evaluate", str(data), "-o", str(tmp_path / "run"))
    finally:
        back.stop()
    assert up.exit_code == 0, up.output
    document = json.loads(up.stdout)
    assert document["report"]["ran"] == 60 and all(row["complete"] for row in document["rows"])


def scrub(value):
    """A result without what differs between two runs of the same work (times, cost, cache hits)."""
    volatile = {"latency_s", "usage", "model_s", "seconds", "finished", "cached"}
    if isinstance(value, dict):
        return {key: scrub(v) for key, v in value.items() if key not in volatile}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    return value


def results_of(run: Path) -> dict:
    lines = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    return {(line["id"], line["method"]): scrub({k: line[k] for k in ("outcome", "result", "item")}) for line in lines}


def ragfacts(url: str, home: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "ragfacts", "--model", "openai:m", "--base-url", url, "--concurrency", "2", *args]


def test_a_run_killed_with_sigkill_resumes_to_the_results_of_an_uninterrupted_run(server, tmp_path):
    data = write_jsonl(tmp_path / "ragas.jsonl", ragas_rows(24))
    server.when("<answer>", Reply.schema_valid(delay_s=0.1))
    env = {**os.environ, "OPENAI_API_KEY": TEST_KEY, "RAGFACTS_HOME": str(tmp_path / "home")}
    killed = tmp_path / "killed"
    process = subprocess.Popen(
        ragfacts(server.base_url, tmp_path, "evaluate", str(data), "-o", str(killed)),
        env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    results = killed / "results.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not results.exists() or len(results.read_bytes().splitlines()) < 6):
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.wait()
    done_before = len(results.read_bytes().splitlines())
    assert 6 <= done_before < 48, "the run was not killed mid-way"
    with results.open("ab") as handle:
        handle.write(b'{"v": 1, "id": "torn')  # as if killed while writing a line
    resumed = subprocess.run(
        ragfacts(server.base_url, tmp_path, "evaluate", str(data), "-o", str(killed)), env=env, cwd=ROOT,
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    whole = tmp_path / "whole"
    uninterrupted = subprocess.run(
        ragfacts(server.base_url, tmp_path, "--no-cache", "evaluate", str(data), "-o", str(whole)), env=env, cwd=ROOT,
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert uninterrupted.returncode == 0, uninterrupted.stderr
    assert len(results.read_text().splitlines()) == 48
    assert results_of(killed) == results_of(whole)


def test_unicode_line_separators_in_an_answer_round_trip_and_stay_on_one_results_line(server, tmp_path):
    answer = "The Nile\u2028flows north.\u0085Indeed."
    data = write_jsonl(tmp_path / "rows.jsonl", [{"answer": answer, "reference": "R.", "ground_truth": "G."}])
    result = invoke(server.base_url, "--json", "evaluate", str(data), "-o", str(tmp_path / "run"))
    assert result.exit_code == 0, result.output
    raw = (tmp_path / "run" / "results.jsonl").read_text(encoding="utf-8")
    assert len(raw.splitlines()) == 2  # str.splitlines would split at U+2028: they are escaped
    assert {json.loads(line)["item"]["answer"] for line in raw.splitlines()} == {answer}
    assert any(delimit("answer", answer) in request.prompt for request in server.requests)


def test_an_unterminated_csv_quote_exits_2_naming_the_line_and_writes_nothing(server, tmp_path):
    data = tmp_path / "rows.csv"
    data.write_text('answer,reference\nfine,r\n"open,r\nnext,r\n', encoding="utf-8")
    result = invoke(server.base_url, "evaluate", str(data), "-o", str(tmp_path / "run"))
    assert result.exit_code == 2 and "line 3: malformed CSV" in result.output
    assert not (tmp_path / "run").exists() and server.requests == []


def test_an_output_equal_to_the_input_is_refused(server, tmp_path):
    data = write_jsonl(tmp_path / "rows.jsonl", [{"answer": "A.", "reference": "R.", "ground_truth": "G."}])
    before = data.read_text(encoding="utf-8")
    result = invoke(server.base_url, "evaluate", str(data), "-o", str(data))
    assert result.exit_code == 2 and "also an input" in result.output
    assert data.read_text(encoding="utf-8") == before and server.requests == []


def test_an_output_in_a_missing_directory_is_created(server, tmp_path):
    data = write_jsonl(tmp_path / "rows.jsonl", [{"answer": "A.", "facts": ["A fact."]}])
    result = invoke(server.base_url, "recall", str(data), "-o", str(tmp_path / "new" / "deeper" / "out.jsonl"))
    assert result.exit_code == 0, result.output
    assert (tmp_path / "new" / "deeper" / "out.jsonl.manifest.json").exists()
