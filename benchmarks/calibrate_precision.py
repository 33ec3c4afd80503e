"""Choose the score strategies' thresholds on the quality corpus's dev split (never on test).

Reads a `ragfacts bench` run over benchmarks/data/quality/dev.jsonl with the embedded model and, for every
method that gives a probability per answer (holistic_score: P(Yes) of the whole answer; sentence_scores: the
lowest P(Yes) of its sentences), finds the threshold with the best balanced accuracy (BA) on dev, with
the area under the ROC curve and, per language, the BA at that threshold. Combinations of two scores of one
answer (their mean, their minimum) are evaluated the same way. Generative methods are listed with their BA.
The thresholds chosen here are then fixed and measured once on the test split (`ragfacts bench ... test.jsonl`).

    python benchmarks/calibrate_precision.py RUN [RUN ...] [--out benchmarks/results/calibration_dev.json]
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
from collections import defaultdict
from pathlib import Path
from typing import Any

from _provenance import files, provenance, sha256_of

ROOT = Path(__file__).resolve().parents[1]
POSITIVE = "consistent"


def load(runs: list[Path]) -> dict[str, dict[str, dict[str, Any]]]:
    """method -> item id -> {gold, lang, source, score, label}; later runs' lines replace earlier ones."""
    found: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for run in runs:
        path = run / "results.jsonl" if run.is_dir() else run
        for line in path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            item, result = entry["item"], entry["result"]
            gold = item.get("label")
            if gold not in ("consistent", "inconsistent") or not entry.get("complete"):
                continue
            found[entry["method"]][item["id"]] = {
                "gold": gold,
                "lang": (item.get("meta") or {}).get("lang") or result.get("lang"),
                "source": item["id"].split("-")[0],
                "score": answer_score(result),
                "label": result.get("label") or (result.get("judgement") or {}).get("verdict"),
            }
    return found


def datasets(runs: list[Path]) -> list[Path]:
    """The data file each run directory's manifest names; exits if one changed since the run read it."""
    found = []
    for run in runs:
        manifest = run / "manifest.json"
        if not manifest.is_file():  # a bare results.jsonl: its data is not known
            continue
        dataset = json.loads(manifest.read_text(encoding="utf-8"))["dataset"]
        path = Path(dataset["path"])
        if not path.is_file() or sha256_of(path) != dataset["sha256"]:
            raise SystemExit(f"{path} is not the data {run} was made from (SHA-256 {dataset['sha256'][:12]}…)")
        found.append(path)
    return found


def answer_score(result: dict[str, Any]) -> float | None:
    """P(supported) of the answer: the holistic probability, else the lowest sentence probability."""
    holistic = result.get("holistic") or {}
    if holistic.get("probability") is not None:
        return holistic["probability"]
    scores = [(s.get("score") or {}).get("probability") for s in result.get("segments") or []]
    scores = [p for p in scores if p is not None]
    return min(scores) if scores else None


def balanced_accuracy(pairs: list[tuple[bool, bool]]) -> float | None:
    """pairs of (gold consistent, predicted consistent)."""
    pos = [p for g, p in pairs if g]
    neg = [not p for g, p in pairs if not g]
    if not pos or not neg:
        return None
    return (sum(pos) / len(pos) + sum(neg) / len(neg)) / 2


def best_threshold(rows: list[dict[str, Any]]) -> tuple[float, float]:
    """The threshold (midpoint between adjacent scores) with the highest BA, and that BA."""
    values = sorted({r["score"] for r in rows})
    candidates = [0.0] + [(a + b) / 2 for a, b in itertools.pairwise(values)] + [1.0]
    best = (0.5, -1.0)
    for t in candidates:
        ba = balanced_accuracy([(r["gold"] == POSITIVE, r["score"] >= t) for r in rows]) or 0.0
        if ba > best[1] + 1e-12:
            best = (t, ba)
    return best


def auc(rows: list[dict[str, Any]]) -> float | None:
    pos = [r["score"] for r in rows if r["gold"] == POSITIVE]
    neg = [r["score"] for r in rows if r["gold"] != POSITIVE]
    if not pos or not neg:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def bootstrap(rows: list[dict[str, Any]], predict: Any, samples: int = 1000, seed: int = 0) -> list[float]:
    rng = random.Random(seed)
    values = []
    for _ in range(samples):
        drawn = [rows[rng.randrange(len(rows))] for _ in rows]
        ba = balanced_accuracy([(r["gold"] == POSITIVE, predict(r)) for r in drawn])
        if ba is not None:
            values.append(ba)
    values.sort()
    return [round(values[int(0.025 * len(values))], 3), round(values[int(0.975 * len(values)) - 1], 3)]


def by_group(rows: list[dict[str, Any]], predict: Any, key: str) -> dict[str, Any]:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[r[key]].append(r)
    return {
        name: {"n": len(g), "ba": _round(balanced_accuracy([(r["gold"] == POSITIVE, predict(r)) for r in g]))}
        for name, g in sorted(groups.items())
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def scored(name: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    threshold, ba = best_threshold(rows)

    def predict(r: dict[str, Any]) -> bool:
        return r["score"] >= threshold

    return {
        "method": name,
        "n": len(rows),
        "threshold": round(threshold, 4),
        "ba": round(ba, 3),
        "ba_95ci": bootstrap(rows, predict),
        "auc": _round(auc(rows)),
        "by_lang": by_group(rows, predict, "lang"),
        "by_source": by_group(rows, predict, "source"),
        "per_lang_thresholds": {
            lang: dict(zip(("threshold", "ba"), map(lambda v: round(v, 3), best_threshold(g)), strict=True))
            for lang, g in _groups(rows, "lang").items()
        },
    }


def _groups(rows: list[dict[str, Any]], key: str) -> dict[str, list[dict[str, Any]]]:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[r[key]].append(r)
    return groups


def labelled(name: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    def predict(r: dict[str, Any]) -> bool:
        return r["label"] == POSITIVE

    ba = balanced_accuracy([(r["gold"] == POSITIVE, predict(r)) for r in rows])
    return {
        "method": name,
        "n": len(rows),
        "ba": _round(ba),
        "ba_95ci": bootstrap(rows, predict),
        "by_lang": by_group(rows, predict, "lang"),
        "by_source": by_group(rows, predict, "source"),
    }


def combined(name: str, a: dict[str, dict[str, Any]], b: dict[str, dict[str, Any]], how: Any) -> dict[str, Any]:
    rows = [
        {**a[i], "score": how(a[i]["score"], b[i]["score"])}
        for i in a
        if i in b and a[i]["score"] is not None and b[i]["score"] is not None
    ]
    return scored(name, rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "calibration_dev.json")
    args = parser.parse_args()
    data = load(args.runs)
    results_files = [run / "results.jsonl" if run.is_dir() else run for run in args.runs]
    report: dict[str, Any] = {
        "provenance": provenance(data=files(*datasets(args.runs), *results_files)),
        "runs": [str(r) for r in args.runs],
        "scored": [],
        "labelled": [],
        "combined": [],
    }
    score_methods = []
    for method, items in sorted(data.items()):
        rows = list(items.values())
        if all(r["score"] is not None for r in rows) and "strategy=" in method:
            report["scored"].append(scored(method, rows))
            score_methods.append(method)
        else:
            report["labelled"].append(labelled(method, rows))
    for i, first in enumerate(score_methods):
        for second in score_methods[i + 1 :]:
            for how_name, how in (("mean", lambda x, y: (x + y) / 2), ("min", min)):
                entry = combined(f"{how_name}({first}, {second})", data[first], data[second], how)
                report["combined"].append(entry)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    for section in ("scored", "combined", "labelled"):
        for entry in report[section]:
            langs = ", ".join(f"{k} {v['ba']}" for k, v in entry["by_lang"].items())
            extra = f" t={entry['threshold']} auc={entry['auc']}" if "threshold" in entry else ""
            print(f"{entry['method']}: n={entry['n']} BA={entry['ba']} {entry['ba_95ci']}{extra} [{langs}]")


if __name__ == "__main__":
    main()
