"""The shipped head on long English RAG answers, typed injections and LFQA's labelled sentences, from stored states.

Replays the states `judge_features.py` stored (nothing is evaluated by the model here) through the head file
shipped with the package (or `--head FILE`), as `ragfacts check` decides and explains:

- **answers**, per held-out source (`benchmarks/data/rag_en/*_test.jsonl`): balanced accuracy with a bootstrap
  interval, the share of faithful answers passed and of flawed ones caught, AUC;
- **typed injections** (`benchmarks/data/injections/injections_test.jsonl`): the share caught per error type of
  the typology, beside the share passed of the faithful sentences mined with them and of the faithful answers
  (quality corpus and RAG test splits) they were injected into;
- **localisation** on LFQA's held-out questions, whose sentences three annotators labelled (supported /
  partially / not_supported; the majority label):
  - sentence-level F1 of "not supported", each labelled sentence taking the head's probability of the answer's
    sentence(s) that overlap it (our splitter's sentences, the sentence alone as the answer; `--sentences` in
    judge_features.py), flagged below the head's threshold for the language: first with every sentence scored
    ("sentence scores"), then as the report shows it ("as reported": only a flagged answer's sentences are
    scored, and the sentences that carry its verdict are flagged whatever their score);
  - of the flagged answers with a sentence labelled not supported, the share whose verdict-carrying sentence
    (`explain.explain_flagged`'s choice: the sentences with an evidence mismatch, else the least supported one)
    overlaps such a sentence, beside the share a sentence drawn at random would reach.

It also says what reading them cost the model (calls, prompt tokens, seconds; the median seconds of one answer
and of one sentence). Rows not yet extracted are left out and counted ("extracted" beside "rows"): the figures
are over what is stored.

    python benchmarks/rag_en_report.py [--head FILE] [--write]    # --write: benchmarks/results/rag_en_report.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
from _provenance import files, provenance
from judge_features import load_store, read_items, request_key, sentence_requests, store_dir
from sentence_aggregate import by_answer, f1, load, spans
from train_head import SEED, Split, evidence_flags, head_predict, head_probability, interval, load_split

from ragfacts.evidence import find_unsupported
from ragfacts.methods.precision.explain import in_sentences
from ragfacts.methods.precision.head import Head, shipped_head, sigmoid
from ragfacts.methods.precision.training import auc, balanced_accuracy
from ragfacts.models.local.embedded import DEFAULT_MODEL
from ragfacts.text import split_sentences

ROOT = Path(__file__).resolve().parents[1]
RAG_EN = ROOT / "benchmarks" / "data" / "rag_en"
INJECTIONS = ROOT / "benchmarks" / "data" / "injections" / "injections_test.jsonl"
QUALITY_TEST = ROOT / "benchmarks" / "data" / "quality" / "test.jsonl"
SOURCES = ("lfqa", "mtrag", "ares")
RESULTS = ROOT / "benchmarks" / "results" / "rag_en_report.json"


def share(flags: np.ndarray, rng: np.random.Generator) -> dict[str, float] | None:
    """The share of true values in `flags`, with a bootstrap interval; None for no rows."""
    if len(flags) == 0:
        return None
    return interval(lambda gold, predicted: float(predicted.mean()), flags, flags, rng)


def decisions(head: Head, split: Split, path: Path, store: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """What the head decides on the rows of `split` (1 = passed) and its raw P(faithful) of each: a head that reads
    sentences from the answer's and its sentences' states (`sentence_aggregate.load`), as at run time."""
    if not head.decides_with_sentences:
        return head_predict(head, split), head_probability(head, split)
    read = {a.id: a for a in load(path, store, head)[0]}
    missing = [r["id"] for r in split.rows if r["id"] not in read]
    if missing:
        raise SystemExit(f"{path}: {len(missing)} answers lack sentence states (judge_features.py --sentences)")
    answers = [read[r["id"]] for r in split.rows]
    scores = np.array([head.combined_probability(a.logit, list(a.logits)) for a in answers])
    passed = [s >= head.threshold(a.lang, len(a.labels)) and not a.vetoed for s, a in zip(scores, answers, strict=True)]
    return np.array(passed, dtype=int), scores


def answers(head: Head, split: Split, path: Path, store: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    """What the head decides on one held-out split's answers."""
    passed, scores = decisions(head, split, path, store)
    both = len(set(split.gold.tolist())) == 2
    return {
        "rows": split.total,
        "extracted": len(split.rows),
        "balanced_accuracy": interval(balanced_accuracy, split.gold, passed, rng) if both else None,
        "faithful_passed": share(passed[split.gold == 1] == 1, rng),
        "flawed_caught": share(passed[split.gold == 0] == 0, rng),
        "auc": round(auc(split.gold, scores), 4) if both else None,
        "evidence_flagged_faithful": share(evidence_flags(split)[split.gold == 1], rng),
    }


def below_twin(into: dict[str, str], types: dict[str, str], probability: dict[str, float]) -> dict[str, Any]:
    """Per error type, how often the injected answer gets a lower P(faithful) than the faithful answer it was made
    from (ties count half) and the median drop: whether the head tells the two apart at all, whatever the
    threshold. Beside them, how far P(faithful) spreads over those faithful answers (its interquartile range), which
    a threshold has to cut through."""
    originals = [probability[o] for o in set(into.values()) if o in probability]
    low, high = np.percentile(originals, [25, 75]) if originals else (float("nan"), float("nan"))
    drops: dict[str, list[float]] = {}
    for injected, original in into.items():
        if injected in probability and original in probability:
            drops.setdefault(types[injected], []).append(probability[original] - probability[injected])
    by_type = {
        kind: {
            "pairs": len(values),
            "ranked_below": round(float(np.mean(np.sign(values)) / 2 + 0.5), 4),
            "median_drop": round(float(np.median(values)), 4),
        }
        for kind, values in sorted(drops.items())
    }
    return {**by_type, "faithful_originals": {"n": len(originals), "iqr": round(float(high - low), 4)}}


def injections(
    head: Head, split: Split, types: dict[str, str], originals: np.ndarray | None, rng: np.random.Generator
) -> dict[str, Any]:
    """The share of each injected error type caught, and of the faithful answers passed, per language: the
    faithful twins mined with them ("faithful") and the faithful answers they were injected into (`originals`:
    passed or not, one a row)."""
    passed = head_predict(head, split)
    out: dict[str, Any] = {"rows": split.total, "extracted": len(split.rows), "by_type": {}}
    if originals is not None:
        out["originals_passed"] = {"n": len(originals), **(share(originals == 1, rng) or {})}
    kinds = [types[r["id"]] or "faithful" for r in split.rows]
    for kind in sorted(set(kinds)):
        for lang in ("all", "en", "zh"):
            mask = np.array([k == kind and lang in ("all", r["lang"]) for k, r in zip(kinds, split.rows, strict=True)])
            if not mask.any():
                continue
            flags = passed[mask] == 1 if kind == "faithful" else passed[mask] == 0
            out["by_type"].setdefault(kind, {})[lang] = {"n": int(mask.sum()), **(share(flags, rng) or {})}
    return out


def injected_errors(head: Head, paths: dict[str, Path], store: dict[str, Any]) -> dict[str, Any]:
    """The injections part of the report, with the faithful answers the injections were made from."""
    types = {row["id"]: row.get("error_type") for row in rows_of(INJECTIONS)}
    injected = loaded("injections", INJECTIONS, store)
    made_from = {row["id"]: row["injected_into"] for row in rows_of(INJECTIONS) if row.get("injected_into")}
    into = set(made_from.values())
    originals = []  # passed or not, each faithful answer an injection was made from, as the head decides it
    probability: dict[str, float] = {}  # P(faithful) of every injected answer and every answer one was made from
    for path, split in (
        (INJECTIONS, injected),
        *((p, loaded(p.stem, p, store)) for p in (QUALITY_TEST, *paths.values())),
    ):
        if split is None:
            continue
        passed, chances = decisions(head, split, path, store)
        probability.update(zip([r["id"] for r in split.rows], chances.tolist(), strict=True))
        if path != INJECTIONS:
            originals.append(passed[np.array([r["id"] in into for r in split.rows])])
    found = np.concatenate(originals) if originals else None
    if injected is None:
        return {"extracted": 0}
    return {
        **injections(head, injected, types, found, fresh()),
        "below_twin": below_twin(made_from, types, probability),
    }


def localisation(head: Head, path: Path, split: Split, store: dict[str, Any], rng: np.random.Generator) -> dict:
    """Sentence-level F1 of "not supported" on LFQA's held-out answers, and where a flagged answer's flag points."""
    passed = dict(zip((r["id"] for r in split.rows), decisions(head, split, path, store)[0].tolist(), strict=True))
    rows = {json.loads(line)["id"]: json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()}
    per_answer: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {"sentence_scores": [], "as_reported": []}
    hits: list[bool] = []
    chance: list[float] = []
    missing = 0
    for item, lang in read_items(path):
        if item.id not in passed:
            continue
        labelled = rows[item.id]["sentences"]
        ours = split_sentences(item.answer) or [item.answer]
        if len(ours) > 1:
            found = [store.get(key) for _, key, _ in sentence_requests(item, lang, DEFAULT_MODEL.sha256)]
            if any(f is None for f in found):
                missing += 1
                continue
            probability = [
                sigmoid(head.sentence_logit(f["state"], f["lp_yes"] - f["lp_no"], sentence, item.reference or "", lang))
                for f, sentence in zip(found, ours, strict=True)
            ]
        else:
            whole = store[request_key(item, lang, DEFAULT_MODEL.sha256)[0]]
            probability = [
                head.probability(
                    whole["state"].astype(np.float64),
                    whole["lp_yes"] - whole["lp_no"],
                    item.answer,
                    item.reference or "",
                    lang,
                )
            ]
        # a sentence scored alone against the sentence threshold; an answer of one sentence is its own
        threshold = head.sentence_threshold(lang) if len(ours) > 1 else head.answer_threshold(lang)
        own = [p < threshold for p in probability]
        flagged_answer = passed[item.id] == 0
        mismatches = find_unsupported(item.answer, item.reference or "", lang, chinese_names="auto")
        carrying = sorted(in_sentences(mismatches, item.answer, ours)) or [int(np.argmin(probability))]
        shown = [flagged_answer and (n in carrying or own[n]) for n in range(len(ours))]
        our_spans = spans(item.answer, ours)
        their_spans = spans(item.answer, [s["text"] for s in labelled], [s["start"] for s in labelled])
        gold, scored, reported = [], [], []
        for sentence, (start, end) in zip(labelled, their_spans, strict=True):
            overlapping = [n for n, (a, b) in enumerate(our_spans) if a < end and start < b] or [
                min(range(len(ours)), key=lambda n: abs(our_spans[n][0] - start))
            ]
            gold.append(int(sentence["label"] == "not_supported"))
            scored.append(int(any(own[n] for n in overlapping)))
            reported.append(int(any(shown[n] for n in overlapping)))
        per_answer["sentence_scores"].append((np.array(gold), np.array(scored)))
        per_answer["as_reported"].append((np.array(gold), np.array(reported)))
        bad = [n for n, s in enumerate(labelled) if s["label"] == "not_supported"]
        if flagged_answer and bad:
            bad_spans = [their_spans[n] for n in bad]
            pointing = [any(a < e and s < b for s, e in bad_spans) for a, b in our_spans]
            hits.append(any(pointing[n] for n in carrying))
            chance.append(float(np.mean(pointing)))
    truth = np.concatenate([g for g, _ in per_answer["sentence_scores"]])
    out: dict[str, Any] = {
        "answers": len(passed) - missing,
        "answers_without_sentence_states": missing,
        "sentences": len(truth),
        "not_supported": int(truth.sum()),
    }
    for name, groups in per_answer.items():  # intervals resample answers: their sentences are not independent
        out[name] = by_answer(f1, groups, rng)
    out["flag_points_at_unsupported"] = {
        "flagged_answers_with_an_unsupported_sentence": len(hits),
        **(share(np.asarray(hits), rng) or {}),
        "random_sentence": round(float(np.mean(chance)), 4) if chance else None,
    }
    return out


def cost(paths: list[Path], store: dict[str, Any]) -> dict[str, Any]:
    """What reading the answers and their sentences cost the model, from the stored calls (each once): calls,
    prompt tokens (the whole prompts; the KV cache of a shared reference made fewer evaluated) and the model's
    seconds, with the median seconds of one answer and of one sentence on the machine that extracted them."""
    answer_keys: dict[str, None] = {}  # each call once: an identical sentence of two answers was read once
    sentence_keys: dict[str, None] = {}
    for path in paths:
        for item, lang in read_items(path):
            answer_keys[request_key(item, lang, DEFAULT_MODEL.sha256)[0]] = None
            sentence_keys.update((k, None) for _, k, _ in sentence_requests(item, lang, DEFAULT_MODEL.sha256))
    answers = [store[k] for k in answer_keys if k in store]
    sentences = [store[k] for k in sentence_keys if k in store and k not in answer_keys]
    every = answers + sentences
    return {
        "calls": len(every),
        "answers": len(answers),
        "sentences": len(sentences),
        "prompt_tokens": int(sum(r["tokens"] for r in every)),
        "model_seconds": round(float(sum(r["seconds"] for r in every)), 1),
        "median_answer_seconds": round(float(np.median([r["seconds"] for r in answers])), 2) if answers else None,
        "median_answer_tokens": int(np.median([r["tokens"] for r in answers])) if answers else None,
        "median_sentence_seconds": round(float(np.median([r["seconds"] for r in sentences])), 2) if sentences else None,
    }


def fresh() -> np.random.Generator:
    """The bootstrap's generator, seeded anew for each part of the report: one part's figures do not move when
    another part has more rows."""
    return np.random.default_rng(SEED)


def rows_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def loaded(name: str, path: Path, store: dict[str, Any]) -> Split | None:
    """The stored rows of `path`, or None while none is extracted."""
    try:
        return load_split(name, path, store)
    except SystemExit:
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--head", type=Path, default=None, help="a head file (default: the shipped one)")
    parser.add_argument("--write", action="store_true", help="write the report to --out")
    parser.add_argument(
        "--out", type=Path, default=RESULTS, help=f"where --write writes (default {RESULTS.relative_to(ROOT)})"
    )
    args = parser.parse_args()
    head = Head.load(args.head) if args.head else shipped_head(DEFAULT_MODEL.sha256)
    assert head is not None
    store = load_store(store_dir(DEFAULT_MODEL.sha256))
    paths = {source: RAG_EN / f"{source}_test.jsonl" for source in SOURCES}
    report: dict[str, Any] = {"head": head.name, "head_digest": head.digest, "answers": {}}
    for source, path in paths.items():
        split = loaded(source, path, store)
        report["answers"][source] = answers(head, split, path, store, fresh()) if split else {"extracted": 0}
    if head.decides_with_sentences:  # the injections' sentences are not extracted: such a head is not replayed there
        report["injections"] = {"skipped": "a head that reads sentences needs the injections' sentence states"}
    else:
        report["injections"] = injected_errors(head, paths, store)
    lfqa = loaded("lfqa", paths["lfqa"], store)
    found_lfqa = localisation(head, paths["lfqa"], lfqa, store, fresh()) if lfqa else {"answers": 0}
    report["localisation_lfqa"] = found_lfqa
    report["extraction"] = cost(list(paths.values()), store)
    heads = (args.head,) if args.head else ()
    report["provenance"] = provenance(data=files(*paths.values(), INJECTIONS, QUALITY_TEST, *heads))
    text = json.dumps(report, indent=1, ensure_ascii=False)
    print(text)
    if args.write:
        args.out.write_text(text + "\n", encoding="utf-8")
        print(f"written to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
