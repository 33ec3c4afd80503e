"""What a dataset command shows at its end: a verdict per row, in input order, and the flagged rows in full."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from ragfacts.cli import app
from ragfacts.text import delimit
from tests.methods.test_lface4rag import decomposition
from tests.scripted_server import Reply, ScriptedServer

runner = CliRunner()
LONG_FLAW = (
    "The tower was completed in 1949 by a consortium of engineers from three countries, who also designed the "
    "lifts, the stairs, the lighting and the antenna that crowns it today."
)


def invoke(server: ScriptedServer, *args: str):
    return runner.invoke(app, ["--model", "openai:scripted", "--base-url", server.base_url, "--no-cache", *args])


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def rows_with_one_flaw() -> list[dict]:
    answers = ["Paris is the capital.", LONG_FLAW, "It is 330 metres tall."]
    return [
        {"id": f"row-{n}", "question": f"Question {n}?", "answer": answer, "reference": "The tower was built in 1889."}
        for n, answer in zip((3, 1, 2), answers, strict=True)  # ids out of order: the table keeps input order
    ]


def flag(server: ScriptedServer, segment: str) -> None:
    """The scripted judge finds `segment` inconsistent (a conflation); every other answer is its own one segment."""
    server.when(
        delimit("segment", segment), Reply.schema_valid(overrides={"verdict": "inconsistent", "error_type": "KConf."})
    )
    for row in rows_with_one_flaw():
        server.when(delimit("answer", row["answer"]), decomposition(row["answer"]))


def test_check_ends_with_a_verdict_per_row_in_input_order_and_the_flagged_segment_in_full(server, tmp_path):
    data = write_jsonl(tmp_path / "rows.jsonl", rows_with_one_flaw())
    flag(server, LONG_FLAW)
    result = invoke(server, "check", str(data), "-o", str(tmp_path / "run"))
    assert result.exit_code == 0, result.output
    table = result.stderr[result.stderr.index("Verdicts") :]
    assert table.index("row-3") < table.index("row-1") < table.index("row-2")
    assert "flagged 1 of 3: 1 not faithful; failed 0" in result.stderr
    assert f"flagged [KConf.]: {LONG_FLAW}\n" in result.stderr  # whole, on a line of its own
    assert "KConf. conflation" in result.stderr  # the legend explains the code it printed


def test_piped_output_is_plain_unwrapped_text(server, tmp_path):
    data = write_jsonl(tmp_path / "rows.jsonl", rows_with_one_flaw())
    flag(server, LONG_FLAW)
    result = invoke(server, "check", str(data), "-o", str(tmp_path / "run"))
    assert "\x1b[" not in result.stderr  # no colour codes
    ledger = result.stderr[result.stderr.index("Usage ledger") :]
    assert "prompt tok" in ledger and "failed" in ledger  # column names whole, not "promp t tok"
    row = next(line for line in result.stderr.splitlines() if "row-1" in line and "inconsistent" in line)
    assert "Question 1?" in row and "KConf." in row  # one row, one line


def test_quiet_leaves_out_the_verdict_table(server, tmp_path):
    data = write_jsonl(tmp_path / "rows.jsonl", rows_with_one_flaw())
    result = invoke(server, "--quiet", "check", str(data), "-o", str(tmp_path / "run"))
    assert result.exit_code == 0, result.output
    assert "Verdicts" not in result.stderr and "Summary" in result.stderr


def test_verdicts_flagged_lists_only_the_flagged_rows(server, tmp_path):
    data = write_jsonl(tmp_path / "rows.jsonl", rows_with_one_flaw())
    flag(server, LONG_FLAW)
    result = invoke(server, "check", str(data), "-o", str(tmp_path / "run"), "--verdicts", "flagged")
    table = result.stderr[result.stderr.index("Verdicts") :]
    assert "row-1" in table and "row-2" not in table and "2 rows not flagged are not listed" in table


def test_a_deepeval_file_is_evaluated_with_its_own_column_names(server, tmp_path):
    case = {
        "input": "When was the tower built?",
        "actual_output": "It was built in 1889.",
        "retrieval_context": ["The tower was built in 1889."],
        "expected_output": "In 1889.",
    }
    data = tmp_path / "cases.json"
    data.write_text(json.dumps([case]), encoding="utf-8")
    result = invoke(server, "--json", "evaluate", str(data), "-o", str(tmp_path / "run"))
    assert result.exit_code == 0, result.output
    assert "deepeval layout" in result.stderr
    prompts = [request.prompt for request in server.requests]
    assert any(delimit("reference", "The tower was built in 1889.") in prompt for prompt in prompts)
    assert any(delimit("reference_answer", "In 1889.") in prompt for prompt in prompts)
    (row,) = json.loads(result.stdout)["rows"]
    assert row["recall"] is not None and row["label"] is not None


def test_a_judge_that_can_judge_no_row_stops_the_run_before_any_call(server, tmp_path):
    data = write_jsonl(tmp_path / "rows.jsonl", [{"answer": "A.", "context": "R.", "expected": "G."}] * 2)
    out = tmp_path / "run"
    result = invoke(server, "evaluate", str(data), "-o", str(out), "--map", "reference=context")
    assert result.exit_code == 2
    message = " ".join(result.output.split())
    assert (
        "faaf (it has neither facts nor a ground truth to generate them from) can judge none of the 2 items" in message
    )
    assert "--map ground_truth=expected" in message and "or leave recall out" in message
    assert server.requests == [] and not out.exists()


def test_leaving_out_the_judge_that_cannot_run_runs_the_rest(server, tmp_path):
    data = write_jsonl(tmp_path / "rows.jsonl", [{"answer": "A.", "reference": "R."}])
    result = invoke(server, "evaluate", str(data), "-o", str(tmp_path / "run"), "--recall", "none")
    assert result.exit_code == 0, result.output
    assert "flagged" in result.stderr
