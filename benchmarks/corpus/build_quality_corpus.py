"""Rebuild benchmarks/data/quality/{dev,test}.jsonl from public faithfulness benchmarks.

Every item and every label comes from a public dataset; this script only selects, maps labels to
consistent/inconsistent and splits. It needs no network: point it at the six source repositories,
either as bare git mirrors (read at the pinned commit with ``git cat-file``) or as plain checkouts of
that commit. Each file read is checked against a pinned SHA-256, so a rebuild is byte-for-byte identical.

    python benchmarks/corpus/build_quality_corpus.py \\
        --faithbench /path/to/vectara+FaithBench/repo \\
        --halueval /path/to/RUCAIBox+HaluEval/repo \\
        --factcheckgpt /path/to/yuxiaw+Factcheck-GPT/repo \\
        --summedits /path/to/salesforce+factualNLG/repo \\
        --ocnli /path/to/CLUEbenchmark+OCNLI/repo \\
        --rgb /path/to/chen700564+RGB/repo \\
        --out benchmarks/data/quality

Add ``--check`` to compare with the files already in ``--out`` instead of writing them.
See benchmarks/data/quality/SOURCES.md for what each source contributes and why.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path

import quality_sources_read as quality_read
from corpus_records import CONSISTENT, FIELDS, INCONSISTENT, SEED, dataset_of, dump_jsonl, record, write_or_check
from corpus_selection import capped_sample
from pinned import PinnedSource, SourceError, add_source_arguments, open_sources, print_digests

DEV_FRACTION = 0.4

# Length filter, so that a 1.5B model with an 8k-token context can judge every item on CPU.
MAX_REFERENCE_CHARS = {"en": 3500, "zh": 2500}
MAX_ANSWER_CHARS = 800

# Targets per source and label (after the length filter); see SOURCES.md.
FAITHBENCH_PER_LABEL = 70
FAITHBENCH_MAX_PER_DOCUMENT = 3
HALUEVAL_PER_LABEL = 30
OCNLI_TARGETS = {"entailment": 60, "neutral": 30, "contradiction": 30}
FACTCHECKGPT_TARGETS = {"completely-support": 50, "refute": 30, "irrelevant": 20}
FACTCHECKGPT_MAX_PER_PROMPT = 3  # claims per question and per label
SUMMEDITS_PER_LABEL = 12  # per domain
SUMMEDITS_MAX_PER_DOCUMENT = 2  # edited summaries per document and per label


def _fits(lang: str, reference: str, answer: str) -> bool:
    return 0 < len(reference) <= MAX_REFERENCE_CHARS[lang] and 0 < len(answer) <= MAX_ANSWER_CHARS


def _fits_en(group: str, reference: str, answer: str) -> bool:
    """Whether an English candidate is within the length limits (the readers' ``keep``)."""
    return _fits("en", reference, answer)


def _sample_all(pool: list[dict], rng: random.Random, n: int, cap: int, taken: Counter[str]) -> list[dict]:
    """``capped_sample`` of exactly ``n`` items; fails if the pool has fewer within the cap."""
    chosen = capped_sample(pool, rng, n, cap, taken)
    if len(chosen) < n:
        first = min((item["id"] for item in pool), default="an empty pool")
        raise SourceError(f"only {len(chosen)} of {n} items available for {first}")
    return chosen


# --------------------------------------------------------------------------- FaithBench (en, Summary)


def faithbench_items(src: PinnedSource) -> list[dict]:
    """Consistent: no annotator marked anything. Inconsistent: at least two annotators marked an Unwanted span."""
    pools = quality_read.faithbench_pools(src, _fits_en)
    rng = random.Random(SEED + 1)
    chosen: list[dict] = []
    for label in (CONSISTENT, INCONSISTENT):
        chosen.extend(capped_sample(pools[label], rng, FAITHBENCH_PER_LABEL, FAITHBENCH_MAX_PER_DOCUMENT))
    return chosen


# --------------------------------------------------------------------------- HaluEval (en, QA)


def halueval_items(src: PinnedSource) -> list[dict]:
    """One answer per HotpotQA item: right_answer -> consistent, hallucinated_answer -> inconsistent."""
    rows = src.jsonl(quality_read.HALUEVAL_FILE)
    eligible = [
        i
        for i, row in enumerate(rows)
        if _fits("en", row["knowledge"].strip(), row["right_answer"].strip())
        and _fits("en", row["knowledge"].strip(), row["hallucinated_answer"].strip())
    ]
    rng = random.Random(SEED + 2)
    picked = rng.sample(eligible, 2 * HALUEVAL_PER_LABEL)
    return [
        quality_read.halueval_item(
            rows[index],
            index,
            "right_answer" if n < HALUEVAL_PER_LABEL else "hallucinated_answer",
            f"halueval-en-qa-{index:06d}",
        )
        for n, index in enumerate(picked)
    ]


# --------------------------------------------------------------------------- OCNLI (zh, NLI)


def ocnli_items(src: PinnedSource) -> list[dict]:
    """Premise as reference, hypothesis as answer; entailment -> consistent, neutral/contradiction -> inconsistent."""
    by_label: dict[str, list[dict]] = defaultdict(list)
    for row in quality_read.ocnli_agreed(src, quality_read.OCNLI_DEV):
        if _fits("zh", row["sentence1"].strip(), row["sentence2"].strip()):
            by_label[row["label"]].append(row)
    rng = random.Random(SEED + 3)
    used_premises: set[str] = set()
    items: list[dict] = []
    for label in ("entailment", "contradiction", "neutral"):
        pool = sorted(by_label[label], key=lambda r: int(r["id"]))
        rng.shuffle(pool)
        picked = 0
        for row in pool:
            if picked == OCNLI_TARGETS[label]:
                break
            if row["prem_id"] in used_premises:
                continue  # one hypothesis per premise
            used_premises.add(row["prem_id"])
            picked += 1
            items.append(quality_read.ocnli_item(row, quality_read.OCNLI_DEV))
    return items


# --------------------------------------------------------------------------- RGB counterfactual (zh, QA)

RGB_VARIANTS = (
    # (documents, answer field, label)
    ("positive", "answer", CONSISTENT),
    ("positive", "fakeanswer", INCONSISTENT),
    ("positive_wrong", "fakeanswer", CONSISTENT),
    ("positive_wrong", "answer", INCONSISTENT),
)


def rgb_items(src: PinnedSource) -> list[dict]:
    """One item per zh_fact query; the pairing of documents and answer decides the label (see SOURCES.md)."""
    eligible = []
    for row in src.jsonl("data/zh_fact.json"):
        answer, fake = row["answer"], row["fakeanswer"]
        if not isinstance(answer, str) or not isinstance(fake, str):
            continue  # list-valued answers (several acceptable strings) are skipped
        answer, fake = answer.strip(), fake.strip()
        pos, wrong = row["positive"], row["positive_wrong"]
        if not (
            quality_read.states(pos, answer, fake)
            and not quality_read.states(pos, fake, answer)
            and quality_read.states(wrong, fake, answer)
            and not quality_read.states(wrong, answer, fake)
        ):
            continue  # the documents must state exactly one of the two answers
        if not _fits("zh", "\n".join(d.strip() for d in pos), answer):
            continue
        if not _fits("zh", "\n".join(d.strip() for d in wrong), fake):
            continue
        eligible.append(row)
    rng = random.Random(SEED + 4)
    variants = [i % len(RGB_VARIANTS) for i in range(len(eligible))]
    rng.shuffle(variants)
    items: list[dict] = []
    for row, v in zip(eligible, variants, strict=True):
        docs_field, answer_field, label = RGB_VARIANTS[v]
        items.append(
            record(
                id=f"rgb-zh-fact-{int(row['id']):06d}",
                lang="zh",
                question=row["query"].strip(),
                reference="\n".join(d.strip() for d in row[docs_field]),
                answer=row[answer_field].strip(),
                label=label,
                error_type=None,
                source="RGB zh_fact (counterfactual robustness)",
                licence=quality_read.LICENCES["rgb"],
                source_id=f"zh_fact.json#id={row['id']} ({docs_field} + {answer_field})",
                source_model=None,
                task="QA",
                group=f"rgb:{row['id']}",
            )
        )
    return items


# --------------------------------------------------------------------------- Factcheck-GPT (en, claims from QA answers)


def factcheckgpt_items(src: PinnedSource) -> list[dict]:
    """One checkworthy ChatGPT claim against the five evidence passages retrieved for it (``factcheckgpt_pools``),
    FACTCHECKGPT_TARGETS of each stance."""
    pools = quality_read.factcheckgpt_pools(src, _fits_en)
    rng = random.Random(SEED + 5)
    chosen: list[dict] = []
    per_prompt: dict[str, Counter[str]] = {CONSISTENT: Counter(), INCONSISTENT: Counter()}
    for stance, n in FACTCHECKGPT_TARGETS.items():
        label = CONSISTENT if stance == "completely-support" else INCONSISTENT
        chosen.extend(_sample_all(pools[stance], rng, n, FACTCHECKGPT_MAX_PER_PROMPT, per_prompt[label]))
    return chosen


# --------------------------------------------------------------------------- SummEdits (en, Summary)


def summedits_items(src: PinnedSource) -> list[dict]:
    """LLM edits of verified seed summaries, each labelled consistent/inconsistent by annotators (1 / 0)."""
    rng = random.Random(SEED + 6)
    chosen: list[dict] = []
    for domain in quality_read.SUMMEDITS_DOMAINS:
        pools = quality_read.summedits_pools(src, domain, _fits_en)
        for label in (CONSISTENT, INCONSISTENT):
            chosen.extend(_sample_all(pools[label], rng, SUMMEDITS_PER_LABEL, SUMMEDITS_MAX_PER_DOCUMENT, Counter()))
    return chosen


# --------------------------------------------------------------------------- split and write


def split(items: list[dict]) -> tuple[list[dict], list[dict]]:
    """Group-aware split stratified by (lang, source dataset, label): about 40% dev, 60% test.

    Items that share a reference document (a group) always land in the same split. Each (lang, source) stratum
    has its own generator seeded from SEED and the stratum's name, so adding or removing a source leaves the
    split of the others unchanged.
    """
    strata: dict[tuple[str, str], dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for item in items:
        strata[(item["lang"], dataset_of(item))][item["group"]].append(item)
    dev: list[dict] = []
    test: list[dict] = []
    for key in sorted(strata):
        rng = random.Random(f"{SEED}:{key[0]}:{key[1]}")
        groups = strata[key]
        totals = Counter(item["label"] for group in groups.values() for item in group)
        target = {label: round(DEV_FRACTION * n) for label, n in totals.items()}
        names = sorted(groups)
        rng.shuffle(names)
        taken: Counter[str] = Counter()
        for name in names:
            group = sorted(groups[name], key=lambda it: it["id"])
            counts = Counter(item["label"] for item in group)
            if all(taken[label] + n <= target[label] for label, n in counts.items()):
                dev.extend(group)
                taken.update(counts)
            else:
                test.extend(group)
    shared = {item["reference"] for item in dev} & {item["reference"] for item in test}
    if shared:
        raise SourceError(f"{len(shared)} reference texts occur in both dev and test")
    return dev, test


def _dump(items: list[dict]) -> bytes:
    return dump_jsonl(sorted(items, key=lambda it: (it["lang"], it["id"])), FIELDS)


def build(sources: dict[str, PinnedSource]) -> tuple[bytes, bytes, list[dict], list[dict]]:
    builders: dict[str, Callable[[PinnedSource], list[dict]]] = {
        "faithbench": faithbench_items,
        "halueval": halueval_items,
        "factcheckgpt": factcheckgpt_items,
        "summedits": summedits_items,
        "ocnli": ocnli_items,
        "rgb": rgb_items,
    }
    items: list[dict] = []
    for name, builder in builders.items():
        items.extend(builder(sources[name]))
    ids = [item["id"] for item in items]
    duplicates = [i for i, n in Counter(ids).items() if n > 1]
    if duplicates:
        raise SourceError(f"duplicate ids: {duplicates[:5]}")
    dev, test = split(items)
    return _dump(dev), _dump(test), dev, test


def _summary(dev: list[dict], test: list[dict]) -> str:
    rows = Counter()
    for split_name, part in (("dev", dev), ("test", test)):
        for item in part:
            rows[(item["lang"], dataset_of(item), item["label"], split_name)] += 1
    out = ["lang  source        label         dev  test"]
    keys = sorted({k[:3] for k in rows})
    for lang, dataset, label in keys:
        d, t = rows[(lang, dataset, label, "dev")], rows[(lang, dataset, label, "test")]
        out.append(f"{lang:<5} {dataset:<13} {label:<13} {d:>4} {t:>5}")
    out.append(f"total dev={len(dev)} test={len(test)}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_source_arguments(parser, quality_read.PINNED)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/data/quality"))
    args = parser.parse_args(argv)

    sources = open_sources(quality_read.PINNED, args)
    dev_text, test_text, dev, test = build(sources)
    if args.print_digests:
        print_digests(sources)
    print(_summary(dev, test))
    return write_or_check({args.out / "dev.jsonl": dev_text, args.out / "test.jsonl": test_text}, args.check)


if __name__ == "__main__":
    sys.exit(main())
