"""Long answers read sentence by sentence: the answer's state and its sentences' scores decide together.

A last-token state of a 700-character answer dilutes one unsupported sentence. This replays the states that
`judge_features.py --sentences` stored (each sentence of a multi-sentence answer scored alone, the sentence as the
answer, after its answer so that the reference's KV cache is reused) and compares, per held-out source:

- "head": the shipped head's P(faithful) of the whole answer against its own thresholds (what ships);
- "head, dev thresholds": the same probability, thresholds per language chosen on dev;
- "weakest sentence": the lowest sentence logit alone (an answer of one sentence: its own), dev thresholds;
- "answer + sentences": a logistic model over [answer logit, lowest sentence logit, mean sentence logit, share of
  sentences under logit 0], each language and label weighing the same: what a head file's `sentences` block holds
  (`Head.combined_probability`), written by `--write-head`. It is fitted on dev, not train: the answer head was
  trained on train, so its logits there are not what it gives unseen answers. Dev's figures and thresholds come
  from out-of-fold scores (5 folds by reference group); the weights written are refitted on the whole of dev;
- the same two with a **sentence head** in place of the answer head on sentences: a logistic head over the
  sentence's state, fitted on LFQA's labelled train sentences (not supported = 0, supported = 1; "partially"
  left out of fitting), its L2 strength chosen by dev sentence AUC.

Sentence-level F1 of "not supported" on LFQA's dev and test sentences is reported for both sentence scorers,
flagged below a threshold chosen on dev for F1. Answers whose sentences are not all extracted yet are left out
and counted. Choices on dev; test is read once.

    python benchmarks/sentence_aggregate.py [--head FILE] [--write] [--write-head FILE [--localise-only]]
    # --write: results/sentence_aggregate.json; --write-head: the head with the reading chosen on dev;
    # --localise-only: the head's verdicts unchanged, the sentence head marking a flagged answer's sentences
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from _provenance import files, provenance
from judge_features import load_store, read_items, request_key, sentence_requests, store_dir
from train_head import SEED, best_threshold, flagged, head_decisions, interval

from ragfacts.evidence import feature_vector
from ragfacts.methods.precision.calibration import fit_logistic
from ragfacts.methods.precision.head import Head, encode_weights, shipped_head
from ragfacts.methods.precision.training import auc, balanced_accuracy
from ragfacts.models.local.embedded import DEFAULT_MODEL
from ragfacts.text import split_sentences

ROOT = Path(__file__).resolve().parents[1]
RAG_EN = ROOT / "benchmarks" / "data" / "rag_en"
QUALITY = ROOT / "benchmarks" / "data" / "quality"  # answers of one or two sentences, both languages
PARAPHRASES = ROOT / "benchmarks" / "data" / "paraphrases"
QUALITY_FILES = [
    d / f"{p}{s}.jsonl" for s in ("dev", "test") for d, p in ((QUALITY, ""), (PARAPHRASES, "paraphrases_"))
]
SOURCES = ("lfqa", "mtrag", "ares")
PENALTIES = (3000.0, 1000.0, 300.0)
RESULTS = ROOT / "benchmarks" / "results" / "sentence_aggregate.json"


@dataclass
class Answer:
    """One labelled answer as the model read it, whole and sentence by sentence."""

    id: str
    group: str  # answers of one group (one reference) are never split across folds
    lang: str
    source: str
    gold: int  # 1 = faithful
    logit: float  # the answer head's, of the whole answer
    states: np.ndarray  # the sentences' states (the whole answer's for an answer of one sentence)
    logits: np.ndarray  # the answer head's logit of each sentence
    labels: list[int | None]  # LFQA: 0 = a sentence labelled not supported overlaps it, 1 = all supported
    vetoed: bool  # the evidence checks flag the answer (a head with `evidence_veto` fails it whatever its score)


def head_logit(head: Head, found: dict[str, Any], answer: str, reference: str, lang: str) -> float:
    evidence = np.asarray(feature_vector(answer, reference, lang), dtype=np.float64)
    return head.logit(found["state"].astype(np.float64), found["lp_yes"] - found["lp_no"], evidence)


def spans(answer: str, texts: list[str], starts: list[int] | None = None) -> list[tuple[int, int]]:
    """Character spans of consecutive `texts` in `answer` (found in order; `starts` where they are given)."""
    found, at = [], 0
    for n, text in enumerate(texts):
        start = starts[n] if starts is not None else answer.find(text, at)
        start = at if start < 0 else start
        found.append((start, start + len(text)))
        at = start + len(text)
    return found


def f1(gold: np.ndarray, predicted: np.ndarray) -> float:
    """F1 of the positive class (1)."""
    true = int(((gold == 1) & (predicted == 1)).sum())
    return 2 * true / max(1, int(gold.sum()) + int(predicted.sum()))


def sentence_logit(head: Head, found: dict[str, Any], sentence: str, reference: str, lang: str) -> float:
    """A sentence's logit as the head reads it at run time (`Head.sentence_logit`)."""
    state = found["state"].astype(np.float64)
    return head.sentence_logit(state, found["lp_yes"] - found["lp_no"], sentence, reference, lang)


def sentence_labels(row: dict[str, Any], answer: str, ours: list[str]) -> list[int | None]:
    """Each of our sentences' label from the labelled sentences it overlaps (None without labels or if partial)."""
    labelled = row.get("sentences")
    if not labelled:
        return [None] * len(ours)
    theirs = spans(answer, [s["text"] for s in labelled], [s["start"] for s in labelled])
    out: list[int | None] = []
    for start, end in spans(answer, ours):
        over = [s["label"] for s, (a, b) in zip(labelled, theirs, strict=True) if a < end and start < b]
        out.append(0 if "not_supported" in over else 1 if over and set(over) == {"supported"} else None)
    return out


def load(path: Path, store: dict[str, Any], head: Head) -> tuple[list[Answer], int]:
    """The answers of `path` whose whole-answer and sentence states are all stored; and how many are not."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    answers, missing = [], 0
    for row, (item, lang) in zip(rows, read_items(path), strict=True):
        whole = store.get(request_key(item, lang, DEFAULT_MODEL.sha256)[0])
        ours = split_sentences(item.answer) or [item.answer]
        found = [store.get(key) for _, key, _ in sentence_requests(item, lang, DEFAULT_MODEL.sha256)] or [whole]
        if whole is None or any(f is None for f in found):
            missing += 1
            continue
        reference = item.reference or ""
        texts = ours if len(ours) > 1 else [item.answer]
        answers.append(
            Answer(
                id=item.id,
                group=row.get("group") or reference,
                lang=lang,
                source=path.stem.rsplit("_", 1)[0],
                gold=1 if row["label"] == "consistent" else 0,
                logit=head_logit(head, whole, item.answer, reference, lang),
                states=np.vstack([f["state"].astype(np.float64) for f in found]),
                logits=np.array(
                    [sentence_logit(head, f, t, reference, lang) for f, t in zip(found, texts, strict=True)]
                    if len(ours) > 1
                    else [head_logit(head, whole, item.answer, reference, lang)]  # as the run does: its own logit
                ),
                labels=sentence_labels(row, item.answer, texts),
                vetoed=head.evidence_veto and flagged(feature_vector(item.answer, reference, lang)),
            )
        )
    return answers, missing


class SentenceHead:
    """A logistic head over a sentence's state (standardised), fitted on labelled sentences."""

    def fit(self, states: np.ndarray, labels: np.ndarray, penalty: float) -> SentenceHead:
        self.mean, self.scale = states.mean(axis=0), states.std(axis=0) + 1e-3
        counts = {c: max(1, int((labels == c).sum())) for c in (0, 1)}
        weights = np.array([1.0 / counts[int(c)] for c in labels])
        strength = np.full(states.shape[1], penalty / states.shape[1])
        self.weights, self.bias = fit_logistic((states - self.mean) / self.scale, labels, strength, weights)
        return self

    def logits(self, states: np.ndarray) -> np.ndarray:
        return ((states - self.mean) / self.scale) @ self.weights + self.bias

    def folded(self) -> dict[str, Any]:
        """The weights as a head file stores them, standardisation folded in."""
        weights = self.weights / self.scale
        return {"state_f32_base64": encode_weights(weights), "bias": float(self.bias - weights @ self.mean)}


def labelled(answers: list[Answer]) -> tuple[np.ndarray, np.ndarray]:
    """The states and labels of the sentences that have a label."""
    pairs = [(a.states[n], label) for a in answers for n, label in enumerate(a.labels) if label is not None]
    if not pairs:
        return np.zeros((0, 0)), np.zeros(0)
    return np.vstack([p[0] for p in pairs]), np.array([p[1] for p in pairs], dtype=np.float64)


CUT = 0.0  # a sentence counts as under the cut below logit 0 (P = 0.5): `Head.sentences["combine"]["cut"]`


FOLDS = 5


def fit_combine(answers: list[Answer], x: np.ndarray) -> tuple[np.ndarray, float]:
    """The combine's weights and bias on these answers, each (language, label) weighing the same."""
    counts: dict[tuple[str, int], int] = {}
    for a in answers:
        counts[(a.lang, a.gold)] = counts.get((a.lang, a.gold), 0) + 1
    gold = np.array([a.gold for a in answers], dtype=np.float64)
    balance = np.array([1.0 / counts[(a.lang, a.gold)] for a in answers])
    weights, bias = fit_logistic(x, gold, np.full(x.shape[1], 1e-3), balance)
    return weights, float(bias)


def cross_fitted(answers: list[Answer], x: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Out-of-fold combined logits of `answers` (FOLDS folds of whole groups, seeded), and the weights and bias
    refitted on all of them."""
    names = sorted({a.group for a in answers})
    order = np.random.default_rng(SEED).permutation(len(names))
    fold_of = {names[i]: n % FOLDS for n, i in enumerate(order)}
    folds = np.array([fold_of[a.group] for a in answers])
    scores = np.zeros(len(answers))
    for k in range(FOLDS):
        held = folds == k
        if held.any() and (~held).any():
            kept = [a for a, h in zip(answers, held, strict=True) if not h]
            weights, bias = fit_combine(kept, x[~held])
            scores[held] = x[held] @ weights + bias
    weights, bias = fit_combine(answers, x)
    return scores, weights, bias


def features(answers: list[Answer], sentence: Any) -> np.ndarray:
    """[answer logit, lowest, mean, share under CUT] per answer, sentences scored by `sentence`: what
    `Head.combined_probability` reads."""
    rows = []
    for a in answers:
        logits = sentence(a)
        rows.append([a.logit, logits.min(), logits.mean(), float(np.mean(logits < CUT))])
    return np.asarray(rows)


def choose(answers: list[Answer], scores: np.ndarray) -> dict[str, float]:
    """Thresholds per language with the best balanced accuracy on these answers, the evidence veto applied."""
    truth = np.array([a.gold for a in answers])
    vetoed = np.array([a.vetoed for a in answers])
    found = {}
    for lang in sorted({a.lang for a in answers}):
        mask = np.array([a.lang == lang for a in answers])
        if len(set(truth[mask])) == 2:
            # every answer weighs the same: the plain balanced accuracy over the dev answers pooled
            found[lang] = best_threshold(truth[mask], scores[mask], vetoed[mask], np.ones(int(mask.sum())))
    return found


def decided(answers: list[Answer], scores: np.ndarray, cuts: Any) -> np.ndarray:
    """Passed (1) or flagged (0): the score against the language's cut (or `cuts(answer)`, where it is a function),
    and the evidence veto."""
    cut = cuts if callable(cuts) else (lambda a: cuts.get(a.lang, 0.0))
    return np.array([int(s >= cut(a) and not a.vetoed) for a, s in zip(answers, scores, strict=True)])


def report(answers: list[Answer], scores: np.ndarray, cuts: dict[str, float], rng: np.random.Generator) -> dict:
    out: dict[str, Any] = {}
    for source in (*SOURCES, "all"):
        mask = np.array([source in ("all", a.source) for a in answers])
        truth = np.array([a.gold for a in answers])[mask]
        if len(set(truth.tolist())) < 2:
            continue
        predicted = decided([a for a, m in zip(answers, mask, strict=True) if m], scores[mask], cuts)
        out[source] = {
            **interval(balanced_accuracy, truth, predicted, rng),
            "faithful_passed": round(float(predicted[truth == 1].mean()), 4),
            "auc": round(auc(truth, scores[mask]), 4),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--head", type=Path, default=None, help="a head file (default: the shipped one)")
    parser.add_argument("--write", action="store_true", help=f"write {RESULTS.relative_to(ROOT)}")
    parser.add_argument("--write-head", type=Path, default=None, help="write the head with the best reading on dev")
    parser.add_argument(
        "--localise-only",
        action="store_true",
        help="with --write-head: the head's verdicts unchanged, its sentence head only marking the sentences of a "
        "flagged answer (the sentence weights and the cut chosen on dev for F1 of 'not supported')",
    )
    args = parser.parse_args()
    if args.localise_only and not args.write_head:
        parser.error("--localise-only says what --write-head writes: give --write-head FILE")
    head = Head.load(args.head) if args.head else shipped_head(DEFAULT_MODEL.sha256)
    assert head is not None
    # the answer head alone: a sentences block it carries (sentence weights, a reading) is what is compared here
    head = Head.from_json(head.to_json() | {"sentences": {}})
    store = load_store(store_dir(DEFAULT_MODEL.sha256))
    splits: dict[str, list[Answer]] = {}
    counts: dict[str, dict[str, int]] = {}
    paths = [RAG_EN / f"{source}_{split}.jsonl" for split in ("train", "dev", "test") for source in SOURCES]
    for path in paths:
        answers, missing = load(path, store, head)
        split = path.stem.rsplit("_", 1)[1]
        splits.setdefault(split, []).extend(answers)
        counts[path.stem] = {"answers": len(answers), "not_extracted": missing}
    train, dev, test = splits["train"], splits["dev"], splits["test"]
    rng = np.random.default_rng(SEED)
    out: dict[str, Any] = {"head": head.name, "head_digest": head.digest, "extracted": counts, "methods": {}}

    def own_cuts(a: Answer) -> float:  # the head's own threshold for the answer (a long answer's, where it has one)
        t = head.answer_threshold(a.lang, len(a.labels))
        return float(np.log(t / (1 - t)))

    def add(name: str, score: Any, cuts: Any = None, dev_scores: Any = None) -> None:
        """Report `score` on dev (or `dev_scores`, out of fold) and test, with `cuts` or those chosen on dev."""
        on_dev = score(dev) if dev_scores is None else dev_scores
        chosen = cuts or choose(dev, on_dev)
        out["methods"][name] = {"thresholds": "the head's own" if callable(chosen) else chosen}
        for split_name, answers, scores in (("dev", dev, on_dev), ("test", test, None)):
            if answers:
                got = scores if scores is not None else score(answers)
                out["methods"][name][split_name] = report(answers, got, chosen, rng)

    add("head", lambda s: np.array([a.logit for a in s]), own_cuts)
    if not dev:
        out["missing"] = "no dev answer has all its states yet: only the shipped head is reported"
        finish(out, [*paths, *QUALITY_FILES], args.write)
        return
    add("head, dev thresholds", lambda s: np.array([a.logit for a in s]))
    scorers: dict[str, Any] = {"answer head": lambda a: a.logits}
    states, labels = labelled(train)
    if len(labels) and len(set(labels.tolist())) == 2:
        dev_states, dev_labels = labelled(dev)
        fitted = {p: SentenceHead().fit(states, labels, p) for p in PENALTIES}
        penalty = max(PENALTIES, key=lambda p: auc(dev_labels, fitted[p].logits(dev_states)))
        sentence_head = fitted[penalty]
        scorers["sentence head"] = lambda a: sentence_head.logits(a.states) if len(a.labels) > 1 else a.logits
        out["sentence_head"] = {"penalty": penalty, "train_sentences": len(labels)}
    else:
        out["sentence_head"] = "not fitted: no labelled train sentence has its state stored"
    blocks: dict[str, dict[str, Any]] = {}
    for name, sentence in scorers.items():
        add(f"weakest sentence ({name})", lambda s, f=sentence: np.array([f(a).min() for a in s]))
        out_of_fold, weights, bias = cross_fitted(dev, features(dev, sentence))
        add(
            f"answer + sentences ({name})",
            lambda s, f=sentence, w=weights, b=bias: features(s, f) @ w + b,
            dev_scores=out_of_fold,
        )
        out["methods"][f"answer + sentences ({name})"]["weights"] = [round(float(v), 4) for v in (*weights, bias)]
        blocks[name] = {
            "combine": dict(zip(("answer", "min", "mean", "share", "bias"), map(float, (*weights, bias)), strict=True))
            | {"cut": CUT},
            "thresholds": {
                lang: round(1 / (1 + math.exp(-cut)), 4)
                for lang, cut in out["methods"][f"answer + sentences ({name})"]["thresholds"].items()
            },
        }
        if name == "sentence head":
            blocks[name] |= sentence_head.folded()
        found = out.setdefault("sentence_f1", {})[name] = sentence_f1(dev, test, sentence, rng)
        if found:  # a sentence is marked where its logit is at most the dev-chosen cut
            blocks[name]["sentence_threshold"] = {"en": round(1 / (1 + math.exp(-found["cut"])) + 0.0001, 4)}
    out["quality_corpus"] = {
        name: on_the_quality_corpus(head, blocks[name], store, rng)
        for name in blocks
        if "sentence_threshold" in blocks[name]
    }
    if args.write_head and args.localise_only:
        if "sentence head" not in blocks or "sentence_threshold" not in blocks["sentence head"]:
            sys.exit(
                "no sentence head was fitted: extract LFQA's train sentences first (judge_features.py --sentences)"
            )
        written = Head.from_json(head.to_json())
        written.sentences = {
            key: blocks["sentence head"][key] for key in ("state_f32_base64", "bias", "sentence_threshold")
        } | {
            "training": {
                "localises_only": True,
                "train_sentences": out["sentence_head"]["train_sentences"],
                "penalty": out["sentence_head"]["penalty"],
                "sentence_f1_not_supported": out["sentence_f1"]["sentence head"],
                "benchmark": "benchmarks/sentence_aggregate.py",
                "provenance": provenance(data=files(*paths)),
            }
        }
        written.save(args.write_head)
        print(f"head with a sentence head that marks sentences written to {args.write_head}", file=sys.stderr)
    elif args.write_head:
        best = max(blocks, key=lambda n: out["methods"][f"answer + sentences ({n})"]["dev"]["all"]["value"])
        written = Head.from_json(head.to_json())
        written.sentences = blocks[best] | {"training": {"chosen_on_dev": best, "benchmark": "sentence_aggregate.py"}}
        written.calibrations.pop("trained_head", None)  # fitted on the answer head's probability, not the combined
        written.save(args.write_head)
        print(f"head with sentences ({best}) written to {args.write_head}", file=sys.stderr)
    finish(out, [*paths, *QUALITY_FILES], args.write)


def on_the_quality_corpus(
    head: Head, block: dict[str, Any], store: dict[str, Any], rng: np.random.Generator
) -> dict[str, Any]:
    """The quality corpus's dev and test splits and their faithful paraphrases decided by the head alone and by
    the head deciding English answers with their sentences (`block`), as `ragfacts check` would
    (`train_head.head_decisions`): what reading sentences does to answers of one or two sentences."""
    alone = Head.from_json(head.to_json() | {"sentences": {}})
    reading = Head.from_json(head.to_json() | {"sentences": block})
    found: dict[str, Any] = {}
    for split in ("dev", "test"):
        path, paraphrases = QUALITY / f"{split}.jsonl", PARAPHRASES / f"paraphrases_{split}.jsonl"
        rows = {r["id"]: r for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())}
        judged = {
            "answer alone": head_decisions(alone, path, store),
            "with sentences": head_decisions(reading, path, store),
        }
        ids = [i for i in rows if all(i in d for d in judged.values())]  # rows whose every state is stored
        gold = np.array([rows[i]["label"] == "consistent" for i in ids], dtype=int)
        lang = np.array([rows[i]["lang"] for i in ids])
        found[split] = {"answers": len(ids), "rows": len(rows)}
        paraphrased = {"answer alone": head_decisions(alone, paraphrases, store)}
        paraphrased["with sentences"] = head_decisions(reading, paraphrases, store)
        both = [i for i in paraphrased["answer alone"] if i in paraphrased["with sentences"]]
        for name, decided in judged.items():
            passed = np.array([decided[i][1] for i in ids], dtype=int)
            para = {i: paraphrased[name][i] for i in both}
            found[split][name] = {
                "all": interval(balanced_accuracy, gold, passed, rng),
                **{
                    f"lang:{g}": interval(balanced_accuracy, gold[lang == g], passed[lang == g], rng)
                    for g in ("en", "zh")
                },
                "paraphrases_passed": round(float(np.mean([p for _, p in para.values()])), 4) if para else None,
                "paraphrases": len(para),
            }
    return found


def finish(out: dict[str, Any], paths: list[Path], write: bool) -> None:
    """Print the report with its provenance; with `write`, write it to RESULTS too."""
    out["provenance"] = provenance(data=files(*paths))
    text = json.dumps(out, indent=1, ensure_ascii=False)
    print(text)
    if write:
        RESULTS.write_text(text + "\n", encoding="utf-8")
        print(f"written to {RESULTS}", file=sys.stderr)


def sentence_f1(dev: list[Answer], test: list[Answer], sentence: Any, rng: np.random.Generator) -> dict[str, Any]:
    """F1 of "not supported" over labelled sentences, flagged below the cut that gives dev its best F1."""

    def pairs(answers: list[Answer]) -> tuple[np.ndarray, np.ndarray]:
        got = [(s, label) for a in answers for s, label in zip(sentence(a), a.labels, strict=True) if label is not None]
        return np.array([g[0] for g in got]), np.array([1 - g[1] for g in got])  # 1 = not supported

    scores, truth = pairs(dev)
    if not len(truth) or truth.sum() == 0:
        return {}
    best = max(np.unique(scores), key=lambda cut: f1(truth, (scores <= cut).astype(int)))
    test_scores, test_truth = pairs(test)
    return {
        "cut": round(float(best), 4),
        "dev": by_answer(f1, groups(dev, sentence, best), rng),
        "test": by_answer(f1, groups(test, sentence, best), rng) if len(test_truth) else None,
        "test_auc": round(auc(1 - test_truth, test_scores), 4) if len(test_truth) else None,
    }


def groups(answers: list[Answer], sentence: Any, cut: float) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per answer, its labelled sentences' (gold "not supported", flagged at or under `cut`)."""
    out = []
    for a in answers:
        kept = [(label, score) for label, score in zip(a.labels, sentence(a), strict=True) if label is not None]
        if kept:
            out.append((np.array([1 - k[0] for k in kept]), np.array([int(k[1] <= cut) for k in kept])))
    return out


def by_answer(metric: Any, per_answer: list[tuple[np.ndarray, np.ndarray]], rng: np.random.Generator) -> dict:
    """`metric` over every sentence, with a bootstrap 95% interval that resamples answers (their sentences are not
    independent of one another)."""
    gold = np.concatenate([g for g, _ in per_answer])
    predicted = np.concatenate([p for _, p in per_answer])
    draws = []
    for _ in range(2000):
        pick = rng.integers(0, len(per_answer), len(per_answer))
        draws.append(
            metric(np.concatenate([per_answer[i][0] for i in pick]), np.concatenate([per_answer[i][1] for i in pick]))
        )
    low, high = np.nanpercentile(draws, [2.5, 97.5])
    value = metric(gold, predicted)
    return {"value": round(value, 4), "low": round(float(low), 4), "high": round(float(high), 4), "n": len(gold)}


if __name__ == "__main__":
    main()
