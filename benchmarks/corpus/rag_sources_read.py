"""Readers of build_rag_sources.py: each source's files -> candidate items with labels mapped, and what was dropped.

A reader takes a pinned source (``.json(path)``, ``.text(path)``) and returns (items, Counter of dropped items by
reason). An item holds the output fields (FIELDS) and, for the build, ``_source``, ``_group`` (the source's own
group), ``_links`` (more keys that join groups), ``_passages`` (the reference as a list of passages), ``_anchor``
(the text whose words choose passages when the reference is cut) and ``_stratum`` (for the file order).
"""

from __future__ import annotations

import csv
import io
import random
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from typing import Any

from corpus_records import CONSISTENT, GROUPED_FIELDS, INCONSISTENT, SEED, sha16
from corpus_selection import HeldOut
from pinned import SourceError
from rag_passages import fingerprints

FIELDS = (
    *GROUPED_FIELDS,
    "reference_chars",  # the uncut reference's length: equal to len(reference) unless the reference was cut
    "sentences",  # LFQA: [{text, start, label, votes}] in answer order; null elsewhere
    "votes",  # the annotators' answer-level votes where the source gives them (MTRAG: 1-4 each); null elsewhere
)
LICENCES = {
    "lfqa": "none stated (the repository has no licence file); used for training and measurement",
    "mtrag": "Apache-2.0",
    "ares": "Apache-2.0",
    "bump": "MIT (BUMP); articles and reference summaries: CNN/Daily Mail news text",
    "frank": "MIT (FRANK); articles: CNN/Daily Mail and XSum (BBC) news text",
    "summeval": "MIT (SummEval); articles: CNN/Daily Mail news text",
    "qags_cnndm": "none stated (QAGS); articles: CNN/Daily Mail news text",
    "qags_xsum": "none stated (QAGS); articles: XSum (BBC) news text",
}

LFQA_ANNOTATIONS = "data/annotations/annotations-{}.json"
LFQA_DOCS = "data/docs/docs-{}.json"
LFQA_ANSWERS = "data/answers.json"
# setting -> (model, the documents the answer was generated from and judged against)
LFQA_SETTINGS = {
    "webgpt": ("WebGPT", "webgpt"),
    "gpt3_wdoc": ("GPT-3 (text-davinci-003)", "webgpt"),
    "gpt3_whudoc": ("GPT-3 (text-davinci-003)", "human"),
    "alpaca_wdoc": ("Alpaca-7B", "webgpt"),
}
LFQA_CLOSED_BOOK = ("gpt3", "alpaca")  # answered with no documents in the prompt: read only to be counted
LFQA_VOTES = ("supported", "partially", "not_supported")
MTRAG_FILE = "mtrag-human/evaluations/reference_subset_with_human_evaluations.json"
ARES_FILE = "datasets_v2/LLM_Judge_Test_Set_Human_Annotations.tsv"
ARES_COLUMNS = [
    "Reaction",
    "Sources",
    "Question",
    "Document",
    "Answer",
    "Context_Relevance_Label",
    "Answer_Faithfulness_Label",
    "Answer_Relevance_Label",
]
BUMP_FILES = {1: "data/task1_dataset.json", 2: "data/task2_dataset.json"}
SUMMARY_FILES = {  # dataset -> (path, name, source)
    "frank": ("data/true/frank.csv", "FRANK", "FRANK (TRUE format)"),
    "summeval": ("data/true/summeval.csv", "SummEval", "SummEval (TRUE format)"),
    "qags_cnndm": ("data/true/qags_cnndm.csv", "QAGS", "QAGS (TRUE format, CNN/DM)"),
    "qags_xsum": ("data/true/qags_xsum.csv", "QAGS", "QAGS (TRUE format, XSum)"),
}
SUMMEVAL_MAX_PER_ARTICLE = 2  # summaries per article and label (16 systems summarised each of its 100 articles)


def _item(**fields: Any) -> dict:
    found = {key: fields.get(key) for key in FIELDS}
    found.update({key: value for key, value in fields.items() if key.startswith("_")})
    found.setdefault("_links", set())
    found["lang"] = "en"
    return found


class Held(HeldOut):
    """References of records that new items may not share: texts, lines of 40+ characters, sentences, ids."""

    def __init__(self, records: Iterable[dict]) -> None:
        super().__init__(records)
        self.fingerprints: set[str] = set()
        for record in self.records:
            self.fingerprints |= fingerprints(record["reference"])

    def shares(self, reference: str) -> bool:
        """True if ``reference`` is, has a line or a sentence (``fingerprints``) of, contains or is contained in a
        held reference."""
        return (
            self.shares_text(reference) or bool(fingerprints(reference) & self.fingerprints) or self.overlaps(reference)
        )


# --------------------------------------------------------------------------- LFQA-Verification


def lfqa_sentence_label(votes: list[str]) -> str:
    """The label most annotators gave; ``partially`` when no label has a majority."""
    if not votes or any(vote not in LFQA_VOTES for vote in votes):
        raise SourceError(f"LFQA: unexpected votes {votes}")
    counts = Counter(votes)
    return next((label for label in LFQA_VOTES if counts[label] * 2 > len(votes)), "partially")


def lfqa_answer_label(sentence_labels: list[str]) -> tuple[str, str | None]:
    """(label, error_type): consistent when every sentence is supported; the error is the worst sentence label."""
    if all(label == "supported" for label in sentence_labels):
        return CONSISTENT, None
    return INCONSISTENT, "not_supported" if "not_supported" in sentence_labels else "partially"


def _lfqa_text(text: str) -> str:
    """``text`` stripped, without the end-of-sequence token ("</s>") that ends every Alpaca answer."""
    return text.strip().removesuffix("</s>").rstrip()


def _lfqa_sentences(answer: str, annotations: list[dict], where: str) -> list[dict]:
    """The annotated sentences with their offsets in ``answer``; fails unless they cover its text in order."""
    sentences, position = [], 0
    for annotation in annotations:
        text = _lfqa_text(annotation["answer"])
        start = answer.find(text, position)
        if not text or start < 0 or answer[position:start].strip():
            raise SourceError(f"{where}: sentence {text[:50]!r} not found in order in the answer")
        votes = list(annotation["labels"])
        sentences.append({"text": text, "start": start, "label": lfqa_sentence_label(votes), "votes": votes})
        position = start + len(text)
    if answer[position:].strip():
        raise SourceError(f"{where}: answer text after the last annotated sentence")
    return sentences


def lfqa_items(src: Any) -> tuple[list[dict], Counter[str]]:
    """One item per answer of the settings with documents, with its sentence labels; closed-book ones counted."""
    answers = {row["question_id"]: row for row in src.json(LFQA_ANSWERS) if "question_id" in row}
    docs = {name: {row["question_id"]: row for row in src.json(LFQA_DOCS.format(name))} for name in ("webgpt", "human")}
    items, dropped = [], Counter()
    for setting in LFQA_CLOSED_BOOK:
        rows = src.json(LFQA_ANNOTATIONS.format(setting))
        dropped[f"{setting}: answered without documents"] += len(rows)
        dropped[f"{setting}: answered without documents (sentences)"] += sum(len(r["annotations"]) for r in rows)
    for setting, (model, doc_name) in LFQA_SETTINGS.items():
        path = LFQA_ANNOTATIONS.format(setting)
        for row in src.json(path):
            qid = row["question_id"]
            where = f"LFQA {setting} question {qid}"
            if qid not in answers or qid not in docs[doc_name]:
                raise SourceError(f"{where}: no answer or no documents")
            passages = [d["text"].strip() for d in docs[doc_name][qid]["docs"] if d["text"].strip()]
            answer = _lfqa_text(answers[qid][f"{setting}_answer"])
            sentences = _lfqa_sentences(answer, row["annotations"], where)
            label, error_type = lfqa_answer_label([s["label"] for s in sentences])
            items.append(
                _item(
                    id=f"lfqa-{setting}-{qid:03d}",
                    question=row["question"].strip(),
                    answer=answer,
                    label=label,
                    error_type=error_type,
                    source=f"LFQA-Verification ({setting}: {model}, {doc_name} documents)",
                    licence=LICENCES["lfqa"],
                    source_id=f"{path}#question_id={qid}",
                    source_model=model,
                    task="LFQA",
                    sentences=sentences,
                    _source="lfqa",
                    _group=f"lfqa:{qid}",
                    _passages=passages,
                    _anchor=answer,
                    _stratum=setting,
                )
            )
    return items, dropped


# --------------------------------------------------------------------------- MTRAG


def mtrag_label(votes: list[int]) -> str | None:
    """Consistent when most votes are 4 (Yes); inconsistent when most are 1 or 2 (No, Mostly No); else None."""
    if any(vote not in (1, 2, 3, 4) for vote in votes):
        raise SourceError(f"MTRAG: unexpected faithfulness votes {votes}")
    if sum(vote == 4 for vote in votes) * 2 > len(votes):
        return CONSISTENT
    if sum(vote <= 2 for vote in votes) * 2 > len(votes):
        return INCONSISTENT
    return None


def mtrag_items(src: Any) -> tuple[list[dict], Counter[str]]:
    """One item per evaluated response with passages and a majority label (``mtrag_label``)."""
    data = src.json(MTRAG_FILE)
    documents = {d["document_id"]: d["text"] for d in data["documents"]}
    tasks = {t["task_id"]: t for t in data["tasks"]}
    models = {m["model_id"]: m["name"] for m in data["models"]}
    items, dropped = [], Counter()
    for index, evaluation in enumerate(data["evaluations"]):
        task = tasks[evaluation["task_id"]]
        conversation, turn = evaluation["task_id"].split("<::>")
        votes = [int(v["value"]) for v in evaluation["annotations"].get("faithfulness", {}).values()]
        passages = [documents[c["document_id"]].strip() for c in task["contexts"]]
        label = mtrag_label(votes) if len(votes) >= 2 else None
        if not any(passages):
            dropped["no passages (unanswerable turns)"] += 1
            continue
        if label is None:
            dropped["no majority for Yes (4) or for No / Mostly No (1-2)" if votes else "no votes"] += 1
            continue
        if task["input"][-1]["speaker"] != "user":
            raise SourceError(f"MTRAG {evaluation['task_id']}: the last turn is not the user's")
        collection = task["Collection"].split("-")[2]
        model = evaluation["model_id"]
        items.append(
            _item(
                id=f"mtrag-{conversation[:12]}-t{int(turn):02d}-{model}",
                question=task["input"][-1]["text"].strip(),
                answer=evaluation["model_response"].strip(),
                label=label,
                error_type=None if label == CONSISTENT else "unfaithful (most votes No or Mostly No)",
                source=f"MTRAG human evaluation ({collection})",
                licence=LICENCES["mtrag"],
                source_id=f"{MTRAG_FILE}#evaluations[{index}]",
                source_model=models[model],
                task="RAG-QA (multi-turn)",
                votes=votes,
                _source="mtrag",
                _group=f"mtrag:{conversation}",
                _passages=[p for p in passages if p],
                _anchor=evaluation["model_response"],
                _stratum=model,
            )
        )
    return items, dropped


# --------------------------------------------------------------------------- ARES


def ares_items(src: Any) -> tuple[list[dict], Counter[str]]:
    """One item per row: Answer_Faithfulness_Label 1 -> consistent, 0 -> inconsistent."""
    csv.field_size_limit(10**9)
    reader = csv.reader(io.StringIO(src.text(ARES_FILE), newline=""), delimiter="\t")
    if next(reader) != ARES_COLUMNS:
        raise SourceError(f"ARES {ARES_FILE}: unexpected header")
    items, dropped = [], Counter()
    for fields in reader:
        line = reader.line_num
        if len(fields) != len(ARES_COLUMNS):
            raise SourceError(f"ARES {ARES_FILE}: line {line} has {len(fields)} fields")
        row = dict(zip(ARES_COLUMNS, fields, strict=True))
        mapped = {"1": CONSISTENT, "0": INCONSISTENT}.get(row["Answer_Faithfulness_Label"])
        if mapped is None:
            raise SourceError(f"ARES line {line}: faithfulness label {row['Answer_Faithfulness_Label']!r}")
        document, answer = row["Document"].strip(), row["Answer"].strip()
        if not document or not answer:
            dropped["empty document or answer"] += 1
            continue
        items.append(
            _item(
                id=f"ares-{line:03d}",
                question=row["Question"].strip() or None,
                answer=answer,
                label=mapped,
                error_type=None if mapped == CONSISTENT else "unfaithful (Answer_Faithfulness_Label 0)",
                source="ARES judge test set (Databricks documentation)",
                licence=LICENCES["ares"],
                source_id=f"{ARES_FILE}#line={line}",
                task="RAG-QA",
                _source="ares",
                _group=f"ares:{sha16(document)}",
                _links={f"ares-url:{row['Sources'].strip()}"},
                _passages=[document],
                _anchor=answer,
                _stratum="ares",
            )
        )
    return items, dropped


# --------------------------------------------------------------------------- BUMP


def bump_error_type(task: int, row: dict) -> str:
    """Task 1: the corrected error type; task 2: its free-style type, named like task 1's ("... Error")."""
    name = (row["corrected_error_type"] if task == 1 else row["error_type"]).strip()
    return name if name.endswith("Error") or name == "Other" else f"{name} Error"


def bump_items(src: Any) -> tuple[list[dict], Counter[str]]:
    """Each article's unedited reference summary (consistent, once) and each distinct edit (inconsistent)."""
    items, dropped = [], Counter()
    summaries: dict[int, str] = {}
    edits: set[tuple[int, str]] = set()
    written: set[int] = set()  # articles whose reference summary is an item already
    for task, path in BUMP_FILES.items():
        for row in src.json(path):
            article_id, article = int(row["article_id"]), row["article"].strip()
            reference_summary, edited = row["reference_summary"].strip(), row["edited_summary"].strip()
            if summaries.setdefault(article_id, reference_summary) != reference_summary:
                raise SourceError(f"BUMP article {article_id}: two reference summaries")
            common = {
                "licence": LICENCES["bump"],
                "task": "Summarization",
                "_source": "bump",
                "_group": f"bump:{article_id}",
                "_passages": [article],
                "_anchor": reference_summary,  # both of a minimal pair get the same cut reference
                "_stratum": "bump",
            }
            if article_id not in written:
                written.add(article_id)
                items.append(
                    _item(
                        id=f"bump-a{article_id:04d}-reference",
                        answer=reference_summary,
                        label=CONSISTENT,
                        source="BUMP (CNN/DM reference summary)",
                        source_id=f"{path}#id={row['id']}:reference_summary",
                        **common,
                    )
                )
            if (article_id, edited) in edits:
                dropped["the same edit in task 1 and task 2"] += 1
                continue
            edits.add((article_id, edited))
            items.append(
                _item(
                    id=f"bump-t{task}-{int(row['id']):03d}",
                    answer=edited,
                    label=INCONSISTENT,
                    error_type=bump_error_type(task, row),
                    source=f"BUMP (task {task}, edited summary)",
                    source_id=f"{path}#id={row['id']}:edited_summary",
                    **common,
                )
            )
    return items, dropped


# --------------------------------------------------------------------------- FRANK, SummEval, QAGS (TRUE format)


def _summary_rows(src: Any, path: str) -> list[dict]:
    csv.field_size_limit(10**9)
    rows = list(csv.DictReader(io.StringIO(src.text(path), newline="")))
    if not rows or not {"", "grounding", "generated_text", "label"} <= set(rows[0]):
        raise SourceError(f"{path}: unexpected columns")
    return rows


def summary_items(src: Any) -> tuple[list[dict], Counter[str]]:
    """One item per distinct summary (label 1 -> consistent, 0 -> inconsistent); SummEval capped per article."""
    items, dropped = [], Counter()
    for dataset, (path, name, source) in SUMMARY_FILES.items():
        pool: dict[tuple[str, str], list[dict]] = defaultdict(list)
        labels_of: dict[tuple[str, str], set[str]] = defaultdict(set)
        found = []
        for row in _summary_rows(src, path):
            label = {"1": CONSISTENT, "0": INCONSISTENT}.get(row["label"])
            if label is None:
                raise SourceError(f"{path} row {row['']}: label {row['label']!r}")
            grounding, summary = row["grounding"].strip(), row["generated_text"].strip()
            if dataset == "frank":  # the TRUE copy escapes apostrophes in FRANK's XSum summaries only: a label cue
                summary = summary.replace("\\'", "'")
            article = row.get("hash") or row.get("id") or sha16(grounding)
            labels_of[(grounding, summary)].add(label)
            found.append((int(row[""]), label, grounding, summary, article, row.get("model") or None))
        seen: set[tuple[str, str]] = set()
        for index, label, grounding, summary, article, model in found:
            pair = (grounding, summary)
            if len(labels_of[pair]) > 1:
                dropped[f"{dataset}: one summary of one article with both labels"] += 1
                continue
            if pair in seen:
                dropped[f"{dataset}: the same summary of one article again (kept once)"] += 1
                continue
            seen.add(pair)
            pool[(article, label)].append(
                _item(
                    id=f"{dataset.replace('_', '-')}-{index:04d}",
                    answer=summary,
                    label=label,
                    error_type=None if label == CONSISTENT else f"inconsistent ({name} label 0)",
                    source=source,
                    licence=LICENCES[dataset],
                    source_id=f"{path}#row={index}",
                    source_model=model,
                    task="Summarization",
                    _source="summaries",
                    _group=f"{dataset}:{article}",
                    _passages=[grounding],
                    _anchor=summary,
                    _stratum=dataset,
                )
            )
        rng = random.Random(f"{SEED}:rag_en:{dataset}")
        for key in sorted(pool):
            members = sorted(pool[key], key=lambda it: it["id"])
            if dataset == "summeval" and len(members) > SUMMEVAL_MAX_PER_ARTICLE:
                rng.shuffle(members)
                dropped[f"{dataset}: over {SUMMEVAL_MAX_PER_ARTICLE} summaries per article and label"] += (
                    len(members) - SUMMEVAL_MAX_PER_ARTICLE
                )
                members = members[:SUMMEVAL_MAX_PER_ARTICLE]
            items.extend(members)
    return items, dropped


SOURCE_READERS: dict[str, Callable[[Any], tuple[list[dict], Counter[str]]]] = {
    "lfqa": lfqa_items,
    "mtrag": mtrag_items,
    "ares": ares_items,
    "bump": bump_items,
    "summaries": summary_items,
}
