"""WikiEval loaders, on small files written in the original column layouts."""

from __future__ import annotations

import csv
import importlib.util
import json
from pathlib import Path

import pytest

from ragfacts.datasets.wikieval import (
    DatasetError,
    align_labels,
    load_recall_jsonl,
    load_wikieval_facts,
    load_wikieval_jsonl,
    parse_fact_list,
    parse_label_dict,
)

COLUMNS = [
    "question",
    "source",
    "gt_facts",
    "human_evaluated_facts_answer",
    "human_evaluated_facts_ungrounded_answer",
    "human_evaluated_facts_poor_answer",
    "unique_id",
    "answer",
    "ungrounded_answer",
    "poor_answer",
    "context_v1",
    "contetx_v2",  # sic: the original's spelling
]

PSLV_FACTS = (
    "- PSLV-C56 is scheduled to launch on 30 July 2023.\n"
    "- PSLV-C56 will launch from the Satish Dhawan Space Centre.\n"
    "- The launch time is 06:30 IST."
)


def labels_with_rewritten_keys(values: list[str]) -> str:
    # The original tool stored keys with dashes, dots and quotes removed: keys no longer equal the facts.
    keys = [
        "PSLV C56 is scheduled to launch on 30 July 2023",
        "PSLV C56 will launch from the Satish Dhawan Space Centre",
        "The launch time is 06:30 IST",
    ]
    return str(dict(zip(keys, values, strict=True)))


def pslv_row(**overrides: str) -> dict[str, str]:
    row = {
        "question": "When and where will PSLV-C56 launch?",
        "source": "PSLV-C56",
        "gt_facts": PSLV_FACTS,
        "human_evaluated_facts_answer": labels_with_rewritten_keys(["True", "True", "True"]),
        "human_evaluated_facts_ungrounded_answer": labels_with_rewritten_keys(["False", "True", "False"]),
        "human_evaluated_facts_poor_answer": labels_with_rewritten_keys(["False", "False", "No_response"]),
        "unique_id": "a1b2",
        "answer": "The PSLV-C56 mission launches on 30 July 2023 at 06:30 IST from Sriharikota.",
        "ungrounded_answer": "PSLV-C56 launches on Monday from Sriharikota.",
        "poor_answer": "PSLV-C56 is a rocket mission.",
        "context_v1": str(["PSLV-C56 is the 58th PSLV mission."]),
        "contetx_v2": str(["PSLV-C56 is the 58th PSLV mission.", "ISRO is India's space agency."]),
    }
    row.update(overrides)
    return row


def write_csv(path: Path, rows: list[dict[str, str]], columns: list[str] = COLUMNS) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        for row in rows:
            writer.writerow({c: row.get(c, "") for c in columns})
    return path


def test_loads_facts_answers_and_aligned_human_labels(tmp_path: Path):
    exact_keys = str(
        {"Oppenheimer was directed by Christopher Nolan.": True, "Cillian Murphy plays Oppenheimer.": False}
    )
    second = pslv_row(
        unique_id="c3d4",
        question="Who directed Oppenheimer and who plays the lead?",
        gt_facts="- Oppenheimer was directed by Christopher Nolan.\n- Cillian Murphy plays Oppenheimer.",
        human_evaluated_facts_answer=exact_keys,
        human_evaluated_facts_ungrounded_answer=exact_keys,
        human_evaluated_facts_poor_answer=exact_keys,
    )
    items = load_wikieval_facts(write_csv(tmp_path / "wikieval.csv", [pslv_row(), second]))
    assert [item.id for item in items] == ["a1b2", "c3d4"]
    first = items[0]
    assert first.facts == [
        "PSLV-C56 is scheduled to launch on 30 July 2023.",
        "PSLV-C56 will launch from the Satish Dhawan Space Centre.",
        "The launch time is 06:30 IST.",
    ]
    assert first.labels == {
        "answer": [True, True, True],
        "ungrounded_answer": [False, True, False],
        "poor_answer": [False, False, None],
    }
    assert set(first.answers) == {"answer", "ungrounded_answer", "poor_answer"}
    assert first.ground_truth == first.answers["answer"]
    assert first.contexts["context_v2"][1] == "ISRO is India's space agency."
    assert items[1].labels["answer"] == [True, False]


def test_a_missing_column_is_named(tmp_path: Path):
    path = write_csv(tmp_path / "bad.csv", [pslv_row()], [c for c in COLUMNS if c != "gt_facts"])
    with pytest.raises(DatasetError, match="gt_facts"):
        load_wikieval_facts(path)


def test_stringified_labels_are_never_evaluated(tmp_path: Path):
    marker = tmp_path / "pwned"
    row = pslv_row(human_evaluated_facts_answer=f"__import__('pathlib').Path({str(marker)!r}).touch()")
    with pytest.raises(DatasetError, match="row 2"):
        load_wikieval_facts(write_csv(tmp_path / "evil.csv", [row]))
    assert not marker.exists()


def test_loading_needs_a_path_unless_asked_to_use_the_hub():
    with pytest.raises(DatasetError, match="from_hub"):
        load_wikieval_facts()


@pytest.mark.skipif(importlib.util.find_spec("huggingface_hub") is not None, reason="huggingface_hub is installed")
def test_hub_loading_without_huggingface_hub_says_how_to_install_it():
    with pytest.raises(DatasetError, match="pip install huggingface_hub"):
        load_wikieval_facts(from_hub=True)


def test_fact_lists_on_one_line_split_on_dashes_that_start_a_fact():
    assert parse_fact_list("- COVID-19 hit the economy. - Tax cuts hurt revenue.") == [
        "COVID-19 hit the economy.",
        "Tax cuts hurt revenue.",
    ]
    assert parse_fact_list('["A is B.", "C is D."]') == ["A is B.", "C is D."]
    assert parse_fact_list("- A wraps\n  onto two lines.\n- B.") == ["A wraps onto two lines.", "B."]


def test_labels_align_by_text_even_when_counts_differ():
    labels = parse_label_dict("{'A is B': 'True', 'Unrelated': 'False'}")
    assert align_labels(["A is B.", "C is D.", "E is F."], labels) == [True, None, None]


def wikieval_jsonl_row(source: str) -> dict[str, object]:
    return {
        "question": "Question: When was PharmaCann founded?",
        "answer": "Answer: PharmaCann was founded in 2014.",
        "ungrounded_answer": "PharmaCann was founded in 2010.",
        "poor_answer": "PharmaCann is a company.",
        "context_v1": ["Founded in 2014 by Theodore Scott, PharmaCann ..."],
        "context_v2": ["Founded in 2014 by Theodore Scott, PharmaCann ...", "More text."],
        "source": source,
    }


def test_wikieval_jsonl_strips_the_question_and_answer_prefixes(tmp_path: Path):
    path = tmp_path / "wikieval.jsonl"
    rows = [wikieval_jsonl_row("PharmaCann"), wikieval_jsonl_row("PharmaCann")]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    items = load_wikieval_jsonl(path)
    assert items[0].question == "When was PharmaCann founded?"
    assert items[0].ground_truth == "PharmaCann was founded in 2014."
    assert items[0].answers["answer"] == "PharmaCann was founded in 2014."
    assert items[0].facts == []
    assert [item.id for item in items] == ["PharmaCann", "PharmaCann~2"]
    assert len(items[0].contexts["context_v2"]) == 2


def test_generic_rows_need_an_answer_and_facts_or_a_ground_truth(tmp_path: Path):
    path = tmp_path / "rows.jsonl"
    path.write_text(
        json.dumps({"id": "x", "answer": "A.", "facts": ["F1.", "F2."], "labels": [True, "False"]})
        + "\n"
        + json.dumps({"answer": "B.", "ground_truth": "G.", "question": "Q?"})
        + "\n",
        encoding="utf-8",
    )
    first, second = load_recall_jsonl(path)
    assert first.id == "x" and first.facts == ["F1.", "F2."] and first.labels == {"answer": [True, False]}
    assert second.id == "line-2" and second.ground_truth == "G." and second.facts == []
    path.write_text(json.dumps({"answer": "A."}) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"line 1.*'facts'"):
        load_recall_jsonl(path)


def test_a_broken_jsonl_line_is_named(tmp_path: Path):
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps({"answer": "A.", "facts": ["F."]}) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="line 2: not JSON"):
        load_recall_jsonl(path)
