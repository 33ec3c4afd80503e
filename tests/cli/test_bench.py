"""`ragfacts bench`: judges against gold labels, end to end over HTTP, with tables written into the run."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from ragfacts.cli import app
from ragfacts.cli.bench import parse_methods
from tests.scripted_server import Reply, ScriptedServer

runner = CliRunner()
REFERENCE = "The Nile flows north into the Mediterranean Sea."


def invoke(server: ScriptedServer, *args: str):
    return runner.invoke(app, ["--model", "openai:scripted", "--base-url", server.base_url, "--no-cache", *args])


def labelled(path: Path) -> Path:
    rows = [
        {"id": "good1", "answer": "The Nile flows north.", "reference": REFERENCE, "label": "consistent"},
        {"id": "good2", "answer": "It reaches the Mediterranean.", "reference": REFERENCE, "label": 1},
        {"id": "bad1", "answer": "The Nile flows south, wrong.", "reference": REFERENCE, "label": 0,
         "error_type": "KCont.", "source_model": "m1"},
        {"id": "bad2", "answer": "It ends in the Red Sea, wrong.", "reference": REFERENCE, "label": "inconsistent",
         "error_type": "Hallu.", "source_model": "m2"},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_bench_scores_every_method_and_writes_the_tables_into_the_run(server, tmp_path):
    # holistic: catches both flawed answers; felm: flags every answer (its default reply names segment 1).
    server.when("wrong.\n</answer>", Reply.json({"problems": ["wrong"], "verdict": "inconsistent"}))
    data = labelled(tmp_path / "labelled.jsonl")
    result = invoke(server, "--json", "bench", str(data), "--methods", "holistic,felm", "-o", str(tmp_path / "run"))
    assert result.exit_code == 0, result.output
    precision = {m["method"]: m for m in json.loads(result.stdout)["bench"]["precision"]}
    assert precision["holistic"]["accuracy"]["value"] == 1.0
    assert precision["felm"]["accuracy"]["value"] == 0.5 and precision["felm"]["positive_accuracy"]["correct"] == 0
    assert precision["holistic"]["by_error_type"] == {
        "Hallu.": {"correct": 1, "n": 1},
        "KCont.": {"correct": 1, "n": 1},
    }
    tables = (tmp_path / "run" / "tables.md").read_text(encoding="utf-8")
    assert "| holistic | 100.0 | 100.0 | 100.0 | 100.0 |" in tables
    assert "| felm | 50.0 | 0.0 | 100.0 | 100.0 |" in tables
    assert json.loads((tmp_path / "run" / "metrics.json").read_text())["precision"][0]["method"] == "holistic"
    assert "Accuracy by error type" in result.stderr


def test_a_dry_run_prints_the_expected_cost_and_spends_nothing(server, tmp_path):
    data = labelled(tmp_path / "labelled.jsonl")
    result = invoke(server, "--json", "bench", str(data), "--methods", "lface4rag,holistic", "--dry-run")
    assert result.exit_code == 0, result.output
    estimates = {e["method"]: e for e in json.loads(result.stdout)}
    assert estimates["lface4rag"]["calls"] == 4 * 3 and estimates["holistic"]["calls"] == 4
    assert estimates["lface4rag"]["prompt_tokens"] > estimates["holistic"]["prompt_tokens"] > 0
    assert server.requests == [] and "nothing spent" in result.stderr


def test_a_dataset_without_gold_labels_is_refused_with_its_columns(server, tmp_path):
    data = tmp_path / "unlabelled.jsonl"
    data.write_text(json.dumps({"answer": "A.", "reference": "R.", "verdict": "ok"}) + "\n", encoding="utf-8")
    result = invoke(server, "bench", str(data), "--methods", "holistic", "-o", str(tmp_path / "run"))
    assert result.exit_code == 2
    assert "no gold labels" in result.output and "--map label=COLUMN" in result.output
    assert "columns not read: verdict" in result.output
    assert server.requests == [] and not (tmp_path / "run").exists()


def test_a_sample_is_recorded_in_the_manifest(server, tmp_path):
    data = labelled(tmp_path / "labelled.jsonl")
    result = invoke(
        server, "bench", str(data), "--methods", "holistic", "--sample", "2", "--seed", "5", "-o", str(tmp_path / "run")
    )
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["dataset"]["selection"]["sample"] == 2 and manifest["dataset"]["items"] == 2
    assert len(server.requests) == 2


def test_method_lists_keep_options_with_their_method():
    specs = [m.spec for m in parse_methods("faaf:mode=tf,citations=true,lface4rag,lface4rag:cot=false,logic=false")]
    assert specs == [
        "faaf:citations=true,mode=tf",
        "lface4rag",
        "lface4rag:chain_of_thought=false,logic_stage=false",
    ]
    (banded,) = parse_methods("lface4rag:strategy=holistic_score,uncertain=0.3,0.7")
    assert (
        banded.options.uncertain == (0.3, 0.7) and banded.spec == "lface4rag:strategy=holistic_score,uncertain=0.3,0.7"
    )


def test_the_same_method_twice_is_refused(server, tmp_path):
    result = invoke(server, "bench", str(labelled(tmp_path / "d.jsonl")), "--methods", "holistic,holistic", "-o", "x")
    assert result.exit_code == 2 and "more than once" in result.output


def test_bench_on_wikievalfacts_gives_the_faaf_tables(server, tmp_path):
    import csv

    from tests.datasets.test_wikieval import COLUMNS, pslv_row

    path = tmp_path / "wikiEval_human_annotated_facts_.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerow(pslv_row())
    result = invoke(server, "--json", "bench", str(path), "--methods", "faaf,prompt-tf", "-o", str(tmp_path / "run"))
    assert result.exit_code == 0, result.output
    recall = json.loads(result.stdout)["bench"]["recall"]
    assert {(m["method"], m["answer_type"]) for m in recall} == {
        (method, kind) for method in ("faaf", "prompt-tf") for kind in ("answer", "ungrounded_answer", "poor_answer")
    }
    tables = (tmp_path / "run" / "tables.md").read_text(encoding="utf-8")
    assert "Fact verification against human labels (FaaF Table 2)" in tables and "Verification cost" in tables


def test_a_dry_run_without_an_api_key_is_bad_usage_not_a_crash(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    args = ["--model", "openai:gpt-4o-mini", "bench", str(labelled(tmp_path / "d.jsonl")), "--methods", "holistic"]
    result = runner.invoke(app, [*args, "--dry-run"])
    assert result.exit_code == 2 and "no API key" in result.stderr
