"""`ragfacts synth`: a labelled dataset from faithful answers, end to end over HTTP, resumable, read by `bench`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragfacts.cli import app
from tests.scripted_server import Reply, ScriptedServer

runner = CliRunner()
ROWS = [
    {"id": "nile", "question": "Where does the Nile end?", "answer": "The Nile flows north into the Mediterranean Sea.",
     "reference": "The Nile flows north through Egypt and ends in the Mediterranean Sea."},
    {"id": "rhine", "answer": "The Rhine ends in the North Sea.", "reference": "The Rhine flows into the North Sea."},
    {"id": "yangtze", "reference": "长江向东流，注入东海。"},
]  # fmt: skip


def invoke(server: ScriptedServer, *args: str):
    return runner.invoke(app, ["--model", "openai:scripted", "--base-url", server.base_url, "--no-cache", *args])


def write_rows(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def script(server: ScriptedServer) -> None:
    """Contradictions that take (north→south, North Sea→Baltic Sea, 东海→南海), causal edits the check types as
    hallucinations, and faithful rewordings; the Chinese row's answer is written by the model."""
    server.when(
        "The error type, causal confusion:", Reply.json({"thinking": "t", "original": "The", "replacement": "So the"})
    )
    server.when("<segment>\nSo the\n</segment>", Reply.json(_verdict("Hallu.")))
    server.when("因果混淆错误", Reply.json({"thinking": "t", "original": "长江", "replacement": "因此长江"}))
    server.when("<segment>\n因此长江\n</segment>", Reply.json(_verdict("LCaus.")))
    # The other injection prompts (here: contradiction) end with the answer to edit.
    for original, replacement in (("north", "south"), ("North Sea", "Baltic Sea"), ("东海", "南海")):
        closing = "现在改动下面的回答：" if original == "东海" else "Now edit this answer:"
        server.when(f"{closing}\n\n<answer>\n{_answer_of(original)}", _edit(original, replacement, "contradiction"))
        server.when(f"<segment>\n{replacement}\n</segment>", Reply.json(_verdict("KCont.")))
    server.when("写一个忠实的回答", Reply.json({"answer": "长江注入东海。"}))
    server.when("检查一个为事实核查测试写的回答", Reply.json({"reasoning": "无", "supported": True}))
    server.when("Reword the answer below", Reply.json({"paraphrase": "Reworded, the same."}))
    server.when("请改写下面的回答", Reply.json({"paraphrase": "长江最终流入东海。"}))
    server.when("<reference_answer>", Reply.json({"reasoning": "same", "same_meaning": True, "supported": True}))


def _answer_of(original: str) -> str:
    return {"north": ROWS[0]["answer"], "North Sea": ROWS[1]["answer"], "东海": "长江注入东海。"}[original]


def _edit(original: str, replacement: str, kind: str) -> Reply:
    return Reply.json({"thinking": kind, "original": original, "replacement": replacement})


def _verdict(error_type: str | None) -> dict:
    return {"reasoning": "r", "error_type": error_type, "only_error": True}


def dataset_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_synth_writes_the_kept_answers_with_labels_types_spans_and_provenance(server, tmp_path):
    script(server)
    data = write_rows(tmp_path / "rows.jsonl", ROWS)
    out = tmp_path / "synth.jsonl"
    result = invoke(server, "--json", "synth", str(data), "-o", str(out), "--types", "KCont,LCaus")
    assert result.exit_code == 0, result.output
    # per row: 2 injections + 1 rewording, each checked; the Chinese row also writes and checks its answer
    assert len(server.requests) == 3 * 6 + 2
    rows = {row["id"]: row for row in dataset_rows(out)}
    assert sorted(rows) == sorted(
        [f"{source}/{kind}" for source in ("nile", "rhine") for kind in ("original", "paraphrase-1", "contradiction")]
        + ["yangtze/written", "yangtze/paraphrase-1", "yangtze/contradiction", "yangtze/causal_confusion"]
    )
    flawed = rows["nile/contradiction"]
    assert flawed["answer"] == "The Nile flows south into the Mediterranean Sea."
    assert (flawed["label"], flawed["error_type"], flawed["source_model"]) == ("inconsistent", "KCont.", "scripted")
    assert flawed["reference"] == ROWS[0]["reference"] and flawed["question"] == ROWS[0]["question"]
    assert flawed["synth"]["span"] == {"original": "north", "replacement": "south", "start": 15}
    assert flawed["synth"]["made_by"] == {"model": "scripted", "prompt": "synth_inject_contradiction/en@1"}
    assert flawed["synth"]["verified_by"]["prompt"] == "synth_check_edit/en@1"
    assert rows["nile/original"]["label"] == "consistent" and "error_type" not in rows["nile/original"]
    assert rows["yangtze/causal_confusion"]["error_type"] == "LCaus."
    summary = json.loads(result.stdout)
    assert summary["by_type"]["KCont."] == {"asked": 3, "kept": 3, "rejected": 0, "not_applied": 0, "failed": 0}
    assert summary["by_type"]["LCaus."] == {"asked": 3, "kept": 1, "rejected": 2, "not_applied": 0, "failed": 0}
    assert summary["items"] == len(rows) == 10
    manifest = json.loads((tmp_path / "synth.jsonl.manifest.json").read_text())
    assert manifest["synth"] == summary and manifest["methods"][0]["options"]["types"] == ["KCont.", "LCaus."]
    ledger = json.loads((tmp_path / "synth.jsonl.ledger.json").read_text())
    assert ledger["total"]["calls"] == len(server.requests)
    assert "Synthesised from 3 of 3 rows" in result.stderr and "Usage ledger" in result.stderr


def test_bench_reads_the_synthesised_dataset_as_is_and_scores_per_error_type(server, tmp_path):
    script(server)
    data = write_rows(tmp_path / "rows.jsonl", ROWS)
    out = tmp_path / "synth.jsonl"
    assert invoke(server, "synth", str(data), "-o", str(out), "--types", "KCont,LCaus").exit_code == 0
    server.reset()
    result = invoke(server, "--json", "bench", str(out), "--methods", "holistic", "-o", str(tmp_path / "run"))
    assert result.exit_code == 0, result.output
    assert "generic layout" in result.stderr and "label ← label, error_type ← error_type" in result.stderr
    (holistic,) = json.loads(result.stdout)["bench"]["precision"]
    # The scripted judge calls every answer consistent: right on the 6 positives, wrong on the 4 flawed ones.
    assert holistic["by_error_type"] == {"KCont.": {"correct": 0, "n": 3}, "LCaus.": {"correct": 0, "n": 1}}
    assert holistic["positive_accuracy"]["correct"] == 6 and len(server.requests) == 10


def test_a_rerun_reuses_every_row_makes_no_call_and_writes_the_same_dataset(server, tmp_path):
    script(server)
    data = write_rows(tmp_path / "rows.jsonl", ROWS)
    out = tmp_path / "synth.jsonl"
    assert invoke(server, "synth", str(data), "-o", str(out)).exit_code == 0
    first = out.read_text(encoding="utf-8")
    server.reset()
    again = invoke(server, "synth", str(data), "-o", str(out))
    assert again.exit_code == 0, again.output
    assert server.requests == [] and "3 reused, 0 synthesised now" in again.stderr
    assert out.read_text(encoding="utf-8") == first


def test_a_killed_run_loses_nothing_and_the_rerun_does_only_the_rows_left(server, tmp_path):
    script(server)
    data = write_rows(tmp_path / "rows.jsonl", ROWS)
    whole = tmp_path / "whole.jsonl"
    assert invoke(server, "synth", str(data), "-o", str(whole), "--types", "KCont").exit_code == 0
    server.reset()
    script(server)
    out = tmp_path / "synth.jsonl"
    assert invoke(server, "synth", str(data), "-o", str(out), "--types", "KCont", "--limit", "1").exit_code == 0
    log = tmp_path / "synth.jsonl.log.jsonl"
    with log.open("a", encoding="utf-8") as handle:
        handle.write('{"v": 1, "id": "rhine", "method": "synth", "content_ha')  # as if killed mid-line
    out.unlink()  # as if killed before the dataset was written
    calls_before = len(server.requests)
    resumed = invoke(server, "synth", str(data), "-o", str(out), "--types", "KCont")
    assert resumed.exit_code == 0, resumed.output
    assert "1 reused, 2 synthesised now" in resumed.stderr
    assert len(server.requests) - calls_before == 4 + 6  # rhine: 4 calls; yangtze: 2 more for its answer
    assert dataset_rows(out) == dataset_rows(whole)  # the same rows, in the same order
    assert len(log.read_text(encoding="utf-8").splitlines()) == 3


def test_other_options_on_an_existing_output_are_refused_until_forced(server, tmp_path):
    script(server)
    data = write_rows(tmp_path / "rows.jsonl", ROWS[:1])
    out = tmp_path / "synth.jsonl"
    assert invoke(server, "synth", str(data), "-o", str(out), "--types", "KCont").exit_code == 0
    refused = invoke(server, "synth", str(data), "-o", str(out), "--types", "KCont,LCaus")
    assert refused.exit_code == 2 and "add --force" in refused.output
    forced = invoke(server, "synth", str(data), "-o", str(out), "--types", "KCont,LCaus", "--force")
    assert forced.exit_code == 0, forced.output
    assert {row["id"] for row in dataset_rows(out)} >= {"nile/contradiction"}
    manifest = json.loads((tmp_path / "synth.jsonl.manifest.json").read_text())
    assert list(manifest["synth"]["by_type"]) == ["KCont.", "LCaus."]


@pytest.mark.parametrize(
    ("rows", "args", "message"),
    [
        ([{"answer": "A."}], [], "no reference"),
        ([{"answer": "A.", "reference": "R.", "label": "inconsistent"}], [], "labelled inconsistent"),
        ([{"answer": "A.", "reference": "R."}], ["--types", "KCont,Typo"], "'Typo' is not an error type"),
        ([{"answer": "A.", "reference": "R."}], ["--lang", "fr"], "--lang"),
    ],
)
def test_bad_input_exits_2_with_a_message_and_writes_nothing(server, tmp_path, rows, args, message):
    data = write_rows(tmp_path / "rows.jsonl", rows)
    result = invoke(server, "synth", str(data), "-o", str(tmp_path / "out" / "synth.jsonl"), *args)
    assert result.exit_code == 2 and message in result.output
    assert "Traceback" not in result.output
    assert server.requests == [] and not (tmp_path / "out").exists()


def test_an_output_that_is_not_a_jsonl_file_of_ours_is_refused(server, tmp_path):
    data = write_rows(tmp_path / "rows.jsonl", ROWS[:1])
    foreign = tmp_path / "mine.jsonl"
    foreign.write_text('{"answer": "my own data"}\n', encoding="utf-8")
    for target, message in (
        (tmp_path / "out.csv", "ending in .jsonl"),
        (foreign, "not written by ragfacts synth"),
        (data, "also an input"),
    ):
        result = invoke(server, "synth", str(data), "-o", str(target))
        assert result.exit_code == 2 and message in result.output, result.output
    assert foreign.read_text(encoding="utf-8") == '{"answer": "my own data"}\n' and server.requests == []


def test_a_dry_run_estimates_the_calls_and_spends_nothing(server, tmp_path):
    data = write_rows(tmp_path / "rows.jsonl", ROWS)
    result = invoke(
        server, "--json", "synth", str(data), "-o", str(tmp_path / "s.jsonl"), "--types", "KCont,LCaus", "--dry-run"
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["calls"] == 3 * 6 + 2
    assert server.requests == [] and not (tmp_path / "s.jsonl").exists()
