"""Cost and behaviour of the four FaaF variants against the Prompt(T/F) baseline on WikiEval rows.

For each row: facts are generated once from the question and the ground-truth `answer`, then every method
checks them against the three answer types (answer, ungrounded_answer, poor_answer). Reported per method
and answer type: model calls, prompt/completion tokens, model time, the fraction of facts judged True,
N/A and failures (the paper's Table 3 and Figure 3, without human labels). Rows are checkpointed, so an
interrupted run resumes where it stopped; the response cache is off by default because cached replies
cost no calls and would hide the cost being measured.

    python benchmarks/recall_local.py --data /work/shared/data/wikieval_sample10.jsonl --model local
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import ragfacts
from ragfacts.bench.recall_metrics import RecallMetrics, metrics_table, recall_metrics
from ragfacts.datasets.wikieval import ANSWER_TYPES, RecallItem, load_wikieval_jsonl
from ragfacts.methods.faaf import default_chunk_size, verify_facts
from ragfacts.methods.facts import generate_facts
from ragfacts.methods.prompt_tf import read_verdict, verify_facts_by_prompt
from ragfacts.methods.verdicts import Verification
from ragfacts.models import ChatModel
from ragfacts.runtime import Runtime, Settings

FAAF_VARIANTS = [("tf", False), ("tfn", False), ("tf", True), ("tfn", True)]
METHODS = ["prompt-tf", *(f"faaf-{mode}" + ("+citation" if cite else "") for mode, cite in FAAF_VARIANTS)]


def main() -> None:
    args = _arguments()
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    items = load_wikieval_jsonl(args.data)[: args.limit]
    settings = Settings(model=args.model, base_url=args.base_url, concurrency=args.concurrency, use_cache=args.cache)
    commit = _commit()  # before the run: the tree may move on while a slow local run goes
    started = time.perf_counter()
    rows = asyncio.run(_run(settings, items, out / "checkpoint.jsonl", args.chunk_size))
    wall_s = time.perf_counter() - started
    report = _report(args, items, rows, wall_s, commit)
    (out / "recall_local.json").write_text(json.dumps(report, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    (out / "recall_local.md").write_text(_markdown(report), encoding="utf-8")
    print(_markdown(report))
    print(f"written: {out / 'recall_local.json'}, {out / 'recall_local.md'}", file=sys.stderr)


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="WikiEval JSONL (e.g. wikieval_sample10.jsonl)")
    parser.add_argument("--model", default=None, help="openai:MODEL | local | local:/path.gguf")
    parser.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint")
    parser.add_argument("--out", type=Path, default=Path("recall_local_results"), help="result directory")
    parser.add_argument("--limit", type=int, default=None, help="first N rows only")
    parser.add_argument("--concurrency", type=int, default=4, help="rows in flight (local models run one at a time)")
    parser.add_argument(
        "--chunk-size", type=int, default=None, help="FaaF facts per call; 0 = all; default: per backend"
    )
    parser.add_argument("--cache", action="store_true", help="use the response cache (cached calls cost 0)")
    return parser.parse_args()


async def _run(settings: Settings, items: list[RecallItem], checkpoint: Path, chunk_size: int | None) -> list[dict]:
    """Return one record per row, reusing rows already in the checkpoint file."""
    done = {}
    if checkpoint.exists():
        for line in checkpoint.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line torn by an interrupted run: that row is redone
            done[record["id"]] = record
    runtime = Runtime(settings)
    try:
        model = runtime.model()
        chunk = default_chunk_size(model) if chunk_size is None else (chunk_size or None)
        slots = asyncio.Semaphore(settings.concurrency)
        with checkpoint.open("a", encoding="utf-8") as handle:

            async def one(item: RecallItem) -> dict:
                if item.id in done:
                    return done[item.id]
                async with slots:
                    record = await _check_row(model, item, chunk)
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
                handle.flush()
                print(f"  {item.id}: {len(record['facts'])} facts", file=sys.stderr)
                return record

            records = await asyncio.gather(*(one(item) for item in items))
        records = [{**r, "model": {"backend": model.backend, "model": model.model_id}} for r in records]
        return records
    finally:
        await runtime.aclose()


async def _check_row(model: ChatModel, item: RecallItem, chunk: int | None) -> dict[str, Any]:
    generation = await generate_facts(model, item.question, item.ground_truth or "")
    facts = generation.facts
    results: dict[str, dict[str, Any]] = {}
    for kind in ANSWER_TYPES:
        passage = item.answers[kind]
        runs: dict[str, Verification] = {"prompt-tf": await verify_facts_by_prompt(model, facts, passage)}
        for mode, citations in FAAF_VARIANTS:
            verification = await verify_facts(model, facts, passage, mode, citations, chunk)
            runs[verification.method] = verification
        results[kind] = {method: v.model_dump(mode="json") for method, v in runs.items()}
    return {
        "id": item.id,
        "facts": facts,
        "fact_generation": generation.model_dump(mode="json"),
        "chunk_size": chunk,
        "results": results,
    }


def _report(
    args: argparse.Namespace, items: list[RecallItem], rows: list[dict], wall_s: float, commit: str | None
) -> dict[str, Any]:
    metrics: list[RecallMetrics] = []
    extra: list[dict[str, Any]] = []
    for method in METHODS:
        for kind in ANSWER_TYPES:
            runs = [Verification.model_validate(row["results"][kind][method]) for row in rows]
            metrics.append(recall_metrics(method, kind, [(v, None) for v in runs]))
            seconds = sum(c.get("latency_s", 0.0) for v in runs for c in v.completions)
            corrected = None
            if method == "prompt-tf":
                # The same replies read with the negation-aware rule: no extra calls.
                verdicts = [read_verdict(f.raw, "corrected") for v in runs for f in v.verdicts if f.raw is not None]
                corrected = sum(v is True for v in verdicts) / max(sum(v.n_facts for v in runs), 1)
            cited = sum(v.citations_given for v in runs)
            extra.append(
                {
                    "method": method,
                    "answer_type": kind,
                    "model_seconds": round(seconds, 1),
                    "true_fraction_corrected_parsing": corrected,
                    "citations_given": cited,
                    "citations_verified": sum(v.citations_verified for v in runs),
                }
            )
    generation_calls = sum(c["usage"]["calls"] for row in rows for c in row["fact_generation"]["completions"])
    return {
        "spec": {
            "model": rows[0]["model"] if rows else args.model,
            "data": str(args.data),
            "data_sha256": hashlib.sha256(args.data.read_bytes()).hexdigest(),
            "rows": len(items),
            "chunk_size": rows[0]["chunk_size"] if rows else None,
            "ragfacts": ragfacts.__version__,
            "commit": commit,
            "python": platform.python_version(),
            "cache": args.cache,
        },
        "wall_seconds": round(wall_s, 1),
        "facts": sum(len(row["facts"]) for row in rows),
        "fact_generation": {
            "calls": generation_calls,
            "failures": sum(row["fact_generation"]["failure"] is not None for row in rows),
        },
        "metrics": [m.model_dump() for m in metrics],
        "extra": extra,
    }


def _markdown(report: dict[str, Any]) -> str:
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
    model = spec["model"]
    name = f"{model['backend']}:{model['model']}" if isinstance(model, dict) else model
    lines = [
        f"# Recall methods on {spec['rows']} WikiEval rows — {name}",
        "",
        f"{report['facts']} facts generated in {report['fact_generation']['calls']} calls "
        f"({report['fact_generation']['failures']} failed); FaaF chunk size {spec['chunk_size'] or 'all'}; "
        f"commit {spec['commit']}; wall time {report['wall_seconds']} s.",
        "",
        "## Cost over all answer types (the paper's Table 3 / Figure 3)",
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


def _commit() -> str | None:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).parent,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


if __name__ == "__main__":
    main()
