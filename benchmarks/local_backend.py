"""Benchmark the local backend: load time, prompt and generation speed, latency, peak RSS, KV prefix reuse.

Run: python benchmarks/local_backend.py [--model local] [--items 6] [--out benchmarks/results/local_backend.json]

Uses the precision probe set (benchmarks/data/precision_probe.jsonl). The cache is bypassed so every
number is a real model call.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import sys
import time
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from ragfacts.methods.prompting import reask_wording
from ragfacts.models import Message, ModelOptions, build_model, parse_spec
from ragfacts.text import split_sentences

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import files, provenance

PROBE = Path(__file__).parent / "data" / "precision_probe.jsonl"


class Judgement(BaseModel):
    reasoning: str = Field(description="one or two sentences checking the answer against the reference")
    verdict: Literal["consistent", "inconsistent"] = Field(description="consistent only if fully supported")


def judgement_messages(item: dict) -> list[Message]:
    return [
        Message(
            role="user",
            content=f"Reference:\n{item['reference']}\n\nAnswer:\n{item['answer']}\n\n"
            "Is the answer fully supported by the reference?",
        )
    ]


def statement_messages(item: dict, statement: str) -> list[Message]:
    # The reference comes first, so consecutive statements of one answer share a long prefix.
    return [
        Message(
            role="user",
            content=f"Reference:\n{item['reference']}\n\nStatement:\n{statement}\n\n"
            "Is the statement supported by the reference? Reply Yes or No.",
        )
    ]


async def run(spec: str, n_items: int) -> dict:
    items = [json.loads(line) for line in PROBE.read_text(encoding="utf-8").splitlines()][:n_items]
    model = build_model(parse_spec(spec), ModelOptions(max_tokens=160))
    started = time.perf_counter()
    await model.complete([Message(role="user", content="Hi")], max_tokens=1)  # loads the weights
    load_s = time.perf_counter() - started

    generation = []
    for item in items:
        completion = await model.complete(judgement_messages(item), Judgement, reask=reask_wording("en"))
        generation.append(
            {
                "latency_s": completion.latency_s,
                "prompt_tokens": completion.usage.prompt_tokens,
                "completion_tokens": completion.usage.completion_tokens,
                "ok": completion.ok,
                "calls": completion.usage.calls,
            }
        )

    reuse = {}
    for label, enabled in (("without_reuse", False), ("with_reuse", True)):
        model.reuse_prefix = enabled
        model.evaluated_tokens = 0
        prompt_tokens, calls = 0, 0
        started = time.perf_counter()
        for item in items:
            for statement in split_sentences(item["answer"]):
                completion = await model.score_labels(statement_messages(item, statement), ["Yes", "No"])
                prompt_tokens += completion.usage.prompt_tokens
                calls += 1
        seconds = time.perf_counter() - started
        reuse[label] = {
            "calls": calls,
            "seconds": round(seconds, 2),
            "prompt_tokens": prompt_tokens,
            "evaluated_tokens": model.evaluated_tokens,
            "s_per_call": round(seconds / calls, 3),
        }
    await model.aclose()

    gen_time = sum(g["latency_s"] for g in generation)
    return {
        "model": spec,
        "items": len(items),
        "load_s": round(load_s, 2),
        "structured_judgement": {
            "calls": sum(g["calls"] for g in generation),
            "failures": sum(not g["ok"] for g in generation),
            "mean_latency_s": round(gen_time / len(generation), 2),
            "mean_prompt_tokens": round(sum(g["prompt_tokens"] for g in generation) / len(generation), 1),
            "mean_completion_tokens": round(sum(g["completion_tokens"] for g in generation) / len(generation), 1),
        },
        "prompt_tokens_per_s": round(reuse["without_reuse"]["evaluated_tokens"] / reuse["without_reuse"]["seconds"], 1),
        "label_scoring": reuse,
        "kv_reuse_speedup": round(reuse["without_reuse"]["seconds"] / reuse["with_reuse"]["seconds"], 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="local")
    parser.add_argument("--items", type=int, default=6)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "local_backend.json")
    args = parser.parse_args()
    measured = asyncio.run(run(args.model, args.items))
    result = {"provenance": provenance(data=files(PROBE)), **measured}  # after the run: its wall time
    # Generation speed: completion tokens over the time not spent on the prompt.
    judge = result["structured_judgement"]
    prompt_s = judge["mean_prompt_tokens"] / result["prompt_tokens_per_s"]
    result["generation_tokens_per_s"] = round(
        judge["mean_completion_tokens"] / max(judge["mean_latency_s"] - prompt_s, 1e-6), 1
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
