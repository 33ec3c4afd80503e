"""WikiEval and WikiEvalFacts, on small files written in the original column layouts."""

from __future__ import annotations

import csv
import importlib.util
from pathlib import Path

import pytest

from ragfacts.datasets.dataset import Dataset
from ragfacts.datasets.reader import DatasetError
from ragfacts.datasets.wikieval import align_labels, download_wikieval_facts, parse_fact_list, parse_label_dict

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

ANSWERS = ("answer", "ungrounded_answer", "poor_answer")
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


def test_wikievalfacts_gives_one_item_per_answer_type_with_given_facts_and_aligned_human_labels(tmp_path: Path):
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
    dataset = Dataset.open(write_csv(tmp_path / "wikieval.csv", [pslv_row(), second]))
    items = list(dataset.items())
    assert dataset.describe().startswith("wikievalfacts layout") and dataset.rows == 2
    assert [item.id for item in items] == [f"{row}/{kind}" for row in ("a1b2", "c3d4") for kind in ANSWERS]
    first = items[0]
    assert first.facts == [
        "PSLV-C56 is scheduled to launch on 30 July 2023.",
        "PSLV-C56 will launch from the Satish Dhawan Space Centre.",
        "The launch time is 06:30 IST.",
    ]
    assert [item.fact_labels for item in items[:3]] == [[True, True, True], [False, True, False], [False, False, None]]
    assert first.answer.startswith("The PSLV-C56 mission") and items[1].answer_type == "ungrounded_answer"
    assert first.reference == "PSLV-C56 is the 58th PSLV mission."
    assert items[3].fact_labels == [True, False]


def test_stringified_labels_are_never_evaluated(tmp_path: Path):
    marker = tmp_path / "pwned"
    row = pslv_row(human_evaluated_facts_answer=f"__import__('pathlib').Path({str(marker)!r}).touch()")
    with pytest.raises(DatasetError, match="line 2"):
        Dataset.open(write_csv(tmp_path / "evil.csv", [row]))
    assert not marker.exists()


@pytest.mark.skipif(importlib.util.find_spec("huggingface_hub") is not None, reason="huggingface_hub is installed")
def test_hub_download_without_huggingface_hub_says_how_to_install_it():
    with pytest.raises(DatasetError, match="pip install huggingface_hub"):
        download_wikieval_facts()


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
