"""Build benchmarks/data/train/train_en_rag.jsonl: English, human-labelled, grounded-generation training items.

A separate training file next to train.jsonl (which it does not touch), for fitting the classifier head on English
items closer to RAG answers than HaluEval's short entities: a text that should be grounded in a given reference,
judged by people as grounded in it or not. Every item text and every label comes from a public dataset; this
script only selects, maps labels to consistent/inconsistent and orders the records (every prefix is a balanced
mix). It needs no network: point it at the source repositories, either as bare git mirrors (read at the pinned
commit with ``git cat-file``) or as plain checkouts of that commit. Each file read is checked against a pinned
SHA-256, so a rebuild is byte-for-byte identical.

Sources (see benchmarks/data/train/SOURCES_en_rag.md):

* WiCE (ryokamoi/wice): Wikipedia claims checked by people against the web page they cite (supported / partially
  supported / not supported); the reference is the authors' "oracle chunk" of that page.
* BEGIN (google/BEGIN-dataset): responses of knowledge-grounded dialogue models (GPT-2, T5, CTRL, DoHA) judged by
  people as fully attributable / not fully attributable / generic with respect to the knowledge they were given.

No item shares a reference text, or a reference line of at least MIN_SHARED_SEGMENT_CHARS characters, with the
quality corpus (benchmarks/data/quality/{dev,test}.jsonl): the script reads both files, leaves such candidates out
and checks the result again before writing (it fails otherwise).

    python benchmarks/corpus/build_train_en_rag.py \\
        --wice /path/to/ryokamoi+wice/repo \\
        --begin /path/to/google+BEGIN-dataset/repo \\
        --quality benchmarks/data/quality --out benchmarks/data/train

Add ``--check`` to compare with the file already in ``--out`` instead of writing it.
"""

from __future__ import annotations

import argparse
import csv
import io
import random
import statistics
import sys
from collections import Counter, defaultdict
from pathlib import Path

from corpus_records import (
    CONSISTENT,
    GROUPED_FIELDS,
    INCONSISTENT,
    LABELS,
    SEED,
    dump_jsonl,
    duplicate_problems,
    record,
    sha16,
    write_or_check,
)
from corpus_selection import HeldOut, balanced, capped_sample, interleave
from pinned import PinnedSource, SourceError, add_source_arguments, open_sources, print_digests

OUT_NAME = "train_en_rag.jsonl"
MAX_REFERENCE_CHARS = 2500
MAX_ANSWER_CHARS = 800
MIN_WICE_REFERENCE_CHARS = 200  # a few oracle chunks of unsupported claims are page debris ("(41)", dates)

WICE_SPLITS = ("dev", "test")  # the claim-level train split is absent from the stored snapshot (too large)
WICE_CHUNKS = "code_and_resources/entailment_inputs/oracle_chunks/claim/{}.jsonl"
WICE_ARTICLES = "data/entailment_retrieval/claim/{}.jsonl"  # read only to group claims by the cited web page
BEGIN_FILES = {
    # part -> files; cmu-dog and topicalchat test files are absent from the stored snapshot (too large)
    "wow": ("wow/begin_dev_wow.tsv", "wow/begin_test_wow.tsv"),
    "cmu": ("cmu-dog/begin_dev_cmu.tsv",),
    "tc": ("topicalchat/begin_dev_tc.tsv",),
}
BEGIN_COLUMNS = ["model_name", "data_source", "knowledge", "message", "response", "begin_label"]

# repository -> (commit, {path: sha256})
PINNED: dict[str, tuple[str, dict[str, str]]] = {
    "wice": (
        "ddeb6c183665e2a20c5f03c5aa07f03888b9870f",
        {
            WICE_CHUNKS.format("dev"): "ae33170930d690cb96cd46f097ec5658daaf7fd6700d6d2bf97644e3a8dfb2f9",
            WICE_CHUNKS.format("test"): "234bb8c2ca4511ca078e49e07c895a2db61a581d03237e7e1ecb7c48c8510a3e",
            WICE_ARTICLES.format("dev"): "67531ca79bde4c81d3752fb69d9cb0d3d6763de5c3028f548b83ef053a6f8042",
            WICE_ARTICLES.format("test"): "4c91b9e9590cfcd8f8a0f7288b5ff315af8ade946d7bf26f50fbd671bb86dbe8",
        },
    ),
    "begin": (
        "6e65f0d5a1ed1b9574643a7640ff1678d4e979b5",
        {
            "wow/begin_dev_wow.tsv": "2ebfc95a1ff267e12dcce3250da4d158e1811c62e9e1a0d56f110efc9ace0178",
            "wow/begin_test_wow.tsv": "d5c106a42042c3abd481563f1157e07c95c107dbcdf67f23564d874e8a4d6e7e",
            "cmu-dog/begin_dev_cmu.tsv": "9482294df23cf08a976773ca73203b84f7178534ecab1a206eaade365e97071c",
            "topicalchat/begin_dev_tc.tsv": "d799a8cb3635de41b7f284dcfc872544ddeadcbae0c2ffd684270cce671f7711",
        },
    ),
}

LICENCES = {
    "wice": "ODC-BY 1.0 (annotations); claims CC BY-SA (Wikipedia); evidence: web pages archived by Common Crawl",
    "wow": "CC BY 4.0",
    "cmu": "CC BY 4.0",
    "tc": "CDLA-Sharing 1.0",
}
BEGIN_NAMES = {"wow": "Wizard of Wikipedia", "cmu": "CMU-DoG", "tc": "Topical-Chat"}

# Per-source selection (after the length filter and the exclusion of dev/test references); see SOURCES_en_rag.md.
WICE_PER_LABEL = 250  # consistent = supported; inconsistent = not supported first (up to half), then partially
BEGIN_PER_LABEL = {"wow": 200, "cmu": 200, "tc": 200}  # cmu and tc hold far fewer attributable responses
BEGIN_MAX_PER_KNOWLEDGE = 2  # responses per knowledge snippet and label (each was answered by four models)


def _fits(reference: str, answer: str) -> bool:
    return 0 < len(reference) <= MAX_REFERENCE_CHARS and 0 < len(answer) <= MAX_ANSWER_CHARS


# --------------------------------------------------------------------------- WiCE


def wice_items(src: PinnedSource, held: HeldOut) -> list[dict]:
    """One oracle chunk per claim (drawn at random among the annotators' chunks).

    supported -> consistent; not_supported / partially_supported -> inconsistent (error_type = the WiCE label).
    """
    rng = random.Random(f"{SEED}:en_rag:wice")
    pools: dict[str, list[dict]] = {"supported": [], "partially_supported": [], "not_supported": []}
    for split in WICE_SPLITS:
        page_of = {}
        for row in src.jsonl(WICE_ARTICLES.format(split)):
            page_of[row["meta"]["id"]] = sha16("\n".join(s.strip() for s in row["evidence"]))
        chunks: dict[str, list[tuple[int, dict]]] = defaultdict(list)
        for line, row in enumerate(src.jsonl(WICE_CHUNKS.format(split)), start=1):
            chunks[row["meta"]["id"]].append((line, row))
        for claim_id in sorted(chunks):
            if claim_id not in page_of:
                raise SourceError(f"WiCE {split}: claim {claim_id} has no article row")
            labels = {row["label"] for _, row in chunks[claim_id]}
            if len(labels) != 1 or not labels <= set(pools):
                raise SourceError(f"WiCE {split}: claim {claim_id} has labels {sorted(labels)}")
            line, row = rng.choice(chunks[claim_id])
            reference = "\n".join(s.strip() for s in row["evidence"] if s.strip())
            answer = row["claim"].strip()
            if len(reference) < MIN_WICE_REFERENCE_CHARS or not _fits(reference, answer) or held.shares(reference):
                continue
            label = row["label"]
            pools[label].append(
                record(
                    id=f"wice-en-{claim_id}",
                    lang="en",
                    question=None,
                    reference=reference,
                    answer=answer,
                    label=CONSISTENT if label == "supported" else INCONSISTENT,
                    error_type=None if label == "supported" else label,
                    source=f"WiCE (oracle chunks, claim, {split})",
                    licence=LICENCES["wice"],
                    source_id=f"oracle_chunks/claim/{split}.jsonl#line={line}",
                    source_model=None,
                    task="Attribution",
                    group=f"wice:{page_of[claim_id]}",
                )
            )
    cap = 10**6  # one item per claim already; claims citing one page share a group but are all allowed
    n = min(WICE_PER_LABEL, len(pools["supported"]), len(pools["not_supported"]) + len(pools["partially_supported"]))
    chosen = capped_sample(pools["supported"], rng, n, cap)
    not_supported = capped_sample(pools["not_supported"], rng, n // 2, cap)
    chosen += not_supported + capped_sample(pools["partially_supported"], rng, n - len(not_supported), cap)
    return chosen


# --------------------------------------------------------------------------- BEGIN


def _begin_rows(src: PinnedSource, path: str) -> list[tuple[int, dict]]:
    reader = csv.reader(io.StringIO(src.text(path), newline=""), delimiter="\t", quoting=csv.QUOTE_NONE)
    header = next(reader)
    if header != BEGIN_COLUMNS:
        raise SourceError(f"BEGIN {path}: unexpected header {header}")
    rows = []
    for line, fields in enumerate(reader, start=2):
        if len(fields) != len(BEGIN_COLUMNS):
            raise SourceError(f"BEGIN {path}: line {line} has {len(fields)} fields")
        rows.append((line, dict(zip(BEGIN_COLUMNS, fields, strict=True))))
    return rows


def begin_items(src: PinnedSource, held: HeldOut) -> list[dict]:
    """Fully attributable -> consistent; Not fully attributable -> inconsistent; Generic -> left out."""
    chosen: list[dict] = []
    for part, paths in BEGIN_FILES.items():
        pools: dict[str, list[dict]] = {label: [] for label in LABELS}
        for path in paths:
            split = "test" if "_test_" in path else "dev"
            for line, row in _begin_rows(src, path):
                reference = row["knowledge"].strip()
                answer = row["response"].strip()
                question = row["message"].strip() or None
                if row["begin_label"] == "Fully attributable":
                    label, error_type = CONSISTENT, None
                elif row["begin_label"] == "Not fully attributable":
                    label, error_type = INCONSISTENT, "not fully attributable"
                elif row["begin_label"] == "Generic":
                    continue
                else:
                    raise SourceError(f"BEGIN {path}: line {line} has label {row['begin_label']!r}")
                if not _fits(reference, answer) or held.shares(reference):
                    continue
                pools[label].append(
                    record(
                        id=f"begin-en-{part}-{split}-{line:05d}",
                        lang="en",
                        question=question,
                        reference=reference,
                        answer=answer,
                        label=label,
                        error_type=error_type,
                        source=f"BEGIN ({BEGIN_NAMES[part]}, {split})",
                        licence=LICENCES[part],
                        source_id=f"{path}#line={line}",
                        source_model=row["model_name"],
                        task="Dialogue",
                        group=f"begin:{part}:{sha16(reference)}",
                    )
                )
        # identical responses of several models to one snippet: keep one (the first line), none if labels differ
        labels_of: dict[tuple[str, str], set[str]] = defaultdict(set)
        for label in LABELS:
            for item in pools[label]:
                labels_of[(item["reference"], item["answer"])].add(label)
        seen: set[tuple[str, str]] = set()
        for label in LABELS:
            kept = []
            for item in sorted(pools[label], key=lambda it: it["id"]):
                pair = (item["reference"], item["answer"])
                if len(labels_of[pair]) == 1 and pair not in seen:
                    seen.add(pair)
                    kept.append(item)
            pools[label] = kept
        rng = random.Random(f"{SEED}:en_rag:begin:{part}")
        chosen.extend(balanced(pools, rng, BEGIN_PER_LABEL[part], BEGIN_MAX_PER_KNOWLEDGE))
    return chosen


# --------------------------------------------------------------------------- order, check, write


def _stratum(item: dict) -> str:
    """``wice`` or ``begin-<part>``."""
    parts = item["id"].split("-")
    return parts[0] if parts[0] == "wice" else f"{parts[0]}-{parts[2]}"


def verify(items: list[dict], held: HeldOut) -> None:
    """Fail unless every item is well-formed and shares no reference, reference line or id with dev/test."""
    problems = duplicate_problems(items)
    for item in items:
        if item["id"] in held.ids:
            problems.append(f"{item['id']}: id also in dev/test")
        if held.shares(item["reference"]):
            problems.append(f"{item['id']}: reference (or a reference line) also in dev/test")
        if item["label"] not in LABELS or item["lang"] != "en":
            problems.append(f"{item['id']}: label {item['label']!r} / lang {item['lang']!r}")
        if not _fits(item["reference"], item["answer"]):
            problems.append(f"{item['id']}: outside the length limits")
    for stratum in sorted({_stratum(item) for item in items}):
        labels = Counter(item["label"] for item in items if _stratum(item) == stratum)
        if labels[CONSISTENT] != labels[INCONSISTENT]:
            problems.append(f"{stratum}: labels not balanced ({dict(labels)})")
    if problems:
        raise SourceError("check failed:\n  " + "\n  ".join(problems[:20]))


def summary(items: list[dict]) -> str:
    rows = Counter((_stratum(item), item["label"]) for item in items)
    out = ["source        consistent  inconsistent  groups  median ref  median answer"]
    for stratum in sorted({k[0] for k in rows}):
        part = [i for i in items if _stratum(i) == stratum]
        ref = statistics.median(len(i["reference"]) for i in part)
        ans = statistics.median(len(i["answer"]) for i in part)
        groups = len({i["group"] for i in part})
        out.append(
            f"{stratum:<13} {rows[(stratum, CONSISTENT)]:>10} {rows[(stratum, INCONSISTENT)]:>13}"
            f" {groups:>7} {ref:>11.0f} {ans:>14.0f}"
        )
    errors = Counter(i["error_type"] for i in items if i["label"] == INCONSISTENT)
    out.append(
        f"total {len(items)}, groups {len({i['group'] for i in items})}; inconsistent: {dict(sorted(errors.items()))}"
    )
    out.append(
        f"all: median reference {statistics.median(len(i['reference']) for i in items):.0f} chars, "
        f"median answer {statistics.median(len(i['answer']) for i in items):.0f} chars"
    )
    return "\n".join(out)


def build(sources: dict[str, PinnedSource], held: HeldOut) -> list[dict]:
    items = wice_items(sources["wice"], held) + begin_items(sources["begin"], held)
    ordered = interleave(items, _stratum, f"{SEED}:en_rag:order")
    verify(ordered, held)
    return ordered


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_source_arguments(parser, PINNED)
    parser.add_argument("--quality", type=Path, default=Path("benchmarks/data/quality"), help="dev/test to exclude")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/data/train"), help=f"writes {OUT_NAME} here")
    args = parser.parse_args(argv)

    sources = open_sources(PINNED, args)
    try:
        items = build(sources, HeldOut.of_files([args.quality / "dev.jsonl", args.quality / "test.jsonl"]))
    except SourceError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.print_digests:
        print_digests(sources)
    print(summary(items))
    return write_or_check({args.out / OUT_NAME: dump_jsonl(items, GROUPED_FIELDS)}, args.check)


if __name__ == "__main__":
    sys.exit(main())
