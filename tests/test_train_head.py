"""How benchmarks/train_head.py weighs its dev files, and how benchmarks/corpus/build_injections.py cuts its dev split:
every dev file weighs the same in a choice, and no dev group is trained on."""

from __future__ import annotations

import numpy as np
from benchmarks import train_head
from benchmarks.corpus import build_injections


def split_of(rows: list[tuple[str, int]]) -> train_head.Split:
    """A split of (file, gold) rows, all English, with nothing extracted but the labels."""
    n = len(rows)
    return train_head.Split(
        name="dev",
        rows=[
            {"id": str(i), "lang": "en", "file": f, "group": str(i), "reference_sha": f"{f} {i}", "sentences": 1}
            for i, (f, _) in enumerate(rows)
        ],
        state=np.zeros((n, 1)),
        log_odds=np.zeros(n),
        p_yes=np.zeros(n),
        evidence=np.zeros((n, 1)),
        gold=np.array([g for _, g in rows]),
        total=n,
        tokens=np.zeros(n),
        seconds=np.zeros(n),
    )


def test_a_large_dev_file_does_not_outvote_a_small_one_in_a_thresholds_balanced_accuracy():
    # "big": 90 faithful, 90 flawed, all judged flawed; "small": 10 and 10, all judged right
    dev = split_of([("big", 1)] * 90 + [("big", 0)] * 90 + [("small", 1)] * 10 + [("small", 0)] * 10)
    predicted = np.array([0] * 180 + [1] * 10 + [0] * 10)
    pooled = train_head.balanced_accuracy(dev.gold, predicted)
    weighted = train_head.weighted_balanced_accuracy(dev.gold, predicted, train_head.file_weights(dev.rows, dev.gold))
    assert round(pooled, 4) == 0.55  # faithful recall 10/100, flawed 100/100
    assert round(weighted, 4) == 0.75  # faithful recall (0 + 1) / 2, flawed (1 + 1) / 2


def test_dev_auc_is_the_mean_of_each_files_auc_and_skips_a_file_of_one_label():
    dev = split_of([("a", 1), ("a", 0), ("b", 1), ("b", 0), ("b", 0), ("paraphrases", 1)])
    scores = np.array([0.9, 0.1, 0.2, 0.8, 0.1, 0.5])  # a: perfect; b: 1 of 2 pairs right
    assert train_head.dev_auc(dev, scores) == 0.75


def test_a_file_weighs_the_same_among_the_rows_a_threshold_is_chosen_on():
    # among long answers, "quality" has 1 faithful and 1 flawed, "lfqa" 9 and 9: each file's recall counts half
    rows = [("quality", 1), ("quality", 0)] + [("lfqa", 1)] * 9 + [("lfqa", 0)] * 9
    dev = split_of(rows)
    weights = train_head.file_weights(dev.rows, dev.gold)
    assert weights[0] == 1.0 and weights[2] == 1 / 9
    predicted = np.array([0, 0] + [1] * 9 + [0] * 9)  # quality's faithful answer flagged, lfqa all right
    assert round(train_head.weighted_balanced_accuracy(dev.gold, predicted, weights), 9) == 0.75


def test_the_dev_injections_come_from_a_fifth_of_the_train_groups_and_a_group_stays_whole():
    rows = [{"group": f"doc-{n}", "reference": f"reference {n}"} for n in range(2000)]
    splits = [build_injections.split_of("train", row) for row in rows]
    assert set(splits) == {"train", "dev"}
    assert 0.17 < splits.count("dev") / len(rows) < 0.23
    # another answer, another reference text, the same group: the same split
    assert all(
        build_injections.split_of("train", {"group": row["group"], "reference": "other", "id": "x"}) == s
        for row, s in zip(rows, splits, strict=True)
    )
    assert {build_injections.split_of("test", row) for row in rows} == {"test"}


def test_a_train_row_sharing_a_group_with_dev_or_test_is_not_trained_on():
    train = split_of([("train", 1), ("train", 0), ("train", 1)])
    dev = split_of([("dev", 1)])  # group "0"
    test = split_of([("test", 0), ("test", 1), ("test", 0)])
    test.rows[2]["group"] = "unrelated"
    test.rows[1]["group"] = "2"
    kept, dropped = train_head.without_groups_of(train, dev, test)
    assert dropped == 2 and [r["id"] for r in kept.rows] == ["1"] and kept.total == 1
    assert list(kept.gold) == [0]


def test_a_train_row_with_a_dev_rows_reference_is_not_trained_on_though_their_groups_differ():
    train = split_of([("train", 1), ("train", 0)])
    dev = split_of([("dev", 1)])
    dev.rows[0]["group"], dev.rows[0]["reference_sha"] = "a reference text as its group", train.rows[1]["reference_sha"]
    kept, dropped = train_head.without_groups_of(train, dev)
    assert dropped == 1 and [r["id"] for r in kept.rows] == ["0"]


def test_with_a_long_dev_file_long_answers_cuts_come_from_it_and_short_answers_cuts_from_dev_alone():
    # dev: short answers (faithful 0.8, flawed 0.2) and long ones (faithful 0.3, flawed 0.1);
    # the long dev file: long answers only (faithful 0.4, flawed 0.1)
    dev = split_of([("quality", 1)] * 20 + [("quality", 0)] * 20 + [("quality", 1)] * 20 + [("quality", 0)] * 20)
    dev.p_yes = np.array([0.8] * 20 + [0.2] * 20 + [0.3] * 20 + [0.1] * 20)
    for row in dev.rows[40:]:
        row["sentences"] = 5
    long_dev = split_of([("lfqa", 1)] * 20 + [("lfqa", 0)] * 20)
    long_dev.p_yes = np.array([0.4] * 20 + [0.1] * 20)
    for row in long_dev.rows:
        row["sentences"] = 5

    def by_p_yes(split: train_head.Split) -> np.ndarray:
        return split.p_yes

    pooled = train_head.Model("m", use_state=False, use_evidence=False)
    pooled.score = by_p_yes  # type: ignore[method-assign]
    pooled.choose_thresholds(dev)
    assert pooled.thresholds["en"] == 0.8 and pooled.long_thresholds == {"en": 0.3}

    per_genre = train_head.Model("m", use_state=False, use_evidence=False)
    per_genre.score = by_p_yes  # type: ignore[method-assign]
    per_genre.long_dev = long_dev
    per_genre.choose_thresholds(dev)
    assert per_genre.thresholds["en"] == 0.8 and per_genre.long_thresholds == {"en": 0.4}


def _one_number_head(**changes):
    """A head for the embedded model over a state of one number, its logit that number, threshold 0.5."""
    from ragfacts.methods.precision.head import Head
    from ragfacts.models.local.embedded import DEFAULT_MODEL

    fields = {
        "model_sha256": DEFAULT_MODEL.sha256,
        "model_size": DEFAULT_MODEL.size,
        "prompts": {},
        "state_weights": np.array([1.0]),
        "baseline_weight": 0.0,
        "evidence_weights": np.zeros(len(train_head.FEATURE_NAMES)),
        "bias": 0.0,
        "thresholds": {"en": 0.5},
    }
    return Head(**(fields | changes))


def test_the_replay_decides_as_check_does_with_a_head_that_reads_sentences(tmp_path):
    """benchmarks/default_bench.py compares `ragfacts bench` with this replay: an answer of two sentences is
    decided by the combined probability of its own logit and its sentences', against the sentences' threshold."""
    import json
    import math

    from benchmarks.judge_features import request_key, sentence_requests

    from ragfacts.items import Item
    from ragfacts.methods.precision.head import Head
    from ragfacts.models.local.embedded import DEFAULT_MODEL

    reference = "The bridge opened in 1932. It carries cars and trains."
    answer = "The bridge opened in 1932. It carries only trains."
    path = tmp_path / "test.jsonl"
    path.write_text(json.dumps({"id": "a", "reference": reference, "answer": answer, "label": "consistent"}) + "\n")
    item = Item(id="a", reference=reference, answer=answer)
    state = {"lp_yes": 0.0, "lp_no": 0.0}
    store = {request_key(item, "en", DEFAULT_MODEL.sha256)[0]: {**state, "state": np.array([2.0])}}
    for (_, key, _), value in zip(sentence_requests(item, "en", DEFAULT_MODEL.sha256), (1.0, -3.0), strict=True):
        store[key] = {**state, "state": np.array([value])}
    head = _one_number_head(
        sentences={
            "combine": {"answer": 1.0, "min": 1.0, "mean": 0.0, "share": 0.0, "bias": 0.0, "cut": 0.0},
            "thresholds": {"en": 0.4},
        }
    )
    probability, passed = train_head.head_decisions(head, path, store)["a"]
    # answer logit 2, the lowest sentence logit -3: combined logit -1, under the sentences' threshold of 0.4
    assert math.isclose(probability, 1 / (1 + math.exp(1.0)))
    assert not passed
    alone = Head(**{**head.__dict__, "sentences": {}})
    probability, passed = train_head.head_decisions(alone, path, store)["a"]
    assert math.isclose(probability, 1 / (1 + math.exp(-2.0))) and passed
    # a sentences block that only marks sentences decides nothing: the answer alone, as above
    block = {"state_f32_base64": "AACAPw==", "bias": 0.0, "sentence_threshold": {"en": 0.4}}
    marking = Head(**{**head.__dict__, "sentences": block})
    assert train_head.head_decisions(marking, path, store)["a"] == (probability, True)
    del store[sentence_requests(item, "en", DEFAULT_MODEL.sha256)[1][1]]
    assert train_head.head_decisions(head, path, store) == {}  # a sentence not stored: the row is left out


def test_the_replay_applies_the_evidence_veto_whatever_the_probability(tmp_path):
    import json

    from benchmarks.judge_features import request_key

    from ragfacts.items import Item
    from ragfacts.models.local.embedded import DEFAULT_MODEL

    reference, answer = "The bridge opened in 1932.", "The bridge opened in 1931."
    path = tmp_path / "test.jsonl"
    path.write_text(json.dumps({"id": "b", "reference": reference, "answer": answer, "label": "inconsistent"}) + "\n")
    key = request_key(Item(id="b", reference=reference, answer=answer), "en", DEFAULT_MODEL.sha256)[0]
    store = {key: {"lp_yes": 0.0, "lp_no": 0.0, "state": np.array([5.0])}}
    head = _one_number_head()
    assert train_head.head_decisions(head, path, store)["b"][1]  # P(faithful) 0.99 passes ...
    head.evidence_veto = True
    probability, passed = train_head.head_decisions(head, path, store)["b"]
    assert probability > 0.99 and not passed  # ... unless the veto flags 1931 against 1932


def test_a_row_made_from_a_dev_row_is_scored_by_the_model_fitted_without_that_rows_fold():
    # a "paraphrase" identical to each dev row: its out-of-fold score is its original's, never an in-sample one
    rng = np.random.default_rng(3)
    train = split_of([("train", g) for g in [1, 0] * 30])
    train.log_odds = np.where(train.gold == 1, 2.0, -2.0) + rng.normal(size=60)
    dev = split_of([("quality", g) for g in [1, 0] * 10])
    dev.log_odds = np.where(dev.gold == 1, 1.0, -1.0) + rng.normal(size=20)
    copies = train_head.take(dev, [5, 0, 12])
    model = train_head.Model("m", use_state=False, use_evidence=False)
    scores, copied = train_head.cross_fitted_with(model, train, dev, (copies, [5, 0, 12]), 0.0, boost=64.0)
    assert np.allclose(copied, scores[[5, 0, 12]])
    assert not np.allclose(copied, model.score(copies))  # the final model, fitted on all of dev, scores otherwise


def test_a_model_made_for_cross_fitting_keeps_its_configuration():
    model = train_head.Model("m", use_state=True, use_evidence=True, veto=True)
    model.long_dev = split_of([("lfqa", 1)])
    model.invariance = (split_of([("p", 1)]), split_of([("o", 1)]), 0.5)
    fresh = model.unfitted()
    assert (fresh.use_state, fresh.use_evidence, fresh.veto) == (True, True, True)
    assert fresh.long_dev is model.long_dev and fresh.invariance is model.invariance and fresh.weights is None
