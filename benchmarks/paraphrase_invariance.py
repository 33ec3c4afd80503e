"""Can the head be taught to score a faithful rewording as its original, and what does it cost?

The shipped head's configuration (`train_head.py`'s defaults: the state + evidence head, L2 300, dev rows weighing
64, thresholds on dev's out-of-fold scores, the evidence veto), refitted by today's `train_head.py` code, with one
more penalty: MU/2 times the mean squared difference between the logit of each faithful paraphrase of the
paraphrases' train file and the logit of its original (a train row), a penalty on the directions in which a
rewording moves the state (`fit_logistic`'s 0.5 convention). MU = 0 is that refit without it; it is not the shipped
head file, which was fitted by earlier code.

Everything is chosen on dev, out of fold: a dev paraphrase is scored by the model fitted without its original's
fold, so nothing it was made from was trained on. The least MU whose dev paraphrases pass at least TARGET is chosen,
else the MU that passes the most of them.
The other way to pass more paraphrases, lower thresholds, is measured beside it: MU = 0 with both languages'
thresholds lowered by the least amount at which TARGET of the dev paraphrases pass. Test is read after, for the
three, with bootstrap intervals: the quality test split, per language, and the test paraphrases.

    python benchmarks/paraphrase_invariance.py
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import elapsed, files, provenance
from judge_features import load_store, store_dir
from train_head import (
    DATA,
    DEFAULT_MODEL,
    PARAPHRASES,
    ROOT,
    SEED,
    Model,
    Split,
    concat,
    cross_fitted_with,
    dev_auc,
    evaluate,
    file_weights,
    load_split,
    pass_rates,
    take,
    weighted_balanced_accuracy,
    without_groups_of,
)

GRID = (0.0, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0)
TARGET = 0.9
PENALTY, DEV_ROW_WEIGHT = 300.0, 64.0  # the shipped head's (trained_head.json's choice)
TRAIN = [DATA / "train" / "train.jsonl", DATA / "train" / "train_en_rag.jsonl"]
DEV, TEST = DATA / "quality" / "dev.jsonl", DATA / "quality" / "test.jsonl"
PARAPHRASE_FILES = {name: PARAPHRASES / f"paraphrases_{name}.jsonl" for name in ("train", "dev", "test")}


def made_from(paraphrases: Split, originals: Split) -> tuple[Split, list[int]]:
    """The paraphrases whose original is a row of `originals`, and the index of each one's original there."""
    index = {r["id"]: i for i, r in enumerate(originals.rows)}
    kept = [i for i, r in enumerate(paraphrases.rows) if r["id"].removesuffix(":para") in index]
    return take(paraphrases, kept), [index[paraphrases.rows[i]["id"].removesuffix(":para")] for i in kept]


def trial(
    mu: float, train: Split, dev: Split, invariance: tuple[Split, Split], companion: tuple[Split, list[int]]
) -> tuple[Model, dict[str, Any], np.ndarray, np.ndarray]:
    """The configuration refitted with strength `mu` and its dev figures; dev's and the dev paraphrases' scores,
    both out of fold."""
    model = Model(f"invariance {mu:g}", use_state=True, use_evidence=True)
    model.invariance = (*invariance, mu) if mu > 0 else None
    oof, paraphrase_oof = cross_fitted_with(model, train, dev, companion, PENALTY, DEV_ROW_WEIGHT)
    vetoed = model.with_veto(dev, oof)
    figures = {
        "mu": mu,
        "dev_auc_out_of_fold": round(dev_auc(dev, oof), 4),
        "dev_balanced_accuracy_out_of_fold": dev_balanced_accuracy(vetoed, dev, oof),
        "thresholds": vetoed.thresholds,
        "dev_paraphrases_out_of_fold": passed_share(vetoed, companion[0], paraphrase_oof),
    }
    return vetoed, figures, oof, paraphrase_oof


def dev_balanced_accuracy(model: Model, dev: Split, scores: np.ndarray) -> float:
    predicted = model.predict(dev, scores)
    return round(weighted_balanced_accuracy(dev.gold, predicted, file_weights(dev.rows, dev.gold)), 4)


def passed_share(model: Model, paraphrases: Split, scores: np.ndarray) -> float:
    return round(float(model.predict(paraphrases, scores).mean()), 4)


def lowered(model: Model, paraphrases: Split, scores: np.ndarray) -> tuple[Model, float]:
    """`model` with every threshold (both languages', short and long answers') lowered by the least amount at which
    TARGET of `paraphrases` (scored `scores`) pass, and that amount; 0 where they pass already, the largest tried
    where the evidence veto alone fails too many."""
    gaps = sorted({0.0, *(float(g) for g in model.cuts(paraphrases) - scores if g > 0)})
    chosen = gaps[-1]
    for gap in gaps:
        trial_model = shifted(model, gap)
        if passed_share(trial_model, paraphrases, scores) >= TARGET:
            chosen = gap
            break
    return shifted(model, chosen), chosen


def shifted(model: Model, gap: float) -> Model:
    """`model` (weights shared) with every threshold lowered by `gap` (a small epsilon more, so a score equal to the
    old threshold minus `gap` passes)."""
    lower = copy.copy(model)
    lower.name = f"{model.name}, thresholds lowered"
    step = gap + 1e-9 if gap else 0.0
    lower.thresholds = {lang: cut - step for lang, cut in model.thresholds.items()}
    lower.long_thresholds = {lang: cut - step for lang, cut in model.long_thresholds.items()}
    return lower


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "paraphrase_invariance.json")
    args = parser.parse_args()
    store = load_store(store_dir(DEFAULT_MODEL.sha256))
    train = concat("train", *(load_split("train", path, store) for path in TRAIN))
    dev, test = load_split("dev", DEV, store), load_split("test", TEST, store)
    train, _ = without_groups_of(train, dev, test)
    paraphrased = {name: load_split(f"{name} paraphrases", path, store) for name, path in PARAPHRASE_FILES.items()}
    train_paraphrases, train_index = made_from(paraphrased["train"], train)
    invariance = (train_paraphrases, take(train, train_index, "originals"))
    companion = made_from(paraphrased["dev"], dev)

    rows, models, scored = [], {}, {}
    for mu in GRID:
        model, figures, oof, paraphrase_oof = trial(mu, train, dev, invariance, companion)
        print(json.dumps(figures), file=sys.stderr)
        rows.append(figures)
        models[mu], scored[mu] = model, (oof, paraphrase_oof)
    reaching = [r["mu"] for r in rows if r["dev_paraphrases_out_of_fold"] >= TARGET]
    # the least strength that reaches TARGET, else the one that passes the most dev paraphrases (the least of ties)
    best = max(rows, key=lambda r: (r["dev_paraphrases_out_of_fold"], -r["mu"]))["mu"]
    chosen = min(reaching) if reaching else best
    lenient, gap = lowered(models[0.0], companion[0], scored[0.0][1])
    thresholds_lowered = {
        "by": round(gap, 4),
        "thresholds": lenient.thresholds,
        "dev_balanced_accuracy_out_of_fold": dev_balanced_accuracy(lenient, dev, scored[0.0][0]),
        "dev_paraphrases_out_of_fold": passed_share(lenient, companion[0], scored[0.0][1]),
    }

    judges = {f"{mu:g}": models[mu] for mu in sorted({0.0, chosen})}
    judges["0, thresholds lowered"] = lenient
    test_paraphrases, test_index = made_from(paraphrased["test"], test)
    originals = take(test, test_index)
    tested = {
        key: {
            "quality_test": evaluate(model.name, test, model.predict(test), model.score(test), SEED),
            "test_paraphrases": pass_rates(test_paraphrases, model.predict(test_paraphrases), originals, model.predict),
        }
        for key, model in judges.items()
    }
    report = {
        "provenance": {
            **provenance(data=files(*TRAIN, DEV, TEST, *PARAPHRASE_FILES.values())),
            "wall_s": elapsed(),
        },
        "configuration": {"penalty": PENALTY, "dev_row_weight": DEV_ROW_WEIGHT, "evidence_veto": True},
        "pairs": len(train_paraphrases.rows),
        "dev_paraphrases": len(companion[0].rows),
        "target": TARGET,
        "dev": rows,
        "chosen_on_dev": chosen,
        "chosen_reaches_target": bool(reaching),
        "chosen_key": f"{chosen:g}",  # its key in "test"
        "thresholds_lowered": thresholds_lowered,
        "test": tested,
    }
    args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps({"chosen_on_dev": chosen, "thresholds_lowered": thresholds_lowered}, indent=1))


if __name__ == "__main__":
    main()
