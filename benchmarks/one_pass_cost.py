"""What one scoring pass costs on the embedded model, against bare llama.cpp, and what reusing the KV prefix saves.

For answers of six sentences or more from the quality test split (the first six sentences scored), on the
embedded model with its shipped head, each figure timed in one process, alternating, from the same state:

- bare: llama-cpp-python evaluating the verdict prompt's tokens from an empty KV cache (`Llama.reset()`, then
  `Llama.eval`): the floor of any judge that reads this prompt once;
- verdict: ragfacts' default precision verdict of the row (`lface4rag`, `explain=none`), from an empty KV cache;
- sentences: the six sentences scored by the head (the reference as the shared prefix, each sentence as the answer),
  right after the verdict, with prefix reuse (the default) and without (`reuse_prefix=False`);
- facts: six facts (the answer's sentences) each scored against the answer, the answer as the shared prefix, with
  prefix reuse: what recall by scoring costs beside one verdict pass.

The ratios are against the row's own verdict pass, measured in the same repeat. Written to
benchmarks/results/one_pass_cost.json with its provenance (the command, the commit, the data's SHA-256, the machine).

    python benchmarks/one_pass_cost.py --rows 3 --repeats 2
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from ragfacts.items import Item
from ragfacts.methods.lface4rag import CheckOptions, check_item
from ragfacts.methods.precision.head import shipped_head
from ragfacts.methods.precision.scored import holistic_request
from ragfacts.models import LocalModelOptions, build_model, parse_spec
from ragfacts.text import detect_lang, split_sentences

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import files, provenance

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data" / "quality" / "test.jsonl"
OUT = ROOT / "benchmarks" / "results" / "one_pass_cost.json"
SENTENCES = 6


def rows(count: int) -> list[Item]:
    """English answers of at least six sentences, shortest reference first (a fair floor for the ratios)."""
    found = []
    for line in DATA.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if detect_lang(row["answer"]) == "en" and len(split_sentences(row["answer"])) >= SENTENCES:
            found.append(
                Item(id=row["id"], question=row.get("question"), reference=row["reference"], answer=row["answer"])
            )
    return sorted(found, key=lambda item: len(item.reference or ""))[:count]


async def timed(job: Any) -> float:
    started = time.perf_counter()
    await job
    return time.perf_counter() - started


async def score(model: Any, item: Item, lang: str) -> None:
    messages, labels, prompt_id = holistic_request(item, lang)
    completion = await model.score_labels(messages, labels, prompt_version=prompt_id, hidden_state=True)
    if not completion.ok:
        raise SystemExit(f"a scoring pass failed: {completion.failure}")


async def measure(item: Item, model: Any) -> dict[str, float]:
    llama = model._load()
    lang = "en"
    sentences = split_sentences(item.answer)[:SENTENCES]
    messages, _, _ = holistic_request(item, lang)
    tokens = llama.tokenize(model._chat_prompt(llama, messages).encode("utf-8"), add_bos=False, special=True)

    llama.reset()
    started = time.perf_counter()
    llama.eval(tokens)
    bare = time.perf_counter() - started

    llama.reset()
    verdict = await timed(check_item(model, item, CheckOptions(explain="none")))

    async def each(items: list[Item]) -> None:
        for one in items:
            await score(model, one, lang)

    as_answers = [item.model_copy(update={"answer": sentence}) for sentence in sentences]
    reused = await timed(each(as_answers))  # right after the verdict: the reference is in the KV cache
    model.reuse_prefix = False
    try:
        recomputed = await timed(each(as_answers))
    finally:
        model.reuse_prefix = True
    facts = [Item(question=item.question, reference=item.answer, answer=sentence) for sentence in sentences]
    llama.reset()
    recall = await timed(each(facts))
    return {
        "prompt_tokens": len(tokens),
        "bare_s": bare,
        "verdict_s": verdict,
        "sentences_reused_s": reused,
        "sentences_recomputed_s": recomputed,
        "facts_reused_s": recall,
    }


async def main_async(count: int, repeats: int) -> dict[str, Any]:
    model = build_model(parse_spec("local"), LocalModelOptions())
    if shipped_head(model.profile().sha256) is None:
        raise SystemExit("no head ships for the embedded model")
    await model.probe_label_scores()
    items = rows(count)
    await measure(items[0], model)  # warm-up: the model loaded, its pages read
    runs: dict[str, list[dict[str, float]]] = {item.id or "": [] for item in items}
    for _ in range(repeats):
        for item in items:
            runs[item.id or ""].append(await measure(item, model))
    await model.aclose()
    per_row = {}
    for key, measured in runs.items():
        median = {name: statistics.median(m[name] for m in measured) for name in measured[0]}
        per_row[key] = {
            "prompt_tokens": int(median["prompt_tokens"]),
            "seconds": {name: round(value, 3) for name, value in median.items() if name.endswith("_s")},
            "verdict_over_bare": round(median["verdict_s"] / median["bare_s"], 3),
            "sentences_over_verdict": round(median["sentences_reused_s"] / median["verdict_s"], 3),
            "sentences_without_reuse_over_verdict": round(median["sentences_recomputed_s"] / median["verdict_s"], 3),
            "facts_over_verdict": round(median["facts_reused_s"] / median["verdict_s"], 3),
        }
    ratios = (
        "verdict_over_bare",
        "sentences_over_verdict",
        "sentences_without_reuse_over_verdict",
        "facts_over_verdict",
    )
    return {
        "per_row": per_row,
        "median_over_rows": {name: round(statistics.median(r[name] for r in per_row.values()), 3) for name in ratios},
        "targets": {"verdict_over_bare": 1.1, "sentences_over_verdict": 1.5, "facts_over_verdict": 2.0},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    figures = {
        "provenance": provenance(
            f"python benchmarks/one_pass_cost.py --rows {args.rows} --repeats {args.repeats}", files(DATA)
        ),
        "model": "local (the embedded Qwen2.5-Coder-1.5B Q4_K_M, its shipped head)",
        "sentences_scored": SENTENCES,
        **asyncio.run(main_async(args.rows, args.repeats)),
    }
    OUT.write_text(json.dumps(figures, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(figures, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    main()
