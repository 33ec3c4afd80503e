"""Build benchmarks/data/rag_en/: English (reference, answer) pairs judged by people, split train/dev/test per source.

Long-form and multi-turn RAG answers, RAG answers over product documentation, and news summaries with human-made
minimal errors: items that look like the English RAG answers the judge meets, for training a head and for
measurement on each source's held-out test split. Every item text and every label comes from a public dataset; this
script only selects, maps labels to consistent/inconsistent, cuts references longer than MAX_REFERENCE_CHARS to the
passages the answer draws on (rag_passages.py), splits by group and orders the records. It needs no network: point
it at the source repositories, as bare git mirrors (read at the pinned commit with ``git cat-file``) or as plain
checkouts of that commit. Each file read is checked against a pinned SHA-256, so a rebuild is byte-for-byte
identical.

Sources (see benchmarks/data/rag_en/SOURCES.md): LFQA-Verification (sentence-labelled long-form answers), MTRAG's
human evaluation, ARES's judge test set, BUMP, and FRANK / SummEval / QAGS in TRUE format (scale-score's copy).

Splits: each source's groups (question, conversation, document, article; merged when two references share a
sentence, across sources too) go whole to one split, about 60/20/20 of the source's rows and of its rarer label's
rows, with a fixed seed. No item
shares a reference, a reference line or a reference sentence with the quality corpus's dev/test
(benchmarks/data/quality); a group that shares one with the existing training files (benchmarks/data/train) goes to
train. The script checks all of it again before writing (it fails otherwise).

    python benchmarks/corpus/build_rag_sources.py \\
        --lfqa <timchen0618/LFQA-Verification> --mtrag <IBM/mt-rag-benchmark> \\
        --ares <stanford-futuredata/ARES> --bump <dataminr-ai/BUMP> --summaries <asappresearch/scale-score> \\
        --quality benchmarks/data/quality --trained benchmarks/data/train --out benchmarks/data/rag_en

Add ``--check`` to compare with the files already in ``--out`` instead of writing them; ``--max-reference-chars 0``
(into another ``--out``) builds the same items with uncut references, to check that cutting keeps verdicts.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from collections import Counter, defaultdict
from pathlib import Path

from corpus_records import LABELS, SEED, dump_jsonl, write_or_check
from corpus_selection import interleave
from pinned import PinnedSource, SourceError, add_source_arguments, open_sources, print_digests
from rag_passages import cut_reference, fingerprints, join_passages
from rag_sources_read import FIELDS, LFQA_ANNOTATIONS, SOURCE_READERS, Held
from rag_sources_stats import stats_of, summary

MAX_REFERENCE_CHARS = 6000
SPLITS = ("train", "dev", "test")
SPLIT_SHARES = (0.6, 0.2, 0.2)
SOURCES = ("lfqa", "mtrag", "ares", "bump", "summaries")  # also the order in which groups are given a split
STATS_NAME = "stats.json"

# repository -> (commit, {path: sha256})
PINNED: dict[str, tuple[str, dict[str, str]]] = {
    "lfqa": (
        "4e905be93fbe919082d62faa77ee32c68e90237c",
        {
            LFQA_ANNOTATIONS.format("webgpt"): "00d80e806d1d3428dad9e3c363f48f1c69df0b0553f1d0ab1660e517cbb52942",
            LFQA_ANNOTATIONS.format("gpt3_wdoc"): "ccbeffc8ae50a2059f50f1a51a8841266fee38555c4a5fe091689c07243c84b4",
            LFQA_ANNOTATIONS.format("gpt3_whudoc"): "d3fca80685e0d84ae6796e018290f1363bbaf8b8dd6c7198816b2460e01b5e72",
            LFQA_ANNOTATIONS.format("alpaca_wdoc"): "f2e4e95e1d12c5564bb07195b91fdea96375a9fcc43c0a1ea798f354c8bad61d",
            LFQA_ANNOTATIONS.format("gpt3"): "149c41215aa25c3d210f665e6f9af54951d31e61d29721d2e694cfb00f8c8cf8",
            LFQA_ANNOTATIONS.format("alpaca"): "c3582f7a59e218aa1bcf4a1b7e18ae75f847e3c7e43b7f1b5bc3655f7df2c1a0",
            "data/docs/docs-webgpt.json": "bca08af7ab7fa8062929387b16d33fd7609b3739db1dab4935e376437332387b",
            "data/docs/docs-human.json": "f96947e2352c5df5929696bbf58e640ea72fc694e0b2c242389530cabcaa1472",
            "data/answers.json": "f4cb389b59ed0d7dd2998d0e119947568b6e0add410b727b420643ea2d97cf07",
        },
    ),
    "mtrag": (
        "cc5b1d481b391181b89f7ced860308482e785463",
        {
            "mtrag-human/evaluations/reference_subset_with_human_evaluations.json": (
                "ba8518617eca8dd31cadfcbbec1e3b38464e3c6cea33d902865e4acd05e8673e"
            ),
        },
    ),
    "ares": (
        "3dbd814f7e0e56c08e8b8ba73221ac98f66e3647",
        {
            "datasets_v2/LLM_Judge_Test_Set_Human_Annotations.tsv": (
                "7ba390e28e8f1af583f883a761638f46ee60550182e7a240d466da3328fe985f"
            ),
        },
    ),
    "bump": (
        "86327f14b9e0c16a364a3793b8a622dc703d22fd",
        {
            "data/task1_dataset.json": "419c37fde3408755fa6b639ec35bde0261fba6e3840cad70a74b4af5603c0af3",
            "data/task2_dataset.json": "b4b03a80a17a5d61f729589f5933f2d90158393b61b1927547b398f63012b47e",
        },
    ),
    "summaries": (
        "ada43738521e51f470fe8bfab6764e3a123f89dd",
        {
            "data/true/frank.csv": "c54e42a706466c2f63d1d46dca87e039382f6153b228d4092fd2dce3755b8823",
            "data/true/summeval.csv": "997e799c6e8bea5adf929d6d499bb8a8935b41017d0a7cf72a7a76391070ac7e",
            "data/true/qags_cnndm.csv": "766e38fff33a41bf228d5b1af3a7d813a0dea6ec5e851b9662b200d661b32cd3",
            "data/true/qags_xsum.csv": "10ea432a69f50da4d5515028da121296930465d124ca3628a67786562f869c49",
        },
    ),
}


# --------------------------------------------------------------------------- groups and splits


class _Groups:
    """Union-find over string keys; a component is named by its smallest key."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, key: str) -> str:
        self.parent.setdefault(key, key)
        root = key
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[key] != root:
            self.parent[key], key = root, self.parent[key]
        return root

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def merge_groups(items: list[dict]) -> None:
    """Set each item's ``group`` to its component: its own group, the items sharing a link key with it
    (``_links``), and the items whose reference shares a sentence with it (``rag_passages.fingerprints``)."""
    groups = _Groups()
    seen: dict[str, str] = {}
    for item in items:
        own = item["_group"]
        for key in sorted(item["_links"]):
            groups.union(own, f"link:{key}")
        for key in sorted(fingerprints(item["_full_reference"])):
            if key in seen:
                groups.union(own, seen[key])
            else:
                seen[key] = own
    names: dict[str, str] = {}
    for item in items:  # a component's name: the smallest source group in it
        root = groups.find(item["_group"])
        names[root] = min(names.get(root, item["_group"]), item["_group"])
    for item in items:
        item["group"] = names[groups.find(item["_group"])]


def _shortfall(split: str, filled: list[int], totals: tuple[int, int]) -> float:
    """How far ``split`` is below its share: of the source's rows, plus of its rarer label's rows."""
    share = SPLIT_SHARES[SPLITS.index(split)]
    return share - filled[0] / totals[0] + share - filled[1] / totals[1]


def assign_splits(items: list[dict], seed: int = SEED, train_only: frozenset[str] = frozenset()) -> None:
    """Set ``_split`` of every item: each group whole in one split, about SPLIT_SHARES of each source's rows and of
    its rarer label's rows.

    Sources in SOURCES order; a group already placed by an earlier source (or in ``train_only``) stays; the others,
    sorted and shuffled with ``random.Random(f"{seed}:rag_en:split:{source}")``, each go to the split furthest below
    its share (the shortfall of its share of rows plus that of its share of the rarer label; ties: train, dev, test).
    """
    placed: dict[str, str] = dict.fromkeys(sorted(train_only), "train")
    for source in SOURCES:
        mine = [item for item in items if item["_source"] == source]
        labels = Counter(item["label"] for item in mine)
        rarer = min(sorted(labels), key=lambda label: labels[label], default=None)
        rows = Counter(item["group"] for item in mine)
        rare = Counter(item["group"] for item in mine if item["label"] == rarer)
        filled = {split: [0, 0] for split in SPLITS}  # rows, rows of the rarer label
        totals = (len(mine), max(1, labels[rarer]))
        free = []
        for group in sorted(rows):
            if group in placed:
                filled[placed[group]][0] += rows[group]
                filled[placed[group]][1] += rare[group]
            else:
                free.append(group)
        random.Random(f"{seed}:rag_en:split:{source}").shuffle(free)
        for group in free:
            split = max(SPLITS, key=lambda s: (_shortfall(s, filled[s], totals), -SPLITS.index(s)))
            placed[group] = split
            filled[split][0] += rows[group]
            filled[split][1] += rare[group]
    for item in items:
        item["_split"] = placed[item["group"]]


# --------------------------------------------------------------------------- order, check, write


def finish(items: list[dict], bound: int) -> None:
    """Cut each reference to ``bound`` characters (0: keep whole) and record the uncut length."""
    for item in items:
        item["reference"] = cut_reference(item["_passages"], item["_anchor"], bound)
        item["reference_chars"] = len(item["_full_reference"])


def verify(files: dict[str, list[dict]], held: Held, trained: Held, bound: int) -> None:
    """Fail unless every item is well-formed, no group is in two splits and no reference is shared with dev/test
    of the quality corpus (or, for dev/test items, with the existing training files)."""
    problems: list[str] = []
    items = [item for rows in files.values() for item in rows]
    ids = Counter(item["id"] for item in items)
    problems += [f"duplicate id {i}" for i, n in ids.items() if n > 1]
    split_of: dict[str, set[str]] = defaultdict(set)
    for name, rows in files.items():
        pairs = Counter((item["reference"], item["answer"]) for item in rows)
        problems += [f"{name}: duplicate pair {pair[1][:60]!r}" for pair, n in pairs.items() if n > 1]
        for item in rows:
            split_of[item["group"]].add(name.rsplit("_", 1)[1])
    problems += [f"group {g} in splits {sorted(s)}" for g, s in split_of.items() if len(s) > 1]
    for name, rows in files.items():
        for item in rows:
            where = f"{name}: {item['id']}"
            if item["label"] not in LABELS or item["lang"] != "en" or not item["answer"].strip():
                problems.append(f"{where}: label {item['label']!r}, lang {item['lang']!r} or empty answer")
            if not item["reference"].strip() or (bound > 0 and len(item["reference"]) > bound):
                problems.append(f"{where}: reference empty or over {bound} characters")
            if item["id"] in held.ids or held.shares(item["_full_reference"]):
                problems.append(f"{where}: shares a reference with the quality corpus's dev/test")
            if not name.endswith("_train") and trained.shares(item["_full_reference"]):
                problems.append(f"{where}: a dev/test item shares a reference with the training files")
            for sentence in item["sentences"] or []:
                if item["answer"][sentence["start"] :].find(sentence["text"]) != 0:
                    problems.append(f"{where}: sentence offset {sentence['start']} does not match")
    if problems:
        raise SourceError("check failed:\n  " + "\n  ".join(problems[:20]))


def build(
    sources: dict[str, PinnedSource], held: Held, trained: Held, bound: int = MAX_REFERENCE_CHARS
) -> tuple[dict[str, list[dict]], dict]:
    """The output files (``<source>_<split>`` -> ordered items) and a report: what was dropped, per source and
    reason, and how many groups were merged across sources or kept in train."""
    items: list[dict] = []
    dropped: dict[str, Counter[str]] = {}
    for name in SOURCES:
        found, dropped[name] = SOURCE_READERS[name](sources[name])
        labels_of: dict[tuple[str, str], set[str]] = defaultdict(set)
        for item in found:
            item["_full_reference"] = join_passages(item["_passages"])
            labels_of[(item["_full_reference"], item["answer"])].add(item["label"])
        seen: set[tuple[str, str]] = set()
        for item in found:
            pair = (item["_full_reference"], item["answer"])
            if len(labels_of[pair]) > 1:
                dropped[name]["one answer to one reference with both labels"] += 1
            elif pair in seen:
                dropped[name]["the same answer to the same reference again (kept once)"] += 1
            elif item["id"] in held.ids or held.shares(item["_full_reference"]):
                dropped[name]["shares a reference with quality dev/test"] += 1
            else:
                seen.add(pair)
                items.append(item)
    merge_groups(items)
    train_only = frozenset(item["group"] for item in items if trained.shares(item["_full_reference"]))
    assign_splits(items, SEED, train_only)
    finish(items, bound)
    files: dict[str, list[dict]] = {}
    for name in SOURCES:
        for split in SPLITS:
            rows = [item for item in items if item["_source"] == name and item["_split"] == split]
            files[f"{name}_{split}"] = interleave(
                rows, lambda item: item["_stratum"], f"{SEED}:rag_en:order:{name}_{split}"
            )
    verify(files, held, trained, bound)
    sources_of: dict[str, set[str]] = defaultdict(set)
    for item in items:
        sources_of[item["group"]].add(item["_source"])
    report = {
        "dropped": {name: dict(sorted(counts.items())) for name, counts in dropped.items()},
        "groups_across_sources": sum(len(found) > 1 for found in sources_of.values()),
        "groups_in_train_for_sharing_a_training_reference": len(train_only),
    }
    return files, report


def render(files: dict[str, list[dict]], report: dict, bound: int) -> dict[str, bytes]:
    """File name -> bytes: one JSONL file per source and split, and the statistics."""
    out = {f"{name}.jsonl": dump_jsonl(rows, FIELDS) for name, rows in files.items()}
    stats = stats_of(files, report, bound)
    out[STATS_NAME] = (json.dumps(stats, indent=1, ensure_ascii=False) + "\n").encode("utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_source_arguments(parser, SOURCES)
    parser.add_argument("--quality", type=Path, default=Path("benchmarks/data/quality"), help="dev/test to exclude")
    parser.add_argument("--trained", type=Path, default=Path("benchmarks/data/train"), help="training files")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/data/rag_en"))
    parser.add_argument("--max-reference-chars", type=int, default=MAX_REFERENCE_CHARS, help="0: keep whole")
    args = parser.parse_args(argv)

    sources = open_sources(PINNED, args)
    try:
        held = Held.of_files([args.quality / "dev.jsonl", args.quality / "test.jsonl"])
        trained = Held.of_files(sorted(args.trained.glob("*.jsonl")))
        files, report = build(sources, held, trained, args.max_reference_chars)
    except SourceError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.print_digests:
        print_digests(sources)
    rendered = render(files, report, args.max_reference_chars)
    print(summary(json.loads(rendered[STATS_NAME])))

    status = write_or_check({args.out / n: data for n, data in rendered.items()}, args.check)
    if not args.check:
        digest = hashlib.sha256(b"".join(rendered[n] for n in sorted(rendered))).hexdigest()
        print(f"wrote {len(rendered)} files, {sum(map(len, rendered.values())):,} bytes (SHA-256 of all: {digest})")
    return status


if __name__ == "__main__":
    sys.exit(main())
