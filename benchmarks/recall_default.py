"""The default recall judge on the embedded model, end to end, beside the FaaF paper's humans: `ragfacts recall` on
the WikiEval rows of the check set (facts generated from each ground truth, then judged against the answer, the
ungrounded answer and the poor answer), and the share of facts judged present per answer type.

    python benchmarks/recall_default.py --run /tmp/recall-default

The run directory is resumable: a rerun reuses its results and only summarises. Written to
benchmarks/results/recall_default_wikieval.json with its provenance (the command, the commit, the data's SHA-256,
the machine).
The WikiEval rows are a check: nothing was chosen on them.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import files, provenance

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "wikieval_sample10.jsonl"
OUT = ROOT / "benchmarks" / "results" / "recall_default_wikieval.json"
HUMANS = {"answer": 1.0, "ungrounded_answer": 0.3024, "poor_answer": 0.0853}  # FaaF paper, facts judged True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--run", type=Path, default=Path("/tmp/recall-default"))
    args = parser.parse_args()
    # No response cache: the model-seconds it reports are the run's own, not the replay of an earlier one.
    command = ["ragfacts", "--json", "--no-cache", "recall", str(args.data), "-o", str(args.run)]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(done.stderr[-2000:])
    document = json.loads(done.stdout)
    by_type = {}
    for metrics in document["recall_metrics"]:
        share = metrics["judged_true"] / metrics["facts"]
        humans = HUMANS[metrics["answer_type"]]
        by_type[metrics["answer_type"]] = {
            "facts": metrics["facts"],
            "judged_true": metrics["judged_true"],
            "share": round(share, 4),
            "humans": humans,
            "points_from_humans": round(100 * (share - humans), 1),
        }
    ledger = json.loads((args.run / "ledger.json").read_text(encoding="utf-8"))["total"]
    figures = {
        "provenance": provenance(data=files(args.data)),
        "recall_command": "ragfacts --json --no-cache recall ../shared/data/wikieval_sample10.jsonl -o RUN "
        "(the default: faaf, verify=auto, the head on the embedded model)",
        "model": "local (the embedded Qwen2.5-Coder-1.5B Q4_K_M, its shipped head and recall threshold)",
        "seconds_this_invocation": round(time.perf_counter() - started, 1),
        "by_answer_type": by_type,
        "usage_of_the_run": {k: ledger[k] for k in ("calls", "prompt_tokens", "completion_tokens", "model_s")},
    }
    OUT.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
