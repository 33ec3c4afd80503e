"""FaaF chunk size on a model: calls, tokens, model time and facts judged True per answer type.

Run: python benchmarks/faaf_chunk_size.py --facts FACTS.jsonl [--model local] [--sizes 1,2,4,0] [--mode tfn]

FACTS.jsonl has one WikiEval row per line with its generated `facts` (the checkpoint that
benchmarks/recall_local.py writes), so every chunk size verifies the same facts. Size 0 = all facts in
one call. The humans of the FaaF paper judged 100% / 30.24% / 8.53% of facts True for
answer / ungrounded_answer / poor_answer: a lower share on the last two is closer to them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

from ragfacts.datasets.wikieval import ANSWER_TYPES, load_wikieval_jsonl
from ragfacts.methods.faaf import verify_facts
from ragfacts.models import ModelOptions, UsageLedger, build_model, parse_spec

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "wikieval_sample10.jsonl"


async def run(spec: str, facts_file: Path, data: Path, sizes: list[int], mode: str) -> dict:
    facts = {row["id"]: row["facts"] for row in map(json.loads, facts_file.read_text("utf-8").splitlines())}
    items = [item for item in load_wikieval_jsonl(data) if item.id in facts]
    model = build_model(parse_spec(spec), ModelOptions(), ledger=UsageLedger())
    report: dict = {
        "model": spec,
        "mode": mode,
        "rows": len(items),
        "facts": sum(map(len, facts.values())),
        "sizes": {},
    }
    for size in sizes:
        by_type = {t: {"facts": 0, "true": 0, "failed": 0} for t in ANSWER_TYPES}
        calls = prompt_tokens = completion_tokens = 0
        model_s = 0.0
        for item in items:
            for answer_type in ANSWER_TYPES:
                verification = await verify_facts(
                    model, facts[item.id], item.answers[answer_type], mode, False, size or None, "en"
                )
                counts = by_type[answer_type]
                counts["facts"] += verification.n_facts
                counts["true"] += verification.n_true
                counts["failed"] += verification.n_failed
                for record in verification.completions:
                    calls += record["usage"]["calls"]
                    prompt_tokens += record["usage"]["prompt_tokens"]
                    completion_tokens += record["usage"]["completion_tokens"]
                    model_s += record["usage"].get("model_s", 0.0)
        report["sizes"][str(size or "all")] = {
            "calls": calls,
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "model_s": round(model_s, 1),
            "judged_true": {t: round(c["true"] / c["facts"], 3) for t, c in by_type.items()},
            "failed_facts": {t: c["failed"] for t, c in by_type.items()},
        }
        print(size or "all", json.dumps(report["sizes"][str(size or "all")]), flush=True)
    await model.aclose()
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=Path, required=True)
    parser.add_argument("--data", type=Path, default=SHARED)
    parser.add_argument("--model", default="local")
    parser.add_argument("--sizes", default="1,2,4,0")
    parser.add_argument("--mode", default="tfn", choices=["tf", "tfn"])
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "faaf_chunk_size.json")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    report = asyncio.run(run(args.model, args.facts, args.data, sizes, args.mode))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
