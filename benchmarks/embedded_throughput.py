"""Answers per minute of the embedded model (Qwen2.5-Coder-1.5B GGUF, in-process) for the verdicts it gives by default.

Each strategy judges the same answers, a stratified sample of the quality corpus's dev split, in one fresh
`ragfacts --model local --no-cache check` process: the default (`auto`: the trained head shipped for this model,
one forward pass per answer) and `holistic_score` (the model's own first-token probability, also one pass).
Reported per strategy: the process's wall time (loading the weights included) and the runner's, answers per
minute by each, calls, prompt tokens and model seconds per answer from the run's ledger.

    python benchmarks/embedded_throughput.py [--sample 24] [--strategies auto holistic_score]

Results to benchmarks/results/embedded_throughput.json. On 2 cores an answer takes tens of seconds: see the docs'
performance page for the measured rates before choosing a sample size.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ragfacts.bench.sampling import stratified_sample
from ragfacts.datasets.dataset import Dataset

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import files, provenance

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data" / "quality" / "dev.jsonl"


def judge(strategy: str, data: Path, out: Path) -> dict[str, Any]:
    """One `check` process over `data` with `strategy`: its wall time and the run's report."""
    command = [sys.executable, "-m", "ragfacts", "--model", "local", "--no-cache", "--concurrency", "1", "--json"]
    command += ["check", str(data), "--method", f"lface4rag:strategy={strategy}", "-o", str(out)]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=os.environ)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1, 3):  # 3: finished with more failed calls than --max-failed (counted below)
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}:\n{done.stderr[-3000:]}")
    report = json.loads(done.stdout)["report"]
    usage, answers = report["usage"], report["ran"]
    return {
        "strategy": strategy,
        "answers": answers,
        "wall_s": round(wall, 1),
        "runner_s": round(report["seconds"], 1),
        "answers_per_min_wall": round(60 * answers / wall, 1),
        "answers_per_min_runner": round(60 * answers / report["seconds"], 1),
        "calls_per_answer": round(usage["calls"] / answers, 2),
        "prompt_tokens_per_answer": round(usage["prompt_tokens"] / answers),
        "model_s_per_answer": round(usage["model_s"] / answers, 2),
        "failures": usage["failures"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=24)
    parser.add_argument("--strategies", nargs="*", default=["auto", "holistic_score"])
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "embedded_throughput.json")
    args = parser.parse_args()
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ragfacts-embedded-") as name:
        scratch = Path(name)
        sample = stratified_sample(Dataset.open(DATA), args.sample, 0)
        data = scratch / "sample.jsonl"
        data.write_text("".join(item.model_dump_json() + "\n" for item in sample.items()), encoding="utf-8")
        runs = []
        for strategy in args.strategies:
            runs.append(judge(strategy, data, scratch / strategy))
            print(json.dumps(runs[-1]), flush=True)
    report = {
        "provenance": provenance(data=files(DATA)),
        "command": " ".join(["python", "benchmarks/embedded_throughput.py", *sys.argv[1:]]),
        "cpu_count": os.cpu_count(),
        "data": f"{DATA.relative_to(ROOT)}, stratified sample of {args.sample} (seed 0)",
        "runs": runs,
        "total_s": round(time.perf_counter() - began, 1),
    }
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out} ({report['total_s']} s)")


if __name__ == "__main__":
    main()
