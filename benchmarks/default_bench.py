"""The shipped default reproduced end to end: `ragfacts bench` with the default precision judge, on a stratified
sample of the quality test split, beside the replay of the same head on the states that
benchmarks/judge_features.py stored for the same rows (how benchmarks/train_head.py measures it).

Per row: the label each gives and the head's raw P(faithful) each computes (`holistic.raw_probability` in the
run's results; the head's probability from the stored state in the replay). If the product's path (prompt, hidden
state, evidence features, threshold, veto) differs from the one the head was trained and measured on, the labels
disagree here. Also the balanced accuracy of both on the sample.

    python benchmarks/default_bench.py --sample 60 --seed 11 --run /tmp/default-bench
    python benchmarks/default_bench.py --sample 365 --run /tmp/default-bench-all  # the whole test split

The run directory is resumable. Written with its provenance to benchmarks/results/default_bench.json, or, where the
sample is the whole test split, to default_bench_all.json (whose balanced accuracy is the README's, end to end).
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import files, provenance
from _quality_sample import DATA, ROOT, bench_sample, sample_arguments
from judge_features import load_store, store_dir
from train_head import HEAD_FILE, head_decisions

from ragfacts.methods.precision.head import Head
from ragfacts.methods.precision.training import balanced_accuracy, interval
from ragfacts.models.local.embedded import DEFAULT_MODEL

OUT = ROOT / "benchmarks" / "results" / "default_bench.json"
OUT_ALL = ROOT / "benchmarks" / "results" / "default_bench_all.json"  # the whole test split


def replay(ids: list[str]) -> dict[str, tuple[float, str]]:
    """The shipped head on the stored states of these rows, as `ragfacts check` decides: id -> (raw P(faithful),
    label)."""
    decided = head_decisions(Head.load(HEAD_FILE), DATA, load_store(store_dir(DEFAULT_MODEL.sha256)), set(ids))
    return {i: (p, "consistent" if passed else "inconsistent") for i, (p, passed) in decided.items()}


def main() -> None:
    args = sample_arguments(__doc__.split("\n\n")[0], 60, 11, Path("/tmp/default-bench"))
    command, _ = bench_sample(args, "--no-cache")
    lines = [json.loads(line) for line in (args.run / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    gold = {
        row["id"]: row["label"]
        for row in (json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line)
    }
    bench = {line["id"]: (line["result"]["holistic"]["raw_probability"], line["outcome"]["label"]) for line in lines}
    replayed = replay(list(bench))
    ids = [i for i in bench if i in replayed]
    differences = [abs(bench[i][0] - replayed[i][0]) for i in ids]
    truth = np.array([gold[i] == "consistent" for i in ids], dtype=int)
    passed_bench = np.array([bench[i][1] == "consistent" for i in ids], dtype=int)
    passed_replay = np.array([replayed[i][1] == "consistent" for i in ids], dtype=int)
    figures: dict[str, Any] = {
        "provenance": provenance(
            f"python benchmarks/default_bench.py --sample {args.sample} --seed {args.seed}", files(DATA, HEAD_FILE)
        ),
        "bench_command": " ".join(command),
        "head_digest": Head.load(HEAD_FILE).digest,  # the head compared: a new head needs a new comparison
        "rows": len(lines),
        "replayed": len(ids),
        "labels_agreeing": sum(bench[i][1] == replayed[i][1] for i in ids),
        "disagreeing_ids": [i for i in ids if bench[i][1] != replayed[i][1]],
        "probability_difference": {
            "max": round(max(differences), 4),
            "median": round(statistics.median(differences), 4),
        },
        "balanced_accuracy_on_the_sample": {
            "bench": round(balanced_accuracy(truth, passed_bench), 4),
            "replay": round(balanced_accuracy(truth, passed_replay), 4),
        },
        # bootstrap 95% intervals over the sample's rows: the bench's figure should fall in the replay's
        "intervals": {"bench": interval(truth, passed_bench), "replay": interval(truth, passed_replay)},
        "generated_tokens": sum(line["outcome"]["usage"]["completion_tokens"] for line in lines),
    }
    whole = args.sample >= len(gold)
    if whole and len(lines) < len(gold):
        sys.exit(f"{args.run}: {len(lines)} of {len(gold)} rows have results; rerun to resume")
    (OUT_ALL if whole else OUT).write_text(json.dumps(figures, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(figures, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    main()
