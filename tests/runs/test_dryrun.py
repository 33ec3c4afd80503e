"""--dry-run's estimate against the real ledger of the same run.

The scripted server counts tokens from the request's text with the estimator's rule and replies with the
shapes the estimate assumes (one segment per sentence, its number of facts), so this checks the call
patterns and the prompt accounting: calls must match and prompt tokens be within 25%. How close the estimate
is on a real model (whose replies have their own lengths) is measured in docs/guides/bench.md.
"""

from __future__ import annotations

import json

import pytest

from ragfacts.datasets.dataset import Dataset
from ragfacts.methods.base import create_method
from ragfacts.models import UsageLedger
from ragfacts.runs.dryrun import estimate_run
from ragfacts.runs.planning import RunPlan
from ragfacts.runs.rundir import RunDir
from ragfacts.runs.runner import run
from ragfacts.text import approx_tokens, delimit, split_sentences
from tests.scripted_server import Reply

ROWS = [
    {
        "question": "Where does the Nile flow?",
        "reference": "The Nile flows north through eleven countries into the Mediterranean Sea. " * 6,
        "answer": "The Nile flows north. It ends in the Mediterranean Sea. It crosses eleven countries.",
        "ground_truth": "The Nile flows north into the Mediterranean Sea after crossing eleven countries of Africa.",
    },
    {
        "question": "大熊猫吃什么？",
        "reference": "大熊猫生活在中国的山区。它们的食物中99%是竹子，偶尔也吃少量鸟类或鼠类。" * 5,
        "answer": "大熊猫主要吃竹子。它们偶尔也吃鸟类。",
        "ground_truth": "大熊猫的食物几乎全是竹子，偶尔也吃鸟类或鼠类。",
    },
]


SPECS = [
    "lface4rag",
    "lface4rag:logic=false",
    "lface4rag:cot=false",
    "lface4rag:decomposition=conventional",
    "holistic",
    "factscore",
    "felm",
    "ragas",
    "refchecker",
    "faaf",
]


def script_shapes(server, spec: str) -> None:
    """Replies of the sizes each method's estimate assumes (rules for the narrower prompts come first)."""
    for row in ROWS:
        sentences = split_sentences(row["answer"])
        if spec == "factscore":  # about one atomic fact per 8 tokens of a sentence
            for sentence in sentences:
                facts = [sentence[:8]] * max(1, round(approx_tokens(sentence) / 8))
                server.when(delimit("sentence", sentence), Reply.json({"facts": facts}))
        if spec == "refchecker":  # about one triplet per 10 tokens of the answer
            triplet = {"subject": "s", "predicate": "p", "object": "o"}
            triplets = [triplet] * max(1, round(approx_tokens(row["answer"]) / 10))
            server.when(delimit("answer", row["answer"]), Reply.json({"triplets": triplets}))
        statements = sentences + sentences[: len(sentences) // 2]  # conventional: 1.5 statements a sentence
        shapes = {"segments": sentences, "statements": statements, "problems": [], "verdict": "consistent"}
        server.when(delimit("answer", row["answer"]), Reply.json(shapes))
        facts = [row["ground_truth"][:10]] * max(1, round(approx_tokens(row["ground_truth"]) / 12))
        server.when(delimit("reference_answer", row["ground_truth"]), Reply.json({"facts": facts}))


@pytest.mark.parametrize("spec", SPECS)
async def test_the_estimate_is_within_25_percent_of_the_ledger(spec, tmp_path, make_model, scripted_server):
    scripted_server.count_tokens = True
    script_shapes(scripted_server, spec)
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in ROWS), encoding="utf-8")
    plan = RunPlan(dataset=Dataset.open(path), methods=[create_method(spec)])
    ledger = UsageLedger()
    model = make_model(ledger=ledger)
    (estimate,) = estimate_run(plan, model)
    await run(RunDir(tmp_path / "run"), plan, model)
    real = ledger.total()
    assert estimate.items == 2
    assert estimate.usage.calls == real.calls
    assert abs(estimate.usage.prompt_tokens - real.prompt_tokens) <= 0.25 * real.prompt_tokens, (estimate, real)
