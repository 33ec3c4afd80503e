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
import hashlib
import json
import random
import re
import statistics
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path

from build_quality_corpus import PINNED as QUALITY_PINNED
from pinned import PinnedSource, SourceError, git_blob_id

SEED = 20261123  # the quality corpus's seed; every generator here is seeded from it and a name

MAX_REFERENCE_CHARS = {"en": 2500, "zh": 1500}
MAX_ANSWER_CHARS = 800
RAGTRUTH_TEST_MAX_REFERENCE_CHARS = 3000

# A training reference may not contain a paragraph (line) of at least this many characters that also occurs in a
# dev/test reference: catches shared documents that are not byte-identical references (e.g. one evidence passage).
MIN_SHARED_SEGMENT_CHARS = 40

CONSISTENT = "consistent"
INCONSISTENT = "inconsistent"
LABELS = (CONSISTENT, INCONSISTENT)

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
    "group",
)

SUMMEDITS_FILE = "data/summedits/summedits_{}.json"
SUMMEDITS_DOMAINS = ("sales_call", "sales_email", "scitldr", "qmsumm")

# repository -> (commit, {path: sha256})
# The quality corpus's sources at the same commits (build_quality_corpus.PINNED), and the files only this split reads.
EXTRA_FILES: dict[str, dict[str, str]] = {
    "ocnli": {
        # train.50k.json and train.30k.json are absent from the stored snapshot (too large); train.10k.json is a
        # sample of train.30k and contains train.3k.json.
        "data/ocnli/train.10k.json": "b8a0b7b72f62eb8d47a4d21ba34c4948bf2bdf5fde649a964ef3779504c7ab81",
    },
    "rgb": {
        "data/en_fact.json": "92f4b2330ee407f74fbd923197028ef5140cfbc1f4b4092efec2d4d10ae6c9e5",
        "data/zh_refine.json": "7a5c7547dcfa1b83429b53a41644453508f820f502d3817312cbf8051afb4563",
    },
}
PINNED: dict[str, tuple[str, dict[str, str]]] = {
    name: (commit, {**files, **EXTRA_FILES.get(name, {})}) for name, (commit, files) in QUALITY_PINNED.items()
}

# RAGTruth's data files (about 30 MB together) are pinned by their git blob ids at the commit, because no stored
# snapshot this script was written against contains them; the SHA-256 of each is printed by --print-digests.
RAGTRUTH_COMMIT = "c103204b9ce28d6bbad859304bf30de72b8ed8fe"
RAGTRUTH_BLOBS = {
    "dataset/response.jsonl": "f9ae5913fb9976684f3e13be3cd3465062db54cc",
    "dataset/source_info.jsonl": "119277774009f110aa58596b93f9512f62594a89",
}

LICENCES = {
    "faithbench": "CC BY-NC-SA 4.0",
    "halueval": "MIT",
    "factcheckgpt": "Apache-2.0",
    "summedits": "Apache-2.0",
    "ocnli": "CC BY-NC 2.0",
    "rgb": "CC BY-NC-SA 4.0",
    "ragtruth": "MIT",
}

# Per-source selection (after the length filter and the exclusion of dev/test documents); see SOURCES.md.
FAITHBENCH_PER_LABEL = 400
FAITHBENCH_MAX_PER_DOCUMENT = 10  # per passage and label (each passage was summarised by 10 models)
HALUEVAL_ITEMS = 300  # each contributes its right and its hallucinated answer
FACTCHECKGPT_PER_LABEL = 150
FACTCHECKGPT_MAX_PER_PROMPT = 10  # claims per question and label
SUMMEDITS_PER_LABEL = 100  # per domain
SUMMEDITS_MAX_PER_DOCUMENT = 8  # edited summaries per document and label
OCNLI_MIN_AGREEMENT = 4  # of 5 annotators
OCNLI_PER_LABEL = 750  # consistent = entailment; inconsistent = half contradiction, half neutral
RGB_REFINE_MAX_QUESTIONS = 300
RGB_REFINE_DOCS = 3  # documents per reference
RAGTRUTH_TRAIN_PER_TASK_LABEL = 225  # QA and Summary: at most 900 items
RAGTRUTH_TRAIN_MAX_PER_SOURCE = 2  # responses per source and label
RAGTRUTH_TEST_PER_TASK_LABEL = 50  # 200 items
RAGTRUTH_TASKS = ("QA", "Summary")


class Source(PinnedSource):
    def __init__(self, name: str, root: Path, pin_only: bool = False) -> None:
        if name == "ragtruth":  # its files are too large for the snapshots' text: pinned by git blob id
            super().__init__(name, root, RAGTRUTH_COMMIT, dict(RAGTRUTH_BLOBS), pin_only, digest=git_blob_id)
        else:
            super().__init__(name, root, *PINNED[name], pin_only=pin_only)


def _fits(lang: str, reference: str, answer: str, max_reference: int | None = None) -> bool:
    limit = max_reference if max_reference is not None else MAX_REFERENCE_CHARS[lang]
    return 0 < len(reference) <= limit and 0 < len(answer) <= MAX_ANSWER_CHARS


def _sha16(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _item(**fields: object) -> dict:
    return {key: fields.get(key) for key in FIELDS}


def _dataset(item: dict) -> str:
    return item["id"].split("-", 1)[0]


# --------------------------------------------------------------------------- what dev/test already use


def _segments(reference: str) -> set[str]:
    return {s.strip() for s in reference.split("\n") if len(s.strip()) >= MIN_SHARED_SEGMENT_CHARS}


class Held:
    """Groups, reference texts and reference paragraphs of the quality corpus (dev + test)."""

    def __init__(self, records: list[dict], ocnli_prem_ids: dict[int, str]) -> None:
        self.records = records
        self.references = {r["reference"] for r in records}
        self.segments: set[str] = set()
        for r in records:
            self.segments |= _segments(r["reference"])
        self.groups = {self.group_of(r, ocnli_prem_ids) for r in records}
        self.ids = {r["id"] for r in records}

    @staticmethod
    def group_of(record: dict, ocnli_prem_ids: dict[int, str]) -> str:
        """The group key this script (and the quality build) gives the record's source document."""
        dataset, reference = _dataset(record), record["reference"]
        if dataset == "faithbench":
            return f"faithbench:{_sha16(reference)}"
        if dataset == "halueval":
            line = re.fullmatch(r"qa_one-turn_data\.json#line=(\d+):\w+", record["source_id"])
            if not line:
                raise SourceError(f"unexpected HaluEval source_id {record['source_id']!r}")
            return f"halueval:{int(line.group(1)) - 1}"
        if dataset == "factcheckgpt":
            return f"factcheckgpt:{' '.join(record['question'].lower().split())}"
        if dataset == "summedits":
            domain = re.fullmatch(r"SummEdits \((\w+)\)", record["source"])
            if not domain:
                raise SourceError(f"unexpected SummEdits source {record['source']!r}")
            return f"summedits:{domain.group(1)}:{_sha16(reference)}"
        if dataset == "ocnli":
            pair_id = int(record["id"].rsplit("-", 1)[1])
            return f"ocnli:{ocnli_prem_ids[pair_id]}"
        if dataset == "rgb":
            return f"rgb:zh_fact:{int(record['id'].rsplit('-', 1)[1])}"
        raise SourceError(f"quality corpus has an item of unknown source {record['id']!r}: update this script")

    def shares(self, group: str, reference: str) -> bool:
        return group in self.groups or reference in self.references or bool(_segments(reference) & self.segments)


def load_held(quality_dir: Path, ocnli: Source) -> Held:
    records: list[dict] = []
    for name in ("dev.jsonl", "test.jsonl"):
        path = quality_dir / name
        if not path.is_file():
            raise SourceError(f"{path} is missing: the training split is defined against it")
        records.extend(json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip())
    prem_ids = {int(row["id"]): row["prem_id"] for row in ocnli.jsonl("data/ocnli/dev.json")}
    return Held(records, prem_ids)


# --------------------------------------------------------------------------- selection helpers


def _capped_sample(pool: list[dict], rng: random.Random, n: int, cap: int, taken: Counter[str]) -> list[dict]:
    """Shuffle ``pool`` (sorted by id first) and take up to ``n`` items, at most ``cap`` per group."""
    pool = sorted(pool, key=lambda it: it["id"])
    rng.shuffle(pool)
    chosen: list[dict] = []
    for item in pool:
        if len(chosen) == n:
            break
        if taken[item["group"]] >= cap:
            continue
        taken[item["group"]] += 1
        chosen.append(item)
    return chosen


def _balanced(pools: dict[str, list[dict]], rng: random.Random, per_label: int, cap: int) -> list[dict]:
    """Equal numbers of consistent and inconsistent items (as many as both pools allow), ``cap`` per group/label."""
    available = {
        label: sum(min(cap, k) for k in Counter(item["group"] for item in pools[label]).values()) for label in LABELS
    }
    n = min(per_label, *available.values())
    chosen: list[dict] = []
    for label in LABELS:
        chosen.extend(_capped_sample(pools[label], rng, n, cap, Counter()))
    return chosen


# --------------------------------------------------------------------------- FaithBench (en, Summary)


def faithbench_items(src: Source, held: Held) -> list[dict]:
    """Same label rule as the quality corpus: no annotation -> consistent; Unwanted by >= 2 annotators -> not."""
    pools: dict[str, list[dict]] = {label: [] for label in LABELS}
    for path in src.files:
        batch = path.rsplit("_", 1)[1].removesuffix(".json")
        for sample in src.json(path)["samples"]:
            reference = sample["source"].strip()
            answer = sample["summary"].strip()
            group = f"faithbench:{_sha16(reference)}"
            if not _fits("en", reference, answer) or held.shares(group, reference):
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
                continue
            sample_id = int(sample["sample_id"])
            pools[label].append(
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
                    group=group,
                )
            )
    return _balanced(
        pools, random.Random(f"{SEED}:train:faithbench"), FAITHBENCH_PER_LABEL, FAITHBENCH_MAX_PER_DOCUMENT
    )


# --------------------------------------------------------------------------- HaluEval (en, QA)


def halueval_items(src: Source, held: Held) -> list[dict]:
    """Both answers of each remaining HotpotQA item: right_answer -> consistent, hallucinated_answer -> not."""
    rows = src.jsonl("generation/qa/qa_one-turn_data.json")
    eligible = []
    for index, row in enumerate(rows):
        reference = row["knowledge"].strip()
        if held.shares(f"halueval:{index}", reference):
            continue
        if _fits("en", reference, row["right_answer"].strip()) and _fits(
            "en", reference, row["hallucinated_answer"].strip()
        ):
            eligible.append(index)
    rng = random.Random(f"{SEED}:train:halueval")
    picked = sorted(rng.sample(eligible, min(HALUEVAL_ITEMS, len(eligible))))
    items: list[dict] = []
    for index in picked:
        row = rows[index]
        for field, label in (("right_answer", CONSISTENT), ("hallucinated_answer", INCONSISTENT)):
            items.append(
                _item(
                    id=f"halueval-en-qa-{index:06d}-{'r' if label == CONSISTENT else 'h'}",
                    lang="en",
                    question=row["question"].strip(),
                    reference=row["knowledge"].strip(),
                    answer=row[field].strip(),
                    label=label,
                    error_type=None,
                    source="HaluEval QA (generation/qa one-turn samples)",
                    licence=LICENCES["halueval"],
                    source_id=f"qa_one-turn_data.json#line={index + 1}:{field}",
                    source_model=None if label == CONSISTENT else "ChatGPT",
                    task="QA",
                    group=f"halueval:{index}",
                )
            )
    return items


# --------------------------------------------------------------------------- Factcheck-GPT (en, claims)


def factcheckgpt_items(src: Source, held: Held) -> list[dict]:
    """Same label rule as the quality corpus (supported / refuted / all passages irrelevant)."""
    rows = src.jsonl("factcheck-GPT-benchmark.jsonl")
    pools: dict[str, list[dict]] = {label: [] for label in LABELS}
    seen: set[tuple[str, str]] = set()
    for line, row in enumerate(rows, start=1):
        question = row["prompt"].strip()
        group = f"factcheckgpt:{' '.join(question.lower().split())}"
        for sentence_key, sentence in row["sentences"].items():
            sentence_no = int(sentence_key.removeprefix("sentence"))
            for k, claim in enumerate(sentence["claims"]):
                if sentence["claim_checkworthiness"][k] != "factual":
                    continue
                stances = sentence["stance_claim_autoEvid"][k]
                passages = sentence["auto_evidence"][k]
                if not stances or len(stances) != len(passages):
                    continue
                if "completely-support" in stances and "refute" not in stances:
                    stance = "completely-support"
                elif "refute" in stances and "completely-support" not in stances:
                    stance = "refute"
                elif all(s == "irrelevant" for s in stances):
                    stance = "irrelevant"
                else:
                    continue
                reference = "\n\n".join(p.strip() for p in passages)
                answer = claim.strip()
                if not _fits("en", reference, answer) or (reference, answer) in seen:
                    continue
                if held.shares(group, reference):
                    continue
                seen.add((reference, answer))
                consistent = stance == "completely-support"
                pools[CONSISTENT if consistent else INCONSISTENT].append(
                    _item(
                        id=f"factcheckgpt-en-{line:03d}-{sentence_no:02d}-{k + 1}",
                        lang="en",
                        question=question,
                        reference=reference,
                        answer=answer,
                        label=CONSISTENT if consistent else INCONSISTENT,
                        error_type=None if consistent else stance,
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
    return _balanced(
        pools, random.Random(f"{SEED}:train:factcheckgpt"), FACTCHECKGPT_PER_LABEL, FACTCHECKGPT_MAX_PER_PROMPT
    )


# --------------------------------------------------------------------------- SummEdits (en, Summary)


def summedits_items(src: Source, held: Held) -> list[dict]:
    """LLM edits of verified seed summaries labelled by annotators; documents of dev/test left out."""
    chosen: list[dict] = []
    for domain in SUMMEDITS_DOMAINS:
        pools: dict[str, list[dict]] = {label: [] for label in LABELS}
        for index, sample in enumerate(src.json(SUMMEDITS_FILE.format(domain))):
            if sample["id"].endswith("_og"):
                continue
            reference, answer = sample["doc"].strip(), sample["summary"].strip()
            group = f"summedits:{domain}:{_sha16(reference)}"
            if not _fits("en", reference, answer) or held.shares(group, reference):
                continue
            if sample["label"] not in (0, 1):
                raise SourceError(f"summedits: {domain} {sample['id']}: label {sample['label']!r}")
            label = CONSISTENT if sample["label"] == 1 else INCONSISTENT
            edit_types = "; ".join(sample["edit_types"]) if label == INCONSISTENT else ""
            pools[label].append(
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
                    group=group,
                )
            )
        rng = random.Random(f"{SEED}:train:summedits:{domain}")
        chosen.extend(_balanced(pools, rng, SUMMEDITS_PER_LABEL, SUMMEDITS_MAX_PER_DOCUMENT))
    return chosen


# --------------------------------------------------------------------------- OCNLI train (zh, NLI)


def ocnli_items(src: Source, held: Held) -> list[dict]:
    """Pairs of train.10k.json with 5 labels, >= 4 agreeing; entailment -> consistent, else inconsistent."""
    pools: dict[str, list[dict]] = defaultdict(list)
    for row in src.jsonl("data/ocnli/train.10k.json"):
        label = row["label"]
        if label not in ("entailment", "neutral", "contradiction"):
            continue
        votes = [row[f"label{i}"] for i in range(5)]
        if votes.count(label) < OCNLI_MIN_AGREEMENT:
            continue  # also drops the pairs with a single (writer's) label: their votes are null
        reference, answer = row["sentence1"].strip(), row["sentence2"].strip()
        group = f"ocnli:{row['prem_id']}"
        if not _fits("zh", reference, answer) or held.shares(group, reference):
            continue
        pools[label].append(
            _item(
                id=f"ocnli-zh-{int(row['id']):06d}",
                lang="zh",
                question=None,
                reference=reference,
                answer=answer,
                label=CONSISTENT if label == "entailment" else INCONSISTENT,
                error_type=None if label == "entailment" else label,
                source=f"OCNLI train (genre {row['genre']})",
                licence=LICENCES["ocnli"],
                source_id=f"train.10k.json#id={row['id']} (votes {votes.count(label)}/5 {label})",
                source_model=None,
                task="NLI",
                group=group,
            )
        )
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


def _states(docs: list[str], value: str, other: str) -> bool:
    """True if ``value`` occurs in ``docs`` outside occurrences of ``other`` (e.g. "70" inside "170")."""
    text = "\n".join(docs)
    if other and value in other:
        text = text.replace(other, "\x00")
    return value in text


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
                _states(pos, answer, fake)
                and _states(wrong, fake, answer)
                and not any(_states(pos, f, answer) for f in fakes)
                and not any(_states(wrong, a, fake) for a in answers)
            ):
                return answer, fake
    return None


def rgb_fact_items(src: Source, held: Held, lang: str) -> list[dict]:
    """RGB counterfactual questions ({lang}_fact.json), all four document/answer pairings of each question.

    The quality corpus uses one pairing of 91 zh_fact questions; those questions are left out here. en_fact is not
    in the quality corpus. See SOURCES.md for the pairing rule.
    """
    items: list[dict] = []
    for row in src.jsonl(f"data/{lang}_fact.json"):
        group = f"rgb:{lang}_fact:{int(row['id'])}"
        references = {f: "\n".join(d.strip() for d in row[f]) for f in ("positive", "positive_wrong")}
        if any(held.shares(group, reference) for reference in references.values()):
            continue
        pick = _fact_pick(row)
        if pick is None:
            continue
        answers = {"answer": pick[0], "fakeanswer": pick[1]}
        if not all(_fits(lang, r, a) for r in references.values() for a in answers.values()):
            continue
        for docs_field, answer_field, label, suffix in RGB_FACT_VARIANTS:
            items.append(
                _item(
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


def rgb_refine_items(src: Source, held: Held) -> list[dict]:
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
            if not _fits("zh", reference, answer) or held.shares(group, reference):
                break
            built.append(
                _item(
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


def ragtruth_pools(src: Source, held: Held) -> dict[str, dict[tuple[str, str], list[dict]]]:
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
        if not _fits("en", reference, answer, limits[split_name]) or held.shares(group, reference):
            continue
        label = INCONSISTENT if row["labels"] else CONSISTENT
        types = sorted({span["label_type"] for span in row["labels"]})
        pools[split_name][(task, label)].append(
            _item(
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
        chosen.extend(_balanced(task_pools, rng, per_cell, cap))
    return chosen


# --------------------------------------------------------------------------- order and write


def interleave(items: list[dict]) -> list[dict]:
    """Order so that every prefix is a proportional mix of the (source, label) strata.

    Each stratum is shuffled with its own seeded generator; item j of a stratum of n items gets the position key
    (j + 0.5) / n, and the file is sorted by that key (ties by stratum name). Any prefix therefore holds every
    stratum in proportion to its size, within one item: a weighted round robin.
    """
    strata: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for item in items:
        strata[(_stratum(item), item["label"])].append(item)
    keyed = []
    for key in sorted(strata):
        members = sorted(strata[key], key=lambda it: it["id"])
        random.Random(f"{SEED}:order:{key[0]}:{key[1]}").shuffle(members)
        n = len(members)
        keyed.extend(((j + 0.5) / n, key, item["id"], item) for j, item in enumerate(members))
    keyed.sort(key=lambda k: k[:3])
    return [k[3] for k in keyed]


def _stratum(item: dict) -> str:
    """Source dataset, with RGB's two files and RAGTruth's tasks apart."""
    dataset = _dataset(item)
    if dataset in ("rgb", "ragtruth"):
        return "-".join(item["id"].split("-")[:3])
    return dataset


def _line(item: dict) -> str:
    record = {key: item[key] for key in FIELDS}
    line = json.dumps(record, ensure_ascii=False)
    return line.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029").replace("\x85", "\\u0085") + "\n"


def _dump(items: Iterable[dict]) -> str:
    return "".join(_line(item) for item in items)


def verify(train: list[dict], held: Held, others: Iterable[list[dict]] = ()) -> None:
    """Fail unless no item shares a group, reference, paragraph or id with dev/test (or with ``others``)."""
    problems = []
    ids = Counter(item["id"] for item in train)
    problems += [f"duplicate id {i}" for i, n in ids.items() if n > 1]
    pairs = Counter((item["reference"], item["answer"]) for item in train)
    problems += [f"duplicate reference+answer pair: {pair[1][:60]!r}" for pair, n in pairs.items() if n > 1]
    for item in train:
        if item["id"] in held.ids:
            problems.append(f"{item['id']}: id also in dev/test")
        if item["group"] in held.groups:
            problems.append(f"{item['id']}: group {item['group']} also in dev/test")
        if item["reference"] in held.references:
            problems.append(f"{item['id']}: reference also in dev/test")
        if _segments(item["reference"]) & held.segments:
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


BUILDERS: dict[str, Callable[[Source, Held], list[dict]]] = {
    "faithbench": faithbench_items,
    "halueval": halueval_items,
    "factcheckgpt": factcheckgpt_items,
    "summedits": summedits_items,
    "ocnli": ocnli_items,
    "rgb": lambda src, held: (
        rgb_fact_items(src, held, "en") + rgb_fact_items(src, held, "zh") + rgb_refine_items(src, held)
    ),
}


def build(sources: dict[str, Source], held: Held) -> tuple[list[dict], list[dict] | None]:
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
    train = interleave(items)
    verify(train, held, [ragtruth_test] if ragtruth_test else [])
    return train, ragtruth_test


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name in PINNED:
        parser.add_argument(f"--{name}", type=Path, required=True, help=f"git mirror or checkout of the {name} source")
    parser.add_argument(
        "--ragtruth", type=Path, help="git mirror or checkout of ParticleMedia/RAGTruth with its dataset/ files"
    )
    parser.add_argument("--quality", type=Path, default=Path("benchmarks/data/quality"), help="dev/test to exclude")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/data"), help="writes train/ (and ragtruth/)")
    parser.add_argument("--check", action="store_true", help="compare with the files in --out, write nothing")
    parser.add_argument("--print-digests", action="store_true", help="print the SHA-256 of every source file read")
    parser.add_argument("--no-verify", action="store_true", help="do not check source files against their pins")
    args = parser.parse_args(argv)

    sources = {name: Source(name, getattr(args, name), pin_only=args.no_verify) for name in PINNED}
    if args.ragtruth:
        sources["ragtruth"] = Source("ragtruth", args.ragtruth, pin_only=args.no_verify)
    try:
        held = load_held(args.quality, sources["ocnli"])
        train, ragtruth_test = build(sources, held)
    except SourceError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.print_digests:
        for name, src in sources.items():
            for path, digest in src.digests.items():
                print(f"{name} {src.commit} {path} {digest}")
    print(summary(train))
    if ragtruth_test:
        print("RAGTruth test:\n" + summary(ragtruth_test))

    targets = {args.out / "train" / "train.jsonl": _dump(train)}
    if ragtruth_test is not None:
        targets[args.out / "ragtruth" / "test.jsonl"] = _dump(ragtruth_test)
    if args.check:
        stale = [str(p) for p, text in targets.items() if not p.is_file() or p.read_bytes() != text.encode("utf-8")]
        if stale:
            print(f"differs from the build: {', '.join(stale)}", file=sys.stderr)
            return 1
        print("files match the build: " + ", ".join(str(p) for p in targets))
        return 0
    for path, text in targets.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
