"""Counts of build_rag_sources.py's files: rows, labels, lengths and the prompt tokens a state extraction will read.

Tokens are estimated with ``ragfacts.text.approx_tokens`` on the very prompt the holistic verdict sends
(``holistic_request``): one answer-level pass per row. The sentence passes of a sentence-level reader add about
the answer's tokens again (each sentence once, the reference prefix reused), reported as ``answer_tokens``.
"""

from __future__ import annotations

import statistics
from collections import Counter

SLOW_TOKENS_PER_SECOND = 33  # prompt evaluation measured on this machine's 2 cores, slowest and fastest day
FAST_TOKENS_PER_SECOND = 214


def _quantile(values: list[int], q: float) -> int:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0


def _lengths(values: list[int]) -> dict[str, int]:
    return {
        "min": min(values, default=0),
        "p10": _quantile(values, 0.1),
        "median": int(statistics.median(values)) if values else 0,
        "p90": _quantile(values, 0.9),
        "max": max(values, default=0),
    }


def _counts(rows: list[dict], tokens: dict[str, tuple[int, int]], bound: int) -> dict:
    uncut = [row["reference_chars"] for row in rows]
    labels = Counter(row["label"] for row in rows)
    found = {
        "rows": len(rows),
        "consistent": labels["consistent"],
        "inconsistent": labels["inconsistent"],
        "groups": len({row["group"] for row in rows}),
        "answer_chars_median": int(statistics.median(len(r["answer"]) for r in rows)) if rows else 0,
        "reference_chars_median": int(statistics.median(len(r["reference"]) for r in rows)) if rows else 0,
        "uncut_reference_chars": _lengths(uncut),
        "references_cut": sum(len(row["reference"]) < row["reference_chars"] for row in rows),
        "references_over_bound": sum(n > bound for n in uncut) if bound > 0 else 0,
        "prompt_tokens": sum(tokens[row["id"]][0] for row in rows),
        "answer_tokens": sum(tokens[row["id"]][1] for row in rows),
    }
    sentences = [s for row in rows for s in row["sentences"] or []]
    if sentences:
        found["sentences"] = len(sentences)
        found["sentence_labels"] = dict(sorted(Counter(s["label"] for s in sentences).items()))
    return found


def _hours(tokens: int) -> dict[str, float]:
    return {
        f"at_{rate}_tokens_per_s": round(tokens / rate / 3600, 2)
        for rate in (SLOW_TOKENS_PER_SECOND, FAST_TOKENS_PER_SECOND)
    }


def stats_of(files: dict[str, list[dict]], report: dict, bound: int) -> dict:
    """Counts per source and split, per source, and in total, with the extraction time at the measured rates."""
    from ragfacts.items import Item
    from ragfacts.methods.precision.scored import holistic_request
    from ragfacts.text import approx_tokens

    tokens: dict[str, tuple[int, int]] = {}  # id -> (prompt tokens, answer tokens)
    prompt_id = ""
    for rows in files.values():
        for row in rows:
            item = Item(id=row["id"], question=row["question"], reference=row["reference"], answer=row["answer"])
            messages, _, prompt_id = holistic_request(item, "en")
            tokens[row["id"]] = (approx_tokens(messages[0].content), approx_tokens(row["answer"]))
    sources: dict[str, dict] = {}
    for name, rows in files.items():
        source, split = name.rsplit("_", 1)
        entry = sources.setdefault(source, {"splits": {}, "dropped": report["dropped"].get(source, {})})
        entry["splits"][split] = _counts(rows, tokens, bound)
    for source, entry in sources.items():
        rows = [row for name, part in files.items() if name.rsplit("_", 1)[0] == source for row in part]
        entry["all"] = _counts(rows, tokens, bound)
        entry["error_types"] = dict(sorted(Counter(r["error_type"] for r in rows if r["error_type"]).items()))
    every = [row for rows in files.values() for row in rows]
    total = _counts(every, tokens, bound)
    total["extraction_hours"] = _hours(total["prompt_tokens"])
    total["with_sentence_passes_hours"] = _hours(total["prompt_tokens"] + total["answer_tokens"])
    for entry in sources.values():
        entry["all"]["extraction_hours"] = _hours(entry["all"]["prompt_tokens"])
    groups = {key: value for key, value in report.items() if key.startswith("groups_")}
    return {"max_reference_chars": bound, "prompt_id": prompt_id, "sources": sources, "total": total, **groups}


def summary(stats: dict) -> str:
    """A markdown table of the counts per source and split, and the totals."""
    out = [
        "| source | split | rows | consistent | inconsistent | groups | median answer | median reference (uncut) "
        "| cut | prompt tokens |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for source, entry in stats["sources"].items():
        for split, c in [*entry["splits"].items(), ("all", entry["all"])]:
            out.append(
                f"| {source} | {split} | {c['rows']:,} | {c['consistent']:,} | {c['inconsistent']:,} | {c['groups']:,} "
                f"| {c['answer_chars_median']:,} | {c['reference_chars_median']:,} "
                f"({c['uncut_reference_chars']['median']:,}) | {c['references_cut']:,} | {c['prompt_tokens']:,} |"
            )
    t = stats["total"]
    hours, more = t["extraction_hours"], t["with_sentence_passes_hours"]
    out.append(
        f"\ntotal: {t['rows']:,} rows ({t['consistent']:,} consistent), {t['prompt_tokens']:,} prompt tokens: "
        f"{hours['at_33_tokens_per_s']} h at 33 tokens/s, {hours['at_214_tokens_per_s']} h at 214 tokens/s; "
        f"with one pass per sentence (+{t['answer_tokens']:,} tokens): {more['at_33_tokens_per_s']} h / "
        f"{more['at_214_tokens_per_s']} h"
    )
    out.append(
        f"groups merged across sources: {stats['groups_across_sources']}; groups kept in train because they share a "
        f"reference with the training files: {stats['groups_in_train_for_sharing_a_training_reference']}"
    )
    for source, entry in stats["sources"].items():
        if entry["dropped"]:
            out.append(f"dropped, {source}: {entry['dropped']}")
    return "\n".join(out)
