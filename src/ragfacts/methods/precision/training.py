"""Fit a head to a user's labelled answers: split, fit, choose on dev, calibrate, report on test.

Every labelled answer is read once by the model (`Features`: P(Yes), the Yes-No log-odds and, on a local GGUF,
the hidden state at the verdict). The answers are split by reference text (an answer never shares its reference
with an answer of another split) into train, dev and test. On train a logistic head is fitted over [state,
log-odds, evidence features] (without a state: log-odds and evidence, a calibrated logistic over P(Yes)); the L2
strength is chosen by dev AUC, the thresholds per language by dev balanced accuracy, the calibration map and the
abstain band on dev as `benchmarks/calibration.py` does for the shipped head. Test is read once, at the end.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragfacts.evidence import FEATURE_NAMES, feature_vector
from ragfacts.methods.precision.calibration import (
    METHODS,
    Calibration,
    expected_calibration_error,
    fit_calibration,
    fit_logistic,
)
from ragfacts.methods.precision.head import Head

PENALTIES = (3000.0, 1000.0, 300.0, 100.0, 30.0, 10.0)
EVIDENCE_PENALTY = 1e-3
MAX_ABSTAIN = 0.30
BAND_GRID = np.round(np.arange(0.0, 1.0001, 0.05), 2)
FOLDS = 5
# The evidence features whose flag vetoes an answer under a head trained with `evidence_veto`.
VETO_FEATURES = ("any_number_unsupported", "any_date_unsupported", "any_amount_unsupported", "any_entity_unsupported")


@dataclass
class Example:
    """One labelled answer as the model read it."""

    group: str  # the reference: answers sharing one stay in one split
    lang: str
    gold: int  # 1 = faithful
    p_yes: float
    log_odds: float
    evidence: np.ndarray
    state: np.ndarray | None
    sentences: int = 1  # the answer's, by `split_sentences`: a long answer may have a threshold of its own


@dataclass
class Splits:
    train: list[Example]
    dev: list[Example]
    test: list[Example]


def evidence_of(answer: str, reference: str, lang: str) -> np.ndarray:
    return np.asarray(feature_vector(answer, reference, lang), dtype=np.float64)


def split_by_group(examples: Sequence[Example], dev: float, test: float, seed: int) -> Splits:
    """Shuffle the references with `seed` and give each split its share of answers, whole references at a time."""
    groups = sorted({e.group for e in examples})
    random.Random(seed).shuffle(groups)
    sizes: dict[str, int] = {}
    for e in examples:
        sizes[e.group] = sizes.get(e.group, 0) + 1
    total, counted, where = len(examples), 0, {}
    for group in groups:
        share = counted / total
        where[group] = "test" if share < test else "dev" if share < test + dev else "train"
        counted += sizes[group]
    return Splits(*([e for e in examples if where[e.group] == name] for name in ("train", "dev", "test")))


class Fitter:
    """A logistic head over [state (standardised), log-odds / 10, evidence]; state optional."""

    def __init__(self, use_state: bool) -> None:
        self.use_state = use_state
        self.mean = np.zeros(0)
        self.scale = np.ones(0)
        self.weights = np.zeros(0)
        self.bias = 0.0

    def design(self, rows: Sequence[Example]) -> np.ndarray:
        parts = []
        if self.use_state:
            parts.append((_states(rows) - self.mean) / self.scale)
        parts.append(np.array([[r.log_odds / 10.0] for r in rows]))
        parts.append(np.vstack([r.evidence for r in rows]))
        return np.hstack(parts)

    def fit(self, rows: Sequence[Example], penalty: float) -> Fitter:
        if self.use_state:
            states = _states(rows)
            self.mean, self.scale = states.mean(axis=0), states.std(axis=0) + 1e-3
        d = len(self.mean)
        strength = np.concatenate(
            [np.full(d, penalty / max(d, 1)), np.zeros(1), np.full(len(FEATURE_NAMES), EVIDENCE_PENALTY)]
        )
        self.weights, self.bias = fit_logistic(self.design(rows), gold(rows), strength, balanced_weights(rows))
        return self

    def score(self, rows: Sequence[Example]) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-(self.design(rows) @ self.weights + self.bias)))

    def head(self, **fields: Any) -> Head:
        """The fitted weights as a head: standardisation folded into the state weights."""
        d = len(self.mean)
        state_w = self.weights[:d] / self.scale if d else np.zeros(0)
        bias = self.bias - float(state_w @ self.mean) if d else self.bias
        return Head(
            state_weights=state_w,
            baseline_weight=float(self.weights[d]) / 10.0,
            evidence_weights=self.weights[d + 1 :],
            bias=bias,
            **fields,
        )


def _states(rows: Sequence[Example]) -> np.ndarray:
    """The rows' hidden states, one per row: a head over the state is fitted only where every answer has one."""
    states = [r.state for r in rows if r.state is not None]
    if len(states) != len(rows):
        raise ValueError("a head over the hidden state needs the state of every answer")
    return np.vstack(states)


def gold(rows: Sequence[Example]) -> np.ndarray:
    return np.array([r.gold for r in rows], dtype=np.float64)


def balanced_weights(rows: Sequence[Example]) -> np.ndarray:
    """Each (language, label) group weighs the same, whatever its size."""
    counts: dict[tuple[str, int], int] = {}
    for r in rows:
        counts[(r.lang, r.gold)] = counts.get((r.lang, r.gold), 0) + 1
    return np.array([1.0 / counts[(r.lang, r.gold)] for r in rows])


def balanced_accuracy(truth: np.ndarray, predicted: np.ndarray) -> float:
    recalls = [float(np.mean(predicted[truth == c] == c)) for c in (0, 1) if (truth == c).any()]
    return float(np.mean(recalls)) if recalls else float("nan")


def auc(truth: np.ndarray, score: np.ndarray) -> float:
    positive, negative = score[truth == 1], score[truth == 0]
    if not len(positive) or not len(negative):
        return float("nan")
    greater = (positive[:, None] > negative[None, :]).sum() + 0.5 * (positive[:, None] == negative[None, :]).sum()
    return float(greater / (len(positive) * len(negative)))


def interval(truth: np.ndarray, predicted: np.ndarray, seed: int = 20261125) -> dict[str, float | int | None]:
    """Balanced accuracy with a bootstrap 95% interval (2,000 resamples)."""
    if not len(truth):
        return {"value": None, "low": None, "high": None, "n": 0}
    rng = np.random.default_rng(seed)
    draws = [
        balanced_accuracy(truth[p], predicted[p])
        for p in (rng.integers(0, len(truth), len(truth)) for _ in range(2000))
    ]
    low, high = np.nanpercentile(draws, [2.5, 97.5])
    value = balanced_accuracy(truth, predicted)
    return {"value": round(value, 4), "low": round(float(low), 4), "high": round(float(high), 4), "n": len(truth)}


def best_threshold(truth: np.ndarray, scores: np.ndarray) -> float:
    """The cut with the best balanced accuracy, placed midway into the gap below it (not on a dev score)."""
    candidates = np.unique(scores)
    best, chosen = -1.0, 0
    for n, cut in enumerate(candidates):
        value = balanced_accuracy(truth, (scores >= cut).astype(int))
        if value > best:
            best, chosen = value, n
    if chosen == 0:
        return float(candidates[0])
    return float((candidates[chosen - 1] + candidates[chosen]) / 2)


def thresholds_on(rows: Sequence[Example], scores: np.ndarray) -> dict[str, float]:
    """Per language (and "default" over all) the threshold with the best balanced accuracy."""
    truth = gold(rows)
    found = {"default": best_threshold(truth, scores)}
    for lang in sorted({r.lang for r in rows}):
        mask = np.array([r.lang == lang for r in rows])
        if len(set(truth[mask])) == 2:
            found[lang] = best_threshold(truth[mask], scores[mask])
    return found


def choose_calibration(rows: Sequence[Example], raw: np.ndarray) -> tuple[Calibration, dict[str, float], np.ndarray]:
    """The map with the lowest cross-validated ECE on `rows`, fitted on all of them; the CV probabilities too."""
    langs = [r.lang for r in rows]
    truth = gold(rows)
    fold = np.array([int(hashlib.sha256(r.group.encode()).hexdigest(), 16) % FOLDS for r in rows])
    errors: dict[str, float] = {}
    held_out: dict[str, np.ndarray] = {}
    for method in METHODS:
        out = np.zeros(len(rows))
        for k in range(FOLDS):
            held = fold == k
            if not held.any() or held.all():
                out[held] = raw[held]
                continue
            keep = [lang for lang, h in zip(langs, held, strict=True) if not h]
            fitted = fit_calibration(method, raw[~held], truth[~held], keep)
            out[held] = fitted.apply_many(raw[held], [lang for lang, h in zip(langs, held, strict=True) if h])
        held_out[method] = out
        errors[method] = round(expected_calibration_error(out, truth), 4)
    chosen = min(METHODS, key=lambda m: errors[m])
    return fit_calibration(chosen, raw, truth, langs), errors, held_out[chosen]


def choose_band(rows: Sequence[Example], probability: np.ndarray, predicted: np.ndarray) -> tuple[float, float] | None:
    """The band abstaining on at most MAX_ABSTAIN of `rows` with the best mean per-language decided BA."""
    truth = gold(rows)
    langs = sorted({r.lang for r in rows})
    best: tuple[float, tuple[float, float]] | None = None
    for low in BAND_GRID:
        for high in BAND_GRID[low < BAND_GRID]:
            abstain = (probability >= low) & (probability < high)
            if abstain.mean() > MAX_ABSTAIN:
                continue
            values = []
            for lang in langs:
                keep = np.array([r.lang == lang for r in rows]) & ~abstain
                values.append(balanced_accuracy(truth[keep], predicted[keep]) if keep.any() else float("nan"))
            value = float(np.nanmean(values)) if not np.isnan(values).all() else -1.0
            if best is None or value > best[0] + 1e-9:
                best = (value, (float(low), float(high)))
    return None if best is None else best[1]


def fit_head(
    examples: Sequence[Example],
    *,
    dev: float,
    test: float,
    seed: int,
    default: tuple[str, Any],
    head_fields: dict[str, Any],
) -> tuple[Head, dict[str, Any]]:
    """Fit on train, choose on dev, measure on test against `default` = (name, scorer of a list of examples
    giving predicted labels). Returns the head (calibration and band included) and the report."""
    splits = split_by_group(examples, dev, test, seed)
    for name in ("train", "dev", "test"):
        rows = getattr(splits, name)
        if len({r.gold for r in rows}) < 2:
            raise ValueError(f"the {name} split has answers of one label only; give more labelled answers of both")
    use_state = all(r.state is not None for r in examples)
    truth_dev = gold(splits.dev)
    fitted: list[tuple[float, float, Fitter]] = []
    for penalty in PENALTIES if use_state else (0.0,):
        fitter = Fitter(use_state).fit(splits.train, penalty)
        fitted.append((auc(truth_dev, fitter.score(splits.dev)), penalty, fitter))
    dev_auc, penalty, fitter = max(fitted, key=lambda f: f[0])
    dev_raw = fitter.score(splits.dev)
    thresholds = thresholds_on(splits.dev, dev_raw)
    calibration, errors, dev_calibrated = choose_calibration(splits.dev, dev_raw)

    def predict(rows: Sequence[Example], raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Calibrated probabilities, and verdicts as at run time: the raw score against the raw threshold."""
        probability = calibration.apply_many(raw, [r.lang for r in rows])
        cuts = np.array([thresholds.get(r.lang, thresholds["default"]) for r in rows])
        return probability, (raw >= cuts).astype(int)

    _, dev_predicted = predict(splits.dev, dev_raw)
    band = choose_band(splits.dev, dev_calibrated, dev_predicted)
    calibration = Calibration(
        calibration.method, calibration.params, {**calibration.fitted_on, "dev_cv_ece": errors}, band
    )
    test_raw = fitter.score(splits.test)
    test_probability, test_predicted = predict(splits.test, test_raw)
    truth = gold(splits.test)
    default_name, default_predict = default
    figures: dict[str, Any] = {"balanced_accuracy": interval(truth, test_predicted)}
    for lang in sorted({r.lang for r in splits.test}):
        mask = np.array([r.lang == lang for r in splits.test])
        figures[f"balanced_accuracy:{lang}"] = interval(truth[mask], test_predicted[mask])
    figures["ece"] = round(expected_calibration_error(test_probability, truth), 4)
    figures["auc"] = round(auc(truth, test_raw), 4)
    if band is not None:
        abstain = (test_probability >= band[0]) & (test_probability < band[1])
        figures["band"] = {
            "band": list(band),
            "abstain": round(float(abstain.mean()), 4),
            "balanced_accuracy_decided": interval(truth[~abstain], test_predicted[~abstain]),
        }
    report: dict[str, Any] = {
        "features": "state + log-odds + evidence" if use_state else "log-odds + evidence",
        "split": {name: len(getattr(splits, name)) for name in ("train", "dev", "test")},
        "seed": seed,
        "penalty": penalty,
        "dev_auc": round(dev_auc, 4),
        "calibration": calibration.method,
        "default": default_name,
        "test": {"head": figures, "default": interval(truth, np.asarray(default_predict(splits.test)))},
    }
    report["test"]["holistic_score_ece"], p_yes_calibration = _p_yes_calibration(splits)
    calibrations = {"trained_head": calibration, "holistic_score": p_yes_calibration}
    head = fitter.head(thresholds=thresholds, calibrations=calibrations, **head_fields)
    return head, report


def _p_yes_calibration(splits: Splits) -> tuple[float, Calibration]:
    """The model's own P(Yes) (holistic_score) calibrated on dev, with its band; its ECE on test."""
    from ragfacts.methods.precision.options import DEFAULT_THRESHOLDS

    dev_p = np.array([r.p_yes for r in splits.dev])
    calibration, errors, cross_validated = choose_calibration(splits.dev, dev_p)
    predicted = (dev_p >= DEFAULT_THRESHOLDS["holistic_score"]).astype(int)
    band = choose_band(splits.dev, cross_validated, predicted)
    fitted = {**calibration.fitted_on, "dev_cv_ece": errors}
    test_p = calibration.apply_many(np.array([r.p_yes for r in splits.test]), [r.lang for r in splits.test])
    ece = round(expected_calibration_error(test_p, gold(splits.test)), 4)
    return ece, Calibration(calibration.method, calibration.params, fitted, band)
