"""The one runner: content-keyed resume, configuration checks, retries of failures, early stop, bounded work."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from ragfacts.datasets.dataset import Dataset
from ragfacts.methods.base import create_method
from ragfacts.models import ModelOptions
from ragfacts.models.http.openai_compat import OpenAICompatibleModel
from ragfacts.runs.current import summarise
from ragfacts.runs.planning import RunPlan
from ragfacts.runs.rundir import RunDir, RunError
from ragfacts.runs.runner import run
from ragfacts.text import delimit
from tests.conftest import TEST_KEY
from tests.scripted_server import Reply

REFERENCE = "The Nile flows north into the Mediterranean Sea."


def rows(*answers: str, ground_truth: bool = True) -> list[dict]:
    return [
        {"answer": answer, "reference": REFERENCE, **({"ground_truth": f"truth of {answer}"} if ground_truth else {})}
        for answer in answers
    ]


def write(path: Path, items: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in items), encoding="utf-8")
    return path


def plan(path: Path, *methods: str, **options) -> RunPlan:
    return RunPlan(dataset=Dataset.open(path), methods=[create_method(m) for m in methods], **options)


def prompts(server) -> str:
    return "\n".join(request.prompt for request in server.requests)


async def test_every_method_judges_every_item_into_one_line_each_with_a_manifest_and_a_ledger(
    tmp_path, make_model, scripted_server
):
    data = write(tmp_path / "data.jsonl", rows("a1", "a2", "a3"))
    run_dir = RunDir(tmp_path / "run")
    report = await run(run_dir, plan(data, "lface4rag", "faaf"), make_model())
    assert (report.results, report.ran, report.reused, report.incomplete) == (6, 6, 0, 0)
    assert len(scripted_server.requests) == 3 * 3 + 3 * 2  # paper mode: 1 + 2 per segment; recall: generate + FaaF
    lines = list(run_dir.lines())
    assert sorted((line["method"], line["item"]["answer"]) for line in lines) == sorted(
        (method, answer) for method in ("lface4rag", "faaf") for answer in ("a1", "a2", "a3")
    )
    manifest = json.loads(run_dir.manifest.read_text())
    assert manifest["dataset"]["sha256"] == Dataset.open(data).sha256 and manifest["dataset"]["rows"] == 3
    assert [m["key"] for m in manifest["methods"]] == ["lface4rag", "faaf"]
    assert manifest["methods"][0]["options"]["strategy"] == "paper"  # auto, resolved for this model
    assert manifest["model"]["fingerprint"]["model"] == "scripted-model"
    assert "decompose/en@1" in manifest["methods"][0]["prompts"] and manifest["invocations"][0]["ran"] == 6
    assert json.loads(run_dir.ledger.read_text())["total"]["calls"] == 15


async def test_a_rerun_reuses_every_result_and_makes_no_call(tmp_path, make_model, scripted_server):
    data = write(tmp_path / "data.jsonl", rows("a1", "a2"))
    run_dir = RunDir(tmp_path / "run")
    await run(run_dir, plan(data, "lface4rag"), make_model())
    scripted_server.reset()
    report = await run(run_dir, plan(data, "lface4rag"), make_model())
    assert (report.reused, report.ran) == (2, 0) and scripted_server.requests == []


async def test_runs_of_one_process_within_a_second_are_each_recorded_as_finished(tmp_path, make_model, scripted_server):
    data = write(tmp_path / "data.jsonl", rows("a1"))
    run_dir = RunDir(tmp_path / "run")
    for _ in range(3):  # well within a second: the invocations must still be told apart
        await run(run_dir, plan(data, "lface4rag"), make_model())
    manifest = run_dir.load_manifest()
    assert manifest is not None and [entry.status for entry in manifest.invocations] == ["finished"] * 3
    assert len({entry.id for entry in manifest.invocations}) == 3


async def test_an_edited_row_runs_again_alone_and_replaces_its_old_result(tmp_path, make_model, scripted_server):
    data = write(tmp_path / "data.jsonl", rows("a1", "a2", "a3"))
    run_dir = RunDir(tmp_path / "run")
    await run(run_dir, plan(data, "lface4rag"), make_model())
    write(data, rows("a1", "a2 edited", "a3"))
    scripted_server.reset()
    report = await run(run_dir, plan(data, "lface4rag"), make_model())
    assert (report.ran, report.reused) == (1, 2)
    assert delimit("answer", "a2 edited") in scripted_server.requests[0].prompt and len(scripted_server.requests) == 3
    answers = [line["item"]["answer"] for line in run_dir.lines()]
    assert sorted(answers) == ["a1", "a2 edited", "a3"]  # the stale line was dropped


async def test_a_row_inserted_at_the_top_of_a_file_without_ids_runs_alone(tmp_path, make_model, scripted_server):
    data = write(tmp_path / "data.jsonl", rows("a1", "a2"))
    run_dir = RunDir(tmp_path / "run")
    await run(run_dir, plan(data, "lface4rag"), make_model())
    write(data, rows("new", "a1", "a2"))
    scripted_server.reset()
    report = await run(run_dir, plan(data, "lface4rag"), make_model())
    assert (report.ran, report.reused) == (1, 2)
    assert scripted_server.requests  # not vacuous
    assert all(delimit("answer", "a1") not in request.prompt for request in scripted_server.requests)


async def test_another_model_or_other_options_are_refused(tmp_path, make_model, scripted_server):
    data = write(tmp_path / "data.jsonl", rows("a1"))
    run_dir = RunDir(tmp_path / "run")
    await run(run_dir, plan(data, "lface4rag", "faaf"), make_model())
    scripted_server.reset()
    with pytest.raises(RunError, match=r"methods lface4rag, faaf → lface4rag, faaf:mode=tf.*--force"):
        await run(run_dir, plan(data, "lface4rag", "faaf:mode=tf"), make_model())
    with pytest.raises(RunError, match=r"model openai:scripted-model: temperature 0.0 → 0.5"):  # what differs, named
        await run(run_dir, plan(data, "lface4rag", "faaf"), make_model(temperature=0.5))
    other = write(tmp_path / "other.jsonl", rows("a1"))
    with pytest.raises(RunError, match="dataset"):
        await run(run_dir, plan(other, "lface4rag", "faaf"), make_model())
    assert scripted_server.requests == []


async def test_force_reruns_what_differs_and_keeps_what_still_matches(tmp_path, make_model, scripted_server):
    data = write(tmp_path / "data.jsonl", rows("a1"))
    run_dir = RunDir(tmp_path / "run")
    await run(run_dir, plan(data, "lface4rag", "faaf"), make_model())
    scripted_server.reset()
    report = await run(run_dir, plan(data, "lface4rag", "faaf:mode=tf", force=True), make_model())
    assert (report.reused, report.ran) == (1, 1) and len(scripted_server.requests) == 2
    assert sorted(line["method"] for line in run_dir.lines()) == ["faaf:mode=tf", "lface4rag"]


async def test_failed_results_are_retried_on_the_next_run_unless_kept(tmp_path, make_model, scripted_server):
    data = write(tmp_path / "data.jsonl", rows("a1", "a2"))
    run_dir = RunDir(tmp_path / "run")
    scripted_server.when(delimit("answer", "a2"), Reply.error(400))
    report = await run(run_dir, plan(data, "lface4rag"), make_model())
    assert report.incomplete == 1
    (summary,) = summarise(run_dir, plan(data, "lface4rag"), make_model())
    assert (summary.judged, summary.unscored, summary.incomplete) == (2, 1, 1)
    assert summary.consistent_share is not None and summary.consistent_share.value == 0.5

    scripted_server.reset()
    kept = await run(run_dir, plan(data, "lface4rag", retry_incomplete=False), make_model())
    assert kept.ran == 0 and scripted_server.requests == []
    retried = await run(run_dir, plan(data, "lface4rag"), make_model())
    assert (retried.ran, retried.incomplete) == (1, 0)
    assert scripted_server.requests  # not vacuous
    assert all(delimit("answer", "a1") not in request.prompt for request in scripted_server.requests)


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


async def test_an_unreachable_endpoint_stops_the_run_early_with_nothing_marked_done(tmp_path):
    data = write(tmp_path / "data.jsonl", rows(*(f"a{n}" for n in range(40))))
    run_dir = RunDir(tmp_path / "run")
    model = OpenAICompatibleModel(
        "m", ModelOptions(max_retries=0, concurrency=2), base_url=closed_port_url(), api_key=TEST_KEY
    )
    report = await run(run_dir, plan(data, "lface4rag", stop_after_failures=3, in_flight=2), model)
    assert report.stopped is not None and "3 calls in a row" in report.stopped and "127.0.0.1" in report.stopped
    assert report.not_run > 0 and report.ran < 40
    assert not any(entry.complete for entry in run_dir.index().entries.values())
    await model.aclose()


async def test_recall_counts_a_failed_fact_generation_in_its_denominator(tmp_path, make_model, scripted_server):
    data = write(tmp_path / "data.jsonl", rows("a1", "a2", "a3", "a4"))
    scripted_server.when(delimit("reference_answer", "truth of a4"), Reply.error(400))
    run_dir = RunDir(tmp_path / "run")
    await run(run_dir, plan(data, "faaf"), make_model())
    (summary,) = summarise(run_dir, plan(data, "faaf"), make_model())
    assert (summary.judged, summary.applicable, summary.incomplete) == (4, 4, 1)
    assert summary.score.value == 0.75 and summary.score_if_failed_is_1 == 1.0


async def test_limit_judges_only_the_first_items_that_need_it(tmp_path, make_model, scripted_server):
    data = write(tmp_path / "data.jsonl", rows("a1", "a2", "a3"))
    run_dir = RunDir(tmp_path / "run")
    report = await run(run_dir, plan(data, "lface4rag", limit=2), make_model())
    assert (report.ran, report.not_run) == (2, 1)
    report = await run(run_dir, plan(data, "lface4rag", limit=2), make_model())
    assert (report.ran, report.reused, report.not_run) == (1, 2, 0)


async def test_many_items_are_in_flight_at_once(tmp_path, make_model, scripted_server):
    data = write(tmp_path / "data.jsonl", rows(*(f"a{n}" for n in range(8))))
    scripted_server.when("<answer>", Reply.schema_valid(delay_s=0.05))
    await run(RunDir(tmp_path / "run"), plan(data, "lface4rag", in_flight=8), make_model(concurrency=8))
    assert scripted_server.max_in_flight > 1


async def test_a_line_torn_by_a_killed_run_is_redone(tmp_path, make_model, scripted_server):
    data = write(tmp_path / "data.jsonl", rows("a1", "a2"))
    run_dir = RunDir(tmp_path / "run")
    await run(run_dir, plan(data, "lface4rag"), make_model())
    first, second = run_dir.results.read_text(encoding="utf-8").splitlines(keepends=True)
    run_dir.results.write_text(first + second[:50], encoding="utf-8")  # killed while writing the second
    scripted_server.reset()
    report = await run(run_dir, plan(data, "lface4rag"), make_model())
    assert (report.ran, report.reused) == (1, 1) and len(list(run_dir.lines())) == 2


async def test_items_a_method_cannot_judge_are_counted_apart(tmp_path, make_model, scripted_server):
    data = write(tmp_path / "data.jsonl", rows("a1") + rows("a2", ground_truth=False))
    report = await run(RunDir(tmp_path / "run"), plan(data, "lface4rag", "faaf"), make_model())
    assert report.not_applicable == {"faaf": 1} and report.ran == 3


async def test_calls_of_items_already_started_are_served_before_the_first_calls_of_later_items(
    tmp_path, make_model, scripted_server
):
    data = write(tmp_path / "data.jsonl", rows("a0", "a1", "a2", ground_truth=False))
    scripted_server.when("Split", Reply.json({"segments": ["a"]}))
    judge = plan(data, "lface4rag:strategy=paper,logic_stage=false", in_flight=3)
    await run(RunDir(tmp_path / "run"), judge, make_model(concurrency=1))
    stages = ["decompose" if "Split" in r.prompt else "fact" for r in scripted_server.requests]
    # one slot, three answers started at once: first come first served would run the three decompositions
    # first; by rank, the fact checks of the first two answers go before the third answer's decomposition
    assert stages == ["decompose", "decompose", "fact", "fact", "decompose", "fact"]


async def test_a_fully_cached_run_journals_its_hits_in_sums_and_its_ledger_counts_every_one(
    tmp_path, make_model, scripted_server
):
    data = write(tmp_path / "data.jsonl", rows("a1", "a2", "a3"))
    await run(RunDir(tmp_path / "first"), plan(data, "lface4rag", "faaf"), make_model(cache=True))
    scripted_server.reset()
    run_dir = RunDir(tmp_path / "cached")
    report = await run(run_dir, plan(data, "lface4rag", "faaf"), make_model(cache=True))
    assert scripted_server.requests == [] and report.usage.cache_hits == 15
    stages = {json.loads(line)["stage"] for line in run_dir.journal.read_text().splitlines()}
    assert len(run_dir.journal.read_text().splitlines()) == len(stages) < 15  # one sum per stage, not a line a hit
    ledger = json.loads(run_dir.ledger.read_text())
    assert (ledger["total"]["cache_hits"], ledger["total"]["completions"], ledger["total"]["calls"]) == (15, 15, 0)
