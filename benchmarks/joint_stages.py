"""L-Face4RAG batched with its fact and logic stages apart (3 calls an answer) and joint (2 calls), on a model.

    python benchmarks/joint_stages.py --out /tmp/joint-stages [--model local]

Both run as `ragfacts bench` on the 6-item sample of docs/results/precision.md (the quality test split's answers of at
most 200 characters, --sample 6 --seed 0), with the default --timeout, one after the other, sharing one fresh response
cache in OUT/cache: the joint run takes its decompositions from the stages-apart run, whose cost includes them. Each
run directory (OUT/apart, OUT/joint) resumes. Writes benchmarks/results/joint_stages_embedded.json: both runs'
metrics, their ledgers per stage, their commands and the provenance; and their tables, joint_stages_embedded.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import ROOT, files, provenance
from bench_results import shortened

DATA = ROOT / "benchmarks" / "data" / "quality" / "test.jsonl"
OUT = ROOT / "benchmarks" / "results" / "joint_stages_embedded.json"
METHODS = {
    "batched": "lface4rag:strategy=paper,batched=true",
    "joint": "lface4rag:strategy=paper,batched=true,joint_stages=true",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="the working directory (resumable)")
    parser.add_argument("--model", default="local")
    args = parser.parse_args()
    short = shortened(DATA, args.out / "data", 200)
    commands = {
        name: [
            *("ragfacts", "--model", args.model, "--cache-dir", str(args.out / "cache")),
            *("bench", str(short), "--methods", method, "--sample", "6", "--seed", "0"),
            *("--max-failed", "1", "-o", str(args.out / ("apart" if name == "batched" else "joint"))),
        ]
        for name, method in METHODS.items()
    }
    runs, ledgers = {}, {}
    for name, command in commands.items():
        if subprocess.run(command, check=False).returncode != 0:
            sys.exit(f"{' '.join(command)} failed; rerun this script to resume")
        runs[name] = json.loads(Path(command[-1], "metrics.json").read_text(encoding="utf-8"))
        ledgers[name] = json.loads(Path(command[-1], "ledger.json").read_text(encoding="utf-8"))["stages"]
    report = {
        "provenance": provenance(data=files(DATA, short)),
        "what": (
            f"L-Face4RAG batched, stages apart and joint, on --model {args.model}, the 6-item sample of "
            "docs/results/precision.md (the quality corpus's test split, answers of at most 200 characters, "
            "--sample 6 --seed 0), default --timeout. One response cache: the joint run took its decompositions "
            "from the stages-apart run's."
        ),
        "commands": [" ".join(command) for command in commands.values()],
        **runs,
        # per stage: the joint run's row adds back the decompositions it took from the cache, at their cost here
        "ledgers": ledgers,
    }
    OUT.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tables = [Path(command[-1], "tables.md").read_text(encoding="utf-8") for command in commands.values()]
    OUT.with_suffix(".md").write_text("\n".join(tables), encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)} and its tables, {OUT.with_suffix('.md').name}")


if __name__ == "__main__":
    main()
