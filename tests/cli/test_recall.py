"""`ragfacts facts` and `ragfacts recall`, end to end against the scripted server."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragfacts.cli import app
from tests.scripted_server import Reply

runner = CliRunner()
ANSWER = "Paris, the capital of France, lies on the Seine."
FACTS = ["Paris is the capital of France.", "The Seine flows through Paris.", "Paris hosted the 2024 Olympics."]


@pytest.fixture
def cli(scripted_server, monkeypatch):
    """Invoke the CLI with the global options pointing at the scripted server."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-cli")

    def invoke(*args: str, json_output: bool = True):
        options = ["--model", "openai:scripted", "--base-url", scripted_server.base_url, "--no-cache"]
        return runner.invoke(app, [*(["--json"] if json_output else []), *options, *args])

    return invoke


def test_facts_prints_one_fact_per_line(cli, scripted_server):
    scripted_server.enqueue(Reply.json({"facts": FACTS[:2]}))
    result = cli("facts", "--question", "What is Paris?", "--ground-truth", ANSWER, json_output=False)
    assert result.exit_code == 0, result.output
    assert result.stdout == "- Paris is the capital of France.\n- The Seine flows through Paris.\n"


def test_facts_json_carries_the_provenance(cli, scripted_server):
    scripted_server.enqueue(Reply.json({"facts": FACTS[:2]}))
    result = cli("facts", "--question", "What is Paris?", "--ground-truth", ANSWER)
    data = json.loads(result.stdout)
    assert data["facts"] == FACTS[:2]
    assert data["completions"][0]["model"] == "scripted" and data["prompt_version"] == "generate_facts/en@1"


def test_facts_exits_3_when_the_model_fails(cli, scripted_server):
    """A failed call is no gate: exit 3 (incomplete), as every command's failed calls."""
    scripted_server.enqueue(Reply.error(400))
    result = cli("facts", "--ground-truth", ANSWER, json_output=False)
    assert result.exit_code == 3
    assert "fact generation failed" in result.output


def test_recall_with_given_facts_makes_one_call(cli, scripted_server):
    scripted_server.enqueue(
        Reply.json({"fact_0": "True", "fact_1": "True", "fact_2": "Not clear from the given passage"})
    )
    result = cli("recall", "--answer", ANSWER, "--facts", "\n".join(FACTS))
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert len(scripted_server.requests) == 1
    assert data["recall"] == pytest.approx(2 / 3)
    assert [v["raw"] for v in data["verification"]["verdicts"]][2] == "Not clear from the given passage"
    assert data["verification"]["method"] == "faaf-tfn"


def test_recall_from_a_ground_truth_generates_facts_first(cli, scripted_server):
    scripted_server.enqueue(Reply.json({"facts": FACTS[:2]}), Reply.json({"fact_0": "True", "fact_1": "False"}))
    result = cli(
        "recall", "--answer", ANSWER, "--ground-truth", "Paris is France's capital, on the Seine.", "--mode", "tf"
    )
    data = json.loads(result.stdout)
    assert len(scripted_server.requests) == 2
    assert data["facts"] == FACTS[:2] and data["recall"] == 0.5
    assert scripted_server.requests[1].schema["properties"]["fact_0"]["enum"] == ["True", "False"]


def test_recall_reads_texts_from_files(cli, scripted_server, tmp_path: Path):
    (tmp_path / "answer.txt").write_text(ANSWER, encoding="utf-8")
    (tmp_path / "facts.json").write_text(json.dumps(FACTS), encoding="utf-8")
    result = cli("recall", "--answer", f"@{tmp_path / 'answer.txt'}", "--facts", f"@{tmp_path / 'facts.json'}")
    assert result.exit_code == 0, result.output
    assert ANSWER in scripted_server.requests[0].prompt
    assert json.loads(result.stdout)["facts"] == FACTS


def test_recall_options_reach_the_method(cli, scripted_server):
    result = cli("recall", "--answer", ANSWER, "--facts", "\n".join(FACTS), "--citations", "--chunk-size", "2")
    assert result.exit_code == 0, result.output
    assert len(scripted_server.requests) == 2
    assert scripted_server.requests and all("citation_0" in r.schema["properties"] for r in scripted_server.requests)
    assert json.loads(result.stdout)["verification"]["config"]["chunk_size"] == 2


def test_recall_prompt_method_makes_one_call_per_fact(cli, scripted_server):
    scripted_server.when("Olympics", Reply.text("I cannot say."))
    scripted_server.when("claim", Reply.text("The claim is not true."))
    result = cli(
        "recall", "--answer", ANSWER, "--facts", "\n".join(FACTS), "--method", "prompt-tf", "--parsing", "corrected"
    )
    data = json.loads(result.stdout)
    assert len(scripted_server.requests) == 3
    assert data["verification"]["n_false"] == 2 and data["verification"]["n_no_verdict"] == 1


def test_recall_human_output_shows_verdicts_and_the_score(cli, scripted_server):
    scripted_server.enqueue(Reply.json({"fact_0": "True", "fact_1": "False", "fact_2": "False"}))
    result = cli("recall", "--answer", ANSWER, "--facts", "\n".join(FACTS), "--mode", "tf", json_output=False)
    assert result.exit_code == 0, result.output
    assert "recall: 1/3 facts (33%)" in result.stderr and result.stdout == ""


@pytest.mark.parametrize(
    "args",
    [
        ["recall", "--answer", ANSWER],
        ["recall", "--answer", ANSWER, "--facts", "A.", "--ground-truth", "G."],
        ["recall", "--facts", "A."],
        ["recall", "--answer", "@/nonexistent/answer.txt", "--facts", "A."],
        ["recall", "--answer", ANSWER, "--facts", "[1, 2]"],
        ["recall", "data.jsonl"],
        ["recall", "--answer", ANSWER, "--facts", "A.", "--mode", "yes-no"],
        ["recall", "--answer", ANSWER, "--facts", "A.", "--parsing", "corrected"],
        ["recall", "--answer", "  ", "--facts", "A."],
        ["facts", "--ground-truth", ""],
    ],
)
def test_recall_bad_usage_exits_2_without_calling_the_model(cli, scripted_server, args):
    result = cli(*args)
    assert result.exit_code == 2, result.output
    assert scripted_server.requests == []


def write_rows(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_recall_dataset_writes_one_line_per_row_and_resumes(cli, scripted_server, tmp_path: Path):
    data = write_rows(tmp_path / "rows.jsonl", [{"id": f"r{n}", "answer": ANSWER, "facts": FACTS} for n in range(3)])
    output = tmp_path / "out.jsonl"
    first = cli("recall", str(data), "-o", str(output), "--limit", "2")
    assert first.exit_code == 0, first.output
    assert len(scripted_server.requests) == 2
    assert sorted(json.loads(line)["id"] for line in output.read_text().splitlines()) == ["r0", "r1"]

    scripted_server.reset()
    second = cli("recall", str(data), "-o", str(output))
    assert second.exit_code == 0, second.output
    assert len(scripted_server.requests) == 1  # only r2: finished rows are reused, not re-asked
    assert sorted(json.loads(line)["id"] for line in output.read_text().splitlines()) == ["r0", "r1", "r2"]
    document = json.loads(second.stdout)
    assert document["report"]["ran"] == 1 and document["report"]["reused"] == 2
    assert [row["recall"] for row in document["rows"]] == [1.0, 1.0, 1.0]


def test_recall_dataset_bad_input_exits_2_and_writes_nothing(cli, scripted_server, tmp_path: Path):
    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps({"id": "ok", "answer": ANSWER, "facts": FACTS}) + "\n{broken\n", encoding="utf-8")
    output = tmp_path / "out.jsonl"
    result = cli("recall", str(data), "-o", str(output))
    assert result.exit_code == 2
    assert "line 2" in result.output
    assert not output.exists() and scripted_server.requests == []


def test_recall_dataset_refuses_rows_without_facts_or_a_ground_truth(cli, scripted_server, tmp_path: Path):
    data = write_rows(tmp_path / "rows.jsonl", [{"answer": ANSWER, "reference": "context only"}])
    result = cli("recall", str(data), "-o", str(tmp_path / "out"))
    assert result.exit_code == 2 and "neither facts nor a ground truth" in " ".join(result.output.split())
    assert not (tmp_path / "out").exists() and scripted_server.requests == []


def test_recall_dataset_refuses_an_output_file_that_is_not_results(cli, scripted_server, tmp_path: Path):
    data = write_rows(tmp_path / "rows.jsonl", [{"id": "r0", "answer": ANSWER, "facts": FACTS}])
    output = tmp_path / "out.jsonl"
    output.write_text("hello\n", encoding="utf-8")
    result = cli("recall", str(data), "-o", str(output))
    assert result.exit_code == 2 and output.read_text() == "hello\n"


def test_recall_onto_a_run_of_check_is_refused(cli, scripted_server, tmp_path: Path):
    data = write_rows(tmp_path / "rows.jsonl", [{"answer": ANSWER, "reference": "r", "facts": FACTS}])
    assert cli("check", str(data), "-o", str(tmp_path / "run")).exit_code == 0
    scripted_server.reset()
    result = cli("recall", str(data), "-o", str(tmp_path / "run"))
    assert result.exit_code == 2 and "another configuration" in result.output and scripted_server.requests == []


def test_recall_dataset_wikieval_rows_generate_facts_and_check_every_answer(cli, scripted_server, tmp_path: Path):
    row = {
        "question": "Question: What is Paris?",
        "answer": "Answer: Paris is the capital of France.",
        "ungrounded_answer": "Paris is a city.",
        "poor_answer": "Paris.",
        "source": "Paris",
    }
    data = write_rows(tmp_path / "wikieval.jsonl", [row])
    output = tmp_path / "run"
    scripted_server.when("<reference_answer>", Reply.json({"facts": FACTS[:2]}))
    result = runner.invoke(
        app,
        ["--model", "openai:scripted", "--base-url", scripted_server.base_url, "recall", str(data), "-o", str(output)],
    )
    assert result.exit_code == 0, result.output
    generations = [r for r in scripted_server.requests if "<reference_answer>" in r.prompt]
    assert len(generations) == 1  # the three answers share one ground truth: one generation, two shared
    assert len(scripted_server.requests) == 4 and "Answer:" not in generations[0].prompt
    lines = [json.loads(line) for line in (output / "results.jsonl").read_text().splitlines()]
    assert sorted(line["id"] for line in lines) == ["Paris/answer", "Paris/poor_answer", "Paris/ungrounded_answer"]
    assert "wikieval layout" in result.stderr


def test_recall_dataset_on_wikievalfacts_reports_error_rate_against_human_labels(cli, scripted_server, tmp_path):
    from tests.datasets.test_wikieval import COLUMNS, pslv_row

    path = tmp_path / "wikiEval_human_annotated_facts_.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerow(pslv_row())
    # Every fact judged True: answer labels T,T,T -> ER 0; ungrounded F,T,F -> ER 2/3; poor F,F,(none) -> ER 1.
    result = cli("recall", str(path), "-o", str(tmp_path / "run"), "--mode", "tf")
    assert result.exit_code == 0, result.output
    assert "Recall by answer type" in result.stderr
    metrics = {m["answer_type"]: m for m in json.loads(result.stdout)["recall_metrics"]}
    assert metrics["answer"]["error_rate"] == 0.0
    assert metrics["ungrounded_answer"]["error_rate"] == pytest.approx(2 / 3)
    assert metrics["poor_answer"]["error_rate"] == 1.0 and metrics["poor_answer"]["labelled"] == 2
    assert metrics["answer"]["calls"] == 1 and metrics["answer"]["method"] == "faaf:mode=tf"
