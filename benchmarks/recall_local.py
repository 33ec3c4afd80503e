"""Cost and behaviour of the four FaaF variants against the Prompt(T/F) baseline on WikiEval rows.

Every method checks the facts generated from each row's ground truth (`answer`) against its three answer
types (answer, ungrounded_answer, poor_answer), through the runner: one run directory, resumable. The
response cache lives in the output directory, so the facts of a row are generated once and shared by the
methods, a rerun resumes, and a fresh directory measures cost from scratch (cached replies cost nothing).
Reported per method and answer type: verification calls, prompt/completion tokens, model time, the share of
facts judged True, N/A and failures (the paper's Table 3 and Figure 3, without human labels).

    python benchmarks/recall_local.py --data ../shared/data/wikieval_sample10.jsonl --model local

`-M KEY=VALUE` passes a model option, as `ragfacts -M` does: `-M schema_in_prompt=false --methods faaf` measures
what a grammar alone does when the model is not shown the schema (its OUT/recall_local.json is kept as
benchmarks/results/recall_schema_hidden.json).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from ragfacts.bench.recall_metrics import RecallMetrics, metrics_table, recall_metrics
from ragfacts.datasets.dataset import Dataset
from ragfacts.datasets.wikieval import ANSWER_TYPES
from ragfacts.methods.base import create_method
from ragfacts.methods.prompt_tf import read_verdict
from ragfacts.methods.verdicts import Verification
from ragfacts.runs.evaluation import Evaluation, RunSettings
from ragfacts.runs.progress import LineProgress
from ragfacts.runtime import Runtime, Settings, parse_model_options

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import elapsed, files, provenance

METHODS = ["prompt-tf", "faaf:mode=tf", "faaf", "faaf:citations=true,mode=tf", "faaf:citations=true"]
NAMES = {
    "prompt-tf": "prompt-tf",
    "faaf:mode=tf": "faaf-tf",
    "faaf": "faaf-tfn",
    "faaf:citations=true,mode=tf": "faaf-tf+citation",
    "faaf:citations=true": "faaf-tfn+citation",
    "fact-scores": "fact-scores",
}


def main() -> None:
    args = _arguments()
    made_from = provenance(data=files(args.data))
    report = asyncio.run(
        measure(
            args.data,
            args.out,
            args.model,
            args.base_url,
            args.concurrency,
            args.limit,
            args.methods,
            parse_model_options(args.model_option),
        )
    )
    report = {"provenance": {**made_from, "wall_s": elapsed()}, **report}
    (args.out / "recall_local.json").write_text(json.dumps(report, ensure_ascii=False, indent=2) + "\n", "utf-8")
    (args.out / "recall_local.md").write_text(markdown(report), encoding="utf-8")
    print(markdown(report))
    print(f"written: {args.out / 'recall_local.json'}, {args.out / 'recall_local.md'}", file=sys.stderr)


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="WikiEval JSONL (e.g. wikieval_sample10.jsonl)")
    parser.add_argument("--model", default=None, help="openai:MODEL | local | local:/path.gguf")
    parser.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint")
    parser.add_argument("--out", type=Path, default=Path("recall_local_results"), help="output directory")
    parser.add_argument("--limit", type=int, default=None, help="judge at most N more answers (a rerun goes on)")
    parser.add_argument("--concurrency", type=int, default=4, help="requests in flight (local models run one)")
    parser.add_argument("--methods", nargs="+", default=METHODS, choices=list(NAMES), help="the methods to compare")
    parser.add_argument(
        "-M", "--model-option", action="append", default=[], metavar="KEY=VALUE", help="a model option, as ragfacts -M"
    )
    return parser.parse_args()


async def measure(
    data: Path,
    out: Path,
    model: str | None,
    base_url: str | None,
    concurrency: int,
    limit: int | None,
    methods: list[str] = METHODS,
    options: dict[str, object] | None = None,
) -> dict[str, Any]:
    """Run every method on every answer into OUT/run, then tabulate; a rerun resumes."""
    settings = Settings(
        model=model, base_url=base_url, concurrency=concurrency, cache_dir=out / "cache", options=options or {}
    )
    runtime = Runtime(settings)
    # FaaF's variants as the paper has them, facts verified by its structured call: on a model a head ships for,
    # `faaf` would score the facts with the head instead (verify=auto), which benchmarks/recall_head.py measures
    created = [create_method(m, **({"verify": "function"} if m.startswith("faaf") else {})) for m in methods]
    evaluation = Evaluation(
        Dataset.open(data),
        created,
        RunSettings(limit=limit),
        output=out / "run",
        in_flight=concurrency,
    )
    try:
        chat = runtime.model()
        result = await evaluation.run(chat, LineProgress(sys.stderr), model_spec=str(runtime.spec))
        report, lines = result.report, [lines for _, lines in result.judged]
    finally:
        await runtime.aclose()
    manifest = json.loads((out / "run" / "manifest.json").read_text(encoding="utf-8"))
    keyed = [
        {
            name: by_method[method.spec]
            for name, method in zip(methods, created, strict=True)
            if method.spec in by_method
        }
        for by_method in lines
    ]
    return tabulate(keyed, manifest, report.seconds, runtime.ledger.to_dict(), methods)


def tabulate(
    lines: list[dict[str, Any]],
    manifest: dict[str, Any],
    seconds: float,
    ledger: dict[str, Any],
    methods: list[str] = METHODS,
) -> dict[str, Any]:
    """Per method and answer type: the paper's metrics, model time, corrected parsing, citations."""
    metrics: list[RecallMetrics] = []
    extra: list[dict[str, Any]] = []
    for method in methods:
        for kind in ANSWER_TYPES:
            runs = [
                Verification.model_validate(by_method[method]["result"]["verification"])
                for by_method in lines
                if method in by_method and by_method[method]["item"].get("answer_type") == kind
            ]
            metrics.append(recall_metrics(NAMES[method], kind, [(v, None) for v in runs]))
            corrected = None
            if method == "prompt-tf":  # the same replies read with the negation-aware rule: no extra calls
                verdicts = [read_verdict(f.raw, "corrected") for v in runs for f in v.verdicts if f.raw is not None]
                corrected = sum(v is True for v in verdicts) / max(sum(v.n_facts for v in runs), 1)
            extra.append(
                {
                    "method": NAMES[method],
                    "answer_type": kind,
                    "model_seconds": round(sum(v.usage.model_s for v in runs), 1),
                    "true_fraction_corrected_parsing": corrected,
                    "citations_given": sum(v.citations_given for v in runs),
                    "citations_verified": sum(v.citations_verified for v in runs),
                }
            )
    first = methods[0]
    facts = [len(by_method[first]["result"]["facts"]) for by_method in lines if first in by_method]
    return {
        "spec": {key: manifest[key] for key in ("model", "dataset", "ragfacts", "commit", "python")},
        "wall_seconds": round(seconds, 1),
        "facts_per_answer": round(sum(facts) / max(len(facts), 1), 2),
        "facts": sum(facts) // len(ANSWER_TYPES),
        "fact_generation": ledger.get("generate_facts", {}),
        "metrics": [m.model_dump() for m in metrics],
        "extra": extra,
    }


def markdown(report: dict[str, Any]) -> str:
    spec = report["spec"]
    metrics = [RecallMetrics.model_validate(m) for m in report["metrics"]]
    totals: dict[str, dict[str, float]] = {}
    for m, e in zip(metrics, report["extra"], strict=True):
        total = totals.setdefault(m.method, {"calls": 0, "prompt": 0, "completion": 0, "seconds": 0.0, "failed": 0})
        total["calls"] += m.calls
        total["prompt"] += m.prompt_tokens
        total["completion"] += m.completion_tokens
        total["seconds"] += e["model_seconds"]
        total["failed"] += m.failed_calls
    generation = report["fact_generation"]
    lines = [
        f"# Recall methods on {spec['dataset']['rows']} WikiEval rows — {spec['model']['spec']}",
        "",
        f"{report['facts']} facts generated in {generation.get('calls', 0)} calls ({generation.get('failures', 0)} "
        f"failed); commit {spec['commit']}; wall time {report['wall_seconds']} s (this invocation).",
        "",
        "## Cost of verification over all answer types (the paper's Table 3 / Figure 3)",
        "",
        "| method | calls | prompt tok | completion tok | model time s | failed calls |",
        "|---|---|---|---|---|---|",
    ]
    for method, t in totals.items():
        lines.append(
            f"| {method} | {t['calls']:.0f} | {t['prompt']:.0f} | {t['completion']:.0f} | {t['seconds']:.0f} "
            f"| {t['failed']:.0f} |"
        )
    lines += ["", "## Per method and answer type", "", metrics_table(metrics), ""]
    prompt_rows = [e for e in report["extra"] if e["true_fraction_corrected_parsing"] is not None]
    if prompt_rows:
        lines.append("Prompt(T/F) judged-True share with negation-aware parsing (same replies): ")
        lines.append(
            ", ".join(f"{e['answer_type']} {100 * e['true_fraction_corrected_parsing']:.1f}%" for e in prompt_rows)
        )
        lines.append("")
    cited = [e for e in report["extra"] if e["citations_given"]]
    if cited:
        lines.append("Citations found verbatim or normalised in the answer: ")
        lines.append(
            ", ".join(
                f"{e['method']}/{e['answer_type']} {e['citations_verified']}/{e['citations_given']}" for e in cited
            )
        )
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
