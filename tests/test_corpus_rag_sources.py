"""The English RAG corpus builder (benchmarks/corpus/build_rag_sources.py) on hand-made records in each source's
format."""

from __future__ import annotations

import csv
import hashlib
import importlib
import io
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "benchmarks" / "corpus"


def _corpus(name: str) -> ModuleType:
    """A module of benchmarks/corpus/, imported the way its scripts import each other."""
    if str(CORPUS) not in sys.path:
        sys.path.insert(0, str(CORPUS))
    return importlib.import_module(name)


def _doc(topic: str, n: int) -> str:
    return (
        f"The {topic} report number {n} says that the northern river of {topic} town floods every spring season. "
        f"Engineers in {topic} town built a levee of {n + 3} metres after the great flood of the year 19{n + 10}."
    )


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _csv(rows: list[dict], delimiter: str = ",") -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), delimiter=delimiter, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def _lfqa_sentences(setting: str) -> list[str]:
    return [f"The river floods every spring, says {setting}.", "A levee was built after the flood."]


def _lfqa(root: Path) -> None:
    settings = ("webgpt", "gpt3_wdoc", "gpt3_whudoc", "alpaca_wdoc", "gpt3", "alpaca")
    votes = {
        "webgpt": [["supported"] * 3, ["supported", "supported", "partially"]],  # consistent
        "gpt3_wdoc": [["supported"] * 3, ["not_supported", "not_supported", "supported"]],  # not_supported
        "gpt3_whudoc": [["supported"] * 3, ["supported", "partially", "not_supported"]],  # no majority: partially
        "alpaca_wdoc": [["partially", "partially", "supported"], ["supported"] * 3],
        "gpt3": [["not_supported"] * 3, ["not_supported"] * 3],
        "alpaca": [["not_supported"] * 3, ["supported"] * 3],
    }
    answers, docs = [], {"webgpt": [], "human": []}
    for q in range(10):
        question = f"Why does the river of town {q} flood?"
        answers.append({"question_id": q, "question": question})
        for setting in settings:
            end = "</s>" if setting.startswith("alpaca") else ""
            first, second = _lfqa_sentences(setting)
            answers[-1][f"{setting}_answer"] = f"  {first}\n\n{second}{end}"
        for name in docs:
            text = _doc(f"{name}{q}", q)
            docs[name].append(
                {"question_id": q, "question": question, "docs": [{"doc_id": "d", "title": "t", "text": text}]}
            )
    for setting in settings:
        rows = [
            {
                "question_id": q,
                "question": f"Why does the river of town {q} flood?",
                "answers": _lfqa_sentences(setting),
                "annotations": [
                    {"labels": v, "answer": s} for v, s in zip(votes[setting], _lfqa_sentences(setting), strict=True)
                ],
            }
            for q in range(10)
        ]
        if setting == "alpaca_wdoc":
            rows[0]["annotations"][1]["answer"] += "</s>"
        _write(root / f"data/annotations/annotations-{setting}.json", json.dumps(rows))
    _write(root / "data/answers.json", json.dumps(answers))
    for name, rows in docs.items():
        _write(root / f"data/docs/docs-{name}.json", json.dumps(rows))


def _mtrag(root: Path) -> None:
    votes = [(4, 4, 3), (1, 4, 4), (2, 2, 3), (2, 3, 4), (4, 4), (4, 4, 4)]  # C, C, I, no majority, C, no passages
    documents, tasks, evaluations = [], [], []
    for c in range(6):
        documents.append({"document_id": f"doc{c}", "text": _doc(f"mtrag{c}", c), "title": "t"})
        task_id = f"conv{c}<::>1"
        contexts = [] if c == 5 else [{"document_id": f"doc{c}"}]
        tasks.append(
            {
                "task_id": task_id,
                "input": [{"speaker": "user", "text": f"What about town {c}?"}],
                "contexts": contexts,
                "Collection": "mt-rag-clapnq-elser-512-100-20240503",
            }
        )
        faithfulness = {f"annotator{k}": {"value": str(v)} for k, v in enumerate(votes[c])}
        evaluations.append(
            {
                "task_id": task_id,
                "model_id": "gpt-4o",
                "model_response": f"Town {c} has a river that floods in spring.",
                "annotations": {"faithfulness": faithfulness},
            }
        )
    data = {"models": [{"model_id": "gpt-4o", "name": "GPT-4.0"}], "documents": documents, "tasks": tasks}
    data["evaluations"] = evaluations
    _write(root / "mtrag-human/evaluations/reference_subset_with_human_evaluations.json", json.dumps(data))


def _ares(root: Path) -> None:
    rows = [
        {
            "Reaction": "no_reaction",
            "Sources": f"https://docs.example.com/page{n}.html",
            "Question": f"How do I configure page {n}?",
            "Document": _doc(f"ares{n}", n),
            "Answer": f"Set the option of page {n}.",
            "Context_Relevance_Label": "1",
            "Answer_Faithfulness_Label": "1" if n % 3 else "0",
            "Answer_Relevance_Label": "1",
        }
        for n in range(6)
    ]
    _write(root / "datasets_v2/LLM_Judge_Test_Set_Human_Annotations.tsv", _csv(rows, "\t"))


def _bump(root: Path) -> None:
    article = " ".join(_doc(f"bump{k}", k) for k in range(40))  # over 6,000 characters: cut
    task1 = [
        {
            "id": n,
            "article_id": 7,
            "article": article,
            "reference_summary": "The river of bump3 town floods every spring season.",
            "edited_summary": f"The river of bump3 town floods every {season}.",
            "error_type": "Extrinsic Circumstance Error",
            "corrected_error_type": "Intrinsic Circumstance Error",
            "scores": "{}",
        }
        for n, season in enumerate(("winter", "autumn"))
    ]
    task2 = [{**task1[0], "id": 0, "error_type": "Extrinsic Circumstance"}]  # the same edit again: dropped
    task2.append({**task1[1], "id": 1, "article_id": 8, "article": _doc("other", 1), "reference_summary": "Other."})
    task2[1]["error_type"] = "Extrinsic Entity"
    task2[1].pop("corrected_error_type")
    _write(root / "data/task1_dataset.json", json.dumps(task1))
    _write(root / "data/task2_dataset.json", json.dumps(task2))


def _summaries(root: Path) -> None:
    frank = [
        {
            "": 0,
            "hash": "h0",
            "model": "bus",
            "grounding": _doc("frank", 0),
            "generated_text": "it\\'s a flood.",
            "label": 0,
        },
        {"": 1, "hash": "h0", "model": "bart", "grounding": _doc("frank", 0), "generated_text": "a flood.", "label": 1},
    ]
    summeval = [
        {"": n, "id": "a1", "grounding": _doc("summeval", 1), "generated_text": f"summary {n} .", "label": 1}
        for n in range(4)
    ]
    qags = [{"": 0, "grounding": _doc("qags", 2), "generated_text": "floods .", "label": 1}]
    _write(root / "data/true/frank.csv", _csv(frank))
    _write(root / "data/true/summeval.csv", _csv(summeval))
    _write(root / "data/true/qags_cnndm.csv", _csv(qags))
    _write(root / "data/true/qags_xsum.csv", _csv([{**qags[0], "grounding": _doc("xsum", 3)}]))


@pytest.fixture
def fixture(tmp_path: Path) -> dict[str, Path]:
    """Checkouts of the five sources, a quality dev/test and a training file, all hand-made."""
    roots = {name: tmp_path / name for name in ("lfqa", "mtrag", "ares", "bump", "summaries")}
    _lfqa(roots["lfqa"])
    _mtrag(roots["mtrag"])
    _ares(roots["ares"])
    _bump(roots["bump"])
    _summaries(roots["summaries"])
    quality = {"id": "q-1", "reference": _doc("xsum", 3), "answer": "x", "label": "consistent"}  # = a QAGS XSum one
    _write(tmp_path / "quality/dev.jsonl", json.dumps(quality) + "\n")
    _write(tmp_path / "quality/test.jsonl", "")
    trained = {"id": "t-1", "reference": _doc("ares4", 4), "answer": "x", "label": "consistent"}  # = an ARES one
    _write(tmp_path / "train/train.jsonl", json.dumps(trained) + "\n")
    return {**roots, "quality": tmp_path / "quality", "train": tmp_path / "train", "out": tmp_path / "out"}


def _pin_fixture(monkeypatch: pytest.MonkeyPatch, paths: dict[str, Path]) -> ModuleType:
    """The builder, its pins replaced by the fixture files' SHA-256."""
    build = _corpus("build_rag_sources")
    for name, (commit, files) in list(build.PINNED.items()):
        digests = {p: hashlib.sha256((paths[name] / p).read_bytes()).hexdigest() for p in files}
        monkeypatch.setitem(build.PINNED, name, (commit, digests))
    return build


def _argv(paths: dict[str, Path], *more: str) -> list[str]:
    names = ("lfqa", "mtrag", "ares", "bump", "summaries", "quality", "out")
    return [arg for name in names for arg in (f"--{name}", str(paths[name]))] + [
        "--trained",
        str(paths["train"]),
        *more,
    ]


def _rows(out: Path) -> dict[str, list[dict]]:
    return {
        path.stem: [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        for path in sorted(out.glob("*.jsonl"))
    }


def test_lfqa_sentence_label_is_the_majority_and_partially_without_one() -> None:
    read = _corpus("rag_sources_read")
    assert read.lfqa_sentence_label(["supported", "supported", "not_supported"]) == "supported"
    assert read.lfqa_sentence_label(["not_supported", "partially", "not_supported"]) == "not_supported"
    assert read.lfqa_sentence_label(["supported", "partially", "not_supported"]) == "partially"
    assert read.lfqa_answer_label(["supported", "supported"]) == ("consistent", None)
    assert read.lfqa_answer_label(["supported", "partially"]) == ("inconsistent", "partially")
    assert read.lfqa_answer_label(["partially", "not_supported"]) == ("inconsistent", "not_supported")


def test_mtrag_label_needs_a_majority_of_yes_or_of_no_and_mostly_no() -> None:
    read = _corpus("rag_sources_read")
    assert [read.mtrag_label(v) for v in ([4, 4, 3], [1, 4, 4], [4, 4], [4, 4, 4])] == ["consistent"] * 4
    assert [read.mtrag_label(v) for v in ([2, 2, 3], [1, 1, 4], [1, 2, 4])] == ["inconsistent"] * 3
    assert [read.mtrag_label(v) for v in ([2, 3, 4], [3, 3, 4], [3, 4], [3, 3, 3])] == [None] * 4


def test_a_short_reference_is_kept_whole_and_a_long_one_keeps_the_passages_the_answer_draws_on() -> None:
    passages = _corpus("rag_passages")
    short = ["One passage.", "Another passage."]
    assert passages.cut_reference(short, "anything", 6000) == "One passage.\n\nAnother passage."
    filler = ["Unrelated text about cooking pasta with salt and olive oil. " * 10 for _ in range(6)]
    wanted = "The levee of Ashford was raised to nine metres in 1953."
    also = "Ashford's levee protects the old mill."
    long = [filler[0], wanted, filler[1], filler[2], also, *filler[3:]]
    answer = "Ashford raised its levee to nine metres in 1953; it protects the mill."
    cut = passages.cut_reference(long, answer, 300)  # the best pieces, in their original order
    assert len(cut) <= 300 and wanted in cut and also in cut and cut.index(wanted) < cut.index(also)
    cut = passages.cut_reference(long, answer, 700)  # room left is filled with other pieces, in their order
    assert len(cut) <= 700 and cut.index(filler[0].strip()) < cut.index(wanted) < cut.index(also)
    assert passages.cut_reference(long, "levee", 0) == "\n\n".join(long)  # bound 0: whole
    one_block = " ".join(f"Sentence {n} mentions {'Ashford levee' if n == 40 else 'pasta'} here." for n in range(80))
    cut = passages.cut_reference([one_block], "Ashford levee", 400)
    assert "Sentence 40 mentions Ashford levee here." in cut and len(cut) <= 400
    assert all(run in one_block for run in cut.split("\n\n"))  # runs of adjacent pieces keep the exact text


def test_splits_keep_each_group_whole_near_60_20_20_and_do_not_depend_on_input_order() -> None:
    build = _corpus("build_rag_sources")
    items = [
        {"id": f"x{g}-{k}", "_source": "bump", "group": f"g{g:02d}", "label": "inconsistent" if k else "consistent"}
        for g in range(50)
        for k in range(g % 3 + 1)
    ]
    build.assign_splits(items)
    first = {item["id"]: item["_split"] for item in items}
    build.assign_splits(list(reversed(items)))
    assert first == {item["id"]: item["_split"] for item in items}
    split_of: dict[str, set[str]] = {}
    for item in items:
        split_of.setdefault(item["group"], set()).add(item["_split"])
    assert all(len(splits) == 1 for splits in split_of.values())
    shares = [sum(s == split for s in first.values()) / len(items) for split in ("train", "dev", "test")]
    assert shares[0] == pytest.approx(0.6, abs=0.05) and shares[1] == pytest.approx(0.2, abs=0.05)


def test_build_maps_labels_splits_by_group_and_excludes_shared_references(fixture, monkeypatch) -> None:
    build = _pin_fixture(monkeypatch, fixture)
    assert build.main(_argv(fixture)) == 0
    files = _rows(fixture["out"])
    rows = {row["id"]: row for part in files.values() for row in part}
    split_of: dict[str, set[str]] = {}
    for name, part in files.items():
        for row in part:
            split_of.setdefault(row["group"], set()).add(name.rsplit("_", 1)[1])
    assert all(len(splits) == 1 for splits in split_of.values())

    assert rows["lfqa-webgpt-000"]["label"] == "consistent"
    assert rows["lfqa-gpt3_wdoc-000"]["error_type"] == "not_supported"
    assert rows["lfqa-gpt3_whudoc-000"]["error_type"] == "partially"
    assert "human0" in rows["lfqa-gpt3_whudoc-000"]["reference"]  # judged against the human documents
    alpaca = rows["lfqa-alpaca_wdoc-000"]
    assert not alpaca["answer"].endswith("</s>") and alpaca["sentences"][1]["text"].endswith("flood.")
    assert [s["start"] for s in alpaca["sentences"]] == [0, alpaca["answer"].index("A levee")]
    assert not any(i.startswith(("lfqa-gpt3-", "lfqa-alpaca-")) for i in rows)  # answered without documents

    mtrag = {i: (r["label"], r["votes"]) for i, r in rows.items() if i.startswith("mtrag")}
    assert mtrag == {
        "mtrag-conv0-t01-gpt-4o": ("consistent", [4, 4, 3]),
        "mtrag-conv1-t01-gpt-4o": ("consistent", [1, 4, 4]),
        "mtrag-conv2-t01-gpt-4o": ("inconsistent", [2, 2, 3]),
        "mtrag-conv4-t01-gpt-4o": ("consistent", [4, 4]),
    }
    assert sum(r["label"] == "inconsistent" for i, r in rows.items() if i.startswith("ares")) == 2

    bump = {i: r for i, r in rows.items() if i.startswith("bump")}
    assert sorted(bump) == ["bump-a0007-reference", "bump-a0008-reference", "bump-t1-000", "bump-t1-001", "bump-t2-001"]
    assert bump["bump-t1-000"]["error_type"] == "Intrinsic Circumstance Error"  # task 1: the corrected type
    assert bump["bump-t2-001"]["error_type"] == "Extrinsic Entity Error"  # task 2's free-style type, named alike
    cut = bump["bump-a0007-reference"]
    assert len(cut["reference"]) <= 6000 < cut["reference_chars"] and "bump3 town" in cut["reference"]
    assert bump["bump-t1-000"]["reference"] == cut["reference"]  # one cut for the whole minimal pair

    assert rows["frank-0000"]["answer"] == "it's a flood."
    assert sum(i.startswith("summeval") for i in rows) == 2  # at most 2 per article and label
    assert not any(i.startswith("qags-xsum") for i in rows)  # its reference is in the quality dev split
    assert {n for n, part in files.items() for r in part if r["id"] == "ares-006"} == {"ares_train"}  # trained on

    stats = json.loads((fixture["out"] / "stats.json").read_text(encoding="utf-8"))
    assert stats["total"]["rows"] == len(rows) and stats["total"]["prompt_tokens"] > 0
    assert stats["sources"]["lfqa"]["dropped"]["gpt3: answered without documents"] == 10
    assert stats["sources"]["mtrag"]["dropped"] == {
        "no majority for Yes (4) or for No / Mostly No (1-2)": 1,
        "no passages (unanswerable turns)": 1,
    }
    assert stats["sources"]["bump"]["dropped"] == {"the same edit in task 1 and task 2": 1}


def test_rebuild_is_byte_identical_and_check_fails_on_a_changed_file_or_source(fixture, monkeypatch) -> None:
    build = _pin_fixture(monkeypatch, fixture)
    assert build.main(_argv(fixture)) == 0
    assert build.main(_argv(fixture, "--check")) == 0
    written = fixture["out"] / "bump_train.jsonl"
    written.write_bytes(written.read_bytes() + b"\n")
    assert build.main(_argv(fixture, "--check")) == 1

    source = fixture["ares"] / "datasets_v2/LLM_Judge_Test_Set_Human_Annotations.tsv"
    source.write_bytes(source.read_bytes().replace(b"page 1", b"page one"))
    assert build.main(_argv(fixture, "--check")) == 2  # the pinned digest no longer matches
    assert build.main(_argv(fixture, "--check", "--no-verify")) == 1
