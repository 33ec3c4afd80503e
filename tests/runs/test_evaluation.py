"""`Evaluation`, the one object every surface runs: data, methods and settings in; a resumable run out."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from ragfacts.datasets.dataset import Dataset
from ragfacts.datasets.reader import DatasetError
from ragfacts.methods.base import create_method
from ragfacts.runs.evaluation import Evaluation, RunSettings
from ragfacts.runs.rundir import RunError
from tests.scripted_server import Reply

ROWS = [
    {"id": "a", "question": "Q?", "answer": "A one.", "reference": "R one.", "ground_truth": "G one."},
    {"id": "b", "question": "Q?", "answer": "A two.", "reference": "R two."},
]


def rows(*keep: str) -> Dataset:
    return Dataset.from_rows([row for row in ROWS if not keep or row["id"] in keep])


async def test_a_run_goes_into_its_output_and_the_next_run_reuses_every_result(make_model, scripted_server, tmp_path):
    model = make_model()
    first = await Evaluation(rows(), [create_method("lface4rag")], output=tmp_path / "run").run(model, model_spec="m")
    assert (first.report.ran, first.report.reused) == (2, 0) and [r["id"] for r in first.rows()] == ["a", "b"]
    calls = len(scripted_server.requests)
    again = await Evaluation(rows(), [create_method("lface4rag")], output=tmp_path / "run").run(model, model_spec="m")
    assert (again.report.ran, again.report.reused) == (0, 2) and len(scripted_server.requests) == calls
    assert again.rows() == first.rows() and (tmp_path / "run" / "results.jsonl").exists()


async def test_without_an_output_the_results_are_held_in_memory_after_the_scratch_directory_is_gone(make_model):
    result = await Evaluation(rows(), [create_method("lface4rag")]).run(make_model())
    assert not result.run_dir.target.exists()
    assert [line["id"] for line in result.lines()] == ["a", "b"] and result.document()["rows"][1]["id"] == "b"


async def test_settings_limit_the_items_judged_and_the_rest_are_left_for_the_next_run(make_model, tmp_path):
    evaluation = Evaluation(rows(), [create_method("lface4rag")], RunSettings(limit=1), output=tmp_path / "run")
    result = await evaluation.run(make_model())
    assert (result.report.ran, result.report.not_run) == (1, 1)


def test_a_default_judge_that_can_judge_no_item_is_left_out_and_a_named_one_is_refused():
    recall = create_method("faaf")
    evaluation = Evaluation(rows("b"), [create_method("lface4rag"), recall], defaults={"faaf"}, strict=False)
    assert evaluation.dropped == [recall] and [m.spec for m in evaluation.methods] == ["lface4rag"]
    with pytest.raises(DatasetError, match="faaf"):
        Evaluation(rows("b"), [create_method("lface4rag"), create_method("faaf")], strict=False)


def test_a_row_a_method_cannot_judge_is_refused_before_any_call_unless_the_run_may_skip_it():
    with pytest.raises(DatasetError, match="'b' cannot be judged"):
        Evaluation(rows(), [create_method("faaf")])
    assert Evaluation(rows(), [create_method("faaf")], check_rows=False).plan.methods[0].spec == "faaf"


def test_the_output_may_not_be_an_input(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text("{}\n")
    evaluation = Evaluation(rows(), [create_method("lface4rag")], output=tmp_path / "data.jsonl")
    with pytest.raises(RunError, match="also an input"):
        evaluation.check_target([data])


def test_run_settings_refuse_a_misspelled_setting_and_values_out_of_bounds():
    with pytest.raises(ValidationError, match="limt"):
        RunSettings(limt=3)  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="max_failed"):
        RunSettings(max_failed=2.0)


async def test_the_result_gates_the_run_by_its_summaries(make_model):
    result = await Evaluation(rows(), [create_method("lface4rag")]).run(make_model())
    (passed,) = result.gates({"min_faithfulness": 0.5})
    (failed,) = result.gates({"min_faithfulness": 1.01})
    assert passed.passed and not failed.passed


async def test_failures_count_the_results_with_a_failed_call_and_name_the_reasons(make_model, scripted_server):
    scripted_server.when("", Reply.error(400))  # every call is refused
    result = await Evaluation(rows(), [create_method("lface4rag")]).run(make_model(max_retries=0))
    failed = result.failures()
    assert (failed.results, failed.failed) == (2, 2) and "400" in failed.top()[0][0]


async def test_a_run_without_failed_calls_reads_no_reasons(make_model):
    failed = (await Evaluation(rows(), [create_method("lface4rag")]).run(make_model())).failures()
    assert (failed.results, failed.failed, failed.top()) == (2, 0, [])
