"""Recall by scoring, calibrated on public labelled data: the shipped head asked whether a summary states an insight.

Data: Summary of a Haystack (salesforce/summary-of-a-haystack @ 43531729bc39, `data/eval_benchmark_data.json`,
Apache-2.0): 200 summaries by 9 LLMs, each insight of their subtopic labelled by people as fully, partially or not
covered (1,419 labels). Split by subtopic (the insights of a subtopic are shared by its summaries): about half the
subtopics are dev, where the threshold is chosen, the rest test, where it is reported.

Per (summary, insight): the product's recall prompt (`holistic_request` with the summary as the reference and the
insight as the answer, the summary first so the insights of one summary share its KV prefix), the shipped head's
P(the summary states the insight), and the evidence check (a number or name of the insight the summary lacks).
The model's states are stored as they are made (benchmarks/features/<model>/haystack-*.npz): a rerun resumes, and
`--fit-only` re-reads them with whatever head ships (benchmarks/features/recall_haystack.jsonl, the readings).

    python benchmarks/recall_calibration.py --data /path/to/eval_benchmark_data.json            # extract, then fit
    python benchmarks/recall_calibration.py --data ... --fit-only                                # from the readings
    python benchmarks/recall_calibration.py --data ... --fit-only --fit-weights [--write]        # recall's own weights

Writes benchmarks/results/recall_calibration.json (and, with --write, the recall thresholds beside the head).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from ragfacts.evidence import feature_vector, find_unsupported
from ragfacts.items import Item
from ragfacts.methods.precision.calibration import fit_logistic
from ragfacts.methods.precision.head import Head, encode_weights, shipped_head
from ragfacts.methods.precision.scored import holistic_request
from ragfacts.methods.precision.training import auc
from ragfacts.models import LocalModelOptions, build_model, parse_spec
from ragfacts.models.local.embedded import DEFAULT_MODEL
from ragfacts.runs.summary import bootstrap_mean

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import commit_at_start, machine
from judge_features import CHUNK, load_store, row_key, save_chunk, store_dir

ROOT = Path(__file__).resolve().parents[1]
SHA256 = "1e19bbbcd5854cd5ac935887b975b471c593ecd4d0ef2d3dc638e193b51a0a81"
SOURCE = "salesforce/summary-of-a-haystack@43531729bc39:data/eval_benchmark_data.json (Apache-2.0)"
READINGS = ROOT / "benchmarks" / "features" / "recall_haystack.jsonl"
OUT = ROOT / "benchmarks" / "results" / "recall_calibration.json"
LABELS = {"fully_covered": 1, "partially_covered": None, "not_covered": 0}  # partial: reported, not fitted


def pairs(data: Path) -> list[dict[str, Any]]:
    raw = data.read_bytes()
    if hashlib.sha256(raw).hexdigest() != SHA256:
        raise SystemExit(f"{data}: not the pinned file ({SOURCE}, SHA-256 {SHA256[:12]}…)")
    found = []
    for number, entry in enumerate(json.loads(raw)):
        insights = {i["insight_id"]: i["insight"] for i in entry["reference_insights"]}
        split = "dev" if int(hashlib.sha256(entry["subtopic_id"].encode()).hexdigest(), 16) % 2 == 0 else "test"
        for label in entry["annotation"]:
            found.append(
                {
                    "id": f"{number}:{label['insight_id']}",
                    "subtopic": entry["subtopic_id"],
                    "split": split,
                    "coverage": label["coverage"],
                    "summary": "\n".join(entry["summary"]),
                    "insight": insights[label["insight_id"]],
                }
            )
    return found


async def extract(rows: list[dict[str, Any]]) -> None:
    """The model's state and Yes-No log-probabilities at the verdict position of every pair, stored in chunks of
    float16 states beside the precision pairs' (benchmarks/features/<model>/haystack-*.npz): any head can be
    refitted or re-read from them, and a killed run loses at most one chunk."""
    sha = DEFAULT_MODEL.sha256
    directory = store_dir(sha)
    done = {row["id"] for row in load_store(directory).values()}
    todo = [row for row in rows if row["id"] not in done]
    if not todo:
        return
    model = build_model(parse_spec("local"), LocalModelOptions(max_retries=0))
    chunk: list[dict[str, Any]] = []
    try:
        for count, row in enumerate(todo, start=1):
            item = Item(reference=row["summary"], answer=row["insight"])
            messages, (yes, no), prompt_id = holistic_request(item, "en")
            completion = await model.score_labels(messages, [yes, no], prompt_version=prompt_id, hidden_state=True)
            if not completion.ok:
                print(f"{row['id']}: {completion.failure}", file=sys.stderr)
                continue
            scores = completion.parsed
            chunk.append(
                {
                    "key": row_key(sha, prompt_id, messages[0].content),
                    "id": row["id"],
                    "state": scores.state_vector(),
                    "lp_yes": scores.logprobs[yes] if scores.logprobs[yes] is not None else -30.0,
                    "lp_no": scores.logprobs[no] if scores.logprobs[no] is not None else -30.0,
                    "p_yes": scores.probabilities[yes],
                    "tokens": completion.usage.prompt_tokens,
                    "seconds": completion.usage.model_s,
                }
            )
            if len(chunk) >= CHUNK or count == len(todo):
                save_chunk(directory, "haystack", chunk)
                chunk = []
                print(f"{count}/{len(todo)}", file=sys.stderr, flush=True)
    finally:
        await model.aclose()


def read(rows: list[dict[str, Any]], head: Head) -> list[dict[str, Any]]:
    """One reading per extracted pair: the head's P(the summary states the insight) from the stored state, and
    the insight's numbers or names the summary lacks. Written to benchmarks/features/recall_haystack.jsonl."""
    stored = {row["id"]: row for row in load_store(store_dir(DEFAULT_MODEL.sha256)).values()}
    readings = []
    for row in rows:
        found = stored.get(row["id"])
        if found is None:
            continue
        odds = found["lp_yes"] - found["lp_no"]
        probability = head.recall_probability(found["state"], odds, row["insight"], row["summary"], "en")
        missing = [m.text for m in find_unsupported(row["insight"], row["summary"], "en")]
        reading = {k: row[k] for k in ("id", "subtopic", "split", "coverage")}
        reading.update({"p": round(probability, 5), "log_odds": round(odds, 4), "missing": missing})
        readings.append(reading)
    READINGS.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in readings), encoding="utf-8")
    return readings


PENALTIES = (3000.0, 1000.0, 300.0, 100.0, 30.0)


def fit_recall_weights(
    rows: list[dict[str, Any]], head: Head, readings: list[dict[str, Any]] | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Recall weights of their own, fitted on the dev pairs (fully vs not covered), chosen by out-of-fold dev AUC
    (5 folds grouped by subtopic) between a recalibration of the precision head's logit (3 + 16 numbers) and a head
    over the state (1,536 + 17); returned folded into the head file's weight format, with the choice's figures.

    With `readings` (made by `head`: its P and the log-odds of each pair), no state is read: the recalibration of
    the head's logit is fitted on them alone."""
    if readings is not None:
        by_id = {r["id"]: r for r in readings}
        kept = [r for r in rows if r["split"] == "dev" and LABELS[r["coverage"]] is not None and r["id"] in by_id]
        chance = np.clip([by_id[r["id"]]["p"] for r in kept], 1e-6, 1 - 1e-6)
        precision_logit = np.log(chance / (1 - chance))
        odds = np.asarray([by_id[r["id"]]["log_odds"] for r in kept])
        state = np.zeros((len(kept), 0))
    else:
        stored = {row["id"]: row for row in load_store(store_dir(DEFAULT_MODEL.sha256)).values()}
        kept = [r for r in rows if r["split"] == "dev" and LABELS[r["coverage"]] is not None and r["id"] in stored]
        state = np.asarray([stored[r["id"]]["state"] for r in kept], dtype=np.float64)
        odds = np.asarray([stored[r["id"]]["lp_yes"] - stored[r["id"]]["lp_no"] for r in kept])
    evidence = np.asarray([feature_vector(r["insight"], r["summary"], "en") for r in kept], dtype=np.float64)
    if readings is None:
        precision_logit = np.asarray([head.logit(s, o, e) for s, o, e in zip(state, odds, evidence, strict=True)])
    gold = np.asarray([LABELS[r["coverage"]] for r in kept], dtype=float)
    groups = sorted({r["subtopic"] for r in kept})
    order = np.random.default_rng(20240825).permutation(len(groups))
    fold_of = {groups[g]: n % 5 for n, g in enumerate(order)}
    fold = np.array([fold_of[r["subtopic"]] for r in kept])

    def design(kind: str, mask: np.ndarray, mean: np.ndarray, scale: np.ndarray) -> np.ndarray:
        parts = [precision_logit[mask, None]] if kind == "recalibrated" else [(state[mask] - mean) / scale]
        return np.hstack([*parts, odds[mask, None] / 10.0, evidence[mask]])

    def penalty(kind: str, strength: float) -> np.ndarray:
        size = 1 if kind == "recalibrated" else state.shape[1]
        first = np.full(size, 0.0 if kind == "recalibrated" else strength / size)
        return np.concatenate([first, np.zeros(1), np.full(evidence.shape[1], 1e-3)])

    def fitted(kind: str, strength: float, train: np.ndarray) -> tuple[np.ndarray, float, np.ndarray, np.ndarray]:
        mean, scale = state[train].mean(axis=0), state[train].std(axis=0) + 1e-3
        weights, bias = fit_logistic(design(kind, train, mean, scale), gold[train], penalty(kind, strength))
        return weights, bias, mean, scale

    trials: dict[tuple[str, float], np.ndarray] = {}
    kinds = (("recalibrated", (0.0,)),) if readings is not None else (("recalibrated", (0.0,)), ("state", PENALTIES))
    for kind, strengths in kinds:
        for strength in strengths:
            out = np.zeros(len(kept))
            for k in range(5):
                weights, bias, mean, scale = fitted(kind, strength, fold != k)
                out[fold == k] = 1 / (1 + np.exp(-(design(kind, fold == k, mean, scale) @ weights + bias)))
            trials[(kind, strength)] = out
    aucs = {key: auc(gold.astype(int), scores) for key, scores in trials.items()}
    aucs[("the precision head's probability", 0.0)] = auc(gold.astype(int), precision_logit)
    kind, strength = max(trials, key=aucs.__getitem__)
    weights, bias, mean, scale = fitted(kind, strength, np.ones(len(kept), dtype=bool))
    n_first = 1 if kind == "recalibrated" else state.shape[1]
    first, baseline, on_evidence = weights[:n_first], weights[n_first] / 10.0, weights[n_first + 1 :]
    recalibration: dict[str, Any] = {}
    if kind == "recalibrated":  # a * (state . Ws + b * odds + e . We + c) + baseline * odds + e . v + bias
        a = float(first[0])
        recalibration = {"a": a, "odds": float(baseline), "evidence": [float(v) for v in on_evidence], "bias": bias}
        state_w = a * head.state_weights
        baseline, on_evidence, bias = (
            a * head.baseline_weight + baseline,
            a * head.evidence_weights + on_evidence,
            a * head.bias + bias,
        )
    else:
        state_w = first / scale
        bias = bias - float(state_w @ mean)
    folded = {
        "state_f32_base64": encode_weights(state_w),
        "baseline": float(baseline),
        "evidence": [float(v) for v in on_evidence],
        "bias": float(bias),
    }
    report = {
        "chosen": f"{kind} (L2 {strength})" if kind == "state" else kind,
        "dev_auc_out_of_fold": {f"{k} (L2 {v})" if k == "state" else k: round(x, 4) for (k, v), x in aucs.items()},
        "recalibration": recalibration,
        "fitted_on": "the readings of the head (its P and log-odds)" if readings is not None else "the stored states",
        "dev_pairs": len(kept),
        "out_of_fold_scores": trials[(kind, strength)],
        "ids": [r["id"] for r in kept],
    }
    return folded, report


def rescored(readings: list[dict[str, Any]], recalibration: dict[str, Any], rows: list[dict[str, Any]]) -> list[dict]:
    """The readings with P recomputed by a recalibration of the reading head's logit (what `fit_recall_weights`
    fits from readings): sigmoid(a * logit(p) + odds * log-odds + evidence . v + bias)."""
    by_id = {row["id"]: row for row in rows}
    out = []
    for reading in readings:
        row = by_id[reading["id"]]
        chance = min(max(reading["p"], 1e-6), 1 - 1e-6)
        evidence = np.asarray(feature_vector(row["insight"], row["summary"], "en"), dtype=np.float64)
        value = recalibration["a"] * float(np.log(chance / (1 - chance))) + recalibration["odds"] * reading["log_odds"]
        value += float(evidence @ np.asarray(recalibration["evidence"])) + recalibration["bias"]
        out.append({**reading, "p": round(1 / (1 + float(np.exp(-value))), 5)})
    return out


def balanced(predicted: np.ndarray, gold: np.ndarray) -> float:
    return float((predicted[gold == 1].mean() + (1 - predicted[gold == 0]).mean()) / 2)


def fit(readings: list[dict[str, Any]], head_threshold: float) -> dict[str, Any]:
    by_split: dict[str, Any] = {}
    for split in ("dev", "test"):
        kept = [r for r in readings if r["split"] == split and LABELS[r["coverage"]] is not None]
        by_split[split] = (
            np.array([r["p"] for r in kept]),
            np.array([LABELS[r["coverage"]] for r in kept]),
            np.array([bool(r["missing"]) for r in kept]),
        )
    p, gold, missing = by_split["dev"]
    candidates = sorted(set(np.round(p, 3)))
    best = max(candidates, key=lambda t: balanced((p >= t) & ~missing, gold))
    report: dict[str, Any] = {"threshold": float(best), "head_threshold": head_threshold}
    for split, (p, gold, missing) in by_split.items():
        for name, threshold in (("chosen", best), ("head", head_threshold)):
            predicted = ((p >= threshold) & ~missing).astype(float)
            correct = np.where(gold == 1, predicted, 1 - predicted)
            positives = bootstrap_mean(list(correct[gold == 1]))
            negatives = bootstrap_mean(list(correct[gold == 0]))
            report[f"{split}_{name}"] = {
                "pairs": len(gold),
                "balanced_accuracy": round(balanced(predicted, gold), 4),
                "covered_judged_present": positives.value,
                "not_covered_judged_present": 1 - (negatives.value or 0),
                "balanced_accuracy_interval": _interval(correct, gold),
            }
    partial = [r for r in readings if r["coverage"] == "partially_covered"]
    report["partially_covered_judged_present"] = round(
        float(np.mean([(r["p"] >= best) and not r["missing"] for r in partial])), 4
    )
    return report


def _interval(correct: np.ndarray, gold: np.ndarray, resamples: int = 2000) -> list[float]:
    """Bootstrap 95% interval of the balanced accuracy, resampling pairs within each class."""
    rng = np.random.default_rng(20240825)
    pos, neg = correct[gold == 1], correct[gold == 0]
    draws = [(rng.choice(pos, len(pos)).mean() + rng.choice(neg, len(neg)).mean()) / 2 for _ in range(resamples)]
    return [round(float(np.percentile(draws, 2.5)), 4), round(float(np.percentile(draws, 97.5)), 4)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help=f"the pinned file: {SOURCE}")
    parser.add_argument("--fit-only", action="store_true")
    parser.add_argument("--write", action="store_true", help="write the chosen threshold into the shipped head")
    parser.add_argument(
        "--from-readings",
        action="store_true",
        help="with --fit-weights: fit on benchmarks/features/recall_haystack.jsonl as committed, no state read",
    )
    parser.add_argument(
        "--fit-weights",
        action="store_true",
        help="fit recall weights of their own on the dev pairs (else: the weights the head's recall reads now)",
    )
    args = parser.parse_args()
    rows = pairs(args.data)
    if not args.fit_only:
        asyncio.run(extract(rows))
    head = shipped_head(build_model(parse_spec("local"), LocalModelOptions()).profile().sha256)
    assert head is not None
    weights, chosen = None, {}
    if args.fit_weights and args.from_readings:
        made = [json.loads(line) for line in READINGS.read_text(encoding="utf-8").splitlines() if line]
        weights, chosen = fit_recall_weights(rows, head, made)
        head.recall = {**head.recall, "weights": weights}
        readings = rescored(made, chosen["recalibration"], rows)
    else:
        if args.fit_weights:
            weights, chosen = fit_recall_weights(rows, head)
            head.recall = {**head.recall, "weights": weights}
        readings = read(rows, head)
    if chosen:  # the threshold is chosen on dev's out-of-fold scores, not on the pairs the weights were fitted on
        out_of_fold = dict(zip(chosen.pop("ids"), chosen.pop("out_of_fold_scores"), strict=True))
        for reading in readings:
            if reading["id"] in out_of_fold:
                reading["p"] = round(float(out_of_fold[reading["id"]]), 5)
    figures = {
        "command": f"python benchmarks/recall_calibration.py --data {args.data.name}"
        + "".join(
            f" --{flag.replace('_', '-')}"
            for flag in ("fit_only", "fit_weights", "from_readings")
            if getattr(args, flag)
        ),
        "commit": commit_at_start(),
        "data": {"source": SOURCE, "sha256": SHA256, "pairs": len(rows), "split": "by subtopic_id, SHA-256 parity"},
        "machine": machine(),
        "model": "local (the embedded Qwen2.5-Coder-1.5B Q4_K_M, its shipped head)",
        "extracted": f"{len(readings)} of {len(rows)}",
        "weights": chosen or "the head's recall weights as shipped (or its precision weights where it has none)",
        **fit(readings, head.answer_threshold("en")),
    }
    OUT.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(figures, indent=2))
    if args.write:
        write_recall(figures, weights)


def write_recall(figures: dict[str, Any], weights: dict[str, Any] | None) -> None:
    """The threshold chosen on dev, with its provenance and test figures, into the shipped head's "recall" section
    (which its precision digest leaves out: no precision verdict changes)."""
    path = ROOT / "src" / "ragfacts" / "heads" / "qwen2.5-coder-1.5b-instruct-q4_k_m.json"
    head = Head.load(path)
    if weights is None and "weights" in head.recall:
        weights = head.recall["weights"]  # what the readings were read by
    head.recall = {
        **({"weights": weights} if weights else {}),
        "thresholds": {"default": figures["threshold"]},
        "chosen_on": f"{SOURCE}, dev split ({figures['dev_chosen']['pairs']} fully/not covered pairs)",
        "test": {k: figures["test_chosen"][k] for k in ("pairs", "balanced_accuracy", "balanced_accuracy_interval")},
        "measured_by": figures["command"],
    }
    head.save(path)


if __name__ == "__main__":
    main()
