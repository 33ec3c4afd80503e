"""`ragfacts check`: one pair and dataset modes, through the CLI runner against the scripted server."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragfacts.cli import app
from ragfacts.report.official_csv import OFFICIAL_OUTPUT_COLUMNS
from ragfacts.text import delimit
from tests.methods.test_lface4rag import REFERENCE, SEG1, SEG2, decomposition, names
from tests.scripted_server import Reply, ScriptedServer

runner = CliRunner()


def invoke(server: ScriptedServer, *args: str):
    return runner.invoke(app, ["--model", "openai:scripted", "--base-url", server.base_url, *args])


def inconsistent_everywhere(server: ScriptedServer) -> None:
    server.when("<segment>", Reply.schema_valid(overrides={"verdict": "inconsistent", "error_type": "KInve."}))


def test_one_pair_prints_the_result_json_on_stdout_and_the_segments_on_stderr(server):
    server.enqueue(decomposition(SEG1))
    result = invoke(server, "--json", "check", "--reference", REFERENCE, "--answer", SEG1, "--question", "Where?")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["label"] == "consistent" and data["segments"][0]["text"] == SEG1
    assert data["usage"]["completions"] == 3
    assert "CONSISTENT" in result.stderr and "Usage ledger" in result.stderr
    assert delimit("question", "Where?") in server.requests[0].prompt


def test_one_pair_reads_texts_from_at_files(server, tmp_path):
    (tmp_path / "ref.txt").write_text(REFERENCE, encoding="utf-8")
    (tmp_path / "answer.txt").write_text(SEG1, encoding="utf-8")
    server.enqueue(decomposition(SEG1))
    result = invoke(server, "check", "-r", f"@{tmp_path / 'ref.txt'}", "-a", f"@{tmp_path / 'answer.txt'}")
    assert result.exit_code == 0, result.output
    assert delimit("answer", SEG1) in server.requests[0].prompt
    assert delimit("reference", REFERENCE) in server.requests[1].prompt


def test_the_human_view_shows_error_types_and_explanations(server):
    server.enqueue(decomposition(SEG1))
    inconsistent_everywhere(server)
    result = invoke(server, "check", "--reference", REFERENCE, "--answer", SEG1)
    assert result.exit_code == 0
    assert "INCONSISTENT" in result.stderr and "KInve." in result.stderr


def test_the_gate_exits_1_on_an_inconsistent_answer(server):
    server.enqueue(decomposition(SEG1))
    inconsistent_everywhere(server)
    result = invoke(server, "check", "-r", REFERENCE, "-a", SEG1, "--fail-on-inconsistent")
    assert result.exit_code == 1


def test_the_gate_passes_a_consistent_answer(server):
    server.enqueue(decomposition(SEG1))
    assert invoke(server, "check", "-r", REFERENCE, "-a", SEG1, "--fail-on-inconsistent").exit_code == 0


def test_the_gate_does_not_pass_an_unscored_answer(server):
    """Unscored because its calls failed: not a pass, and not a verdict either: exit 3, the gate undecided."""
    server.enqueue(Reply.malformed(), Reply.malformed(), Reply.malformed())
    result = invoke(server, "--json", "check", "-r", REFERENCE, "-a", SEG1, "--fail-on-inconsistent")
    assert result.exit_code == 3 and json.loads(result.stdout)["label"] == "unscored"
    assert "undecided" in result.stderr


def test_ablation_flags_reach_the_pipeline(server):
    server.enqueue(decomposition(SEG1, SEG2))
    result = invoke(server, "check", "-r", REFERENCE, "-a", f"{SEG1} {SEG2}", "--no-logic", "--no-cot")
    assert result.exit_code == 0, result.output
    assert names(server.requests) == ["Decomposition", "FactVerdict", "FactVerdict"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--reference", REFERENCE], "give --reference and --answer"),
        (["-r", REFERENCE, "-a", "@/nonexistent/answer.txt"], "no such file"),
        (["-r", "  ", "-a", SEG1], "--reference is empty"),
        (["-r", REFERENCE, "-a", SEG1, "-o", "out.jsonl"], "are for a dataset file"),
        (["-r", REFERENCE, "-a", SEG1, "--strategy", "nope"], "nope"),
    ],
)
def test_bad_one_pair_usage_exits_2_without_calling_the_model(server, args, message):
    result = invoke(server, "check", *args)
    assert result.exit_code == 2 and message in result.output
    assert server.requests == []


def dataset(path: Path, ids: list[str]) -> Path:
    rows = [{"question": f"q{i}", "ref": REFERENCE, "answer": f"answer {i}", "id": i} for i in ids]
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["question", "ref", "answer", "id"])
        writer.writeheader()
        writer.writerows(rows)
    return path


def segments_for(server: ScriptedServer, ids: list[str]) -> None:
    for i in ids:
        server.when(delimit("answer", f"answer {i}"), decomposition(f"answer {i} part one", f"answer {i} part two"))


def test_a_dataset_streams_one_result_line_per_answer_and_writes_the_official_csv(server, tmp_path):
    data, out, official = dataset(tmp_path / "face4rag.csv", ["1", "2"]), tmp_path / "out.jsonl", tmp_path / "o.csv"
    segments_for(server, ["1", "2"])
    result = invoke(server, "--json", "check", str(data), "-o", str(out), "--csv-out", str(official))
    assert result.exit_code == 0, result.output
    lines = out.read_text(encoding="utf-8").splitlines()
    assert sorted(json.loads(line)["id"] for line in lines) == ["1", "2"]
    assert len(server.requests) == 2 * (1 + 2 * 2)
    (summary,) = json.loads(result.stdout)["summary"]
    assert (summary["judged"], summary["consistent"], summary["failed_calls"]) == (2, 2, 0)
    with official.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        rows = list(reader)
    assert tuple(reader.fieldnames or ()) == OFFICIAL_OUTPUT_COLUMNS
    assert [(row["id"], row["answer_segment"]) for row in rows] == [
        ("1", "answer 1 part one"),
        ("1", "answer 1 part two"),
        ("2", "answer 2 part one"),
        ("2", "answer 2 part two"),
    ]
    assert {row["label_fact_FCE"] for row in rows} == {"1"} and {row["fce_output"] for row in rows} == {"1"}


def test_a_rerun_checks_only_the_rows_not_yet_in_the_output(server, tmp_path):
    out = tmp_path / "out.jsonl"
    segments_for(server, ["1", "2", "3"])
    assert invoke(server, "check", str(dataset(tmp_path / "d.csv", ["1", "2"])), "-o", str(out)).exit_code == 0
    first_run = out.read_text(encoding="utf-8")
    server.requests.clear()
    result = invoke(server, "check", str(dataset(tmp_path / "d.csv", ["1", "2", "3"])), "-o", str(out))
    assert result.exit_code == 0, result.output
    assert "3 results: 2 reused, 1 judged now" in " ".join(result.stderr.split())
    assert len(server.requests) == 5 and all("answer 3" in r.prompt for r in server.requests)
    text = out.read_text(encoding="utf-8")
    assert text.startswith(first_run)
    assert [json.loads(line)["id"] for line in text.splitlines()][-1] == "3"


def test_limit_checks_only_the_first_new_rows(server, tmp_path):
    out = tmp_path / "out.jsonl"
    segments_for(server, ["1", "2", "3"])
    result = invoke(server, "check", str(dataset(tmp_path / "d.csv", ["1", "2", "3"])), "-o", str(out), "--limit", "1")
    assert result.exit_code == 0
    assert [json.loads(line)["id"] for line in out.read_text(encoding="utf-8").splitlines()] == ["1"]


def test_the_dataset_gate_exits_1_when_any_answer_is_inconsistent(server, tmp_path):
    segments_for(server, ["1"])
    inconsistent_everywhere(server)
    data = dataset(tmp_path / "d.csv", ["1"])
    result = invoke(server, "check", str(data), "-o", str(tmp_path / "out.jsonl"), "--fail-on-inconsistent")
    assert result.exit_code == 1


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("question,answer,id\nq,a,1\n", "it has no reference to check the answer against"),
        ("question,ref,answer,id\nq,r,a,1\nq,r,b,1\n", "repeats the id"),
    ],
)
def test_bad_dataset_input_exits_2_and_writes_nothing(server, tmp_path, content, message):
    data, out = tmp_path / "bad.csv", tmp_path / "out.jsonl"
    data.write_text(content, encoding="utf-8")
    result = invoke(server, "check", str(data), "-o", str(out), "--csv-out", str(tmp_path / "o.csv"))
    assert result.exit_code == 2 and message in " ".join(result.output.split())
    assert not out.exists() and not (tmp_path / "o.csv").exists()
    assert server.requests == []


def test_a_dataset_without_o_runs_into_a_new_directory_under_runs_and_says_how_to_resume(server, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    segments_for(server, ["1"])
    result = invoke(server, "check", str(dataset(tmp_path / "d.csv", ["1"])))
    assert result.exit_code == 0, result.output
    (run,) = (tmp_path / "runs").iterdir()
    assert run.name.startswith("d-") and (run / "results.jsonl").exists()
    assert f"rerun with -o {Path('runs') / run.name}" in result.stderr


def test_a_dataset_takes_no_pair_options(server, tmp_path):
    data = dataset(tmp_path / "d.csv", ["1"])
    result = invoke(server, "check", str(data), "-o", str(tmp_path / "o.jsonl"), "--answer", "x")
    assert result.exit_code == 2 and "are for one pair" in result.output


def test_error_type_codes_are_explained_where_they_are_printed(server):
    server.enqueue(decomposition(SEG1))
    inconsistent_everywhere(server)
    result = invoke(server, "check", "--reference", REFERENCE, "--answer", SEG1)
    assert "error types: KInve. entity inversion" in " ".join(result.stderr.split())


def test_the_faithfulness_gate_names_the_measured_value(server):
    server.enqueue(decomposition(SEG1, SEG2))
    server.when(delimit("segment", SEG2), Reply.schema_valid(overrides={"verdict": "inconsistent"}))
    result = invoke(server, "check", "-r", REFERENCE, "-a", f"{SEG1} {SEG2}", "--min-faithfulness", "0.8")
    assert result.exit_code == 1
    assert "gate --min-faithfulness 0.8 failed: lface4rag measured 0.500" in " ".join(result.stderr.split())


def test_an_answer_file_that_is_not_utf8_is_bad_input_not_a_traceback(server, tmp_path):
    (tmp_path / "answer.txt").write_bytes("caf\xe9".encode("latin-1"))
    result = invoke(server, "check", "-r", REFERENCE, "-a", f"@{tmp_path / 'answer.txt'}")
    assert result.exit_code == 2 and "not UTF-8" in " ".join(result.output.split()) and server.requests == []


def test_a_misspelled_method_option_is_refused_with_the_options_it_takes(server):
    result = invoke(server, "check", "-r", REFERENCE, "-a", SEG1, "-O", "stratgy=paper")
    assert result.exit_code == 2 and "Options of lface4rag: strategy" in " ".join(result.output.split())
    assert server.requests == []


def test_options_given_with_o_reach_the_method(server):
    server.enqueue(decomposition(SEG1))
    result = invoke(server, "check", "-r", REFERENCE, "-a", SEG1, "-O", "logic=false", "-O", "cot=false")
    assert result.exit_code == 0, result.output
    assert names(server.requests) == ["Decomposition", "FactVerdict"]


def test_a_dataset_into_a_run_directory_shows_progress_lines_when_not_on_a_terminal(server, tmp_path):
    segments_for(server, ["1", "2"])
    result = invoke(server, "check", str(dataset(tmp_path / "d.csv", ["1", "2"])), "-o", str(tmp_path / "run"))
    assert result.exit_code == 0, result.output
    assert "progress: 2/2 results" in result.stderr
    assert (tmp_path / "run" / "results.jsonl").exists() and (tmp_path / "run" / "manifest.json").exists()


def test_the_official_csv_may_not_overwrite_the_input(server, tmp_path):
    data = dataset(tmp_path / "d.csv", ["1"])
    before = data.read_text(encoding="utf-8")
    result = invoke(server, "check", str(data), "-o", str(tmp_path / "run"), "--csv-out", str(data))
    assert result.exit_code == 2 and "also an input" in result.output
    assert data.read_text(encoding="utf-8") == before and server.requests == []


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        (["--method", "holistic"], "holistic gives none"),
        (["--escalate-to", "openai:other", "--uncertain", "0.3,0.7"], "with --escalate-to"),
    ],
)
def test_the_official_csv_is_refused_for_results_without_lface4rags_segments(server, tmp_path, extra, named):
    data, official = dataset(tmp_path / "d.csv", ["1"]), tmp_path / "o.csv"
    result = invoke(server, "check", str(data), "-o", str(tmp_path / "run"), "--csv-out", str(official), *extra)
    assert (
        result.exit_code == 2 and "--csv-out writes L-Face4RAG's segments" in result.output and named in result.output
    )
    assert server.requests == [] and not official.exists() and not (tmp_path / "run").exists()
