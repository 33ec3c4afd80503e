"""Train the embedded model's head, choose on dev, report on test: the figures of docs/results/precision.md.

Reads the states that benchmarks/judge_features.py extracted (benchmarks/features/<model>/), computes the
evidence features of every pair (ragfacts.evidence), and compares on the quality corpus's dev and test splits
(and RAGTruth's test split, when its file exists, for the final report only):

- `holistic_score`: the default before the head, P(Yes) >= 0.58 (threshold chosen earlier on dev);
- `holistic_score + evidence rule`: and any number, date, amount or name of the answer missing from the
  reference flags it;
- `log-odds + evidence`: a logistic model over the Yes-No log-odds and the evidence features (no state);
- `state head`: a logistic head over the 1,536-number state and the log-odds;
- `state + evidence head`: both; each head also `+ evidence veto` (an evidence flag overrides the score).

Heads are fitted on the train files (a train row sharing a reference group or text with dev or test is dropped); the
L2 strength by dev AUC, the thresholds per language by dev balanced accuracy, long answers (of 3 sentences or more)
their own per language where dev has enough of them (`LONG_FROM`, `LONG_MIN`). In both choices each dev file weighs
the same: the mean of the files' AUCs; each row weighing 1 / its file's rows of its label among the rows a threshold
is chosen on. The head that ships is then refitted on train + dev with the chosen features and strength: how much a
dev row weighs (it is the distribution the head is for) is chosen by out-of-fold dev AUC (5 folds grouped by
reference document, each scored by a head fitted on train + the other folds), its thresholds by out-of-fold dev
balanced accuracy, and the veto kept if it raises that. With `--long-dev FILE ...` the long answers' thresholds are
chosen on those files instead (one threshold family per genre: short answers' cuts, the L2 strength and the dev
weight stay --dev's, so a long-answer RAG dev file does not move the short answers' cut). Test is read once, after
every choice.
Intervals: bootstrap 95%, 2,000 resamples of items.

    python benchmarks/train_head.py [--write-head] [--out benchmarks/results/trained_head.json]
        [--train FILE ...] [--dev FILE ...] [--long-dev FILE ...] [--held-out FILE ...]
    python benchmarks/calibration.py --write-head  # after --write-head: calibrate the new head
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import files, provenance
from judge_features import load_store, read_items, request_key, sentence_requests, store_dir

from ragfacts.evidence import FEATURE_NAMES, feature_vector
from ragfacts.methods.precision.calibration import fit_logistic
from ragfacts.methods.precision.head import Head, sigmoid
from ragfacts.methods.precision.options import DEFAULT_THRESHOLDS
from ragfacts.methods.precision.scored import holistic_request
from ragfacts.methods.precision.training import VETO_FEATURES, auc, balanced_accuracy
from ragfacts.models.local.embedded import DEFAULT_MODEL
from ragfacts.text import split_sentences

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data"
PARAPHRASES = DATA / "paraphrases"  # benchmarks/corpus/build_paraphrases.py
HEAD_FILE = ROOT / "src" / "ragfacts" / "heads" / "qwen2.5-coder-1.5b-instruct-q4_k_m.json"
# The L2 strengths tried. None below 300: the model's forward pass is not bit-stable (the same prompt evaluated after
# a different KV prefix moves P(Yes) by up to ~0.05 and state components by up to ~1), and weaker heads amplify
# that into P(faithful) differences of 0.1 or more between the run that judges and the states the head was fitted on
# (benchmarks/default_bench.py measures the agreement).
PENALTIES = (100000.0, 30000.0, 10000.0, 3000.0, 1000.0, 300.0)
EVIDENCE_PENALTY = 1e-3
DEV_BOOSTS = (1.0, 4.0, 16.0, 64.0)
SEED = 20261125
# Long answers (at least this many sentences) get thresholds of their own, per language, where dev holds at least
# LONG_MIN faithful and LONG_MIN flawed long answers in it: the head's probability shifts with length
# (Head.long_answers).
LONG_FROM = 3
LONG_MIN = 20
# The evidence rule: any of these found in the answer and not in the reference flags it.
EVIDENCE_FLAGS = VETO_FEATURES


@dataclass
class Split:
    """The extracted pairs of one file: features, gold labels and what each row is."""

    name: str
    rows: list[dict[str, Any]]  # id, lang, source, label, task
    state: np.ndarray
    log_odds: np.ndarray
    p_yes: np.ndarray
    evidence: np.ndarray
    gold: np.ndarray  # 1 = consistent
    total: int  # rows in the file (extracted or not)
    tokens: np.ndarray
    seconds: np.ndarray


def subset(split: Split, mask: np.ndarray, name: str | None = None) -> Split:
    """The rows of `split` where `mask` holds."""
    return take(split, np.flatnonzero(mask), name)


def take(split: Split, indices: np.ndarray | list[int], name: str | None = None) -> Split:
    """The rows of `split` at `indices`, in that order."""
    at = np.asarray(indices, dtype=int)
    return Split(
        name=name or split.name,
        rows=[split.rows[i] for i in at],
        state=split.state[at],
        log_odds=split.log_odds[at],
        p_yes=split.p_yes[at],
        evidence=split.evidence[at],
        gold=split.gold[at],
        total=len(at),
        tokens=split.tokens[at],
        seconds=split.seconds[at],
    )


def concat(name: str, *splits: Split) -> Split:
    return Split(
        name=name,
        rows=[r for s in splits for r in s.rows],
        state=np.vstack([s.state for s in splits]),
        log_odds=np.concatenate([s.log_odds for s in splits]),
        p_yes=np.concatenate([s.p_yes for s in splits]),
        evidence=np.vstack([s.evidence for s in splits]),
        gold=np.concatenate([s.gold for s in splits]),
        total=sum(s.total for s in splits),
        tokens=np.concatenate([s.tokens for s in splits]),
        seconds=np.concatenate([s.seconds for s in splits]),
    )


def load_split(name: str, path: Path, store: dict[str, dict[str, Any]]) -> Split:
    raw = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    rows, states, odds, p_yes, evidence, gold, tokens, seconds = [], [], [], [], [], [], [], []
    for row, (item, lang) in zip(raw, read_items(path), strict=True):
        key, _ = request_key(item, lang, DEFAULT_MODEL.sha256)
        found = store.get(key)
        if found is None:
            continue
        source = row["source"].split(" (")[0]
        group = row.get("group") or row["reference"]
        sentences = len(split_sentences(item.answer)) or 1
        rows.append(
            {
                "id": row["id"],
                "lang": lang,
                "source": source,
                "group": group,
                "licence": row.get("licence"),
                "sentences": sentences,
                "file": path.stem,
                "reference_sha": hashlib.sha256((item.reference or "").encode()).hexdigest(),
            }
        )
        states.append(found["state"])
        odds.append(found["lp_yes"] - found["lp_no"])
        p_yes.append(found["p_yes"])
        evidence.append(feature_vector(item.answer, item.reference or "", lang))
        gold.append(1 if row["label"] == "consistent" else 0)
        tokens.append(found["tokens"])
        seconds.append(found["seconds"])
    if not rows:
        raise SystemExit(f"{path}: no extracted pairs; run benchmarks/judge_features.py {path} first")
    return Split(
        name=name,
        rows=rows,
        state=np.asarray(states, dtype=np.float64),
        log_odds=np.asarray(odds),
        p_yes=np.asarray(p_yes),
        evidence=np.asarray(evidence, dtype=np.float64),
        gold=np.asarray(gold),
        total=len(raw),
        tokens=np.asarray(tokens),
        seconds=np.asarray(seconds),
    )


def without_groups_of(train: Split, *others: Split) -> tuple[Split, int]:
    """`train` without its rows that share a reference group or a reference text with any of `others` (quality rows
    have no group: their reference is their group), and how many were dropped. Dev's injections are cut from train
    references (benchmarks/corpus/build_injections.py), and nothing a choice is made on or a figure reported on may
    be trained on."""
    apart = {key for split in others for r in split.rows for key in (r["group"], r["reference_sha"])}
    shared = np.array([r["group"] in apart or r["reference_sha"] in apart for r in train.rows])
    if not shared.any():
        return train, 0
    kept = subset(train, ~shared, train.name)
    kept.total = train.total - int(shared.sum())
    return kept, int(shared.sum())


def f1_hallucinated(gold: np.ndarray, predicted: np.ndarray) -> float:
    flagged, bad = predicted == 0, gold == 0
    tp = float((flagged & bad).sum())
    return 2 * tp / (flagged.sum() + bad.sum()) if (flagged.sum() + bad.sum()) else float("nan")


def interval(metric, gold: np.ndarray, predicted: np.ndarray, rng: np.random.Generator) -> dict[str, float]:
    value = metric(gold, predicted)
    draws = []
    for _ in range(2000):
        pick = rng.integers(0, len(gold), len(gold))
        draws.append(metric(gold[pick], predicted[pick]))
    low, high = np.nanpercentile(draws, [2.5, 97.5])
    return {"value": round(value, 4), "low": round(float(low), 4), "high": round(float(high), 4), "n": len(gold)}


class Model:
    """One candidate: which features, fitted weights, thresholds per language."""

    def __init__(self, name: str, use_state: bool, use_evidence: bool, veto: bool = False) -> None:
        self.name, self.use_state, self.use_evidence, self.veto = name, use_state, use_evidence, veto
        self.mean = self.scale = None
        self.weights: np.ndarray | None = None
        self.bias = 0.0
        self.penalty = 0.0
        self.thresholds: dict[str, float] = {}
        self.long_thresholds: dict[str, float] = {}  # answers of LONG_FROM sentences or more
        self.long_dev: Split | None = None  # where long answers' thresholds are chosen, if not on dev
        # (paraphrases, their originals, strength): a penalty on the difference of each pair's logits, so that a
        # rewording scores as its original (benchmarks/paraphrase_invariance.py); None: none
        self.invariance: tuple[Split, Split, float] | None = None

    def unfitted(self) -> Model:
        """A model of the same configuration (features, veto, invariance, where long answers' cuts come from), not
        fitted (for cross-fitting)."""
        fresh = Model(self.name, self.use_state, self.use_evidence, veto=self.veto)
        fresh.invariance, fresh.long_dev = self.invariance, self.long_dev
        return fresh

    def design(self, split: Split) -> np.ndarray:
        parts = []
        if self.use_state:
            parts.append((split.state - self.mean) / self.scale)
        parts.append(split.log_odds[:, None] / 10.0)
        if self.use_evidence:
            parts.append(split.evidence)
        return np.hstack(parts)

    def penalties(self, penalty: float) -> np.ndarray:
        values = []
        if self.use_state:
            values.append(np.full(len(self.mean), penalty / len(self.mean)))
        values.append(np.zeros(1))
        if self.use_evidence:
            values.append(np.full(len(FEATURE_NAMES), EVIDENCE_PENALTY))
        return np.concatenate(values)

    def fit(self, train: Split, penalty: float) -> None:
        self.mean = train.state.mean(axis=0)
        self.scale = train.state.std(axis=0) + 1e-3
        self.penalty = penalty
        strength: np.ndarray = self.penalties(penalty)
        if self.invariance is not None:
            paraphrases, originals, mu = self.invariance
            difference = self.design(paraphrases) - self.design(originals)
            strength = np.diag(strength) + mu * (difference.T @ difference) / len(difference)
        self.weights, self.bias = fit_logistic(
            self.design(train), train.gold.astype(float), strength, sample_weights(train)
        )

    def score(self, split: Split) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-(self.design(split) @ self.weights + self.bias)))

    def choose_thresholds(self, dev: Split, scores: np.ndarray | None = None) -> None:
        """Per language, the threshold with the best balanced accuracy on dev; where dev has enough long answers of
        both labels in a language, one for its short answers and one for its long ones."""
        scores = self.score(dev) if scores is None else scores
        vetoed = evidence_flags(dev) if self.veto else np.zeros(len(dev.rows), dtype=bool)
        long = np.array([r["sentences"] >= LONG_FROM for r in dev.rows])
        self.thresholds, self.long_thresholds = {}, {}
        # long answers' cuts from long_dev where given (one threshold family per genre), else from dev's long answers
        source = self.long_dev or dev
        source_scores = self.score(source) if self.long_dev is not None else scores
        source_vetoed = evidence_flags(source) if self.veto else np.zeros(len(source.rows), dtype=bool)
        source_long = np.array([r["sentences"] >= LONG_FROM for r in source.rows])
        for lang in ("en", "zh"):
            mask = np.array([r["lang"] == lang for r in dev.rows])
            both = np.array([r["lang"] == lang for r in source.rows]) & source_long
            enough = min(int((source.gold[both] == label).sum()) for label in (0, 1)) >= LONG_MIN
            if enough and (self.long_dev is not None or (mask & ~long).any()):
                self.long_thresholds[lang] = self._best(source, source_scores, source_vetoed, both)
            if lang in self.long_thresholds and (mask & ~long).any():
                mask &= ~long
            self.thresholds[lang] = self._best(dev, scores, vetoed, mask)

    @staticmethod
    def _best(dev: Split, scores: np.ndarray, vetoed: np.ndarray, mask: np.ndarray) -> float:
        """The threshold with the best file-weighted balanced accuracy over the rows of `mask`."""
        rows = [r for r, keep in zip(dev.rows, mask, strict=True) if keep]
        return best_threshold(dev.gold[mask], scores[mask], vetoed[mask], file_weights(rows, dev.gold[mask]))

    def cuts(self, split: Split) -> np.ndarray:
        """Each row's threshold: its language's, or its language's long answers' where it is long."""
        return np.array(
            [
                self.long_thresholds[r["lang"]]
                if r["lang"] in self.long_thresholds and r["sentences"] >= LONG_FROM
                else self.thresholds.get(r["lang"], 0.5)
                for r in split.rows
            ]
        )

    def predict(self, split: Split, scores: np.ndarray | None = None) -> np.ndarray:
        scores = self.score(split) if scores is None else scores
        cut = self.cuts(split)
        passed = scores >= cut
        if self.veto:
            passed &= ~evidence_flags(split)
        return passed.astype(int)

    def with_veto(self, dev: Split, scores: np.ndarray | None = None) -> Model:
        """The same weights, an evidence flag overriding the score, thresholds chosen again on dev."""
        vetoed = copy.copy(self)  # weights shared; choose_thresholds makes new threshold dicts
        vetoed.name, vetoed.veto = self.name + " + evidence veto", True
        vetoed.choose_thresholds(dev, scores)
        return vetoed

    def head(self, train: Split, figures: dict[str, Any]) -> Head:
        """The fitted weights as a head file: standardisation folded into the state weights."""
        assert self.weights is not None and self.use_state
        n = len(self.mean)
        state_w = self.weights[:n] / self.scale
        bias = self.bias - float(state_w @ self.mean)
        prompts = {lang: holistic_request_id(lang) for lang in ("en", "zh")}
        return Head(
            name="qwen2.5-coder-1.5b-instruct-q4_k_m",
            model_sha256=DEFAULT_MODEL.sha256,
            model_size=DEFAULT_MODEL.size,
            prompts=prompts,
            state_weights=state_w,
            baseline_weight=float(self.weights[n]) / 10.0,
            evidence_weights=self.weights[n + 1 :] if self.use_evidence else np.zeros(len(FEATURE_NAMES)),
            bias=bias,
            thresholds={k: round(v, 4) for k, v in self.thresholds.items()},
            long_answers=(
                {"from_sentences": LONG_FROM, "thresholds": {k: round(v, 4) for k, v in self.long_thresholds.items()}}
                if self.long_thresholds
                else {}
            ),
            evidence_veto=self.veto,
            training=figures,
        )


def cross_fitted(
    model: Model, train: Split, dev: Split, penalty: float, boost: float = 1.0, folds: int = 5
) -> np.ndarray:
    """Fit `model` on train + all of dev; return dev's out-of-fold scores (each fold scored by a model fitted on
    train + the other folds, folds grouped by reference document), on which its thresholds are chosen."""
    return cross_fitted_with(model, train, dev, None, penalty, boost, folds)[0]


def cross_fitted_with(
    model: Model,
    train: Split,
    dev: Split,
    companion: tuple[Split, list[int]] | None,
    penalty: float,
    boost: float = 1.0,
    folds: int = 5,
) -> tuple[np.ndarray, np.ndarray]:
    """`cross_fitted`, and out-of-fold scores of companion rows made from dev rows (a paraphrase of a dev answer):
    `companion` is (rows, the index in dev of the row each was made from); each is scored by the model fitted
    without its dev row's fold, so nothing it was made from was trained on."""
    groups = sorted({r["group"] for r in dev.rows})
    order = np.random.default_rng(SEED).permutation(len(groups))
    fold_of = {groups[g]: n % folds for n, g in enumerate(order)}
    fold = np.array([fold_of[r["group"]] for r in dev.rows])
    scores = np.zeros(len(dev.rows))
    companion_fold = fold[companion[1]] if companion else np.zeros(0, dtype=int)
    companion_scores = np.zeros(len(companion_fold))
    for k in range(folds):
        held = fold == k
        part = model.unfitted()
        part.fit(concat("train+dev", train, boosted(subset(dev, ~held), boost)), penalty)
        scores[held] = part.score(subset(dev, held))
        if companion and (companion_fold == k).any():
            companion_scores[companion_fold == k] = part.score(subset(companion[0], companion_fold == k))
    model.fit(concat("train+dev", train, boosted(dev, boost)), penalty)
    model.choose_thresholds(dev, scores)
    return scores, companion_scores


def holistic_request_id(lang: str) -> str:
    from ragfacts.items import Item

    return holistic_request(Item(answer="x", reference="x"), lang)[2]


def sample_weights(split: Split) -> np.ndarray:
    """Each (language, label) group weighs the same in training, whatever its size; within a group a row weighs
    its `boost` (dev rows in a refit: they are the distribution the head is for)."""
    groups: dict[tuple[str, int], float] = defaultdict(float)
    for row, gold in zip(split.rows, split.gold, strict=True):
        groups[(row["lang"], int(gold))] += row.get("boost", 1.0)
    return np.array(
        [r.get("boost", 1.0) / groups[(r["lang"], int(g))] for r, g in zip(split.rows, split.gold, strict=True)]
    )


def boosted(split: Split, factor: float) -> Split:
    """`split` with every row weighing `factor` in training."""
    return Split(**{**split.__dict__, "rows": [{**r, "boost": factor} for r in split.rows]})


_FLAGS = [FEATURE_NAMES.index(name) for name in EVIDENCE_FLAGS]


def evidence_flags(split: Split) -> np.ndarray:
    """Whether the evidence checks found a number, date, amount or name of the answer missing from the reference."""
    return split.evidence[:, _FLAGS].max(axis=1) > 0


def flagged(evidence: np.ndarray) -> bool:
    """`evidence_flags` of one answer's evidence features (`feature_vector`)."""
    return bool(np.asarray(evidence)[_FLAGS].max() > 0)


def file_weights(rows: list[dict[str, Any]], gold: np.ndarray) -> np.ndarray:
    """Each row weighs 1 / the rows of its file and label among `rows`: each file weighs the same in a balanced
    accuracy over them, whatever its size (an injections file of 800 rows does not outvote 200 answers). Pass the
    rows a threshold is chosen on (one language, long or short answers): weights are relative to them. With one
    file this is the plain balanced accuracy."""
    counts = Counter((r["file"], int(g)) for r, g in zip(rows, gold, strict=True))
    return np.array([1.0 / counts[(r["file"], int(g))] for r, g in zip(rows, gold, strict=True)])


def weighted_balanced_accuracy(gold: np.ndarray, predicted: np.ndarray, weights: np.ndarray) -> float:
    recalls = [
        float(weights[gold == c] @ (predicted[gold == c] == c) / weights[gold == c].sum())
        for c in (0, 1)
        if (gold == c).any()
    ]
    return float(np.mean(recalls)) if recalls else float("nan")


def dev_auc(dev: Split, scores: np.ndarray) -> float:
    """The mean of each dev file's AUC: every file weighs the same in a choice, whatever its size."""
    files = sorted({r["file"] for r in dev.rows})
    values = [auc(dev.gold[m], scores[m]) for m in (np.array([r["file"] == f for r in dev.rows]) for f in files)]
    return float(np.nanmean(values))


def best_threshold(gold: np.ndarray, scores: np.ndarray, vetoed: np.ndarray, weights: np.ndarray) -> float:
    candidates = np.unique(np.round(scores, 4))
    best, chosen = -1.0, 0.5
    for cut in candidates:
        value = weighted_balanced_accuracy(gold, ((scores >= cut) & ~vetoed).astype(int), weights)
        if value > best + 1e-12:  # a tie keeps the lower cut, whatever the weights' rounding
            best, chosen = value, float(cut)
    return chosen


def evaluate(name: str, split: Split, predicted: np.ndarray, scores: np.ndarray, seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    out: dict[str, Any] = {
        "method": name,
        "split": split.name,
        "extracted": f"{len(split.rows)} of {split.total}",
        "balanced_accuracy": interval(balanced_accuracy, split.gold, predicted, rng),
        "auc": round(auc(split.gold, scores), 4),
        "f1_hallucinated": interval(f1_hallucinated, split.gold, predicted, rng),
    }
    for key in ("lang", "source"):
        groups = sorted({r[key] for r in split.rows})
        for group in groups:
            mask = np.array([r[key] == group for r in split.rows])
            out[f"{key}:{group}"] = interval(balanced_accuracy, split.gold[mask], predicted[mask], rng)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--train",
        type=Path,
        nargs="+",
        default=[DATA / "train" / "train.jsonl", DATA / "train" / "train_en_rag.jsonl"],
        help="the shipped head's; a head for long English RAG answers adds the RAG, injections and paraphrases train "
        "files (its whole command: benchmarks/results/trained_head_rag_en.json's provenance)",
    )
    parser.add_argument("--dev", type=Path, nargs="+", default=[DATA / "quality" / "dev.jsonl"])
    parser.add_argument(
        "--long-dev",
        type=Path,
        nargs="*",
        default=[],
        help="dev files that choose only the long answers' thresholds (L2, dev weight and short answers' "
        "thresholds stay --dev's): one threshold family per genre",
    )
    parser.add_argument("--test", type=Path, default=DATA / "quality" / "test.jsonl")
    parser.add_argument(
        "--held-out",
        type=Path,
        nargs="*",
        default=[],
        help="more test files (e.g. benchmarks/data/rag_en/lfqa_test.jsonl), each reported in its own rows",
    )
    parser.add_argument("--ragtruth", type=Path, default=DATA / "ragtruth" / "test.jsonl")
    parser.add_argument("--write-head", action="store_true", help=f"write the best head on dev to {HEAD_FILE}")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "trained_head.json")
    args = parser.parse_args()

    store = load_store(store_dir(DEFAULT_MODEL.sha256))
    parts = []
    for path in args.train:
        try:
            parts.append(load_split("train", path, store))
        except SystemExit as missing:
            print(missing, file=sys.stderr)
    train = concat("train", *parts)
    dev = concat("dev", *(load_split("dev", path, store) for path in args.dev))
    long_dev = (
        concat("long_dev", *(load_split("long_dev", path, store) for path in args.long_dev)) if args.long_dev else None
    )
    test = load_split("test", args.test, store)
    finals = [test]
    for path in args.held_out:
        try:
            finals.append(load_split(path.stem, path, store))
        except SystemExit as missing:
            print(missing, file=sys.stderr)
    if args.ragtruth.is_file():
        try:
            finals.append(load_split("ragtruth_test", args.ragtruth, store))
        except SystemExit as missing:
            print(missing, file=sys.stderr)
    train, dropped = without_groups_of(train, dev, *([long_dev] if long_dev else []), *finals)
    if dropped:
        print(f"{dropped} train rows share a reference with dev or test: dropped", file=sys.stderr)
    print(f"train {len(train.rows)}/{train.total}, dev {len(dev.rows)}/{dev.total}", file=sys.stderr)
    paraphrased = {
        name: load_split(f"{name} paraphrases", PARAPHRASES / f"paraphrases_{name}.jsonl", store)
        for name in ("dev", "test")
        if (PARAPHRASES / f"paraphrases_{name}.jsonl").is_file()
    }
    before = Head.load(HEAD_FILE) if HEAD_FILE.is_file() else None

    results: list[dict[str, Any]] = []
    threshold = DEFAULT_THRESHOLDS["holistic_score"]
    for split in (dev, *finals):
        predicted = (split.p_yes >= threshold).astype(int)
        results.append(evaluate("holistic_score (P(Yes) >= 0.58)", split, predicted, split.p_yes, SEED))
        rule = predicted & ~evidence_flags(split)
        results.append(evaluate("holistic_score + evidence rule", split, rule.astype(int), split.p_yes, SEED))

    candidates = [
        Model("log-odds + evidence", use_state=False, use_evidence=True),
        Model("state head", use_state=True, use_evidence=False),
        Model("state + evidence head", use_state=True, use_evidence=True),
    ]
    for model in candidates:
        model.long_dev = long_dev
    shown = [long_dev] if long_dev else []  # reported beside dev and test, chosen on for long answers only
    choice: dict[str, Any] = {}
    for model in candidates:
        grid = PENALTIES if model.use_state else (0.0,)
        best = None
        for penalty in grid:
            model.fit(train, penalty)
            value = dev_auc(dev, model.score(dev))
            print(f"{model.name} penalty {penalty}: dev AUC {value:.3f}", file=sys.stderr)
            if best is None or value > best[0]:
                best = (value, penalty)
        assert best is not None
        model.fit(train, best[1])
        model.choose_thresholds(dev)
        choice[model.name] = {
            "penalty": best[1],
            "dev_auc": round(best[0], 4),
            "thresholds": model.thresholds,
            "long_thresholds": model.long_thresholds,
        }
        vetoed = model.with_veto(dev)
        choice[vetoed.name] = {"thresholds": vetoed.thresholds, "long_thresholds": vetoed.long_thresholds}
        for variant in (model, vetoed):
            for split in (dev, *shown, *finals):
                results.append(evaluate(variant.name, split, variant.predict(split), variant.score(split), SEED))

    # The head that ships: the features and strength with the best dev AUC, refitted on train + dev, thresholds
    # on dev's out-of-fold scores; with the evidence veto if that gives the better out-of-fold balanced accuracy.
    # Test is not looked at for any of it.
    best_name = max((m for m in candidates if m.use_state), key=lambda m: choice[m.name]["dev_auc"]).name
    penalty = choice[best_name]["penalty"]
    boosts: dict[float, float] = {}
    for boost in DEV_BOOSTS:  # how much a dev row weighs against a train row: by out-of-fold dev AUC
        trial = Model(best_name, use_state=True, use_evidence="evidence" in best_name)
        boosts[boost] = dev_auc(dev, cross_fitted(trial, train, dev, penalty, boost))
        print(f"refit, dev rows weighing {boost}: out-of-fold dev AUC {boosts[boost]:.3f}", file=sys.stderr)
    boost = max(boosts, key=boosts.__getitem__)
    refit = Model(f"{best_name}, refitted on train + dev", use_state=True, use_evidence="evidence" in best_name)
    refit.long_dev = long_dev
    oof = cross_fitted(refit, train, dev, penalty, boost)
    refit_veto = refit.with_veto(dev, oof)
    dev_ba = {}
    for variant in (refit, refit_veto):
        predicted = variant.predict(dev, oof)
        # rounded: a tie keeps the head without the veto, whatever the weights' rounding
        dev_ba[variant.name] = round(
            weighted_balanced_accuracy(dev.gold, predicted, file_weights(dev.rows, dev.gold)), 12
        )
        results.append(evaluate(variant.name + " (dev: out of fold)", dev, predicted, oof, SEED))
        for split in (*shown, *finals):
            results.append(evaluate(variant.name, split, variant.predict(split), variant.score(split), SEED))
        choice[variant.name] = {
            "penalty": penalty,
            "dev_row_weight": boost,
            "dev_auc_out_of_fold_by_row_weight": {f"{b:g}": round(v, 4) for b, v in boosts.items()},
            "dev_auc_out_of_fold": round(dev_auc(dev, oof), 4),
            "dev_balanced_accuracy_out_of_fold": round(dev_ba[variant.name], 4),
            "thresholds": variant.thresholds,
            "long_thresholds": variant.long_thresholds,
        }
    shipped = max((refit, refit_veto), key=lambda m: dev_ba[m.name])
    choice["shipped"] = shipped.name

    # Faithful paraphrases: the share each head passes, beside the share of their originals it passes.
    paraphrase_rates: dict[str, Any] = {}
    judges: list[tuple[str, Any]] = [(shipped.name, shipped.predict)]
    if before is not None:
        judges.insert(0, ("the head shipped before this run", lambda split: head_predict(before, split)))
    for name, split in paraphrased.items():
        originals = subset_by_ids(dev if name == "dev" else test, [r["id"].removesuffix(":para") for r in split.rows])
        for judge, predict in judges:
            paraphrase_rates.setdefault(split.name, {})[judge] = pass_rates(split, predict(split), originals, predict)

    flags: dict[str, dict[str, float]] = {}  # share of answers the evidence checks flag, per language and label
    for split in (dev, *finals):
        flagged = evidence_flags(split)
        for lang in ("en", "zh"):
            for gold, name in ((1, "faithful"), (0, "flawed")):
                mask = np.array([r["lang"] == lang for r in split.rows]) & (split.gold == gold)
                if mask.any():
                    flags.setdefault(split.name, {})[f"{lang} {name}"] = round(float(flagged[mask].mean()), 4)

    sizes = {s.name: {"extracted": len(s.rows), "rows": s.total} for s in (train, dev, *shown, *finals)}
    sizes["train"]["dropped_sharing_a_group_with_dev_or_test"] = dropped
    timing = {
        "median_seconds_per_pair_up_to_500_tokens": round(float(np.median(dev.seconds[dev.tokens <= 500])), 3),
        "median_tokens": int(np.median(np.concatenate([dev.tokens, test.tokens]))),
    }
    paraphrase_files = [PARAPHRASES / f"paraphrases_{name}.jsonl" for name in paraphrased]
    made_from = provenance(
        data=files(*args.train, *args.dev, *args.long_dev, args.test, *args.held_out, *paraphrase_files)
    )
    report = {
        "provenance": made_from,
        "sizes": sizes,
        "choice": choice,
        "timing_2_cores": timing,
        "evidence_flagged": flags,
        "paraphrases_passed": paraphrase_rates,
        "results": results,
    }
    args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    args.out.with_suffix(".md").write_text(markdown(report), encoding="utf-8")
    print(markdown(report))
    if args.write_head:
        head_model = shipped
        figures = {
            "data": {k: v for k, v in sizes.items() if k in ("train", "dev", "long_dev")},
            "files": [str(p.resolve().relative_to(ROOT)) for p in (*args.train, *args.dev, *args.long_dev)],
            "train_files": [str(p.resolve().relative_to(ROOT)) for p in args.train],
            "dev_files": [str(p.resolve().relative_to(ROOT)) for p in args.dev],
            "long_dev_files": [str(p.resolve().relative_to(ROOT)) for p in args.long_dev],
            "licences": dict(
                Counter(
                    r["licence"] for r in (*train.rows, *dev.rows, *(long_dev.rows if long_dev else []))
                ).most_common()
            ),
            "model_file": DEFAULT_MODEL.file_name,
            "penalty": head_model.penalty,
            "dev_row_weight": boost,
            "dev_out_of_fold": next(r for r in results if r["method"] == head_model.name + " (dev: out of fold)"),
            "test": next(r for r in results if r["method"] == head_model.name and r["split"] == "test"),
            "benchmark": "benchmarks/train_head.py",
            "provenance": made_from,  # the run that wrote the head: the same as its results file's
        }
        written = head_model.head(train, figures)
        if before is not None and before.sentences and not before.decides_with_sentences:
            # A sentence head that only marks sentences reads the sentence's state alone, not the answer head's
            # weights: it stays (benchmarks/sentence_aggregate.py --write-head ... --localise-only made it).
            written.sentences = before.sentences
        elif before is not None and before.sentences:
            print(
                "the head read sentences with weights fitted on the old answer head: rerun "
                "python benchmarks/sentence_aggregate.py --write-head",
                file=sys.stderr,
            )
        if before is not None and before.recall:
            # Recall keeps the weights its threshold was chosen with (benchmarks/recall_calibration.py): the
            # new precision weights would need it chosen again.
            written.recall = {"weights": before.recall.get("weights") or before.to_json()["weights"], **before.recall}
        written.save(HEAD_FILE)
        print(
            f"head written to {HEAD_FILE}, without calibrations (they depend on the weights): now run "
            "python benchmarks/calibration.py --write-head",
            file=sys.stderr,
        )


def head_probability(head: Head, split: Split) -> np.ndarray:
    """A head file's answer head on the stored rows of `split`: its raw P(faithful), sentences aside."""
    logits = split.state @ head.state_weights + head.baseline_weight * split.log_odds
    return 1.0 / (1.0 + np.exp(-(logits + split.evidence @ head.evidence_weights + head.bias)))


def head_decisions(
    head: Head, path: Path, store: dict[str, dict[str, Any]], ids: set[str] | None = None
) -> dict[str, tuple[float, bool]]:
    """id -> (raw P(faithful), passed) of a head file on the stored states of `path`'s rows, as `ragfacts check`
    decides (`trained.run_trained_head`): the answer head's probability, or, where the head reads the sentences of
    answers in the row's language, the combined probability of the answer and its sentences; the threshold for the
    language and length; the evidence veto. A row whose answer or sentence states are not all stored is left out."""
    if head.model_sha256 != DEFAULT_MODEL.sha256:
        raise SystemExit(f"the stored states are the embedded model's; the head is for {head.model_sha256}")
    out: dict[str, tuple[float, bool]] = {}
    for item, lang in read_items(path):
        if ids is not None and item.id not in ids:
            continue
        whole = store.get(request_key(item, lang, DEFAULT_MODEL.sha256)[0])
        if whole is None:
            continue
        reference = item.reference or ""
        evidence = np.asarray(feature_vector(item.answer, reference, lang), dtype=np.float64)
        logit = head.logit(whole["state"].astype(np.float64), whole["lp_yes"] - whole["lp_no"], evidence)
        sentences = split_sentences(item.answer) or [item.answer]
        if head.reads_sentences(lang):
            found = [store.get(key) for _, key, _ in sentence_requests(item, lang, DEFAULT_MODEL.sha256)]
            if any(f is None for f in found):
                continue
            logits = [
                head.sentence_logit(f["state"].astype(np.float64), f["lp_yes"] - f["lp_no"], text, reference, lang)
                for f, text in zip(found, sentences if found else [], strict=True)
            ]
            probability = head.combined_probability(logit, logits)
        else:
            probability = sigmoid(logit)
        vetoed = head.evidence_veto and flagged(evidence)
        out[item.id] = (probability, probability >= head.threshold(lang, len(sentences)) and not vetoed)
    return out


def head_predict(head: Head, split: Split) -> np.ndarray:
    """What a head file's answer head decides on the rows of `split`: its probability against its threshold, and
    its veto (a head that reads sentences needs their states too: rag_en_report.decisions)."""
    scores = head_probability(head, split)
    passed = scores >= np.array([head.answer_threshold(r["lang"], r["sentences"]) for r in split.rows])
    if head.evidence_veto:
        passed &= ~evidence_flags(split)
    return passed.astype(int)


def subset_by_ids(split: Split, ids: list[str]) -> Split:
    """The rows of `split` with these ids (in the split's order)."""
    wanted = set(ids)
    return subset(split, np.array([r["id"] in wanted for r in split.rows]))


def pass_rates(paraphrases: Split, passed: np.ndarray, originals: Split, predict: Any) -> dict[str, Any]:
    """The share of faithful paraphrases passed, per language, with bootstrap intervals; and of their originals."""
    rng = np.random.default_rng(SEED)
    original_passed = predict(originals)
    out: dict[str, Any] = {}
    for lang in ("all", "en", "zh"):
        mask = np.array([lang in ("all", r["lang"]) for r in paraphrases.rows])
        kept = np.array([lang in ("all", r["lang"]) for r in originals.rows])
        if not mask.any():
            continue
        rate = interval(lambda gold, predicted: float(predicted.mean()), passed[mask], passed[mask], rng)
        out[lang] = {**rate, "originals_passed": round(float(original_passed[kept].mean()), 4)}
    return out


def markdown(report: dict[str, Any]) -> str:
    lines = ["| method | split | extracted | balanced accuracy | en | zh | AUC | F1 hallucinated |", "|---" * 8 + "|"]
    for r in report["results"]:
        ba = r["balanced_accuracy"]

        def cell(key: str, r: dict[str, Any] = r) -> str:
            v = r.get(key)
            return f"{v['value']:.3f} [{v['low']:.3f}, {v['high']:.3f}]" if v else "-"

        f1 = r["f1_hallucinated"]
        lines.append(
            f"| {r['method']} | {r['split']} | {r['extracted']} | {ba['value']:.3f} [{ba['low']:.3f}, {ba['high']:.3f}]"
            f" | {cell('lang:en')} | {cell('lang:zh')} | {r['auc']:.3f} | {f1['value']:.3f} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
