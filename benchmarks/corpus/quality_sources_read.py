"""Readers of the quality corpus's six sources, shared by build_quality_corpus.py and build_train_corpus.py.

PINNED names each source's commit and the files read from it. A reader builds the candidate records of a source
(with GROUPED_FIELDS; ``group`` names the source document) in the source's order and applies the label rule, the
same for both builds; the builder passes ``keep(group, reference, answer)`` (its length limits and, for training,
the exclusion of dev/test documents) and selects among the candidates.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from corpus_records import CONSISTENT, INCONSISTENT, LABELS, record, sha16
from pinned import PinnedSource, SourceError

Keep = Callable[[str, str, str], bool]  # (group, reference, answer) -> whether the candidate may be taken

SUMMEDITS_FILE = "data/summedits/summedits_{}.json"
SUMMEDITS_DOMAINS = ("sales_call", "sales_email", "scitldr", "qmsumm")
HALUEVAL_FILE = "generation/qa/qa_one-turn_data.json"
FACTCHECKGPT_FILE = "factcheck-GPT-benchmark.jsonl"
FACTCHECKGPT_STANCES = ("completely-support", "refute", "irrelevant")
OCNLI_DEV = "data/ocnli/dev.json"
OCNLI_LABELS = ("entailment", "neutral", "contradiction")
OCNLI_MIN_AGREEMENT = 4  # of 5 annotators

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
        {HALUEVAL_FILE: "a69227a32d03a0f034db10de62a92cdfd0e57c305f72a9f8c48e0edab74e44f6"},
    ),
    "factcheckgpt": (
        "a9e6a04a953ad880806529c504a679dd1ad06528",
        {FACTCHECKGPT_FILE: "8bbf41a58ee1b7431fecd2a23f231f764e378e04edeb4d2a7a83949a7f40cf4b"},
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
        {OCNLI_DEV: "001ded235d73a18dac68a45a38cd5f9b3f9311fa4246df623e199422c073ddc5"},
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


# --------------------------------------------------------------------------- FaithBench (en, Summary)


def faithbench_pools(src: PinnedSource, keep: Keep) -> dict[str, list[dict]]:
    """Label -> candidates. Consistent: no annotator marked anything. Inconsistent: at least two annotators marked
    an Unwanted span (error_type: the Unwanted subtypes). Only Benign/Questionable marks, or a single annotator's:
    too uncertain, left out."""
    pools: dict[str, list[dict]] = {label: [] for label in LABELS}
    for path in src.files:
        batch = path.rsplit("_", 1)[1].removesuffix(".json")
        for sample in src.json(path)["samples"]:
            reference = sample["source"].strip()
            answer = sample["summary"].strip()
            group = f"faithbench:{sha16(reference)}"
            if not keep(group, reference, answer):
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
                record(
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
    return pools


# --------------------------------------------------------------------------- HaluEval (en, QA)


def halueval_item(row: dict, index: int, field: str, item_id: str) -> dict:
    """The record of one answer of HotpotQA item ``index``: right_answer -> consistent, hallucinated_answer -> not."""
    right = field == "right_answer"
    return record(
        id=item_id,
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


# --------------------------------------------------------------------------- Factcheck-GPT (en, claims from QA answers)


def factcheckgpt_pools(src: PinnedSource, keep: Keep) -> dict[str, list[dict]]:
    """Stance -> candidates: one checkworthy ChatGPT claim against the five evidence passages retrieved for it.

    Each passage has a human stance label. Consistent (``completely-support``): some passage completely supports the
    claim and none refutes it. Inconsistent: some passage refutes the claim and none completely supports it
    (``refute``), or all five passages are irrelevant, i.e. the reference does not support the claim
    (``irrelevant``); the stance is the error_type. A (reference, claim) pair is a candidate once.
    """
    pools: dict[str, list[dict]] = {stance: [] for stance in FACTCHECKGPT_STANCES}
    seen: set[tuple[str, str]] = set()
    for line, row in enumerate(src.jsonl(FACTCHECKGPT_FILE), start=1):
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
                    stance = "completely-support"
                elif "refute" in stances and "completely-support" not in stances:
                    stance = "refute"
                elif all(s == "irrelevant" for s in stances):
                    stance = "irrelevant"
                else:
                    continue  # only partial support, or both support and refutation
                reference = "\n\n".join(p.strip() for p in passages)
                answer = claim.strip()
                if not keep(group, reference, answer) or (reference, answer) in seen:
                    continue
                seen.add((reference, answer))
                consistent = stance == "completely-support"
                pools[stance].append(
                    record(
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
    return pools


# --------------------------------------------------------------------------- SummEdits (en, Summary)


def summedits_pools(src: PinnedSource, domain: str, keep: Keep) -> dict[str, list[dict]]:
    """Label -> candidates of one domain: LLM edits of verified seed summaries, labelled consistent (1) or
    inconsistent (0) by annotators (error_type: the edit types)."""
    pools: dict[str, list[dict]] = {label: [] for label in LABELS}
    for index, sample in enumerate(src.json(SUMMEDITS_FILE.format(domain))):
        if sample["id"].endswith("_og"):
            continue  # the seed summary itself: not an LLM edit
        reference, answer = sample["doc"].strip(), sample["summary"].strip()
        group = f"summedits:{domain}:{sha16(reference)}"
        if not keep(group, reference, answer):
            continue
        if sample["label"] not in (0, 1):
            raise SourceError(f"summedits: {domain} {sample['id']}: label {sample['label']!r}")
        label = CONSISTENT if sample["label"] == 1 else INCONSISTENT
        edit_types = "; ".join(sample["edit_types"]) if label == INCONSISTENT else ""
        pools[label].append(
            record(
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
    return pools


# --------------------------------------------------------------------------- OCNLI (zh, NLI)


def ocnli_agreed(src: PinnedSource, path: str) -> Iterator[dict]:
    """The pairs of ``path`` labelled entailment, neutral or contradiction by at least OCNLI_MIN_AGREEMENT of their
    5 annotators (a pair with a single, writer's label has null votes: left out)."""
    for row in src.jsonl(path):
        label = row["label"]
        if label in OCNLI_LABELS and [row[f"label{i}"] for i in range(5)].count(label) >= OCNLI_MIN_AGREEMENT:
            yield row


def ocnli_item(row: dict, path: str) -> dict:
    """The record of a pair of ``path``: premise as reference, hypothesis as answer; entailment -> consistent,
    neutral/contradiction -> inconsistent (error_type: the NLI label)."""
    label, file = row["label"], path.rsplit("/", 1)[-1]
    votes = [row[f"label{i}"] for i in range(5)]
    return record(
        id=f"ocnli-zh-{int(row['id']):06d}",
        lang="zh",
        question=None,
        reference=row["sentence1"].strip(),
        answer=row["sentence2"].strip(),
        label=CONSISTENT if label == "entailment" else INCONSISTENT,
        error_type=None if label == "entailment" else label,
        source=f"OCNLI {file.split('.')[0]} (genre {row['genre']})",
        licence=LICENCES["ocnli"],
        source_id=f"{file}#id={row['id']} (votes {votes.count(label)}/5 {label})",
        source_model=None,
        task="NLI",
        group=f"ocnli:{row['prem_id']}",
    )


# --------------------------------------------------------------------------- RGB (zh, QA)


def states(docs: list[str], value: str, other: str) -> bool:
    """True if ``value`` occurs in ``docs`` outside occurrences of ``other`` (e.g. "70" inside "170")."""
    text = "\n".join(docs)
    if other and value in other:
        text = text.replace(other, "\x00")
    return value in text
