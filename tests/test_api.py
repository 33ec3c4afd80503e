"""The Python API: evaluate, check and recall from sync code and from inside a running event loop."""

from __future__ import annotations

import importlib.util
import json

import pytest

import ragfacts
from ragfacts.methods.lface4rag import CheckResult
from ragfacts.methods.recall import RecallResult
from tests.conftest import TEST_KEY
from tests.methods.test_lface4rag import REFERENCE, SEG1, decomposition
from tests.scripted_server import Reply

ROWS = [
    {"question": "Where?", "answer": SEG1, "reference": REFERENCE, "ground_truth": "The Nile flows north."},
    {"question": "Where?", "answer": SEG1 + " Indeed.", "reference": REFERENCE},
]


def test_evaluate_rows_gives_one_row_per_item_with_typed_details_and_a_summary(make_model, scripted_server):
    results = ragfacts.evaluate(ROWS, model=make_model())
    assert len(results) == 2 and [row["label"] for row in results] == ["consistent", "consistent"]
    assert results[0]["recall"] == 1.0 and "recall" not in results[1]
    assert isinstance(results.details[0]["lface4rag"], CheckResult)
    assert isinstance(results.details[0]["faaf"], RecallResult)
    assert {s.method: s.judged for s in results.summary} == {"lface4rag": 2, "faaf": 1}
    assert results.usage.calls == len(scripted_server.requests) == 2 * 3 + 2
    assert "lface4rag: 2/2 judged" in repr(results) and "faithfulness 1.000" in repr(results)


async def test_the_sync_api_works_inside_a_running_event_loop(make_model, scripted_server):
    scripted_server.enqueue(decomposition(SEG1))
    results = ragfacts.check(reference=REFERENCE, answer=SEG1, model=make_model())
    assert results[0]["label"] == "consistent" and results[0]["faithfulness"] == 1.0


def test_a_model_spec_string_uses_the_configured_endpoint(scripted_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
    monkeypatch.setenv("RAGFACTS_BASE_URL", scripted_server.base_url)
    results = ragfacts.recall(answer="Paris is in France.", facts=["Paris is in France."], model="openai:scripted")
    assert results[0]["recall"] == 1.0 and len(scripted_server.requests) == 1


def test_an_output_directory_makes_a_call_resumable(make_model, scripted_server, tmp_path):
    first = ragfacts.evaluate(ROWS, model=make_model(), output=tmp_path / "run")
    assert first.run_dir == tmp_path / "run" and (tmp_path / "run" / "manifest.json").exists()
    scripted_server.reset()
    again = ragfacts.evaluate(ROWS, model=make_model(), output=tmp_path / "run")
    assert again.report.reused == 3 and scripted_server.requests == []
    assert [row["id"] for row in again] == [row["id"] for row in first]


def test_a_file_path_and_method_options(make_model, scripted_server, tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in ROWS), encoding="utf-8")
    results = ragfacts.check(path, model=make_model(), logic_stage=False)
    assert len(results) == 2
    assert {request.body["response_format"]["json_schema"]["name"] for request in scripted_server.requests} == {
        "Decomposition",
        "FactCheck",
    }


def test_a_row_the_method_cannot_judge_is_refused_before_any_call(make_model, scripted_server):
    from ragfacts.datasets.reader import DatasetError

    with pytest.raises(DatasetError, match="no reference"):
        ragfacts.check([{"answer": "A."}], model=make_model())
    assert scripted_server.requests == []


def test_evaluate_without_ground_truths_judges_precision_and_warns_that_recall_was_skipped(make_model, scripted_server):
    from ragfacts.datasets.reader import DatasetError

    scripted_server.when("<answer>", decomposition(SEG1))
    with pytest.warns(UserWarning, match="recall skipped: none of the 1 rows"):
        results = ragfacts.evaluate([{"reference": REFERENCE, "answer": SEG1}], model=make_model())
    assert [s.method for s in results.summary] == ["lface4rag"] and results[0]["label"] == "consistent"
    with pytest.raises(DatasetError, match="faaf"):
        ragfacts.evaluate([{"reference": REFERENCE, "answer": SEG1}], model=make_model(), recall="faaf")


@pytest.mark.skipif(importlib.util.find_spec("pandas") is None, reason="pandas is not installed")
def test_results_convert_to_a_dataframe_with_the_texts_the_verdicts_and_the_facts(make_model, scripted_server):
    frame = ragfacts.evaluate(ROWS, model=make_model()).to_pandas()
    assert list(frame["label"]) == ["consistent", "consistent"] and frame.shape[0] == 2
    assert list(frame["question"]) == ["Where?", "Where?"] and frame["answer"][1] == SEG1 + " Indeed."
    for column in ("probability", "reason", "error_types", "flagged_segments", "facts", "calls", "prompt_tokens"):
        assert column in frame.columns
    assert frame["facts"][0] == ["x"] and frame["facts_present"][0] == [True] and frame["facts"][1] == []
    assert frame["calls"].sum() == len(scripted_server.requests)


def test_a_flagged_answer_shows_its_segment_its_error_type_and_why(make_model, scripted_server):
    scripted_server.enqueue(decomposition(SEG1))
    scripted_server.when(
        "<segment>",
        Reply.schema_valid(overrides={"verdict": "inconsistent", "error_type": "KInve.", "explanation": "no"}),
    )
    results = ragfacts.check(reference=REFERENCE, answer=SEG1, model=make_model())
    (row,) = results.verdicts
    assert row.flagged and row.label == "inconsistent"
    assert row.record()["flagged_segments"] == [SEG1] and row.record()["error_types"] == ["KInve."]
    assert row.reason is not None and row.reason.startswith(f"[KInve.] {SEG1}")
    assert "flagged 1 of 1: 1 not faithful; failed 0" in repr(results)


def test_results_and_their_summary_read_as_text_and_render_as_html(make_model, scripted_server):
    results = ragfacts.evaluate([*ROWS, {"answer": "<b>bold</b>", "reference": REFERENCE}], model=make_model())
    assert repr(results.summary).splitlines()[0].startswith("lface4rag: 3/3 judged, 100.0% [100.0, 100.0] consistent")
    assert "faaf: 1/1 judged, recall 1.000" in repr(results.summary)
    html = results._repr_html_()
    assert "<table>" in html and "flagged 0 of 3" in html and "Where?" in html
    assert "&lt;b&gt;bold&lt;/b&gt;" in html and "<b>bold</b>" not in html  # the data's text is escaped
    assert "<table>" in results.summary._repr_html_()


def test_a_run_directory_reads_back_without_a_model(make_model, scripted_server, tmp_path):
    made = ragfacts.evaluate(ROWS, model=make_model(), output=tmp_path / "run")
    read = ragfacts.read_run(tmp_path / "run")
    assert read.rows == made.rows and [v.record() for v in read.verdicts] == [v.record() for v in made.verdicts]
    assert repr(read.summary) == repr(made.summary) and read.usage.calls == len(scripted_server.requests)
    assert isinstance(read.details[0]["lface4rag"], CheckResult)


def test_rows_given_in_memory_read_back_in_their_order_whatever_order_they_finished_in(
    make_model, scripted_server, tmp_path
):
    made = ragfacts.evaluate(ROWS, model=make_model(), output=tmp_path / "run")
    results = tmp_path / "run" / "results.jsonl"
    lines = results.read_text(encoding="utf-8").splitlines(keepends=True)
    results.write_text("".join(reversed(lines)), encoding="utf-8")  # as if the last row had finished first
    assert [row["id"] for row in ragfacts.read_run(tmp_path / "run").rows] == [row["id"] for row in made.rows]


def test_reading_a_folder_that_holds_no_run_says_so(tmp_path):
    from ragfacts.runs.rundir import RunError

    with pytest.raises(RunError, match="no manifest"):
        ragfacts.read_run(tmp_path)


def test_progress_is_shown_where_asked_and_says_where_the_results_go(make_model, scripted_server, capsys):
    scripted_server.when("<answer>", decomposition(SEG1))
    rows = [{"reference": REFERENCE, "answer": SEG1}]
    ragfacts.check(rows, model=make_model())
    assert "ragfacts: judging" not in capsys.readouterr().err  # an endpoint answers fast: quiet unless asked
    ragfacts.check(rows, model=make_model(), settings={"progress": True})
    err = capsys.readouterr().err
    assert "ragfacts: judging 1 items with scripted-model; results in a temporary directory" in err
    assert "output=DIR keeps them" in err
