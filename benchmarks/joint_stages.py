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
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import ROOT, files, provenance
from bench_results import bench, shortened

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
    folders = {"batched": args.out / "apart", "joint": args.out / "joint"}
    commands = {
        name: [
            *("--model", args.model, "--cache-dir", str(args.out / "cache")),
            *("bench", str(short), "--methods", method, "--sample", "6", "--seed", "0", "--max-failed", "1"),
        ]
        for name, method in METHODS.items()
    }
    runs, ledgers = {}, {}
    for name, command in commands.items():
        runs[name] = bench(command, folders[name])
        ledgers[name] = json.loads((folders[name] / "ledger.json").read_text(encoding="utf-8"))["stages"]
    report = {
        "provenance": provenance(data=files(DATA, short)),
        "what": (
            f"L-Face4RAG batched, stages apart and joint, on --model {args.model}, the 6-item sample of "
            "docs/results/precision.md (the quality corpus's test split, answers of at most 200 characters, "
            "--sample 6 --seed 0), default --timeout. One response cache: the joint run took its decompositions "
            "from the stages-apart run's."
        ),
        "commands": [f"ragfacts {' '.join(c)} -o {folders[name]}" for name, c in commands.items()],
        **runs,
        # per stage: the joint run's row adds back the decompositions it took from the cache, at their cost here
        "ledgers": ledgers,
    }
    OUT.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tables = [(folder / "tables.md").read_text(encoding="utf-8") for folder in folders.values()]
    OUT.with_suffix(".md").write_text("\n".join(tables), encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)} and its tables, {OUT.with_suffix('.md').name}")


if __name__ == "__main__":
    main()
