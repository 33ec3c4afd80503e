"""Calibrated P(faithful): a monotone map from a judge's raw score to the share of faithful answers.

A raw score (P(Yes) of holistic_score, the trained head's probability) ranks answers, but "0.8" does not mean
that 8 answers in 10 with that score are faithful. A calibration, fitted on a labelled split the judge was not
trained on, maps the raw score to that share. Three maps are fitted and measured (benchmarks/calibration.py):

- temperature: sigmoid(logit(p) / T), one T for every language;
- platt: sigmoid(a * logit(p) + b), a and b per language;
- isotonic: the monotone step function that fits best per language (pool-adjacent-violators), interpolated
  linearly between the steps' centres so that it is strictly increasing inside the range it was fitted on.

An answer the evidence checks flag (a number or name missing from the reference) gets its own term in
temperature and platt, and is placed below every unflagged answer in isotonic: the calibrated probability of a
flagged answer is what flagged answers on the split turned out to be.

Expected calibration error (ECE): answers in 10 equal-width bins of their calibrated probability; the mean, over
answers, of |mean probability of the bin - share of faithful answers in the bin|.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

CalibrationMethod = Literal["temperature", "platt", "isotonic"]
METHODS: tuple[CalibrationMethod, ...] = ("temperature", "platt", "isotonic")
BINS = 10
_CLIP = 30.0  # |logit| beyond this is numerically 0 or 1
_FLAGGED_SHIFT = 1000.0  # isotonic: a flagged answer sorts below every unflagged one
_FLOOR = 0.005  # isotonic: no calibrated probability is exactly 0 or 1


def logit(probability: float | np.ndarray) -> Any:
    """log(p / (1 - p)), clipped to +-30."""
    p = np.clip(np.asarray(probability, dtype=np.float64), 1e-13, 1 - 1e-13)
    return np.clip(np.log(p) - np.log1p(-p), -_CLIP, _CLIP)


def _sigmoid(value: Any) -> Any:
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(value, dtype=np.float64)))


@dataclass(frozen=True)
class Calibration:
    """A fitted map from (raw probability, language, flagged) to calibrated P(faithful)."""

    method: CalibrationMethod
    params: dict[str, Any]  # per method; see fit_calibration
    fitted_on: dict[str, Any] = field(default_factory=dict)  # what it was fitted on: rows, ECE there
    band: tuple[float, float] | None = None  # the abstain band chosen with it (`--uncertain auto`)

    def apply(self, probability: float, lang: str, flagged: bool = False) -> float:
        """The calibrated P(faithful) of one answer."""
        return float(self.apply_many(np.array([probability]), [lang], np.array([flagged]))[0])

    def apply_many(self, probability: np.ndarray, langs: Sequence[str], flagged: np.ndarray | None = None) -> Any:
        z = logit(probability)
        flags = np.zeros(len(z)) if flagged is None else np.asarray(flagged, dtype=np.float64)
        out = np.empty(len(z))
        for lang in set(langs):
            rows = np.array([value == lang for value in langs])
            params = self.params.get(lang, self.params.get("default"))
            if self.method == "isotonic":
                points = params or self.params["default"]
                x = z[rows] - _FLAGGED_SHIFT * flags[rows]
                out[rows] = np.interp(x, points["x"], points["y"])
            elif self.method == "platt":
                a, b, c = params or self.params["default"]
                out[rows] = _sigmoid(a * z[rows] + b + c * flags[rows])
            else:
                out[rows] = _sigmoid(z[rows] / self.params["temperature"] + self.params["flagged"] * flags[rows])
        return out

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"method": self.method, "params": self.params, "fitted_on": self.fitted_on}
        if self.band is not None:
            data["band"] = list(self.band)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Calibration:
        if data.get("method") not in METHODS:
            raise ValueError(f"unknown calibration method {data.get('method')!r}; known: {', '.join(METHODS)}")
        band = data.get("band")
        return cls(
            method=data["method"],
            params=data["params"],
            fitted_on=data.get("fitted_on", {}),
            band=(float(band[0]), float(band[1])) if band else None,
        )


def fit_calibration(
    method: CalibrationMethod,
    probability: np.ndarray,
    gold: np.ndarray,
    langs: Sequence[str],
    flagged: np.ndarray | None = None,
) -> Calibration:
    """Fit one map on raw probabilities and gold labels (1 = faithful); per language where the method has that."""
    z = logit(probability)
    y = np.asarray(gold, dtype=np.float64)
    flags = np.zeros(len(z)) if flagged is None else np.asarray(flagged, dtype=np.float64)
    groups = {"default": np.ones(len(z), dtype=bool)}
    groups.update({lang: np.array([value == lang for value in langs]) for lang in sorted(set(langs))})
    params: dict[str, Any] = {}
    if method == "temperature":
        weights, _ = fit_logistic(np.column_stack([z, flags]), y, np.array([0.0, 1e-3]), intercept=False)
        scale = max(float(weights[0]), 1e-3)
        params = {"temperature": round(1.0 / scale, 6), "flagged": round(float(weights[1]), 6)}
    for name, rows in groups.items():
        if method == "platt" and rows.any():
            weights, bias = fit_logistic(np.column_stack([z[rows], flags[rows]]), y[rows], np.array([1e-4, 1e-3]))
            params[name] = [round(float(weights[0]), 6), round(bias, 6), round(float(weights[1]), 6)]
        elif method == "isotonic" and rows.any():
            params[name] = isotonic_points(z[rows] - _FLAGGED_SHIFT * flags[rows], y[rows])
    fitted = Calibration(method, params)
    calibrated = fitted.apply_many(probability, langs, flagged)
    return Calibration(method, params, {"rows": len(y), "ece": round(expected_calibration_error(calibrated, y), 4)})


def isotonic_points(x: np.ndarray, y: np.ndarray) -> dict[str, list[float]]:
    """Pool adjacent violators on y sorted by x; each block becomes a point (mean x, share of y)."""
    order = np.argsort(x, kind="stable")
    blocks: list[list[float]] = []  # [sum x, sum y, n]
    for xi, yi in zip(x[order], y[order], strict=True):
        blocks.append([float(xi), float(yi), 1.0])
        while len(blocks) > 1 and blocks[-2][1] / blocks[-2][2] >= blocks[-1][1] / blocks[-1][2]:
            sx, sy, n = blocks.pop()
            blocks[-1] = [blocks[-1][0] + sx, blocks[-1][1] + sy, blocks[-1][2] + n]
    xs = [round(b[0] / b[2], 6) for b in blocks]
    ys = [round(min(max(b[1] / b[2], _FLOOR), 1 - _FLOOR), 6) for b in blocks]
    return {"x": xs, "y": ys}


def expected_calibration_error(probability: np.ndarray, gold: np.ndarray, bins: int = BINS) -> float:
    """Sum over bins of (share of answers in the bin) * |mean probability - share faithful|."""
    table = reliability(probability, gold, bins)
    total = sum(row["n"] for row in table)
    if not total:
        return float("nan")
    return sum(row["n"] / total * abs(row["mean_probability"] - row["share_faithful"]) for row in table if row["n"])


def reliability(probability: np.ndarray, gold: np.ndarray, bins: int = BINS) -> list[dict[str, Any]]:
    """The reliability diagram's data: per equal-width bin, answers, mean probability and share faithful."""
    p = np.asarray(probability, dtype=np.float64)
    y = np.asarray(gold, dtype=np.float64)
    index = np.minimum((p * bins).astype(int), bins - 1)
    rows = []
    for b in range(bins):
        chosen = index == b
        n = int(chosen.sum())
        rows.append(
            {
                "low": b / bins,
                "high": (b + 1) / bins,
                "n": n,
                "mean_probability": float(p[chosen].mean()) if n else None,
                "share_faithful": float(y[chosen].mean()) if n else None,
            }
        )
    return rows


def in_band(probability: float, band: tuple[float, float] | None) -> bool:
    """Whether a probability falls in the abstain band [low, high)."""
    return band is not None and band[0] <= probability < band[1] and not math.isnan(probability)


def fit_logistic(
    features: np.ndarray,
    labels: np.ndarray,
    penalty: np.ndarray,
    sample_weight: np.ndarray | None = None,
    *,
    intercept: bool = True,
    iterations: int = 50,
    tolerance: float = 1e-8,
) -> tuple[np.ndarray, float]:
    """L2-penalised logistic regression by Newton's method: (weights, bias).

    `penalty` is the L2 strength per feature (0 leaves a feature free), or a symmetric positive semi-definite
    matrix R over the features (a penalty on directions: 0.5 * beta' R beta); the bias is never penalised, and
    is 0 without `intercept`.
    Minimises sum_i w_i * logloss_i / sum_i w_i + 0.5 * sum_j penalty_j * beta_j^2.
    """
    n = features.shape[0]
    weight = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    weight = weight / weight.sum()
    design = np.hstack([features, np.ones((n, 1 if intercept else 0))])
    given = np.asarray(penalty, dtype=np.float64)
    reg = np.diag(given) if given.ndim == 1 else given
    if intercept:
        reg = np.pad(reg, ((0, 1), (0, 1)))
    beta = np.zeros(design.shape[1])
    for _ in range(iterations):
        z = design @ beta
        p = 1.0 / (1.0 + np.exp(-z))
        gradient = design.T @ (weight * (p - labels)) + reg @ beta
        curvature = weight * p * (1.0 - p)
        hessian = (design * curvature[:, None]).T @ design + reg + 1e-10 * np.eye(len(beta))
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if float(np.abs(step).max()) < tolerance:
            break
    return (beta[:-1], float(beta[-1])) if intercept else (beta, 0.0)
