"""Collecting answers from a RAG service into the run directory: resume, failures as rows, the dataset to judge."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragfacts.datasets.reader import DatasetError
from ragfacts.endpoints import EndpointOptions, resolve
from ragfacts.runs.answers import AnswerStore
from ragfacts.runs.collect import collect, read_questions
from ragfacts.runs.rundir import RunDir, RunError
from tests.rag_server import RagReply, RagServer, running_rag_server


@pytest.fixture(scope="module")
def _rag() -> Iterator[RagServer]:
    with running_rag_server() as server:
        yield server


@pytest.fixture
def rag(_rag: RagServer) -> Iterator[RagServer]:
    _rag.reset()
    yield _rag


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def questions_file(tmp_path: Path, count: int = 3) -> Path:
    rows = [{"question": f"Q{n}?", "ground_truth": f"G{n}.", "team": "search"} for n in range(count)]
    return write_jsonl(tmp_path / "questions.jsonl", rows)


async def run(rag: RagServer, run_dir: Path, data: Path, **kwargs):
    settings = {"body": '{"query": "{question}"}', "contexts_path": "sources[*].text", "max_retries": 0}
    options = EndpointOptions(url=rag.url, **{**settings, **kwargs.pop("options", {})})
    return await collect(RunDir(run_dir), read_questions(data, {}), options, resolve(options, {}), **kwargs)


def answers(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "answers.jsonl").read_text().splitlines()]


async def test_each_question_is_asked_and_its_answer_contexts_and_latency_are_stored(rag, tmp_path):
    collection = await run(rag, tmp_path / "run", questions_file(tmp_path))
    assert sorted(r.question for r in rag.requests) == ["Q0?", "Q1?", "Q2?"]
    lines = {line["question"]: line for line in answers(tmp_path / "run")}
    assert lines["Q1?"]["answer"] == "Answer to Q1?" and lines["Q1?"]["ok"] is True
    assert lines["Q1?"]["contexts"] == ["Q1? context one", "Q1? context two"]
    assert lines["Q1?"]["latency_s"] > 0 and lines["Q1?"]["attempts"] == 1 and lines["Q1?"]["status"] == 200
    stats = collection.stats()
    assert (stats["answered"], stats["failed"], stats["asked_now"]) == (3, 0, 3) and stats["latency_s"]["max"] > 0
    saved = json.loads((tmp_path / "run" / "endpoint.json").read_text())
    assert saved["url"] == rag.url and saved["contexts_path"] == "sources[*].text"


async def test_the_dataset_to_judge_has_the_answers_and_the_contexts_as_numbered_reference(rag, tmp_path):
    collection = await run(rag, tmp_path / "run", questions_file(tmp_path, 1))
    dataset = collection.dataset()
    (item,) = dataset.items()
    assert (item.question, item.answer, item.ground_truth) == ("Q0?", "Answer to Q0?", "G0.")
    assert item.reference == "[1] Q0? context one\n\n[2] Q0? context two"
    assert item.meta == {"team": "search"}
    assert dataset.path == tmp_path / "questions.jsonl" and "answer ← endpoint answer" in dataset.describe()


async def test_a_rerun_asks_nothing_for_answered_questions_and_again_for_failed_ones(rag, tmp_path):
    data = questions_file(tmp_path)
    rag.script("Q1?", RagReply(500, {"error": "index offline"}))
    first = await run(rag, tmp_path / "run", data)
    assert first.stats()["failed"] == 1 and first.stats()["failures"] == {'HTTP 500: {"error": "index offline"}': 1}
    assert [item.question for item in first.dataset().items()] == ["Q0?", "Q2?"]  # a failed row is not judged
    rag.reset()
    second = await run(rag, tmp_path / "run", data)
    assert [r.question for r in rag.requests] == ["Q1?"]
    assert second.stats()["answered"] == 3 and second.report.reused == 2
    rag.reset()
    await run(rag, tmp_path / "run", data)
    assert rag.requests == []
    assert len(answers(tmp_path / "run")) == 3  # the failed line, superseded, is compacted away


async def test_keep_failed_does_not_ask_again(rag, tmp_path):
    data = questions_file(tmp_path, 1)
    rag.script("Q0?", RagReply(503))
    await run(rag, tmp_path / "run", data)
    rag.reset()
    kept = await run(rag, tmp_path / "run", data, retry_failed=False)
    assert rag.requests == [] and kept.stats()["failed"] == 1 and kept.dataset() is None


async def test_identical_questions_are_asked_once_and_both_rows_are_answered(rag, tmp_path):
    data = write_jsonl(
        tmp_path / "q.jsonl", [{"question": "Same?", "facts": ["a"]}, {"question": "Same?", "facts": ["b"]}]
    )
    collection = await run(rag, tmp_path / "run", data)
    assert rag.asked() == 1 and collection.stats()["answered"] == 2
    assert [item.facts for item in collection.dataset().items()] == [["a"], ["b"]]


async def test_limit_asks_at_most_n_questions(rag, tmp_path):
    collection = await run(rag, tmp_path / "run", questions_file(tmp_path, 5), limit=2)
    assert rag.asked() == 2 and collection.stats()["not_asked"] == 3


async def test_after_stop_after_failures_in_a_row_the_collection_stops(rag, tmp_path):
    data = questions_file(tmp_path, 10)
    for n in range(10):
        rag.script(f"Q{n}?", RagReply(502, "bad gateway"))
    collection = await run(rag, tmp_path / "run", data, stop_after=3, options={"concurrency": 1})
    assert rag.asked() == 3 and collection.report.stopped.startswith("stopped early: 3 questions in a row failed")
    assert collection.stats()["not_asked"] == 7


async def test_a_changed_endpoint_configuration_is_refused_unless_forced(rag, tmp_path):
    data = questions_file(tmp_path, 2)
    await run(rag, tmp_path / "run", data)
    rag.reset()
    with pytest.raises(RunError, match=r"answer_path answer → data\.answer.*--force"):
        await run(rag, tmp_path / "run", data, options={"answer_path": "data.answer"})
    assert rag.requests == []
    rag.script("Q0?", RagReply(200, {"data": {"answer": "new"}}))
    rag.script("Q1?", RagReply(200, {"data": {"answer": "new"}}))
    forced = await run(
        rag, tmp_path / "run", data, force=True, options={"answer_path": "data.answer", "contexts_path": "none"}
    )
    assert rag.asked() == 2 and [item.answer for item in forced.dataset().items()] == ["new", "new"]
    assert len(answers(tmp_path / "run")) == 2  # the answers of the old configuration are dropped


async def test_timeouts_and_concurrency_settings_do_not_invalidate_stored_answers(rag, tmp_path):
    data = questions_file(tmp_path, 2)
    await run(rag, tmp_path / "run", data)
    rag.reset()
    await run(rag, tmp_path / "run", data, options={"timeout_s": 5, "concurrency": 1, "max_retries": 3})
    assert rag.requests == []


async def test_a_line_torn_by_a_killed_run_is_dropped_and_its_question_asked_again(rag, tmp_path):
    data = questions_file(tmp_path, 2)
    await run(rag, tmp_path / "run", data)
    path = tmp_path / "run" / "answers.jsonl"
    text = path.read_text()
    path.write_text(text[: text.rindex("\n", 0, len(text) - 1) + 1] + text.splitlines()[-1][:25])
    rag.reset()
    await run(rag, tmp_path / "run", data)
    assert rag.asked() == 1 and len(answers(tmp_path / "run")) == 2


async def test_an_answers_file_that_is_not_ours_is_refused_and_left_alone(rag, tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "answers.jsonl").write_text('{"something": "else"}\n')
    with pytest.raises(RunError, match="not a ragfacts answers line"):
        await run(rag, tmp_path / "run", questions_file(tmp_path))
    assert (tmp_path / "run" / "answers.jsonl").read_text() == '{"something": "else"}\n' and rag.requests == []


def test_answers_of_an_out_jsonl_run_sit_beside_it(tmp_path):
    store = AnswerStore(RunDir(tmp_path / "out.jsonl"))
    assert store.paths == (tmp_path / "out.jsonl.answers.jsonl", tmp_path / "out.jsonl.endpoint.json")


@pytest.mark.parametrize(
    ("rows", "mapping", "message"),
    [
        ([{"prompt": "Q?"}], {}, "no question column (looked for question, query, user_input); columns: prompt"),
        ([{"question": "  "}], {}, "line 1: the question (question) is empty"),
        ([{"question": "Q?", "answer": "A."}], {"answer": "answer"}, "--map answer=answer: with --endpoint the answer"),
        ([{"question": "Q?", "endpoint answer": "A."}], {}, "the column 'endpoint answer' is where ragfacts puts"),
        (
            [{"question": "Q?", "answer": "A", "ungrounded_answer": "B", "poor_answer": "C"}],
            {},
            "its rows hold answers to judge",
        ),
    ],
)
def test_a_questions_file_that_cannot_be_asked_is_refused_naming_the_fix(tmp_path, rows, mapping, message):
    with pytest.raises(DatasetError) as error:
        read_questions(write_jsonl(tmp_path / "q.jsonl", rows), mapping)
    assert message in str(error.value)


def test_map_names_the_question_column_and_ragas_v02_reference_is_the_ground_truth(tmp_path):
    data = write_jsonl(tmp_path / "q.jsonl", [{"prompt": "Q?", "gold": "G."}])
    assert read_questions(data, {"question": "prompt"}).rows[0].text == "Q?"
    ragas = write_jsonl(tmp_path / "r.jsonl", [{"user_input": "Q?", "reference": "G."}])
    questions = read_questions(ragas, {})
    (item,) = questions.dataset(lambda _: ("A.", ["ctx"])).items()
    assert (item.question, item.ground_truth, item.reference) == ("Q?", "G.", "ctx")
