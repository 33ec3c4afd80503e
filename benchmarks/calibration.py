"""Calibrate the embedded judge's probabilities on dev, choose an abstain band on dev, report both on test.

For the two probability strategies of the embedded model (`trained_head`: the shipped head's P(faithful);
`holistic_score`: P(Yes)), on the quality corpus:

1. the raw score of every dev answer that no part of the judge was fitted on: holistic_score's P(Yes) as it is;
   the head's out-of-fold (5 folds grouped by reference document, each scored by a head fitted like the shipped
   one on train + the other folds: same features, strength and dev-row weight);
2. the three maps of `ragfacts.methods.precision.calibration` (temperature, platt, isotonic) measured on dev by
   5-fold cross-validation (ECE and log-loss of the out-of-fold calibrated probabilities); the one with the lower
   ECE is fitted on all of dev and ships in the head file;
3. the abstain band: on dev's cross-validated calibrated probabilities, the band [low, high) (steps of 0.05)
   that abstains on at most 30% of dev's answers and gives the best mean over languages of the balanced accuracy
   on the answers it decides;
4. test, read once after every choice: ECE with a bootstrap interval (raw and every map), the reliability
   diagram's bins, and with the band: abstention rate and balanced accuracy on the decided answers, per language.

    python benchmarks/calibration.py [--write-head] [--out benchmarks/results/calibration.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import files, provenance
from judge_features import load_store, store_dir
from train_head import (
    DATA,
    HEAD_FILE,
    SEED,
    Model,
    Split,
    balanced_accuracy,
    boosted,
    concat,
    evidence_flags,
    load_split,
    subset,
)

from ragfacts.methods.precision.calibration import (
    METHODS,
    Calibration,
    expected_calibration_error,
    fit_calibration,
    reliability,
)
from ragfacts.methods.precision.head import Head
from ragfacts.models.local.embedded import DEFAULT_MODEL

ROOT = Path(__file__).resolve().parents[1]
MAX_ABSTAIN = 0.30
FOLDS = 5
GRID = np.round(np.arange(0.0, 1.0001, 0.05), 2)


def folds_of(split: Split, folds: int = FOLDS) -> np.ndarray:
    """Each row's fold, grouped by reference document (the same grouping as the head's cross-fitting)."""
    groups = sorted({r["group"] for r in split.rows})
    order = np.random.default_rng(SEED).permutation(len(groups))
    fold_of = {groups[g]: n % folds for n, g in enumerate(order)}
    return np.array([fold_of[r["group"]] for r in split.rows])


DEFAULT_TRAIN = [DATA / "train" / "train.jsonl", DATA / "train" / "train_en_rag.jsonl"]  # a head recording none


def head_out_of_fold(head: Head, train: Split, dev: Split) -> np.ndarray:
    """The head's dev scores, each fold scored by a head fitted like the shipped one without that fold."""
    boost = float(head.training.get("dev_row_weight") or 64.0)
    fold = folds_of(dev)
    scores = np.zeros(len(dev.rows))
    for k in range(FOLDS):
        held = fold == k
        part = Model("state + evidence head", use_state=True, use_evidence=True)
        part.fit(concat("train+dev", train, boosted(subset(dev, ~held), boost)), float(head.training["penalty"]))
        scores[held] = part.score(subset(dev, held))
        print(f"out-of-fold head scores: fold {k + 1}/{FOLDS}", file=sys.stderr)
    return scores


def head_scores(head: Head, split: Split) -> np.ndarray:
    """The shipped head's P(faithful) of every row of a split it was not fitted on."""
    z = np.array([head.logit(s, o, e) for s, o, e in zip(split.state, split.log_odds, split.evidence, strict=True)])
    return 1.0 / (1.0 + np.exp(-z))


def log_loss(probability: np.ndarray, gold: np.ndarray) -> float:
    p = np.clip(probability, 1e-6, 1 - 1e-6)
    return float(-np.mean(gold * np.log(p) + (1 - gold) * np.log(1 - p)))


def cross_validated(method: str, raw: np.ndarray, split: Split, flagged: np.ndarray) -> np.ndarray:
    """Dev's calibrated probabilities, each fold calibrated by a map fitted on the other folds."""
    fold = folds_of(split)
    langs = [r["lang"] for r in split.rows]
    out = np.zeros(len(raw))
    for k in range(FOLDS):
        held = fold == k
        fitted = fit_calibration(
            method,
            raw[~held],
            split.gold[~held],
            [x for x, h in zip(langs, held, strict=True) if not h],
            flagged[~held],
        )
        out[held] = fitted.apply_many(raw[held], [x for x, h in zip(langs, held, strict=True) if h], flagged[held])
    return out


def threshold_of(calibration: Calibration, raw_thresholds: dict[str, float]) -> dict[str, float]:
    """The thresholds as shown to users: the raw ones mapped through the calibration."""
    return {lang: calibration.apply(t, lang) for lang, t in raw_thresholds.items()}


def decide(raw: np.ndarray, split: Split, row_threshold: Any, vetoed: np.ndarray) -> np.ndarray:
    """Verdicts as ragfacts gives them: the raw score against the row's raw threshold (its language's, or its
    language's long answers'; a flat calibration step must not flip a verdict), an evidence veto failing the answer."""
    cut = np.array([row_threshold(r) for r in split.rows])
    return ((raw >= cut) & ~vetoed).astype(int)


def band_figures(
    probability: np.ndarray,
    split: Split,
    predicted: np.ndarray,
    band: tuple[float, float],
    rng: np.random.Generator | None = None,
) -> dict[str, Any]:
    """Abstention rate and balanced accuracy on the decided answers, overall and per language."""
    abstain = (probability >= band[0]) & (probability < band[1])
    out: dict[str, Any] = {"abstain": round(float(abstain.mean()), 4)}
    for lang in (None, "en", "zh"):
        rows = (
            np.ones(len(split.rows), dtype=bool) if lang is None else np.array([r["lang"] == lang for r in split.rows])
        )
        keep = rows & ~abstain
        key = lang or "all"
        out[f"abstain:{key}"] = round(float(abstain[rows].mean()), 4)
        gold, pred = split.gold[keep], predicted[keep]
        if rng is None:
            out[f"ba:{key}"] = round(balanced_accuracy(gold, pred), 4)
        else:
            out[f"ba:{key}"] = interval(lambda g, p: balanced_accuracy(g, p), gold, pred, rng)
            out[f"decided:{key}"] = int(keep.sum())
    return out


def interval(metric, gold: np.ndarray, predicted: np.ndarray, rng: np.random.Generator) -> dict[str, Any]:
    value = metric(gold, predicted)
    draws = [
        metric(gold[pick], predicted[pick]) for pick in (rng.integers(0, len(gold), len(gold)) for _ in range(2000))
    ]
    low, high = np.nanpercentile(draws, [2.5, 97.5])
    return {"value": round(float(value), 4), "low": round(float(low), 4), "high": round(float(high), 4), "n": len(gold)}


def choose_band(probability: np.ndarray, split: Split, predicted: np.ndarray) -> tuple[tuple[float, float], dict]:
    """The band on dev with at most MAX_ABSTAIN abstentions and the best mean of the per-language decided BA."""
    best: tuple[float, tuple[float, float], dict] | None = None
    for low in GRID:
        for high in GRID[low < GRID]:
            figures = band_figures(probability, split, predicted, (float(low), float(high)))
            if figures["abstain"] > MAX_ABSTAIN:
                continue
            value = (figures["ba:en"] + figures["ba:zh"]) / 2
            if best is None or value > best[0] + 1e-9:
                best = (value, (float(low), float(high)), figures)
    assert best is not None
    return best[1], best[2]


def ece_floor(probability: np.ndarray, draws: int = 2000) -> dict[str, float]:
    """The ECE a perfectly calibrated judge with these probabilities would show on this many answers: labels drawn
    as Bernoulli(probability), 2,000 times (the noise floor of ECE at this size)."""
    rng = np.random.default_rng(SEED)
    values = [
        expected_calibration_error(probability, rng.uniform(size=len(probability)) < probability) for _ in range(draws)
    ]
    low, high = np.percentile(values, [2.5, 97.5])
    return {"mean": round(float(np.mean(values)), 4), "low": round(float(low), 4), "high": round(float(high), 4)}


def ece_interval(probability: np.ndarray, gold: np.ndarray, rng: np.random.Generator) -> dict[str, Any]:
    return interval(lambda g, p: expected_calibration_error(p, g), gold, probability, rng)


def study(
    name: str,
    dev_raw: np.ndarray,
    test_raw: np.ndarray,
    dev: Split,
    test: Split,
    raw_thresholds: dict[str, float],
    veto: bool,
    row_threshold: Any = None,
) -> tuple[dict[str, Any], Calibration]:
    """Calibrate `name`'s raw scores on dev, choose the band there, report on test. `row_threshold` (a row of a
    split -> its raw threshold) defaults to `raw_thresholds` by language."""
    row_threshold = row_threshold or (lambda row: raw_thresholds[row["lang"]])
    dev_flag = evidence_flags(dev) if veto else np.zeros(len(dev.rows), dtype=bool)
    test_flag = evidence_flags(test) if veto else np.zeros(len(test.rows), dtype=bool)
    dev_langs = [r["lang"] for r in dev.rows]
    test_langs = [r["lang"] for r in test.rows]
    rng = np.random.default_rng(SEED)
    out: dict[str, Any] = {
        "strategy": name,
        "dev_rows": len(dev.rows),
        "test_rows": len(test.rows),
        "dev_cv": {"raw": {"ece": round(expected_calibration_error(dev_raw, dev.gold), 4)}},
        "test": {
            "raw": {"ece": ece_interval(test_raw, test.gold, rng), "log_loss": round(log_loss(test_raw, test.gold), 4)}
        },
        "reliability": {"raw": reliability(test_raw, test.gold)},
    }
    cv: dict[str, np.ndarray] = {}
    fitted: dict[str, Calibration] = {}
    for method in METHODS:
        cv[method] = cross_validated(method, dev_raw, dev, dev_flag)
        out["dev_cv"][method] = {
            "ece": round(expected_calibration_error(cv[method], dev.gold), 4),
            "log_loss": round(log_loss(cv[method], dev.gold), 4),
        }
        fitted[method] = fit_calibration(method, dev_raw, dev.gold, dev_langs, dev_flag)
        calibrated = fitted[method].apply_many(test_raw, test_langs, test_flag)
        out["test"][method] = {
            "ece": ece_interval(calibrated, test.gold, np.random.default_rng(SEED)),
            "log_loss": round(log_loss(calibrated, test.gold), 4),
        }
        out["reliability"][method] = reliability(calibrated, test.gold)
    chosen = min(METHODS, key=lambda m: (out["dev_cv"][m]["ece"], out["dev_cv"][m]["log_loss"]))
    out["chosen"] = chosen
    out["ece_of_a_calibrated_judge"] = ece_floor(fitted[chosen].apply_many(test_raw, test_langs, test_flag))
    calibration = fitted[chosen]
    thresholds = threshold_of(calibration, raw_thresholds)
    dev_vetoed, test_vetoed = dev_flag.astype(bool), test_flag.astype(bool)
    # The band is chosen on dev's cross-validated calibrated probabilities (no dev answer calibrated by itself).
    dev_pred = decide(dev_raw, dev, row_threshold, dev_vetoed)
    band, dev_figures = choose_band(cv[chosen], dev, dev_pred)
    test_cal = calibration.apply_many(test_raw, test_langs, test_flag)
    test_pred = decide(test_raw, test, row_threshold, test_vetoed)
    out["thresholds_calibrated"] = {k: round(v, 4) for k, v in thresholds.items()}
    out["band"] = list(band)
    out["band_dev"] = dev_figures
    out["band_test"] = band_figures(test_cal, test, test_pred, band, np.random.default_rng(SEED))
    out["no_band_test"] = band_figures(test_cal, test, test_pred, (1.0, 1.0), np.random.default_rng(SEED))
    shipped = Calibration(
        calibration.method,
        calibration.params,
        {
            **calibration.fitted_on,
            "split": "benchmarks/data/quality/dev.jsonl",
            "dev_cv_ece": out["dev_cv"][chosen]["ece"],
            "test_ece": out["test"][chosen]["ece"]["value"],
            "band_test": {k: v for k, v in out["band_test"].items() if not k.startswith("decided")},
            "benchmark": "benchmarks/calibration.py",
        },
        band,
    )
    return out, shipped


def markdown(report: dict[str, Any]) -> str:
    lines = []
    for s in report["studies"]:
        lines += [f"### {s['strategy']} (dev {s['dev_rows']}, test {s['test_rows']})", ""]
        lines += ["| map | dev ECE (5-fold CV) | test ECE [95% CI] | test log-loss |", "|---|---|---|---|"]
        for name in ("raw", *METHODS):
            e = s["test"][name]["ece"]
            mark = " (chosen)" if name == s["chosen"] else ""
            lines.append(
                f"| {name}{mark} | {s['dev_cv'][name]['ece']:.3f} | {e['value']:.3f} [{e['low']:.3f}, {e['high']:.3f}] "
                f"| {s['test'][name]['log_loss']:.3f} |"
            )
        floor = s["ece_of_a_calibrated_judge"]
        lines += [
            "",
            f"A perfectly calibrated judge with the shipped probabilities would show an ECE of {floor['mean']:.3f} "
            f"[{floor['low']:.3f}, {floor['high']:.3f}] on these {s['test_rows']} answers (labels drawn from them).",
        ]
        b, t, n = s["band"], s["band_test"], s["no_band_test"]
        lines += ["", f"Band chosen on dev: [{b[0]:.2f}, {b[1]:.2f}); thresholds {s['thresholds_calibrated']}", ""]
        lines += ["| test | abstain | BA decided (all) | en | zh |", "|---|---|---|---|---|"]
        for label, f in (("no band", n), ("band", t)):
            cells = [
                f"{f[f'ba:{k}']['value']:.3f} [{f[f'ba:{k}']['low']:.3f}, {f[f'ba:{k}']['high']:.3f}]"
                for k in ("all", "en", "zh")
            ]
            lines.append(
                f"| {label} | {f['abstain']:.1%} (en {f['abstain:en']:.1%}, zh {f['abstain:zh']:.1%}) | "
                + " | ".join(cells)
                + " |"
            )
        lines.append("")
    return "\n".join(lines)


def figure(report: dict[str, Any], path: Path) -> None:
    """The reliability diagram of the docs: test bins of each strategy, raw and as shipped (calibrated)."""
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "ragfacts", "font.size": 8})
    import matplotlib.pyplot as plt

    plotted, axes = plt.subplots(1, len(report["studies"]), figsize=(4 * len(report["studies"]), 4))
    for axis, s in zip(np.atleast_1d(axes), report["studies"], strict=True):
        axis.plot([0, 1], [0, 1], color="grey", linestyle=":", linewidth=1)
        for name, style in (("raw", "s--"), (s["chosen"], "o-")):
            bins = [b for b in s["reliability"][name] if b["n"]]
            ece = s["test"][name]["ece"]["value"]
            label = f"{'raw' if name == 'raw' else name + ' (shipped)'}: ECE {ece:.3f}"
            axis.plot([b["mean_probability"] for b in bins], [b["share_faithful"] for b in bins], style, label=label)
        axis.set_title(f"{s['strategy']}, quality test split ({s['test_rows']})")
        axis.set_xlim(0, 1)
        axis.set_ylim(0, 1)
        axis.set_xlabel("P(faithful), mean of the bin")
        axis.set_ylabel("share of faithful answers in the bin")
        axis.legend(loc="upper left", fontsize=7)
    plotted.tight_layout()
    plotted.savefig(path, format="svg", metadata={"Date": None})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--train",
        type=Path,
        nargs="+",
        default=None,
        help="the head's training files (default: those its file records)",
    )
    parser.add_argument(
        "--dev", type=Path, nargs="+", default=None, help="its dev files (default: those its file records)"
    )
    parser.add_argument("--test", type=Path, default=DATA / "quality" / "test.jsonl")
    parser.add_argument("--write-head", action="store_true", help=f"write the chosen calibrations into {HEAD_FILE}")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "calibration.json")
    parser.add_argument("--figure", type=Path, default=ROOT / "docs" / "reliability.svg")
    args = parser.parse_args()

    store = load_store(store_dir(DEFAULT_MODEL.sha256))
    head = Head.load(HEAD_FILE)
    args.train = args.train or [ROOT / f for f in head.training.get("train_files", [])] or DEFAULT_TRAIN
    args.dev = args.dev or [ROOT / f for f in head.training.get("dev_files", [])] or [DATA / "quality" / "dev.jsonl"]
    train = concat("train", *(load_split("train", path, store) for path in args.train))
    dev = concat("dev", *(load_split("dev", path, store) for path in args.dev))
    test = load_split("test", args.test, store)
    from train_head import DEFAULT_THRESHOLDS

    studies = []
    holistic, holistic_cal = study(
        "holistic_score",
        dev.p_yes,
        test.p_yes,
        dev,
        test,
        {"en": DEFAULT_THRESHOLDS["holistic_score"], "zh": DEFAULT_THRESHOLDS["holistic_score"]},
        veto=False,
    )
    studies.append(holistic)
    oof = head_out_of_fold(head, train, dev)
    trained, trained_cal = study(
        "trained_head",
        oof,
        head_scores(head, test),
        dev,
        test,
        head.thresholds,
        head.evidence_veto,
        lambda row: head.answer_threshold(row["lang"], row["sentences"]),
    )
    studies.append(trained)
    report = {
        "provenance": provenance(data=files(*args.train, *args.dev, args.test)),
        "max_abstain": MAX_ABSTAIN,
        "bins": 10,
        "studies": studies,
    }
    args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    args.out.with_suffix(".md").write_text(markdown(report), encoding="utf-8")
    print(markdown(report))
    figure(report, args.figure)
    if args.write_head:
        head.calibrations = {"holistic_score": holistic_cal, "trained_head": trained_cal}
        head.save(HEAD_FILE)
        print(f"calibrations written to {HEAD_FILE}", file=sys.stderr)


if __name__ == "__main__":
    main()
