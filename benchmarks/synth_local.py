"""`ragfacts synth` end to end on a model: which injected errors survive the check, then a judge on the survivors.

Run: nice -n 10 python benchmarks/synth_local.py [--model local] [--out DIR] [--judge holistic[,lface4rag,...]]

Rows: 3 English and 3 Chinese rows labelled consistent in benchmarks/data/quality/dev.jsonl, chosen by rule:
English, the first by id with a 150-700 character reference and a 60-400 character answer, one per reference
(FaithBench summaries); Chinese, the first RGB rows by id with a question and a reference of at most 400
characters, given WITHOUT their answer (a word or two), so that the model writes the faithful answer first.
Three commands, run as a user runs them, each resumable (rerun the script to continue after an interruption):

1. ragfacts --model M synth OUT/rows.jsonl -o OUT/synth.jsonl      all nine types, one paraphrase per row
2. ragfacts --model M bench OUT/synth.jsonl --methods JUDGE -o OUT/bench
3. ragfacts report OUT/bench -o OUT/report.md

A fresh response cache in OUT/cache, so the counts are of real calls. Writes benchmarks/results/synth_local.json:
this command, the rows, the kept/rejected/not applied/failed counts per error type (from the synth manifest),
one kept edit per type, the ledgers, the judge's accuracy per error type, and wall times.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
DEV = HERE / "data" / "quality" / "dev.jsonl"
RESULT = HERE / "results" / "synth_local.json"

sys.path.insert(0, str(HERE.resolve()))
from _provenance import files, provenance  # noqa: E402


def choose_rows(path: Path = DEV) -> list[dict[str, Any]]:
    """The six source rows, by the rule in the module docstring."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    faithful = sorted((r for r in rows if r["label"] == "consistent"), key=lambda r: r["id"])
    english: list[dict[str, Any]] = []
    for row in faithful:
        sized = 150 <= len(row["reference"]) <= 700 and 60 <= len(row["answer"]) <= 400
        if row["lang"] == "en" and sized and all(row["reference"] != chosen["reference"] for chosen in english):
            english.append(row)
    chinese = [
        r
        for r in faithful
        if r["lang"] == "zh" and r["source"].startswith("RGB") and r.get("question") and len(r["reference"]) <= 400
    ]
    picked = [{k: r[k] for k in ("id", "question", "reference", "answer") if r.get(k)} for r in english[:3]]
    picked += [{k: r[k] for k in ("id", "question", "reference") if r.get(k)} for r in chinese[:3]]
    return picked


def ragfacts(*args: str) -> tuple[list[str], float]:
    """Run one ragfacts command (output shown as it comes); return it and its wall time. Exits on failure."""
    command = [sys.executable, "-m", "ragfacts", *args]
    started = time.perf_counter()
    done = subprocess.run(command, check=False)
    if done.returncode != 0:
        sys.exit(f"failed (exit {done.returncode}): {shlex.join(command)}")
    return command, round(time.perf_counter() - started, 1)


def examples(dataset: Path) -> dict[str, dict[str, Any]]:
    """The first kept edit of each error type: its span, and the row it came from."""
    found: dict[str, dict[str, Any]] = {}
    for line in dataset.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row.get("error_type") and row["error_type"] not in found:
            span = row["synth"]["span"]
            found[row["error_type"]] = {"id": row["id"], **{k: span[k] for k in ("original", "replacement")}}
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="local")
    parser.add_argument("--out", type=Path, default=Path("runs/synth_local"))
    parser.add_argument("--judge", default="holistic")
    parser.add_argument("--base-url", help="an OpenAI-compatible endpoint, for --model openai:NAME")
    parser.add_argument("--result", type=Path, default=RESULT, help="where the measurement is written")
    args = parser.parse_args(argv)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    rows = choose_rows()
    source = out / "rows.jsonl"
    source.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    model = ["--model", args.model, "--cache-dir", str(out / "cache")]
    if args.base_url:
        model += ["--base-url", args.base_url]
    synth_out, bench_out, report = out / "synth.jsonl", out / "bench", out / "report.md"
    steps = {
        "synth": ragfacts(*model, "synth", str(source), "-o", str(synth_out)),
        "bench": ragfacts(*model, "bench", str(synth_out), "--methods", args.judge, "-o", str(bench_out)),
        "report": ragfacts("report", str(bench_out), "-o", str(report)),
    }
    manifest = json.loads((out / "synth.jsonl.manifest.json").read_text(encoding="utf-8"))
    ledger = json.loads((out / "synth.jsonl.ledger.json").read_text(encoding="utf-8"))
    metrics = json.loads((bench_out / "metrics.json").read_text(encoding="utf-8"))
    bench_ledger = json.loads((bench_out / "ledger.json").read_text(encoding="utf-8"))
    judges = [
        {
            "method": judged["method"],
            "answers": judged["answers"],
            "accuracy": judged["accuracy"],
            "balanced_accuracy": judged["balanced_accuracy"],
            "positive_accuracy": judged["positive_accuracy"],
            "by_error_type": judged["by_error_type"],
            "failed_calls": judged["failed_calls"],
        }
        for judged in metrics["precision"]
    ]
    command = f"python benchmarks/synth_local.py --model {args.model} --out {out} --judge {args.judge}"
    result = {
        "provenance": provenance(command, files(DEV)),
        "command": command,
        "steps": {name: {"command": shlex.join(c[2:]), "wall_s": s} for name, (c, s) in steps.items()},
        "model": manifest["model"]["spec"],
        "rows": [{"id": r["id"], "answer": "given" if "answer" in r else "written by the model"} for r in rows],
        "synth": manifest["synth"],
        "kept_examples": examples(synth_out),
        "synth_usage": ledger["total"],
        "synth_usage_by_stage": ledger["stages"],
        "judges": judges,
        "judge_usage": bench_ledger["total"],
        "load_average_at_end": os.getloadavg()[0],
    }
    args.result.write_text(json.dumps(result, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.result}")


if __name__ == "__main__":
    main()
