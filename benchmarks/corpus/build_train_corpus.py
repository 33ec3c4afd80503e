"""Build benchmarks/data/train/train.jsonl (and, with RAGTruth, benchmarks/data/ragtruth/test.jsonl).

The training split is for fitting a classifier head ("is the answer faithful to the reference?"). Every item text
and every label comes from a public dataset; this script only selects, maps labels to consistent/inconsistent,
pairs RGB's documents with RGB's answer strings and orders the records (every prefix is a label-balanced mix).
It needs no network: point it at the source repositories, either as bare git mirrors (read at the pinned commit
with ``git cat-file``) or as plain checkouts of that commit. Each file read is checked against a pinned SHA-256
(RAGTruth: against its git blob id at the pinned commit, since its data files are too large for the stored
snapshots this script was written against), so a rebuild is byte-for-byte identical.

No training item shares a source document (group) or a reference text with the quality corpus
(benchmarks/data/quality/{dev,test}.jsonl): the script reads those two files, excludes every candidate whose group,
reference, or any reference line of at least MIN_SHARED_SEGMENT_CHARS characters occurs there, and checks the
result again before writing (it fails otherwise).

    python benchmarks/corpus/build_train_corpus.py \\
        --faithbench /path/to/vectara+FaithBench/repo \\
        --halueval /path/to/RUCAIBox+HaluEval/repo \\
        --factcheckgpt /path/to/yuxiaw+Factcheck-GPT/repo \\
        --summedits /path/to/salesforce+factualNLG/repo \\
        --ocnli /path/to/CLUEbenchmark+OCNLI/repo \\
        --rgb /path/to/chen700564+RGB/repo \\
        [--ragtruth /path/to/ParticleMedia+RAGTruth/checkout] \\
        --quality benchmarks/data/quality --out benchmarks/data

Add ``--check`` to compare with the files already in ``--out`` instead of writing them.
See benchmarks/data/train/SOURCES.md for what each source contributes and why.
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path

import quality_sources_read as quality_read
from corpus_records import (
    CONSISTENT,
    GROUPED_FIELDS,
    INCONSISTENT,
    LABELS,
    SEED,
    dataset_of,
    dump_jsonl,
    duplicate_problems,
    record,
    sha16,
    write_or_check,
)
from corpus_selection import HeldOut, balanced, interleave, read_records, reference_lines
from pinned import PinnedSource, SourceError, add_source_arguments, git_blob_id, open_sources, print_digests

MAX_REFERENCE_CHARS = {"en": 2500, "zh": 1500}
MAX_ANSWER_CHARS = 800
RAGTRUTH_TEST_MAX_REFERENCE_CHARS = 3000

OCNLI_TRAIN = "data/ocnli/train.10k.json"

# repository -> (commit, {path: sha256})
# The quality corpus's sources at the same commits (quality_sources_read.PINNED), and the files only this split reads.
EXTRA_FILES: dict[str, dict[str, str]] = {
    "ocnli": {
        # train.50k.json and train.30k.json are absent from the stored snapshot (too large); train.10k.json is a
        # sample of train.30k and contains train.3k.json.
        OCNLI_TRAIN: "b8a0b7b72f62eb8d47a4d21ba34c4948bf2bdf5fde649a964ef3779504c7ab81",
    },
    "rgb": {
        "data/en_fact.json": "92f4b2330ee407f74fbd923197028ef5140cfbc1f4b4092efec2d4d10ae6c9e5",
        "data/zh_refine.json": "7a5c7547dcfa1b83429b53a41644453508f820f502d3817312cbf8051afb4563",
    },
}
PINNED: dict[str, tuple[str, dict[str, str]]] = {
    name: (commit, {**files, **EXTRA_FILES.get(name, {})}) for name, (commit, files) in quality_read.PINNED.items()
}

# RAGTruth's data files (about 30 MB together) are pinned by their git blob ids at the commit, because no stored
# snapshot this script was written against contains them; the SHA-256 of each is printed by --print-digests.
RAGTRUTH_COMMIT = "c103204b9ce28d6bbad859304bf30de72b8ed8fe"
RAGTRUTH_BLOBS = {
    "dataset/response.jsonl": "f9ae5913fb9976684f3e13be3cd3465062db54cc",
    "dataset/source_info.jsonl": "119277774009f110aa58596b93f9512f62594a89",
}

LICENCES = {**quality_read.LICENCES, "ragtruth": "MIT"}

# Per-source selection (after the length filter and the exclusion of dev/test documents); see SOURCES.md.
FAITHBENCH_PER_LABEL = 400
FAITHBENCH_MAX_PER_DOCUMENT = 10  # per passage and label (each passage was summarised by 10 models)
HALUEVAL_ITEMS = 300  # each contributes its right and its hallucinated answer
FACTCHECKGPT_PER_LABEL = 150
FACTCHECKGPT_MAX_PER_PROMPT = 10  # claims per question and label
SUMMEDITS_PER_LABEL = 100  # per domain
SUMMEDITS_MAX_PER_DOCUMENT = 8  # edited summaries per document and label
OCNLI_PER_LABEL = 750  # consistent = entailment; inconsistent = half contradiction, half neutral
RGB_REFINE_MAX_QUESTIONS = 300
RGB_REFINE_DOCS = 3  # documents per reference
RAGTRUTH_TRAIN_PER_TASK_LABEL = 225  # QA and Summary: at most 900 items
RAGTRUTH_TRAIN_MAX_PER_SOURCE = 2  # responses per source and label
RAGTRUTH_TEST_PER_TASK_LABEL = 50  # 200 items
RAGTRUTH_TASKS = ("QA", "Summary")


def ragtruth_source(root: Path, pin_only: bool = False) -> PinnedSource:
    """RAGTruth at its pinned commit; its files are too large for the snapshots' text: pinned by git blob id."""
    return PinnedSource("ragtruth", root, RAGTRUTH_COMMIT, dict(RAGTRUTH_BLOBS), pin_only, digest=git_blob_id)


def _fits(lang: str, reference: str, answer: str, max_reference: int | None = None) -> bool:
    limit = max_reference if max_reference is not None else MAX_REFERENCE_CHARS[lang]
    return 0 < len(reference) <= limit and 0 < len(answer) <= MAX_ANSWER_CHARS


# --------------------------------------------------------------------------- what dev/test already use


class Held(HeldOut):
    """Groups, reference texts and reference lines of the quality corpus (dev + test)."""

    def __init__(self, records: list[dict], ocnli_prem_ids: dict[int, str]) -> None:
        super().__init__(records)
        self.groups = {self.group_of(r, ocnli_prem_ids) for r in records}

    @staticmethod
    def group_of(item: dict, ocnli_prem_ids: dict[int, str]) -> str:
        """The group key this script (and the quality build) gives the item's source document."""
        dataset, reference = dataset_of(item), item["reference"]
        if dataset == "faithbench":
            return f"faithbench:{sha16(reference)}"
        if dataset == "halueval":
            line = re.fullmatch(r"qa_one-turn_data\.json#line=(\d+):\w+", item["source_id"])
            if not line:
                raise SourceError(f"unexpected HaluEval source_id {item['source_id']!r}")
            return f"halueval:{int(line.group(1)) - 1}"
        if dataset == "factcheckgpt":
            return f"factcheckgpt:{' '.join(item['question'].lower().split())}"
        if dataset == "summedits":
            domain = re.fullmatch(r"SummEdits \((\w+)\)", item["source"])
            if not domain:
                raise SourceError(f"unexpected SummEdits source {item['source']!r}")
            return f"summedits:{domain.group(1)}:{sha16(reference)}"
        if dataset == "ocnli":
            pair_id = int(item["id"].rsplit("-", 1)[1])
            return f"ocnli:{ocnli_prem_ids[pair_id]}"
        if dataset == "rgb":
            return f"rgb:zh_fact:{int(item['id'].rsplit('-', 1)[1])}"
        raise SourceError(f"quality corpus has an item of unknown source {item['id']!r}: update this script")

    def shares_document(self, group: str, reference: str) -> bool:
        """True if dev/test has this group, this reference or one of its lines."""
        return group in self.groups or self.shares_text(reference)

    def keep_en(self) -> quality_read.Keep:
        """The readers' ``keep`` for English candidates: within the length limits, no document of dev/test."""
        return lambda group, reference, answer: (
            _fits("en", reference, answer) and not self.shares_document(group, reference)
        )


def load_held(quality_dir: Path, ocnli: PinnedSource) -> Held:
    records = read_records([quality_dir / "dev.jsonl", quality_dir / "test.jsonl"])
    prem_ids = {int(row["id"]): row["prem_id"] for row in ocnli.jsonl(quality_read.OCNLI_DEV)}
    return Held(records, prem_ids)


# --------------------------------------------------------------------------- FaithBench (en, Summary)


def faithbench_items(src: PinnedSource, held: Held) -> list[dict]:
    """Same label rule as the quality corpus: no annotation -> consistent; Unwanted by >= 2 annotators -> not."""
    return balanced(
        quality_read.faithbench_pools(src, held.keep_en()),
        random.Random(f"{SEED}:train:faithbench"),
        FAITHBENCH_PER_LABEL,
        FAITHBENCH_MAX_PER_DOCUMENT,
    )


# --------------------------------------------------------------------------- HaluEval (en, QA)


def halueval_items(src: PinnedSource, held: Held) -> list[dict]:
    """Both answers of each remaining HotpotQA item: right_answer -> consistent, hallucinated_answer -> not."""
    rows = src.jsonl(quality_read.HALUEVAL_FILE)
    eligible = []
    for index, row in enumerate(rows):
        reference = row["knowledge"].strip()
        if held.shares_document(f"halueval:{index}", reference):
            continue
        if _fits("en", reference, row["right_answer"].strip()) and _fits(
            "en", reference, row["hallucinated_answer"].strip()
        ):
            eligible.append(index)
    rng = random.Random(f"{SEED}:train:halueval")
    picked = sorted(rng.sample(eligible, min(HALUEVAL_ITEMS, len(eligible))))
    return [
        quality_read.halueval_item(
            rows[index], index, field, f"halueval-en-qa-{index:06d}-{'r' if field == 'right_answer' else 'h'}"
        )
        for index in picked
        for field in ("right_answer", "hallucinated_answer")
    ]


# --------------------------------------------------------------------------- Factcheck-GPT (en, claims)


def factcheckgpt_items(src: PinnedSource, held: Held) -> list[dict]:
    """Same label rule as the quality corpus (supported / refuted / all passages irrelevant)."""
    stances = quality_read.factcheckgpt_pools(src, held.keep_en())
    pools = {CONSISTENT: stances["completely-support"], INCONSISTENT: stances["refute"] + stances["irrelevant"]}
    return balanced(
        pools, random.Random(f"{SEED}:train:factcheckgpt"), FACTCHECKGPT_PER_LABEL, FACTCHECKGPT_MAX_PER_PROMPT
    )


# --------------------------------------------------------------------------- SummEdits (en, Summary)


def summedits_items(src: PinnedSource, held: Held) -> list[dict]:
    """LLM edits of verified seed summaries labelled by annotators; documents of dev/test left out."""
    chosen: list[dict] = []
    for domain in quality_read.SUMMEDITS_DOMAINS:
        pools = quality_read.summedits_pools(src, domain, held.keep_en())
        rng = random.Random(f"{SEED}:train:summedits:{domain}")
        chosen.extend(balanced(pools, rng, SUMMEDITS_PER_LABEL, SUMMEDITS_MAX_PER_DOCUMENT))
    return chosen


# --------------------------------------------------------------------------- OCNLI train (zh, NLI)


def ocnli_items(src: PinnedSource, held: Held) -> list[dict]:
    """Pairs of train.10k.json with 5 labels, >= 4 agreeing; entailment -> consistent, else inconsistent."""
    pools: dict[str, list[dict]] = defaultdict(list)
    for row in quality_read.ocnli_agreed(src, OCNLI_TRAIN):
        reference, answer = row["sentence1"].strip(), row["sentence2"].strip()
        if _fits("zh", reference, answer) and not held.shares_document(f"ocnli:{row['prem_id']}", reference):
            pools[row["label"]].append(quality_read.ocnli_item(row, OCNLI_TRAIN))
    rng = random.Random(f"{SEED}:train:ocnli")
    for label in pools:
        pools[label].sort(key=lambda it: it["id"])
        rng.shuffle(pools[label])
    n = min(len(pools["entailment"]), OCNLI_PER_LABEL, len(pools["contradiction"]) + len(pools["neutral"]))
    neutral = min(len(pools["neutral"]), n // 2)  # half each, as far as the pools allow
    contradiction = n - neutral
    if contradiction > len(pools["contradiction"]):
        contradiction = len(pools["contradiction"])
        neutral = n - contradiction
    return pools["entailment"][:n] + pools["contradiction"][:contradiction] + pools["neutral"][:neutral]


# --------------------------------------------------------------------------- RGB (zh, QA)


def _alternatives(answer: object) -> list[str] | None:
    """RGB answers: a string, or a list of parts each a string or a list of alternatives. One part only here."""
    if isinstance(answer, str):
        return [answer.strip()]
    if isinstance(answer, list) and len(answer) == 1:
        part = answer[0]
        if isinstance(part, str):
            return [part.strip()]
        if isinstance(part, list) and all(isinstance(a, str) for a in part):
            return [a.strip() for a in part if a.strip()]
    return None  # several parts (all needed): no single answer string in the source


RGB_FACT_VARIANTS = (
    # (documents, answer field, label, id suffix)
    ("positive", "answer", CONSISTENT, "pa"),
    ("positive", "fakeanswer", INCONSISTENT, "pf"),
    ("positive_wrong", "fakeanswer", CONSISTENT, "wf"),
    ("positive_wrong", "answer", INCONSISTENT, "wa"),
)


def _fact_pick(row: dict) -> tuple[str, str] | None:
    """The answer and fake answer strings: the true documents state the answer and no fake alternative, the edited
    documents the fake answer and no true alternative (one alternative of each is chosen, the first that works)."""
    answers, fakes = _alternatives(row["answer"]), _alternatives(row["fakeanswer"])
    if not answers or not fakes or set(answers) & set(fakes):
        return None
    pos, wrong = row["positive"], row["positive_wrong"]
    for answer in answers:
        for fake in fakes:
            if (
                quality_read.states(pos, answer, fake)
                and quality_read.states(wrong, fake, answer)
                and not any(quality_read.states(pos, f, answer) for f in fakes)
                and not any(quality_read.states(wrong, a, fake) for a in answers)
            ):
                return answer, fake
    return None


def rgb_fact_items(src: PinnedSource, held: Held, lang: str) -> list[dict]:
    """RGB counterfactual questions ({lang}_fact.json), all four document/answer pairings of each question.

    The quality corpus uses one pairing of 91 zh_fact questions; those questions are left out here. en_fact is not
    in the quality corpus. See SOURCES.md for the pairing rule.
    """
    items: list[dict] = []
    for row in src.jsonl(f"data/{lang}_fact.json"):
        group = f"rgb:{lang}_fact:{int(row['id'])}"
        references = {f: "\n".join(d.strip() for d in row[f]) for f in ("positive", "positive_wrong")}
        if any(held.shares_document(group, reference) for reference in references.values()):
            continue
        pick = _fact_pick(row)
        if pick is None:
            continue
        answers = {"answer": pick[0], "fakeanswer": pick[1]}
        if not all(_fits(lang, r, a) for r in references.values() for a in answers.values()):
            continue
        for docs_field, answer_field, label, suffix in RGB_FACT_VARIANTS:
            items.append(
                record(
                    id=f"rgb-{lang}-fact-{int(row['id']):06d}-{suffix}",
                    lang=lang,
                    question=row["query"].strip(),
                    reference=references[docs_field],
                    answer=answers[answer_field],
                    label=label,
                    error_type=None,
                    source=f"RGB {lang}_fact (counterfactual robustness)",
                    licence=LICENCES["rgb"],
                    source_id=f"{lang}_fact.json#id={row['id']} ({docs_field} + {answer_field})",
                    source_model=None,
                    task="QA",
                    group=group,
                )
            )
    return items


def rgb_refine_items(src: PinnedSource, held: Held) -> list[dict]:
    """RGB's Chinese RAG questions (zh_refine.json): answer vs. documents that do or do not contain it.

    Per question, two items with the same answer string: consistent = one positive document (RGB: contains the
    answer) among negative ones (RGB: retrieved for the question, without the answer); inconsistent = negative
    documents only, so the reference does not support the answer (error_type ``unsupported``).
    """
    fact_docs = {
        d.strip()
        for row in src.jsonl("data/zh_fact.json")
        for f in ("positive", "positive_wrong", "negative")
        for d in row[f]
    }
    rng = random.Random(f"{SEED}:train:rgb_refine")
    questions = []
    for row in src.jsonl("data/zh_refine.json"):
        alternatives = _alternatives(row["answer"])
        if not alternatives:
            continue
        positives = sorted({d.strip() for d in row["positive"] if d.strip()})
        negatives = sorted({d.strip() for d in row["negative"] if d.strip()})
        if any(d in fact_docs for d in positives + negatives):
            continue  # a document shared with zh_fact, which the quality corpus uses
        answer = next((a for a in alternatives if any(a in d for d in positives)), None)
        if answer is None:
            continue
        positives = [d for d in positives if answer in d]
        negatives = [d for d in negatives if not any(a in d for a in alternatives)]
        questions.append((row, answer, positives, negatives))
    rng.shuffle(questions)
    items: list[dict] = []
    for row, answer, positives, negatives in questions:
        if len(items) == 2 * RGB_REFINE_MAX_QUESTIONS:
            break
        k = RGB_REFINE_DOCS
        if len(negatives) < k:
            continue
        group = f"rgb:zh_refine:{int(row['id'])}"
        negatives = rng.sample(negatives, len(negatives))
        positive = rng.choice(positives)
        consistent_docs = [positive, *negatives[: k - 1]]
        rng.shuffle(consistent_docs)
        inconsistent_docs = negatives[:k]
        built = []
        for docs, label in ((consistent_docs, CONSISTENT), (inconsistent_docs, INCONSISTENT)):
            reference = "\n".join(docs)
            if not _fits("zh", reference, answer) or held.shares_document(group, reference):
                break
            built.append(
                record(
                    id=f"rgb-zh-refine-{int(row['id']):06d}-{'p' if label == CONSISTENT else 'n'}",
                    lang="zh",
                    question=row["query"].strip(),
                    reference=reference,
                    answer=answer,
                    label=label,
                    error_type=None if label == CONSISTENT else "unsupported",
                    source="RGB zh_refine (answer vs. positive/negative documents)",
                    licence=LICENCES["rgb"],
                    source_id=(
                        f"zh_refine.json#id={row['id']} "
                        f"({'1 positive + ' + str(k - 1) if label == CONSISTENT else str(k)} negative documents)"
                    ),
                    source_model=None,
                    task="QA",
                    group=group,
                )
            )
        if len(built) == 2:
            items.extend(built)
    return items


# --------------------------------------------------------------------------- RAGTruth (en, QA + Summary)


def ragtruth_pools(src: PinnedSource, held: Held) -> dict[str, dict[tuple[str, str], list[dict]]]:
    """RAGTruth QA and Summary responses as items, by split and (task, label). Any annotated span -> inconsistent."""
    sources = {row["source_id"]: row for row in src.jsonl("dataset/source_info.jsonl")}
    limits = {"train": MAX_REFERENCE_CHARS["en"], "test": RAGTRUTH_TEST_MAX_REFERENCE_CHARS}
    pools: dict[str, dict[tuple[str, str], list[dict]]] = {name: defaultdict(list) for name in limits}
    for row in src.jsonl("dataset/response.jsonl"):
        split_name = row["split"]
        if row.get("quality", "good") != "good":
            continue  # incorrect_refusal / truncated responses are left out
        info = sources[row["source_id"]]
        task = info["task_type"]
        if task not in RAGTRUTH_TASKS:
            continue  # Data2txt: its references are JSON records of businesses, unlike the project's inputs
        if task == "QA":
            question, reference = info["source_info"]["question"].strip(), info["source_info"]["passages"].strip()
        else:
            question, reference = None, info["source_info"].strip()
        answer = row["response"].strip()
        group = f"ragtruth:{row['source_id']}"
        if not _fits("en", reference, answer, limits[split_name]) or held.shares_document(group, reference):
            continue
        label = INCONSISTENT if row["labels"] else CONSISTENT
        types = sorted({span["label_type"] for span in row["labels"]})
        pools[split_name][(task, label)].append(
            record(
                id=f"ragtruth-en-{task.lower()}-{int(row['id']):05d}",
                lang="en",
                question=question,
                reference=reference,
                answer=answer,
                label=label,
                error_type="; ".join(types) or None,
                source=f"RAGTruth {task} ({info['source']}, {split_name} split)",
                licence=LICENCES["ragtruth"],
                source_id=f"response.jsonl#id={row['id']} (source_id {row['source_id']})",
                source_model=row["model"],
                task=task,
                group=group,
            )
        )
    return pools


def ragtruth_select(pools: dict[tuple[str, str], list[dict]], per_cell: int, cap: int, seed: str) -> list[dict]:
    rng = random.Random(seed)
    chosen: list[dict] = []
    for task in RAGTRUTH_TASKS:
        task_pools = {label: pools.get((task, label), []) for label in LABELS}
        chosen.extend(balanced(task_pools, rng, per_cell, cap))
    return chosen


# --------------------------------------------------------------------------- order and write


def _stratum(item: dict) -> str:
    """Source dataset, with RGB's two files and RAGTruth's tasks apart."""
    dataset = dataset_of(item)
    if dataset in ("rgb", "ragtruth"):
        return "-".join(item["id"].split("-")[:3])
    return dataset


def verify(train: list[dict], held: Held, others: Iterable[list[dict]] = ()) -> None:
    """Fail unless no item shares a group, reference, paragraph or id with dev/test (or with ``others``)."""
    problems = duplicate_problems(train)
    for item in train:
        if item["id"] in held.ids:
            problems.append(f"{item['id']}: id also in dev/test")
        if item["group"] in held.groups:
            problems.append(f"{item['id']}: group {item['group']} also in dev/test")
        if item["reference"] in held.references:
            problems.append(f"{item['id']}: reference also in dev/test")
        if reference_lines(item["reference"]) & held.segments:
            problems.append(f"{item['id']}: a reference paragraph also in dev/test")
        if item["label"] not in LABELS:
            problems.append(f"{item['id']}: label {item['label']!r}")
        limit = MAX_REFERENCE_CHARS[item["lang"]]
        if not _fits(item["lang"], item["reference"], item["answer"], limit):
            problems.append(f"{item['id']}: outside the length limits")
    for other in others:
        shared_groups = {i["group"] for i in train} & {i["group"] for i in other}
        shared_refs = {i["reference"] for i in train} & {i["reference"] for i in other}
        if shared_groups or shared_refs:
            problems.append(f"{len(shared_groups)} groups / {len(shared_refs)} references shared with another file")
    if problems:
        raise SourceError("training split check failed:\n  " + "\n  ".join(problems[:20]))


def summary(items: list[dict]) -> str:
    rows = Counter((item["lang"], _stratum(item), item["label"]) for item in items)
    out = ["lang  source              consistent  inconsistent"]
    for lang, stratum in sorted({k[:2] for k in rows}):
        out.append(
            f"{lang:<5} {stratum:<19} {rows[(lang, stratum, CONSISTENT)]:>10} {rows[(lang, stratum, INCONSISTENT)]:>13}"
        )
    langs = Counter(item["lang"] for item in items)
    labels = Counter(item["label"] for item in items)
    out.append(f"total {len(items)}: " + ", ".join(f"{k} {v}" for k, v in sorted((langs + labels).items())))
    for lang in sorted(langs):
        part = [i for i in items if i["lang"] == lang]
        ref = statistics.median(len(i["reference"]) for i in part)
        ans = statistics.median(len(i["answer"]) for i in part)
        out.append(f"{lang}: median reference {ref:.0f} chars, median answer {ans:.0f} chars")
    return "\n".join(out)


BUILDERS: dict[str, Callable[[PinnedSource, Held], list[dict]]] = {
    "faithbench": faithbench_items,
    "halueval": halueval_items,
    "factcheckgpt": factcheckgpt_items,
    "summedits": summedits_items,
    "ocnli": ocnli_items,
    "rgb": lambda src, held: (
        rgb_fact_items(src, held, "en") + rgb_fact_items(src, held, "zh") + rgb_refine_items(src, held)
    ),
}


def build(sources: dict[str, PinnedSource], held: Held) -> tuple[list[dict], list[dict] | None]:
    items: list[dict] = []
    for name, builder in BUILDERS.items():
        items.extend(builder(sources[name], held))
    ragtruth_test = None
    if "ragtruth" in sources:
        pools = ragtruth_pools(sources["ragtruth"], held)
        items.extend(
            ragtruth_select(
                pools["train"], RAGTRUTH_TRAIN_PER_TASK_LABEL, RAGTRUTH_TRAIN_MAX_PER_SOURCE, f"{SEED}:train:ragtruth"
            )
        )
        ragtruth_test = ragtruth_select(pools["test"], RAGTRUTH_TEST_PER_TASK_LABEL, 1, f"{SEED}:test:ragtruth")
        ragtruth_test.sort(key=lambda it: it["id"])
        if len(ragtruth_test) != 4 * RAGTRUTH_TEST_PER_TASK_LABEL:
            raise SourceError(f"RAGTruth test: only {len(ragtruth_test)} items")
    train = interleave(items, _stratum, f"{SEED}:order")
    verify(train, held, [ragtruth_test] if ragtruth_test else [])
    return train, ragtruth_test


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_source_arguments(parser, PINNED)
    parser.add_argument(
        "--ragtruth", type=Path, help="git mirror or checkout of ParticleMedia/RAGTruth with its dataset/ files"
    )
    parser.add_argument("--quality", type=Path, default=Path("benchmarks/data/quality"), help="dev/test to exclude")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/data"), help="writes train/ (and ragtruth/)")
    args = parser.parse_args(argv)

    sources = open_sources(PINNED, args)
    if args.ragtruth:
        sources["ragtruth"] = ragtruth_source(args.ragtruth, pin_only=args.no_verify)
    try:
        held = load_held(args.quality, sources["ocnli"])
        train, ragtruth_test = build(sources, held)
    except SourceError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.print_digests:
        print_digests(sources)
    print(summary(train))
    if ragtruth_test:
        print("RAGTruth test:\n" + summary(ragtruth_test))

    targets = {args.out / "train" / "train.jsonl": dump_jsonl(train, GROUPED_FIELDS)}
    if ragtruth_test is not None:
        targets[args.out / "ragtruth" / "test.jsonl"] = dump_jsonl(ragtruth_test, GROUPED_FIELDS)
    return write_or_check(targets, args.check)


if __name__ == "__main__":
    sys.exit(main())
