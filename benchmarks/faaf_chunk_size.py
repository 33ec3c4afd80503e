"""FaaF chunk size on a model: calls, tokens, model time and facts judged True per answer type.

Every chunk size verifies the same facts: those that benchmarks/recall_local.py generated, read from its
run directory. Size 0 = all facts of an answer in one call. The humans of the FaaF paper judged 100% /
30.24% / 8.53% of facts True for answer / ungrounded_answer / poor_answer: lower shares on the last two are
closer to them. Runs through the runner into OUT/run (resumable), without the response cache: chunk sizes that
give the same request (an answer with fewer facts than the chunk) must each pay for it.

    python benchmarks/faaf_chunk_size.py --facts-from recall_local_results/run --model local [--sizes 1,2,4,0]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from ragfacts.datasets.dataset import Dataset
from ragfacts.datasets.wikieval import ANSWER_TYPES
from ragfacts.methods.base import create_method
from ragfacts.methods.verdicts import Verification
from ragfacts.runs.evaluation import Evaluation
from ragfacts.runs.progress import LineProgress
from ragfacts.runs.rundir import RunDir
from ragfacts.runtime import Runtime, Settings

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import elapsed, files, provenance


def items_with_facts(recall_run: Path) -> list[dict[str, Any]]:
    """The answers of a recall run with the facts generated for them (from its FaaF lines)."""
    # Reads another run's results file (this script's input); the run it makes is an Evaluation.
    rows = []
    for line in RunDir(recall_run).lines():
        # recall_local.py's FaaF (pinned to the structured call since verify=auto became the head on local models)
        if line["method"] in ("faaf:verify=function", "faaf") and line["result"]["facts"]:
            rows.append({**line["item"], "facts": line["result"]["facts"]})
    return rows


async def measure(facts_from: Path, out: Path, model: str | None, base_url: str | None, sizes: list[int], mode: str):
    settings = Settings(model=model, base_url=base_url, concurrency=1, use_cache=False)
    runtime = Runtime(settings)
    dataset = Dataset.from_rows(items_with_facts(facts_from))
    # verify=function: chunks are of FaaF's structured call (on a model a head ships for, faaf would score facts)
    specs = {size: f"faaf:mode={mode},chunk_size={size},verify=function" for size in sizes}
    evaluation = Evaluation(dataset, [create_method(s) for s in specs.values()], output=out / "run")
    try:
        chat = runtime.model()
        result = await evaluation.run(chat, LineProgress(sys.stderr), model_spec=str(runtime.spec))
        lines = [lines for _, lines in result.judged]
    finally:
        await runtime.aclose()
    report: dict[str, Any] = {"model": str(runtime.spec), "mode": mode, "answers": dataset.count, "sizes": {}}
    for size, spec in specs.items():
        method = create_method(spec).spec
        by_type = {t: {"facts": 0, "true": 0, "failed": 0} for t in ANSWER_TYPES}
        calls = prompt_tokens = completion_tokens = 0
        model_s = 0.0
        for by_method in lines:
            verification = Verification.model_validate(by_method[method]["result"]["verification"])
            counts = by_type[by_method[method]["item"]["answer_type"]]
            counts["facts"] += verification.n_facts
            counts["true"] += verification.n_true
            counts["failed"] += verification.n_failed
            usage = verification.usage
            calls, model_s = calls + usage.calls, model_s + usage.model_s
            prompt_tokens += usage.prompt_tokens
            completion_tokens += usage.completion_tokens
        report["sizes"][str(size or "all")] = {
            "calls": calls,
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "model_s": round(model_s, 1),
            "judged_true": {t: round(c["true"] / c["facts"], 3) if c["facts"] else None for t, c in by_type.items()},
            "failed_facts": {t: c["failed"] for t, c in by_type.items()},
        }
        print(size or "all", json.dumps(report["sizes"][str(size or "all")]), flush=True)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts-from", type=Path, required=True, help="the run directory of recall_local.py")
    parser.add_argument("--model", default="local")
    parser.add_argument("--base-url", default=None)
    parser.add_argument("--sizes", default="1,2,4,0")
    parser.add_argument("--mode", default="tfn", choices=["tf", "tfn"])
    parser.add_argument("--out", type=Path, default=Path("faaf_chunk_size_results"))
    parser.add_argument("--results", type=Path, default=Path(__file__).parent / "results" / "faaf_chunk_size.json")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    made_from = provenance(data=files(args.facts_from / "results.jsonl"))
    report = asyncio.run(measure(args.facts_from, args.out, args.model, args.base_url, sizes, args.mode))
    report = {"provenance": {**made_from, "wall_s": elapsed()}, **report}
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
