"""Precision methods on a model: balanced accuracy, calls, tokens and model time per answer, on labelled sets.

Run: python benchmarks/precision_small_model.py [--model local] [--method SPEC ...] [--data FILE ...] [--limit N]

Defaults: the embedded model; `lface4rag:strategy=sentence_scores` and `holistic` (one structured judgement
of the whole answer); benchmarks/data/precision_probe.jsonl (20 items, 10 zh / 10 en, half flawed: the set
the sentence_scores threshold 0.75 was chosen on) and precision_heldout.jsonl (12 items written after the
threshold was fixed). Each data file runs through the runner into OUT/<name>/run (resumable; fresh cache
in OUT/cache). A failed or unscored answer counts as wrong: nothing is dropped.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from ragfacts.datasets.dataset import Dataset
from ragfacts.methods.base import create_method
from ragfacts.runs.evaluation import Evaluation, RunSettings
from ragfacts.runs.progress import LineProgress
from ragfacts.runtime import Runtime, Settings

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import elapsed, files, provenance

DATA = Path(__file__).parent / "data"
THRESHOLDS = (0.5, 0.6, 0.7, 0.75, 0.8, 0.85)
DEFAULT_METHODS = ("lface4rag:strategy=sentence_scores", "holistic")


def balanced_accuracy(rows: list[dict[str, Any]], predicted: str = "pred") -> float:
    positives = [r for r in rows if r["label"] == "consistent"]
    negatives = [r for r in rows if r["label"] != "consistent"]
    tpr = sum(r[predicted] == "consistent" for r in positives) / len(positives)
    tnr = sum(r[predicted] == "inconsistent" for r in negatives) / len(negatives)
    return round((tpr + tnr) / 2, 3)


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    summary: dict[str, Any] = {
        "items": n,
        "balanced_accuracy": balanced_accuracy(rows),
        "faithful_passed": sum(r["pred"] == "consistent" for r in rows if r["label"] == "consistent"),
        "flawed_caught": sum(r["pred"] == "inconsistent" for r in rows if r["label"] != "consistent"),
        "failures": sum(r["failures"] for r in rows),
        "calls_per_answer": round(sum(r["calls"] for r in rows) / n, 2),
        "prompt_tokens_per_answer": round(sum(r["prompt_tokens"] for r in rows) / n, 1),
        "completion_tokens_per_answer": round(sum(r["completion_tokens"] for r in rows) / n, 1),
        "model_s_per_answer": round(sum(r["model_s"] for r in rows) / n, 2),
    }
    if all(r.get("min_score") is not None for r in rows):
        # Post hoc, for the record: what other thresholds would have given on this set.
        summary["balanced_accuracy_by_threshold"] = {
            t: balanced_accuracy(
                [{**r, "at": "consistent" if r["min_score"] >= t else "inconsistent"} for r in rows], "at"
            )
            for t in THRESHOLDS
        }
    return summary


def row_of(item: Any, line: dict[str, Any]) -> dict[str, Any]:
    outcome, result = line["outcome"], line["result"]
    usage = outcome["usage"]
    scores = [s["score"]["probability"] for s in result.get("segments", []) if s.get("score")]
    return {
        "id": item.id,
        "label": item.label,
        "pred": outcome["label"],
        "calls": usage["calls"],
        "prompt_tokens": usage["prompt_tokens"],
        "completion_tokens": usage["completion_tokens"],
        "model_s": usage["model_s"],
        "failures": outcome["failures"],
        "min_score": min((s for s in scores if s is not None), default=None),
        "error_types": result.get("error_types", []),
    }


async def measure(
    model: str, base_url: str | None, methods: list[str], data: list[Path], limit: int | None, out: Path
) -> dict[str, Any]:
    runtime = Runtime(Settings(model=model, base_url=base_url, concurrency=1, cache_dir=out / "cache"))
    report: dict[str, Any] = {"model": str(runtime.spec), "results": {}}
    try:
        chat = runtime.model()
        for path in data:
            evaluation = Evaluation(
                Dataset.open(path),
                [create_method(m) for m in methods],
                RunSettings(limit=limit),
                output=out / path.stem / "run",
                in_flight=1,
            )
            result = await evaluation.run(chat, LineProgress(sys.stderr), model_spec=str(runtime.spec))
            judged = result.judged
            for method in evaluation.methods:
                rows = [row_of(item, lines[method.spec]) for item, lines in judged if method.spec in lines]
                if rows:
                    report["results"][f"{path.stem}/{method.spec}"] = {"summary": summarise(rows), "rows": rows}
    finally:
        await runtime.aclose()
    report["ledger"] = runtime.ledger.to_dict()
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="local")
    parser.add_argument("--base-url", default=None)
    parser.add_argument("--method", action="append", help="a method spec (repeatable)")
    parser.add_argument("--data", type=Path, action="append", help="a labelled JSONL file (repeatable)")
    parser.add_argument("--limit", type=int, default=None, help="judge at most N more items (a rerun goes on)")
    parser.add_argument("--out", type=Path, default=Path("precision_small_model_results"))
    parser.add_argument(
        "--results", type=Path, default=Path(__file__).parent / "results" / "precision_small_model.json"
    )
    args = parser.parse_args()
    data = args.data or [DATA / "precision_probe.jsonl", DATA / "precision_heldout.jsonl"]
    methods = args.method or list(DEFAULT_METHODS)
    made_from = provenance(data=files(*data))
    measured = asyncio.run(measure(args.model, args.base_url, methods, data, args.limit, args.out))
    report = {"provenance": {**made_from, "wall_s": elapsed()}, **measured}
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    for name, result in report["results"].items():
        print(name, json.dumps(result["summary"]))


if __name__ == "__main__":
    main()
