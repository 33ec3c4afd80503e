"""The benchmark scripts run on the runner: a smoke run of each against the scripted server keeps them working."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path

import httpx
import pytest
from benchmarks import (
    bench_results,
    faaf_chunk_size,
    latency_server,
    peers_speed,
    performance,
    precision_small_model,
    recall_local,
)
from pydantic import BaseModel

from tests.conftest import TEST_KEY
from tests.scripted_server import Reply

WIKIEVAL_ROW = {
    "question": "Question: When will PSLV-C56 launch?",
    "answer": "Answer: PSLV-C56 launches on 30 July 2023 from Sriharikota.",
    "ungrounded_answer": "PSLV-C56 launches on Monday.",
    "poor_answer": "PSLV-C56 is a rocket.",
    "context_v1": ["PSLV-C56 is scheduled for 30 July 2023."],
    "source": "PSLV-C56",
}
PROBE = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "precision_probe.jsonl"


async def test_recall_and_chunk_size_benchmarks_share_one_generation_per_row_and_resume(
    scripted_server, monkeypatch, tmp_path
):
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
    data = tmp_path / "one_row.jsonl"
    data.write_text(json.dumps(WIKIEVAL_ROW) + "\n", encoding="utf-8")
    scripted_server.when("<reference_answer>", Reply.json({"facts": ["one fact.", "another fact."]}))
    report = await recall_local.measure(data, tmp_path, "openai:m", scripted_server.base_url, 4, None)
    generations = [r for r in scripted_server.requests if "<reference_answer>" in r.prompt]
    assert len(generations) == 1  # one row: its facts are generated once and shared by 5 methods x 3 answers
    assert {m["method"] for m in report["metrics"]} == {recall_local.NAMES[m] for m in recall_local.METHODS}
    assert report["facts"] == 2 and "| faaf-tfn | answer |" in recall_local.markdown(report)

    scripted_server.reset()
    again = await recall_local.measure(data, tmp_path, "openai:m", scripted_server.base_url, 4, None)
    assert scripted_server.requests == [] and again["metrics"] == report["metrics"]

    sizes = await faaf_chunk_size.measure(
        tmp_path / "run", tmp_path / "chunks", "openai:m", scripted_server.base_url, [1, 0], "tfn"
    )
    assert sizes["sizes"]["1"]["calls"] == 6 and sizes["sizes"]["all"]["calls"] == 3


async def test_the_precision_benchmark_scores_methods_against_gold_labels(scripted_server, monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
    scripted_server.when("<answer>", Reply.json({"problems": [], "verdict": "consistent"}))
    report = await precision_small_model.measure(
        "openai:m", scripted_server.base_url, ["holistic"], [PROBE], 4, tmp_path
    )
    summary = report["results"]["precision_probe/holistic"]["summary"]
    labels = [json.loads(line)["label"] for line in PROBE.read_text(encoding="utf-8").splitlines()[:4]]
    assert summary["items"] == 4 and summary["faithful_passed"] == labels.count("consistent")
    assert summary["flawed_caught"] == 0 and summary["balanced_accuracy"] == 0.5


def test_the_latency_server_answers_a_schema_written_into_the_prompt_as_ragas_writes_it():
    class Verdict(BaseModel):
        statement: str
        verdict: int

    class Verdicts(BaseModel):  # a nested model: pydantic writes it with $defs and $ref
        statements: list[Verdict]

    prompt = (
        "Judge each statement.\nPlease return the output in a JSON format that complies with the following schema "
        f"as specified in JSON Schema:\n{json.dumps(Verdicts.model_json_schema())}Do not use single quotes."
    )
    reply = latency_server.completion({"messages": [{"role": "user", "content": prompt}]}, items=2)
    assert len(Verdicts.model_validate_json(reply["choices"][0]["message"]["content"]).statements) == 2
    plain = latency_server.completion({"messages": [{"role": "user", "content": "Say hello."}]}, items=2)
    assert plain["choices"][0]["message"]["content"] == "ok"


async def test_the_latency_server_counts_calls_and_the_most_requests_it_held_at_once():
    transport = httpx.ASGITransport(app=latency_server.app(0.05, 2))
    async with httpx.AsyncClient(transport=transport, base_url="http://server/v1") as client:
        body = {"messages": [{"role": "user", "content": "x" * 40}]}
        await asyncio.gather(*(client.post("/chat/completions", json=body) for _ in range(3)))
        stats = (await client.get("/stats")).json()
    assert stats["calls"] == 3 and stats["peak_in_flight"] == 3 and stats["in_flight"] == 0
    assert stats["prompt_tokens"] == 3 * 11  # 40 characters: 4 a token, plus one


def test_the_peers_speed_benchmark_measures_a_system_in_a_fresh_process_against_a_fresh_server(tmp_path):
    data = tmp_path / "answers.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in performance.rows(2)), encoding="utf-8")
    found = peers_speed.measure("ragfacts holistic", data, 2, 2, 0.01, 1, tmp_path)
    assert found["calls_per_answer"] == 1 and found["unscored"] == 0 and found["peak_in_flight"] <= 2
    assert found["bound_s"] == 0.01 and 0 < found["share_of_bound_wall"] < found["share_of_bound_eval"]
    report = {"answers": 2, "concurrency": 2, "latency_ms": 10, "repeats": 1, "command": "x", "systems": [found]}
    assert "| ragfacts holistic | 1 |" in peers_speed.markdown(report)


def test_a_bench_results_file_is_made_from_the_ragfacts_command_after_the_separator():
    args, command = bench_results.arguments(
        ["sample6", "--run", "/tmp/run", "--max-answer-chars", "200", "--", "--model", "local", "bench", "d.jsonl"]
    )
    assert (args.name, args.run, args.max_answer_chars) == ("sample6", Path("/tmp/run"), 200)
    assert command == ["--model", "local", "bench", "d.jsonl"]
    with pytest.raises(SystemExit):  # no bench DATA after the separator
        bench_results.arguments(["sample6", "--run", "/tmp/run", "--", "--model", "local", "check"])


def test_the_short_answer_sample_keeps_the_rows_whose_answer_is_short_enough(tmp_path):
    data = tmp_path / "test.jsonl"
    rows = [{"id": "a", "answer": "x" * 200}, {"id": "b", "answer": "y" * 201}, {"id": "c", "answer": "短"}]
    data.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    short = bench_results.shortened(data, tmp_path / "run-data", 200)
    assert [json.loads(line)["id"] for line in short.read_text(encoding="utf-8").splitlines()] == ["a", "c"]
    first = short.read_bytes()
    again = bench_results.shortened(data, tmp_path / "run-data", 200)
    assert again == short and again.read_bytes() == first  # the same file, byte for byte, for the same data


def test_the_dev_calibration_records_the_data_its_runs_were_made_from_and_refuses_changed_data(tmp_path):
    from benchmarks import calibrate_precision

    data = tmp_path / "dev.jsonl"
    data.write_text('{"id": "a"}\n', encoding="utf-8")
    run = tmp_path / "run"
    run.mkdir()
    manifest = {"dataset": {"path": str(data), "sha256": hashlib.sha256(data.read_bytes()).hexdigest()}}
    (run / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert calibrate_precision.datasets([run, tmp_path / "bare_results.jsonl"]) == [data]
    data.write_text('{"id": "b"}\n', encoding="utf-8")
    with pytest.raises(SystemExit, match="is not the data"):
        calibrate_precision.datasets([run])
