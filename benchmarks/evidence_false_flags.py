"""How often the evidence checks flag a faithful English RAG answer, and why: the false flags to fix before a head
learns from them. No model: the checks are regular expressions over the answer and its passages.

Data (public, human-labelled, pinned by commit and SHA-256; nothing of them is kept here):
- MTRAG human evaluation, IBM/mt-rag-benchmark @ cc5b1d481b39
  `mtrag-human/evaluations/reference_subset_with_human_evaluations.json` (Apache-2.0): 477 responses of 3
  systems, faithfulness 1-4 by 3 annotators; faithful = every annotator said 4 ("Yes").
- ARES judge test set, stanford-futuredata/ARES @ 3dbd814f7e0e (history)
  `datasets_v2/LLM_Judge_Test_Set_Human_Annotations.tsv` (Apache-2.0): 200 answers over Databricks docs;
  faithful = `Answer_Faithfulness_Label` 1.

    python benchmarks/evidence_false_flags.py --mtrag reference_subset_with_human_evaluations.json \\
        --ares LLM_Judge_Test_Set_Human_Annotations.tsv

Reported per source: faithful answers, the share flagged (with a bootstrap 95% interval), the flags by kind, and
the flagged mentions most often seen, so that what is systematic (abbreviations, sums, unit conversions) shows.
Written to benchmarks/results/evidence_false_flags.json.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import statistics
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from ragfacts.evidence import find_unsupported
from ragfacts.runs.summary import bootstrap_mean

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import commit_at_start, machine

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "evidence_false_flags.json"
PINNED = {
    "mtrag": ("IBM/mt-rag-benchmark@cc5b1d481b39", "ba8518617eca8dd31cadfcbbec1e3b38464e3c6cea33d902865e4acd05e8673e"),
    "ares": (
        "stanford-futuredata/ARES@3dbd814f7e0e",
        "7ba390e28e8f1af583f883a761638f46ee60550182e7a240d466da3328fe985f",
    ),
}


def _pinned(name: str, path: Path) -> bytes:
    raw = path.read_bytes()
    if hashlib.sha256(raw).hexdigest() != PINNED[name][1]:
        raise SystemExit(f"{path}: not the pinned file of {PINNED[name][0]}")
    return raw


def mtrag(path: Path, faithful: bool = True) -> list[tuple[str, str]]:
    """(answer, passages) of the responses every annotator judged faithful (4 of 4); with `faithful=False`, of
    those every annotator judged 1 or 2 of 4."""
    data = json.loads(_pinned("mtrag", path))
    documents = {d["document_id"]: d["text"] for d in data["documents"]}
    contexts = {t["task_id"]: [c["document_id"] for c in t["contexts"]] for t in data["tasks"]}
    wanted = {"4"} if faithful else {"1", "2"}
    found = []
    for evaluation in data["evaluations"]:
        votes = [v["value"] for v in evaluation["annotations"].get("faithfulness", {}).values()]
        if votes and all(vote in wanted for vote in votes):
            passages = "\n\n".join(documents[d] for d in contexts.get(evaluation["task_id"], []) if d in documents)
            if passages.strip():
                found.append((evaluation["model_response"], passages))
    return found


def ares(path: Path, faithful: bool = True) -> list[tuple[str, str]]:
    csv.field_size_limit(10**9)
    rows = csv.DictReader(_pinned("ares", path).decode("utf-8").splitlines(), delimiter="\t")
    label = "1" if faithful else "0"
    return [(r["Answer"], r["Document"]) for r in rows if r["Answer_Faithfulness_Label"] == label]


def measure(pairs: list[tuple[str, str]]) -> dict[str, Any]:
    flagged, kinds, mentions = [], Counter(), Counter()
    for answer, reference in pairs:
        found = find_unsupported(answer, reference, "en")
        flagged.append(float(bool(found)))
        kinds.update(m.kind for m in found)
        mentions.update(f"{m.kind}: {m.text}" for m in found)
    share = bootstrap_mean(flagged)
    return {
        "faithful_answers": len(pairs),
        "answer_chars_median": statistics.median(len(a) for a, _ in pairs),
        "flagged": int(sum(flagged)),
        "flagged_share": {"value": share.value, "low": share.low, "high": share.high},
        "flags_by_kind": dict(kinds.most_common()),
        "most_flagged_mentions": mentions.most_common(25),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mtrag", type=Path, required=True)
    parser.add_argument("--ares", type=Path, required=True)
    args = parser.parse_args()
    figures = {
        "command": f"python benchmarks/evidence_false_flags.py --mtrag {args.mtrag.name} --ares {args.ares.name}",
        "commit": commit_at_start(),
        "machine": machine(),
        "sources": {name: {"file": pinned[0], "sha256": pinned[1]} for name, pinned in PINNED.items()},
        "mtrag": measure(mtrag(args.mtrag)),
        "ares": measure(ares(args.ares)),
        # the other side: the flawed answers the checks still catch (they fail under the veto)
        "mtrag_unfaithful_flagged": measure(mtrag(args.mtrag, faithful=False))["flagged_share"],
        "ares_unfaithful_flagged": measure(ares(args.ares, faithful=False))["flagged_share"],
    }
    OUT.write_text(json.dumps(figures, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(figures, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    main()
