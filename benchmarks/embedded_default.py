"""The embedded default on a CPU, end to end: `ragfacts bench` with the default precision judge on a stratified
sample of the quality test split, then what a row cost (seconds, forward passes, generated tokens) and what the
flagged rows were told (a reason naming a mismatch or a clause, an error type or "untyped").

    python benchmarks/embedded_default.py --sample 40 --seed 7 --run /tmp/embedded-default

The run directory is resumable: a rerun reuses its results and only summarises. Figures are written to
benchmarks/results/embedded_default.json with their provenance (the command, the commit, the data's SHA-256, the
machine).
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import elapsed, files, provenance
from _quality_sample import DATA, ROOT, bench_sample, sample_arguments

OUT = ROOT / "benchmarks" / "results" / "embedded_default.json"


def summarise(run: Path) -> dict[str, Any]:
    lines = [json.loads(line) for line in (run / "results.jsonl").read_text(encoding="utf-8").splitlines() if line]
    ledger = json.loads((run / "ledger.json").read_text(encoding="utf-8"))["total"]
    seconds = [line["seconds"] for line in lines]
    flagged = [line for line in lines if line["outcome"]["label"] == "inconsistent"]
    typed = [
        code
        for line in flagged
        for segment in line["result"]["segments"]
        if segment["label"] == "inconsistent"
        for code in (segment["error_types"] or ["untyped"])
    ]
    return {
        "rows": len(lines),
        "seconds_per_row": {
            "median": round(statistics.median(seconds), 2),
            "mean": round(statistics.fmean(seconds), 2),
            "max": round(max(seconds), 2),
            "flagged_mean": round(statistics.fmean(line["seconds"] for line in flagged), 2) if flagged else None,
        },
        "forward_passes": ledger["calls"],
        "passes_per_row": round(ledger["calls"] / len(lines), 2),
        "prompt_tokens": ledger["prompt_tokens"],
        "prompt_tokens_per_s": round(ledger["prompt_tokens"] / ledger["model_s"], 1),
        "generated_tokens": ledger["completion_tokens"],
        "failed_calls": ledger["failures"],
        "complete": sum(line["complete"] for line in lines),
        "flagged": len(flagged),
        "flagged_with_a_reason": sum(bool(line["result"].get("reason")) for line in flagged),
        "flagged_error_types": {code: typed.count(code) for code in sorted(set(typed))},
        "reasons_saying_no_error": sum("no error" in (line["result"].get("reason") or "") for line in flagged),
    }


def main() -> None:
    args = sample_arguments(__doc__.split("\n\n")[0], 40, 7, Path("/tmp/embedded-default"))
    command, stdout = bench_sample(args, "--no-cache")  # what a row costs: every call made, none from the cache
    report = json.loads(stdout)["bench"]["precision"][0]
    figures = {
        "provenance": {
            **provenance(
                f"python benchmarks/embedded_default.py --sample {args.sample} --seed {args.seed}", files(DATA)
            ),
            "wall_s": elapsed(),
        },
        "bench_command": " ".join(command),
        "model": "local (the embedded Qwen2.5-Coder-1.5B Q4_K_M, its shipped head)",
        "exit_code": 0,  # bench_sample exits on any other
        "balanced_accuracy": report["balanced_accuracy"],
        **summarise(args.run),
    }
    OUT.write_text(json.dumps(figures, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(figures, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    main()
