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
import hashlib
import json
import random
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path

from pinned import PinnedSource, SourceError

SEED = 20261123
DEV_FRACTION = 0.4

# Length filter, so that a 1.5B model with an 8k-token context can judge every item on CPU.
MAX_REFERENCE_CHARS = {"en": 3500, "zh": 2500}
MAX_ANSWER_CHARS = 800

CONSISTENT = "consistent"
INCONSISTENT = "inconsistent"

FIELDS = (
    "id",
    "lang",
    "question",
    "reference",
    "answer",
    "label",
    "error_type",
    "source",
    "licence",
    "source_id",
    "source_model",
    "task",
)

SUMMEDITS_FILE = "data/summedits/summedits_{}.json"

# repository -> (commit, {path: sha256})
PINNED: dict[str, tuple[str, dict[str, str]]] = {
    "faithbench": (
        "cf89797d82812c23b5d5e5c121f1d9b8983bbbce",
        {
            "data_for_release/batch_1.json": "a4e7858702e741b0fb024a022a906f61fb8eb65011b7f7b138e56e080a4c8c59",
            "data_for_release/batch_2.json": "18f1b2b9eae6fbf2020f295dc5ca512ef1a7e389e763b707bc51831f58df6a70",
            "data_for_release/batch_3.json": "84b709a9d88998f478f429ee2330ea18666ae9e5340ea398ece03cec6ab54308",
            "data_for_release/batch_4.json": "c0f68bc222dd8b6e332cb6668840de8da150687ddf6f9b5bd243f389033fda42",
            "data_for_release/batch_5.json": "6be08bb37ccdf68e41e117b0174cc3c8b41ed7bf85134d00e0e89c023e96b436",
            "data_for_release/batch_6.json": "a5fd42aa64fbe15f535192ddfd3cfc72b53535cde7834cb6685ebe0a229f8587",
            "data_for_release/batch_7.json": "28e83e1487381ce317103505dab4d5679ad74f53541374a98e24e3673734343b",
            "data_for_release/batch_8.json": "5cf2b8ab42fe1d4b0018cf736448dd8a88318267b0efc2f45ea200e713932975",
            "data_for_release/batch_9.json": "4924fe2d0975890712032a128544c0619c2ebf81d5d472e99e7883f1a9720bd5",
            "data_for_release/batch_10.json": "8e5cec822516abbf74cd6796104bbe537da98628c671b64c10afa3b15bebe08c",
            "data_for_release/batch_11.json": "cf999c8fa9696f4b24d8f4b08f9fdd6603a942cfee63ad851ff6d1f265c116cc",
            "data_for_release/batch_12.json": "fda9f0e0eae69c13b79a8fc1f81d1f8a02e9f28ad8c3274619c4369bb15c818e",
            "data_for_release/batch_14.json": "72f07b9f4b91f8a49d96e7adc79a8308edb92a2e6b34babcd9ef68dc6b7b2f34",
            "data_for_release/batch_15.json": "c6608ce2edd17134674c7f8a0fdfc871e22458b432b35506889886c737eb4663",
            "data_for_release/batch_16.json": "e35ace1069bb79844b122415d3c4192f7147737a2b9ad509185fb2c1ba7090db",
        },
    ),
    "halueval": (
        "b7253db3cdaa0ab2c382f92b26b390109174f77e",
        {"generation/qa/qa_one-turn_data.json": "a69227a32d03a0f034db10de62a92cdfd0e57c305f72a9f8c48e0edab74e44f6"},
    ),
    "factcheckgpt": (
        "a9e6a04a953ad880806529c504a679dd1ad06528",
        {"factcheck-GPT-benchmark.jsonl": "8bbf41a58ee1b7431fecd2a23f231f764e378e04edeb4d2a7a83949a7f40cf4b"},
    ),
    "summedits": (
        "0da1dfa62c783218d26208c1796d3a2605bec745",
        {
            SUMMEDITS_FILE.format(domain): digest
            for domain, digest in {
                "sales_call": "81381ad89c8e3dd8450ee6355f847e8b76cbb134e126d5568a79a33334bb1fef",
                "sales_email": "8267fffdd318e513bde0f7efbd9226f908f1a5a2944f783902fdd0d6b0b8ccef",
                "scitldr": "b4d359277bafa11587505f0332797266b69c316c713db17376f0d99413e4b350",
                "qmsumm": "011e2b70ba291d1a75d14526fcacb156f70cb6ed66b375143768389b6db67bff",
            }.items()
        },
    ),
    "ocnli": (
        "b53efdee17257a5c33993cf6fcf8ffff0497ea0e",
        {"data/ocnli/dev.json": "001ded235d73a18dac68a45a38cd5f9b3f9311fa4246df623e199422c073ddc5"},
    ),
    "rgb": (
        "65ec39e40e7dc9abb50e9bf1b4f32be3f6f16615",
        {"data/zh_fact.json": "171c4bc97860635092ce099f2da095c6ba8d07f0c6f7a19d0231373192f07da0"},
    ),
}

LICENCES = {
    "faithbench": "CC BY-NC-SA 4.0",
    "halueval": "MIT",
    "factcheckgpt": "Apache-2.0",
    "summedits": "Apache-2.0",
    "ocnli": "CC BY-NC 2.0",
    "rgb": "CC BY-NC-SA 4.0",
}

# Targets per source and label (after the length filter); see SOURCES.md.
FAITHBENCH_PER_LABEL = 70
FAITHBENCH_MAX_PER_DOCUMENT = 3
HALUEVAL_PER_LABEL = 30
OCNLI_TARGETS = {"entailment": 60, "neutral": 30, "contradiction": 30}
OCNLI_MIN_AGREEMENT = 4  # of 5 annotators
FACTCHECKGPT_TARGETS = {"completely-support": 50, "refute": 30, "irrelevant": 20}
FACTCHECKGPT_MAX_PER_PROMPT = 3  # claims per question and per label
SUMMEDITS_DOMAINS = ("sales_call", "sales_email", "scitldr", "qmsumm")
SUMMEDITS_PER_LABEL = 12  # per domain
SUMMEDITS_MAX_PER_DOCUMENT = 2  # edited summaries per document and per label


class Source(PinnedSource):
    def __init__(self, name: str, root: Path, pin_only: bool = False) -> None:
        super().__init__(name, root, *PINNED[name], pin_only=pin_only)


def _fits(lang: str, reference: str, answer: str) -> bool:
    return 0 < len(reference) <= MAX_REFERENCE_CHARS[lang] and 0 < len(answer) <= MAX_ANSWER_CHARS


def _item(**fields: object) -> dict:
    item = {key: fields.get(key) for key in FIELDS}
    item["_group"] = fields["group"]
    return item


# --------------------------------------------------------------------------- FaithBench (en, Summary)


def faithbench_items(src: Source) -> list[dict]:
    """Consistent: no annotator marked anything. Inconsistent: at least two annotators marked an Unwanted span."""
    candidates: dict[str, list[dict]] = {CONSISTENT: [], INCONSISTENT: []}
    for path in src.files:
        batch = path.rsplit("_", 1)[1].removesuffix(".json")
        for sample in src.json(path)["samples"]:
            reference = sample["source"].strip()
            answer = sample["summary"].strip()
            if not _fits("en", reference, answer):
                continue
            annotations = sample["annotations"]
            unwanted = [a for a in annotations if "Unwanted" in a["label"]]
            if not annotations:
                label, error_type = CONSISTENT, None
            elif len({a["annotator_id"] for a in unwanted}) >= 2:
                label = INCONSISTENT
                subtypes = sorted({x for a in unwanted for x in a["label"] if x.startswith("Unwanted.")})
                error_type = "; ".join(subtypes) if subtypes else "Unwanted"
            else:
                continue  # only Benign/Questionable marks, or a single annotator: too uncertain
            sample_id = int(sample["sample_id"])
            candidates[label].append(
                _item(
                    id=f"faithbench-en-{int(batch):02d}{sample_id:04d}",
                    lang="en",
                    question=None,
                    reference=reference,
                    answer=answer,
                    label=label,
                    error_type=error_type,
                    source="FaithBench (data_for_release, summarization)",
                    licence=LICENCES["faithbench"],
                    source_id=f"batch_{batch}.json#sample_id={sample_id}",
                    source_model=sample["metadata"]["summarizer"],
                    task="Summary",
                    group=f"faithbench:{hashlib.sha256(reference.encode()).hexdigest()[:16]}",
                )
            )
    rng = random.Random(SEED + 1)
    chosen: list[dict] = []
    for label in (CONSISTENT, INCONSISTENT):
        pool = sorted(candidates[label], key=lambda it: it["id"])
        rng.shuffle(pool)
        per_document: Counter[str] = Counter()
        picked = 0
        for item in pool:
            if picked == FAITHBENCH_PER_LABEL:
                break
            if per_document[item["_group"]] >= FAITHBENCH_MAX_PER_DOCUMENT:
                continue
            per_document[item["_group"]] += 1
            chosen.append(item)
            picked += 1
    return chosen


# --------------------------------------------------------------------------- HaluEval (en, QA)


def halueval_items(src: Source) -> list[dict]:
    """One answer per HotpotQA item: right_answer -> consistent, hallucinated_answer -> inconsistent."""
    rows = src.jsonl("generation/qa/qa_one-turn_data.json")
    eligible = [
        i
        for i, row in enumerate(rows)
        if _fits("en", row["knowledge"].strip(), row["right_answer"].strip())
        and _fits("en", row["knowledge"].strip(), row["hallucinated_answer"].strip())
    ]
    rng = random.Random(SEED + 2)
    picked = rng.sample(eligible, 2 * HALUEVAL_PER_LABEL)
    items: list[dict] = []
    for n, index in enumerate(picked):
        row = rows[index]
        right = n < HALUEVAL_PER_LABEL
        field = "right_answer" if right else "hallucinated_answer"
        items.append(
            _item(
                id=f"halueval-en-qa-{index:06d}",
                lang="en",
                question=row["question"].strip(),
                reference=row["knowledge"].strip(),
                answer=row[field].strip(),
                label=CONSISTENT if right else INCONSISTENT,
                error_type=None,
                source="HaluEval QA (generation/qa one-turn samples)",
                licence=LICENCES["halueval"],
                source_id=f"qa_one-turn_data.json#line={index + 1}:{field}",
                source_model=None if right else "ChatGPT",
                task="QA",
                group=f"halueval:{index}",
            )
        )
    return items


# --------------------------------------------------------------------------- OCNLI (zh, NLI)


def ocnli_items(src: Source) -> list[dict]:
    """Premise as reference, hypothesis as answer; entailment -> consistent, neutral/contradiction -> inconsistent."""
    by_label: dict[str, list[dict]] = defaultdict(list)
    for row in src.jsonl("data/ocnli/dev.json"):
        label = row["label"]
        if label not in OCNLI_TARGETS:
            continue
        votes = [row[f"label{i}"] for i in range(5)]
        if votes.count(label) < OCNLI_MIN_AGREEMENT:
            continue
        reference, answer = row["sentence1"].strip(), row["sentence2"].strip()
        if not _fits("zh", reference, answer):
            continue
        by_label[label].append(row)
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
            votes = [row[f"label{i}"] for i in range(5)]
            items.append(
                _item(
                    id=f"ocnli-zh-{int(row['id']):06d}",
                    lang="zh",
                    question=None,
                    reference=row["sentence1"].strip(),
                    answer=row["sentence2"].strip(),
                    label=CONSISTENT if label == "entailment" else INCONSISTENT,
                    error_type=None if label == "entailment" else label,
                    source=f"OCNLI dev (genre {row['genre']})",
                    licence=LICENCES["ocnli"],
                    source_id=f"dev.json#id={row['id']} (votes {votes.count(label)}/5 {label})",
                    source_model=None,
                    task="NLI",
                    group=f"ocnli:{row['prem_id']}",
                )
            )
    return items


# --------------------------------------------------------------------------- RGB counterfactual (zh, QA)

RGB_VARIANTS = (
    # (documents, answer field, label)
    ("positive", "answer", CONSISTENT),
    ("positive", "fakeanswer", INCONSISTENT),
    ("positive_wrong", "fakeanswer", CONSISTENT),
    ("positive_wrong", "answer", INCONSISTENT),
)


def _states(docs: list[str], value: str, other: str) -> bool:
    """True if ``value`` occurs in ``docs`` outside occurrences of ``other`` (e.g. "70" inside "170")."""
    text = "\n".join(docs)
    if value in other:
        text = text.replace(other, "\x00")
    return value in text


def rgb_items(src: Source) -> list[dict]:
    """One item per zh_fact query; the pairing of documents and answer decides the label (see SOURCES.md)."""
    eligible = []
    for row in src.jsonl("data/zh_fact.json"):
        answer, fake = row["answer"], row["fakeanswer"]
        if not isinstance(answer, str) or not isinstance(fake, str):
            continue  # list-valued answers (several acceptable strings) are skipped
        answer, fake = answer.strip(), fake.strip()
        pos, wrong = row["positive"], row["positive_wrong"]
        if not (
            _states(pos, answer, fake)
            and not _states(pos, fake, answer)
            and _states(wrong, fake, answer)
            and not _states(wrong, answer, fake)
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
            _item(
                id=f"rgb-zh-fact-{int(row['id']):06d}",
                lang="zh",
                question=row["query"].strip(),
                reference="\n".join(d.strip() for d in row[docs_field]),
                answer=row[answer_field].strip(),
                label=label,
                error_type=None,
                source="RGB zh_fact (counterfactual robustness)",
                licence=LICENCES["rgb"],
                source_id=f"zh_fact.json#id={row['id']} ({docs_field} + {answer_field})",
                source_model=None,
                task="QA",
                group=f"rgb:{row['id']}",
            )
        )
    return items


# --------------------------------------------------------------------------- Factcheck-GPT (en, claims from QA answers)


def _capped_sample(pool: list[dict], rng: random.Random, n: int, cap: int, taken: Counter[str]) -> list[dict]:
    """Shuffle ``pool`` (sorted by id first) and take ``n`` items, at most ``cap`` per group counted in ``taken``."""
    pool = sorted(pool, key=lambda it: it["id"])
    rng.shuffle(pool)
    chosen: list[dict] = []
    for item in pool:
        if len(chosen) == n:
            break
        if taken[item["_group"]] >= cap:
            continue
        taken[item["_group"]] += 1
        chosen.append(item)
    if len(chosen) < n:
        raise SourceError(f"only {len(chosen)} of {n} items available for {pool[0]['id'] if pool else 'an empty pool'}")
    return chosen


def factcheckgpt_items(src: Source) -> list[dict]:
    """One checkworthy ChatGPT claim against the five evidence passages retrieved for it.

    Each passage has a human stance label. Consistent: some passage completely supports the claim and none refutes
    it. Inconsistent: some passage refutes the claim and none completely supports it (error_type ``refute``), or
    all five passages are irrelevant, i.e. the reference does not support the claim (error_type ``irrelevant``).
    """
    rows = src.jsonl("factcheck-GPT-benchmark.jsonl")
    pools: dict[str, list[dict]] = {stance: [] for stance in FACTCHECKGPT_TARGETS}
    seen: set[tuple[str, str]] = set()
    for line, row in enumerate(rows, start=1):
        question = row["prompt"].strip()
        group = f"factcheckgpt:{' '.join(question.lower().split())}"
        for sentence_key, sentence in row["sentences"].items():
            sentence_no = int(sentence_key.removeprefix("sentence"))
            for k, claim in enumerate(sentence["claims"]):
                if sentence["claim_checkworthiness"][k] != "factual":
                    continue  # opinions and non-claims
                stances = sentence["stance_claim_autoEvid"][k]
                passages = sentence["auto_evidence"][k]
                if not stances or len(stances) != len(passages):
                    continue
                if "completely-support" in stances and "refute" not in stances:
                    pool = "completely-support"
                elif "refute" in stances and "completely-support" not in stances:
                    pool = "refute"
                elif all(stance == "irrelevant" for stance in stances):
                    pool = "irrelevant"
                else:
                    continue  # only partial support, or both support and refutation
                reference = "\n\n".join(p.strip() for p in passages)
                answer = claim.strip()
                if not _fits("en", reference, answer) or (reference, answer) in seen:
                    continue
                seen.add((reference, answer))
                consistent = pool == "completely-support"
                pools[pool].append(
                    _item(
                        id=f"factcheckgpt-en-{line:03d}-{sentence_no:02d}-{k + 1}",
                        lang="en",
                        question=question,
                        reference=reference,
                        answer=answer,
                        label=CONSISTENT if consistent else INCONSISTENT,
                        error_type=None if consistent else pool,
                        source="Factcheck-GPT (claim vs. retrieved evidence, human stance labels)",
                        licence=LICENCES["factcheckgpt"],
                        source_id=(
                            f"factcheck-GPT-benchmark.jsonl#line={line}:{sentence_key}:claim={k + 1} "
                            f"(stances {', '.join(stances)})"
                        ),
                        source_model="ChatGPT",
                        task="QA",
                        group=group,
                    )
                )
    rng = random.Random(SEED + 5)
    chosen: list[dict] = []
    per_prompt: dict[str, Counter[str]] = {CONSISTENT: Counter(), INCONSISTENT: Counter()}
    for stance, n in FACTCHECKGPT_TARGETS.items():
        label = CONSISTENT if stance == "completely-support" else INCONSISTENT
        chosen.extend(_capped_sample(pools[stance], rng, n, FACTCHECKGPT_MAX_PER_PROMPT, per_prompt[label]))
    return chosen


# --------------------------------------------------------------------------- SummEdits (en, Summary)


def summedits_items(src: Source) -> list[dict]:
    """LLM edits of verified seed summaries, each labelled consistent/inconsistent by annotators (1 / 0)."""
    rng = random.Random(SEED + 6)
    chosen: list[dict] = []
    for domain in SUMMEDITS_DOMAINS:
        by_label: dict[str, list[dict]] = {CONSISTENT: [], INCONSISTENT: []}
        for index, sample in enumerate(src.json(SUMMEDITS_FILE.format(domain))):
            if sample["id"].endswith("_og"):
                continue  # the seed summary itself: not an LLM edit
            reference, answer = sample["doc"].strip(), sample["summary"].strip()
            if not _fits("en", reference, answer):
                continue
            if sample["label"] not in (0, 1):
                raise SourceError(f"summedits: {domain} {sample['id']}: label {sample['label']!r}")
            label = CONSISTENT if sample["label"] == 1 else INCONSISTENT
            edit_types = "; ".join(sample["edit_types"]) if label == INCONSISTENT else ""
            by_label[label].append(
                _item(
                    id=f"summedits-en-{domain.replace('_', '')}-{sample['id']}",
                    lang="en",
                    question=None,
                    reference=reference,
                    answer=answer,
                    label=label,
                    error_type=edit_types or None,
                    source=f"SummEdits ({domain})",
                    licence=LICENCES["summedits"],
                    source_id=f"summedits_{domain}.json#index={index} (id {sample['id']}, split {sample['split']})",
                    source_model=None,
                    task="Summary",
                    group=f"summedits:{domain}:{hashlib.sha256(reference.encode()).hexdigest()[:16]}",
                )
            )
        for label in (CONSISTENT, INCONSISTENT):
            per_document: Counter[str] = Counter()
            chosen.extend(
                _capped_sample(by_label[label], rng, SUMMEDITS_PER_LABEL, SUMMEDITS_MAX_PER_DOCUMENT, per_document)
            )
    return chosen


# --------------------------------------------------------------------------- split and write


def _dataset(item: dict) -> str:
    return item["id"].split("-", 1)[0]


def split(items: list[dict]) -> tuple[list[dict], list[dict]]:
    """Group-aware split stratified by (lang, source dataset, label): about 40% dev, 60% test.

    Items that share a reference document (a group) always land in the same split. Each (lang, source) stratum
    has its own generator seeded from SEED and the stratum's name, so adding or removing a source leaves the
    split of the others unchanged.
    """
    strata: dict[tuple[str, str], dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for item in items:
        strata[(item["lang"], _dataset(item))][item["_group"]].append(item)
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


def _dump(items: Iterable[dict]) -> str:
    lines = []
    for item in sorted(items, key=lambda it: (it["lang"], it["id"])):
        record = {key: item[key] for key in FIELDS}
        line = json.dumps(record, ensure_ascii=False)
        # Keep every record on one physical line even for readers that split on Unicode line breaks.
        line = line.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029").replace("\x85", "\\u0085")
        lines.append(line + "\n")
    return "".join(lines)


def build(sources: dict[str, Source]) -> tuple[str, str, list[dict], list[dict]]:
    builders: dict[str, Callable[[Source], list[dict]]] = {
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
            rows[(item["lang"], _dataset(item), item["label"], split_name)] += 1
    out = ["lang  source        label         dev  test"]
    keys = sorted({k[:3] for k in rows})
    for lang, dataset, label in keys:
        d, t = rows[(lang, dataset, label, "dev")], rows[(lang, dataset, label, "test")]
        out.append(f"{lang:<5} {dataset:<13} {label:<13} {d:>4} {t:>5}")
    out.append(f"total dev={len(dev)} test={len(test)}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name in PINNED:
        parser.add_argument(f"--{name}", type=Path, required=True, help=f"git mirror or checkout of the {name} source")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/data/quality"))
    parser.add_argument("--check", action="store_true", help="compare with the files in --out, write nothing")
    parser.add_argument("--print-digests", action="store_true", help="print the SHA-256 of every source file read")
    parser.add_argument("--no-verify", action="store_true", help="do not check source files against pinned hashes")
    args = parser.parse_args(argv)

    sources = {name: Source(name, getattr(args, name), pin_only=args.no_verify) for name in PINNED}
    dev_text, test_text, dev, test = build(sources)
    if args.print_digests:
        for name, src in sources.items():
            for path, digest in src.digests.items():
                print(f"{name} {src.commit} {path} {digest}")
    print(_summary(dev, test))

    targets = {args.out / "dev.jsonl": dev_text, args.out / "test.jsonl": test_text}
    if args.check:
        stale = [str(p) for p, text in targets.items() if not p.is_file() or p.read_bytes() != text.encode("utf-8")]
        if stale:
            print(f"differs from the build: {', '.join(stale)}", file=sys.stderr)
            return 1
        print("dev.jsonl and test.jsonl match the build")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    for path, text in targets.items():
        path.write_bytes(text.encode("utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
