"""Precision strategies on a small model: balanced accuracy, calls, tokens and model time per answer.

Run: python benchmarks/precision_small_model.py [--model local] [--strategies sentence_scores,holistic]
     [--data probe,heldout] [--limit N]

Data: benchmarks/data/precision_probe.jsonl (20 items, 10 zh / 10 en, half flawed: the set the
sentence_scores threshold 0.75 was chosen on) and precision_heldout.jsonl (12 items written after the
threshold was fixed, with subtler errors). "holistic" is one structured whole-answer judgement with
reasoning (the library's holistic prompt); "paper" is L-Face4RAG as published (slow on 2 cores:
~7 calls per answer). A failed or unscored answer counts as wrong: nothing is dropped.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path

from ragfacts.methods.lface4rag import AnswerLabel, CheckOptions, check_answer
from ragfacts.methods.precision.prompting import ask
from ragfacts.methods.precision.schemas import HolisticJudgement
from ragfacts.models import ModelOptions, UsageLedger, build_model, parse_spec
from ragfacts.text import detect_lang

DATA = Path(__file__).parent / "data"
THRESHOLDS = (0.5, 0.6, 0.7, 0.75, 0.8, 0.85)


async def judge(model, item: dict, strategy: str) -> dict:
    """Return the predicted label, the sentence scores (if any) and the cost of one item."""
    lang = detect_lang(item["answer"])
    if strategy == "holistic":
        completion = await ask(
            model,
            "holistic",
            HolisticJudgement,
            lang,
            question=item["question"],
            reference=item["reference"],
            answer=item["answer"],
        )
        label = completion.parsed.verdict if completion.ok else AnswerLabel.UNSCORED.value
        return {
            "pred": label,
            "calls": completion.usage.calls,
            "prompt_tokens": completion.usage.prompt_tokens,
            "completion_tokens": completion.usage.completion_tokens,
            "model_s": completion.usage.model_s,
            "failures": int(not completion.ok),
        }
    result = await check_answer(
        model, item["reference"], item["answer"], item["question"], CheckOptions(strategy=strategy)
    )
    scores = [s.score.probability for s in result.segments if s.score is not None]
    return {
        "pred": result.label.value,
        "calls": result.usage.calls,
        "prompt_tokens": result.usage.prompt_tokens,
        "completion_tokens": result.usage.completion_tokens,
        "model_s": result.usage.model_s,
        "failures": result.failure_count,
        "min_score": min(scores, default=None),
        "error_types": [t.value for t in result.error_types],
    }


def balanced_accuracy(rows: list[dict], predict) -> float:
    positives = [r for r in rows if r["label"] == "consistent"]
    negatives = [r for r in rows if r["label"] != "consistent"]
    tpr = sum(predict(r) == "consistent" for r in positives) / len(positives)
    tnr = sum(predict(r) == "inconsistent" for r in negatives) / len(negatives)
    return round((tpr + tnr) / 2, 3)


def summarise(rows: list[dict]) -> dict:
    n = len(rows)
    summary = {
        "items": n,
        "balanced_accuracy": balanced_accuracy(rows, lambda r: r["pred"]),
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
            t: balanced_accuracy(rows, lambda r, t=t: "consistent" if r["min_score"] >= t else "inconsistent")
            for t in THRESHOLDS
        }
    return summary


async def run(spec: str, strategies: list[str], datasets: list[str], limit: int | None) -> dict:
    ledger = UsageLedger()
    model = build_model(parse_spec(spec), ModelOptions(max_tokens=512), ledger=ledger)
    report: dict = {"model": spec, "results": {}}
    for dataset in datasets:
        items = [json.loads(line) for line in (DATA / f"precision_{dataset}.jsonl").read_text("utf-8").splitlines()]
        for strategy in strategies:
            rows = []
            started = time.perf_counter()
            for item in items[:limit]:
                rows.append({"id": item["id"], "label": item["label"], **await judge(model, item, strategy)})
                print(json.dumps({"dataset": dataset, "strategy": strategy, **rows[-1]}), flush=True)
            report["results"][f"{dataset}/{strategy}"] = {
                "summary": {**summarise(rows), "wall_s": round(time.perf_counter() - started, 1)},
                "rows": rows,
            }
    await model.aclose()
    report["ledger"] = ledger.to_dict()
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="local")
    parser.add_argument("--strategies", default="sentence_scores,holistic")
    parser.add_argument("--data", default="probe,heldout")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "precision_small_model.json")
    args = parser.parse_args()
    report = asyncio.run(run(args.model, args.strategies.split(","), args.data.split(","), args.limit))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    for name, result in report["results"].items():
        print(name, json.dumps(result["summary"]))


if __name__ == "__main__":
    main()
