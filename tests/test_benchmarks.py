"""The benchmark scripts run on the runner: a smoke run of each against the scripted server keeps them working."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import faaf_chunk_size, precision_small_model, recall_local

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
