"""The trained head as a recall judge: P(the answer entails the fact), on the WikiEval rows we have.

FaaF's facts are generated from each row's ground truth by the embedded model (as `faaf` does), then every fact
is judged against each of the row's three answers (answer, ungrounded_answer, poor_answer) by the shipped head:
the holistic_score prompt with the answer under test as the reference and the fact as the answer, one forward
pass per fact. Reported: the share of facts judged True per answer type, next to the FaaF paper's humans
(100 / 30.24 / 8.53%), and the prompt tokens against FaaF's (benchmarks/results/recall_small_model.json).

    python benchmarks/recall_head.py --data ../shared/data/wikieval_sample10.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from ragfacts.datasets.wikieval import ANSWER_TYPES
from ragfacts.items import Item
from ragfacts.methods.facts import generate_facts
from ragfacts.methods.precision.head import log_odds, shipped_head
from ragfacts.methods.precision.scored import holistic_request
from ragfacts.models import LocalModelOptions, ResponseCache, build_model, parse_spec

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import files, provenance

ROOT = Path(__file__).resolve().parents[1]
HUMANS = {"answer": 1.0, "ungrounded_answer": 0.3024, "poor_answer": 0.0853}


def _text(value: Any) -> str:
    text = value if isinstance(value, str) else " ".join(value)
    for prefix in ("Answer:", "Question:"):
        text = text.removeprefix(prefix)
    return text.strip()


async def measure(data: Path, cache_dir: Path) -> dict[str, Any]:
    model = build_model(parse_spec("local"), LocalModelOptions(), cache=ResponseCache(cache_dir / "cache.db"))
    head = shipped_head(model.profile().sha256)
    if head is None:
        raise SystemExit("no head ships for the embedded model: run benchmarks/train_head.py --write-head")
    rows = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines() if line.strip()]
    judged: dict[str, list[bool]] = {kind: [] for kind in ANSWER_TYPES}
    tokens: dict[str, int] = dict.fromkeys(ANSWER_TYPES, 0)
    replayed = 0  # scoring calls answered by the cache: their prompt tokens are not counted
    try:
        for row in rows:
            facts = await generate_facts(model, _text(row["question"]), _text(row["answer"]), "en")
            if not facts.ok:
                print(f"fact generation failed: {facts.failure}", file=sys.stderr)
                continue
            for kind in ANSWER_TYPES:
                for fact in facts.facts:
                    item = Item(question=_text(row["question"]), reference=_text(row[kind]), answer=fact)
                    messages, (yes, no), prompt_id = holistic_request(item, "en")
                    completion = await model.score_labels(
                        messages, [yes, no], prompt_version=prompt_id, hidden_state=True
                    )
                    if not completion.ok:
                        raise SystemExit(f"scoring failed: {completion.failure}")
                    scores = completion.parsed
                    p = head.probability(
                        scores.state_vector(), log_odds(scores.logprobs, yes, no), fact, item.reference or "", "en"
                    )
                    judged[kind].append(p >= head.answer_threshold("en"))
                    tokens[kind] += completion.usage.prompt_tokens
                    replayed += completion.cached
    finally:
        await model.aclose()
    if replayed:
        raise SystemExit(
            f"{replayed} scoring calls came from the cache in {cache_dir}, so their prompt tokens would count as 0: "
            "rerun with a fresh --cache (the facts may come from a cache; the scoring must not)"
        )
    return {
        "data": str(data),
        "facts": len(judged["answer"]),
        "judged_true": {kind: round(sum(v) / len(v), 4) if v else None for kind, v in judged.items()},
        "humans": HUMANS,
        "prompt_tokens": tokens,
        "threshold": head.answer_threshold("en"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--cache", type=Path, default=Path("recall_head_cache"))
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "recall_head.json")
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    measured = asyncio.run(measure(args.data, args.cache))
    report = {"provenance": provenance(data=files(args.data)), **measured}  # after the run: its wall time
    args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
