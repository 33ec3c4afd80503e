"""benchmarks/synth_local.py: a smoke run against the scripted server keeps the script working."""

from __future__ import annotations

import json

from benchmarks import synth_local

from tests.conftest import TEST_KEY


def test_the_synth_benchmark_runs_synth_bench_and_report_and_writes_its_counts(scripted_server, monkeypatch, tmp_path):
    # Unscripted replies: every edit names "x", which no answer has or which changes nothing, so none is applied.
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
    out, written = tmp_path / "run", tmp_path / "synth_local.json"
    synth_local.main(
        ["--model", "openai:m", "--base-url", scripted_server.base_url, "--out", str(out), "--result", str(written)]
    )
    result = json.loads(written.read_text(encoding="utf-8"))
    assert [row["answer"] for row in result["rows"]] == ["given"] * 3 + ["written by the model"] * 3
    assert len(result["synth"]["by_type"]) == 9
    assert all(tally["asked"] == 6 and tally["not_applied"] == 6 for tally in result["synth"]["by_type"].values())
    (judge,) = result["judges"]
    assert judge["method"] == "holistic" and judge["answers"] == result["synth"]["items"]
    assert result["synth_usage"]["calls"] > 0 and (out / "report.md").exists()
