"""Stratified samples: every stratum represented, the requested size, the same sample for the same seed."""

from __future__ import annotations

import json
from collections import Counter

from ragfacts.bench.sampling import stratified_sample
from ragfacts.datasets.dataset import Dataset


def dataset(tmp_path) -> Dataset:
    rows = [{"answer": f"a{n}", "reference": "r", "label": "consistent"} for n in range(20)]
    rows += [{"answer": f"b{n}", "reference": "r", "label": "inconsistent", "error_type": "KCont."} for n in range(8)]
    rows += [{"answer": f"c{n}", "reference": "r", "label": "inconsistent", "error_type": "LOver."} for n in range(2)]
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return Dataset.open(path)


def strata(sample: Dataset) -> Counter:
    return Counter((item.label, item.error_type) for item in sample.items())


def test_every_stratum_is_represented_and_the_rest_is_proportional(tmp_path):
    sample = stratified_sample(dataset(tmp_path), 10, seed=3)
    assert sample.count == 10
    assert strata(sample) == {("consistent", None): 6, ("inconsistent", "KCont."): 3, ("inconsistent", "LOver."): 1}
    assert sample.selection["seed"] == 3 and sample.selection["sample"] == 10


def test_the_same_seed_gives_the_same_sample_and_another_seed_another(tmp_path):
    data = dataset(tmp_path)
    ids = [i.id for i in stratified_sample(data, 10, seed=3).items()]
    assert ids == [i.id for i in stratified_sample(data, 10, seed=3).items()]
    assert ids != [i.id for i in stratified_sample(data, 10, seed=4).items()]


def test_a_sample_larger_than_the_data_is_all_of_it(tmp_path):
    assert stratified_sample(dataset(tmp_path), 100).count == 30


def test_languages_are_strata_so_a_small_sample_keeps_both(tmp_path):
    rows = [{"answer": f"answer {n}", "reference": "r", "label": "consistent"} for n in range(18)]
    rows += [{"answer": f"回答{n}", "reference": "r", "label": "consistent"} for n in range(2)]
    path = tmp_path / "mixed.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    sample = stratified_sample(Dataset.open(path), 4, seed=0)
    assert sum(item.answer.startswith("回答") for item in sample.items()) == 1
    assert sample.selection["strata"] == {"consistent / - / en": 3, "consistent / - / zh": 1}
