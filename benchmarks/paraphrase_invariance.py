"""Can the head be taught to score a faithful rewording as its original, and what does it cost?

The shipped head's configuration (`train_head.py`'s defaults: the state + evidence head, L2 300, dev rows weighing
64, thresholds on dev's out-of-fold scores, the evidence veto) is refitted with one more penalty: MU times the mean
squared difference of the logits of each faithful paraphrase of the paraphrases' train file and its original (a
train row), a penalty on the directions in which a rewording moves the state. MU = 0 is the shipped configuration.

Chosen on dev: the least MU whose dev paraphrases pass at least TARGET (the issue's 90%), beside MU = 0. The other
way to pass more paraphrases, lower thresholds, is measured beside them: MU = 0 with each language's threshold
lowered to the highest at which TARGET of its dev paraphrases pass. Test is read after, for all three, with
bootstrap intervals: the quality test split, per language, and the test paraphrases.

    python benchmarks/paraphrase_invariance.py
"""

from __future__ import annotations

import argparse
import json
import math
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
    cross_fitted,
    dev_auc,
    evaluate,
    evidence_flags,
    file_weights,
    load_split,
    pass_rates,
    subset_by_ids,
    weighted_balanced_accuracy,
    without_groups_of,
)

GRID = (0.0, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0)
TARGET = 0.9
PENALTY, DEV_ROW_WEIGHT = 300.0, 64.0  # the shipped head's (trained_head.json's choice)
TRAIN = [DATA / "train" / "train.jsonl", DATA / "train" / "train_en_rag.jsonl"]
DEV, TEST = DATA / "quality" / "dev.jsonl", DATA / "quality" / "test.jsonl"
PARAPHRASE_FILES = {name: PARAPHRASES / f"paraphrases_{name}.jsonl" for name in ("train", "dev", "test")}


def pairs(paraphrases: Split, train: Split) -> tuple[Split, Split]:
    """The paraphrases whose original is a train row, and those originals, in the same order."""
    index = {r["id"]: i for i, r in enumerate(train.rows)}
    kept = [r["id"] for r in paraphrases.rows if r["id"].removesuffix(":para") in index]
    para = subset_by_ids(paraphrases, kept)
    order = [index[r["id"].removesuffix(":para")] for r in para.rows]
    originals = Split(
        name="originals",
        rows=[train.rows[i] for i in order],
        state=train.state[order],
        log_odds=train.log_odds[order],
        p_yes=train.p_yes[order],
        evidence=train.evidence[order],
        gold=train.gold[order],
        total=len(order),
        tokens=train.tokens[order],
        seconds=train.seconds[order],
    )
    return para, originals


def lowered(model: Model, paraphrases: Split) -> Model:
    """`model` with each language's threshold lowered (never raised) to the highest at which TARGET of its
    paraphrases pass; a language where the evidence veto alone fails more than that keeps its threshold."""
    copy = model.unfitted()
    copy.mean, copy.scale, copy.weights, copy.bias, copy.veto = (
        model.mean,
        model.scale,
        model.weights,
        model.bias,
        model.veto,
    )
    copy.name = f"{model.name}, thresholds lowered"
    scores, vetoed = model.score(paraphrases), evidence_flags(paraphrases)
    copy.thresholds = dict(model.thresholds)
    for lang, cut in model.thresholds.items():
        mask = np.array([r["lang"] == lang for r in paraphrases.rows])
        needed = math.ceil(TARGET * int(mask.sum()))
        passable = np.sort(scores[mask & ~vetoed])[::-1]
        if 0 < needed <= len(passable):
            copy.thresholds[lang] = min(cut, float(passable[needed - 1]))
    return copy


def trial(
    mu: float, train: Split, dev: Split, invariance: tuple[Split, Split]
) -> tuple[Model, dict[str, Any], np.ndarray]:
    """The shipped configuration refitted with strength `mu`; its dev figures and dev scores (out of fold)."""
    model = Model(f"invariance {mu:g}", use_state=True, use_evidence=True)
    model.invariance = (*invariance, mu) if mu > 0 else None
    oof = cross_fitted(model, train, dev, PENALTY, DEV_ROW_WEIGHT)
    vetoed = model.with_veto(dev, oof)
    predicted = vetoed.predict(dev, oof)
    figures = {
        "mu": mu,
        "dev_auc_out_of_fold": round(dev_auc(dev, oof), 4),
        "dev_balanced_accuracy_out_of_fold": round(
            weighted_balanced_accuracy(dev.gold, predicted, file_weights(dev.rows, dev.gold)), 4
        ),
        "thresholds": vetoed.thresholds,
    }
    return vetoed, figures, oof


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "paraphrase_invariance.json")
    args = parser.parse_args()
    store = load_store(store_dir(DEFAULT_MODEL.sha256))
    train = concat("train", *(load_split("train", path, store) for path in TRAIN))
    dev, test = load_split("dev", DEV, store), load_split("test", TEST, store)
    train, _ = without_groups_of(train, dev, test)
    paraphrased = {name: load_split(f"{name} paraphrases", path, store) for name, path in PARAPHRASE_FILES.items()}
    invariance = pairs(paraphrased["train"], train)

    rows, models, out_of_fold = [], {}, {}
    for mu in GRID:
        model, figures, out_of_fold[mu] = trial(mu, train, dev, invariance)
        originals = subset_by_ids(dev, [r["id"].removesuffix(":para") for r in paraphrased["dev"].rows])
        figures["dev_paraphrases"] = pass_rates(
            paraphrased["dev"], model.predict(paraphrased["dev"]), originals, model.predict
        )["all"]
        print(json.dumps(figures), file=sys.stderr)
        rows.append(figures)
        models[mu] = model
    reaching = [r["mu"] for r in rows if r["dev_paraphrases"]["value"] >= TARGET]
    chosen = min(reaching) if reaching else None
    lenient = lowered(models[0.0], paraphrased["dev"])
    dev_originals = subset_by_ids(dev, [r["id"].removesuffix(":para") for r in paraphrased["dev"].rows])
    thresholds_lowered = {
        "thresholds": lenient.thresholds,
        "dev_out_of_fold": evaluate(lenient.name, dev, lenient.predict(dev, out_of_fold[0.0]), out_of_fold[0.0], SEED)[
            "balanced_accuracy"
        ],
        "dev_paraphrases": pass_rates(
            paraphrased["dev"], lenient.predict(paraphrased["dev"]), dev_originals, lenient.predict
        )["all"],
    }

    tested = {}
    judges = {f"{mu:g}": models[mu] for mu in sorted({0.0, *([chosen] if chosen is not None else [])})}
    judges["0, thresholds lowered"] = lenient
    for key, model in judges.items():
        originals = subset_by_ids(test, [r["id"].removesuffix(":para") for r in paraphrased["test"].rows])
        tested[key] = {
            "quality_test": evaluate(model.name, test, model.predict(test), model.score(test), SEED),
            "test_paraphrases": pass_rates(
                paraphrased["test"], model.predict(paraphrased["test"]), originals, model.predict
            ),
        }
    report = {
        "provenance": {
            **provenance(data=files(*TRAIN, DEV, TEST, *PARAPHRASE_FILES.values())),
            "wall_s": elapsed(),
        },
        "configuration": {"penalty": PENALTY, "dev_row_weight": DEV_ROW_WEIGHT, "evidence_veto": True},
        "pairs": len(invariance[0].rows),
        "target": TARGET,
        "dev": rows,
        "chosen_on_dev": chosen,
        "thresholds_lowered": thresholds_lowered,
        "test": tested,
    }
    args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps({"chosen_on_dev": chosen, "test": tested}, indent=1)[:3000])


if __name__ == "__main__":
    main()
