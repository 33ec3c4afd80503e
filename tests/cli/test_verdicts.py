"""What a dataset command shows at its end: a verdict per row, in input order, and the flagged rows in full."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from ragfacts.cli import app
from ragfacts.report.display import Summary, summary_html
from ragfacts.report.report import load_run
from ragfacts.text import delimit
from tests.methods.test_lface4rag import REFERENCE, SEG1, SEG2, decomposition
from tests.scripted_server import Reply, ScriptedServer

runner = CliRunner()
LONG_FLAW = (
    "The tower was completed in 1949 by a consortium of engineers from three countries, who also designed the "
    "lifts, the stairs, the lighting and the antenna that crowns it today."
)


def invoke(server: ScriptedServer, *args: str, env: dict[str, str | None] | None = None):
    return runner.invoke(
        app, ["--model", "openai:scripted", "--base-url", server.base_url, "--no-cache", *args], env=env
    )


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


def test_piped_summary_and_verdicts_keep_to_120_columns_one_row_a_line(server, tmp_path):
    data = write_jsonl(tmp_path / "rows.jsonl", rows_with_one_flaw())
    flag(server, LONG_FLAW)
    result = invoke(server, "check", str(data), "-o", str(tmp_path / "run"), env={"COLUMNS": None})
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    details = next(n for n, line in enumerate(lines) if line.startswith("#"))  # the flagged rows, whole, below
    tables = lines[lines.index("Summary") : details]
    assert any(line.startswith("Verdicts (lface4rag)") for line in tables) and max(map(len, tables)) <= 120
    rows = [line for line in tables if re.search(r"\brow-[123]\b", line)]
    assert [re.search(r"row-\d", row)[0] for row in rows] == ["row-3", "row-1", "row-2"]  # one line each
    wide = invoke(server, "check", str(data), "-o", str(tmp_path / "run"), env={"COLUMNS": "200"})
    row = next(line for line in wide.stderr.splitlines() if "row-1" in line and "inconsistent" in line)
    assert 120 < len(row) <= 200  # COLUMNS gives the long texts more room


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


def test_a_default_judge_that_can_judge_no_row_is_skipped_naming_the_map_that_would_feed_it(server, tmp_path):
    data = write_jsonl(tmp_path / "rows.jsonl", [{"answer": "A.", "context": "R.", "expected": "G."}] * 2)
    result = invoke(server, "evaluate", str(data), "-o", str(tmp_path / "run"), "--map", "reference=context")
    assert result.exit_code == 0, result.output
    message = " ".join(result.output.split())
    assert "recall skipped: none of the 2 rows has a ground_truth or facts" in message
    assert "--map ground_truth=expected" in message


def test_a_judge_named_that_can_judge_no_row_stops_the_run_before_any_call(server, tmp_path):
    data = write_jsonl(tmp_path / "rows.jsonl", [{"answer": "A.", "context": "R.", "expected": "G."}] * 2)
    out = tmp_path / "run"
    result = invoke(server, "evaluate", str(data), "-o", str(out), "--map", "reference=context", "--recall", "faaf")
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


def test_a_run_whose_every_call_failed_shows_no_score_anywhere(server, tmp_path):
    server.when("", Reply.error(500))
    data = write_jsonl(
        tmp_path / "rows.jsonl", [{"answer": f"A{n}.", "reference": "R.", "ground_truth": "G."} for n in (1, 2)]
    )
    run_dir, markdown = tmp_path / "run", tmp_path / "report.md"
    result = invoke(server, "--max-retries", "0", "evaluate", str(data), "-o", str(run_dir), "--report", str(markdown))
    assert "faithfulness not judged (2 unscored)" in result.stderr and "recall not judged (2 unscored)" in result.stderr
    html = tmp_path / "report.html"
    assert invoke(server, "report", str(run_dir), "-o", str(html)).exit_code == 0
    summaries = load_run(run_dir).summaries
    shown = {
        "terminal": result.stderr,
        "Markdown report": markdown.read_text(encoding="utf-8"),
        "HTML report": html.read_text(encoding="utf-8"),
        "notebook": summary_html(summaries) + repr(Summary(summaries)),
    }
    for where, text in shown.items():
        assert "faithfulness not judged (2 unscored)" in text, where
        assert not re.search(r"0\.000 \[0\.000, 0\.000\]|0\.0%? \[0\.0, 0\.0\]", text), where  # no score of nothing


def test_an_answer_that_could_not_be_judged_shows_no_score(server, tmp_path):
    server.when(delimit("answer", SEG1), decomposition(SEG1))
    server.when(delimit("answer", f"{SEG1} {SEG2}"), decomposition(SEG1, SEG2))
    server.when(delimit("segment", SEG2), Reply.error(500))  # one of its two segments: undecided, so is the answer
    rows = [{"id": "whole", "answer": SEG1}, {"id": "half", "answer": f"{SEG1} {SEG2}"}]
    data = write_jsonl(tmp_path / "rows.jsonl", [{**row, "reference": REFERENCE} for row in rows])
    result = invoke(server, "--max-retries", "0", "check", str(data), "-o", str(tmp_path / "run"))
    shown = {
        found[1]: line for line in result.stderr.splitlines() if (found := re.match(r" +[12] +(whole|half) ", line))
    }
    assert "consistent" in shown["whole"] and "1.00" in shown["whole"]
    assert "unscored" in shown["half"] and "0.50" not in shown["half"]  # not its 1 of 2 segments supported
    one = invoke(server, "--max-retries", "0", "check", "-r", REFERENCE, "-a", f"{SEG1} {SEG2}")
    assert one.stderr.startswith("UNSCORED  2 stage call(s) failed")  # no "faithfulness 0.50" after the label


def test_a_recall_whose_every_fact_failed_shows_no_score(server):
    server.when("", Reply.error(500))
    result = invoke(server, "--max-retries", "0", "recall", "-a", "Paris is in France.", "-f", '["Paris.", "France."]')
    assert "recall: not judged (2 facts unscored)" in result.stderr and "0/2 facts (0%)" not in result.stderr
