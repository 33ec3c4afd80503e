"""Figures typed into README.md and the results pages of docs/, each tied to the results file it is read from
(what a snippet holds: `_gen.figures`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from _gen.figures import Figure, resolve

ALIASES = {
    # trained_head.json: the shipped head, and the previous default, on the test split
    "shipped": "results[split=test][method=@choice.shipped]",
    "shipped_choice": "choice[@choice.shipped]",
    "previous": "results[split=test][method=holistic_score (P(Yes) >= 0.58)]",
    # paraphrase_invariance.json: the shipped configuration refitted, taught, and with lowered thresholds
    "pi_base": "test[0]",
    "pi_taught": "test[@chosen_key]",
    "pi_taught_dev": "dev[mu=@chosen_on_dev]",
    "pi_base_dev": "dev[mu=0.0]",
    "pi_lowered": "test[0, thresholds lowered]",
    # calibration.json: the shipped head's study
    "head": "studies[strategy=trained_head]",
    # quality_test_scores.json
    "q_holistic_score": "precision[method=lface4rag:explain=none,strategy=holistic_score]",
    "q_holistic": "precision[method=holistic]",
    "q_sentences": "precision[method=lface4rag:explain=none,strategy=sentence_scores]",
    # calibration_dev.json
    "dev_sentences": "scored[method=lface4rag:explain=none,strategy=sentence_scores]",
    # bench_embedded_sample6.json
    "paper": "precision[method=lface4rag:strategy=paper]",
    # recall_small_model.json: facts judged present, per method and answer type
    "faaf_ungrounded": "metrics[method=faaf-tfn][answer_type=ungrounded_answer]",
    "faaf_poor": "metrics[method=faaf-tfn][answer_type=poor_answer]",
}


def _points(higher: float, lower: float) -> float:
    """Percentage points between two shares, as the prose computes them: from the figures it shows (1 decimal)."""
    return round(100 * higher, 1) - round(100 * lower, 1)


def _quality_test(data: dict[str, Any], load: Callable[[str], Any]) -> dict[str, Any]:
    by = {m["method"]: m for m in data["precision"]}
    score = by["lface4rag:explain=none,strategy=holistic_score"]
    generated = by["holistic"]
    sentences = by["lface4rag:explain=none,strategy=sentence_scores"]
    context = by["lface4rag:context=1,explain=none,strategy=sentence_scores"]
    return {
        "score_over_generated": _points(score["balanced_accuracy"]["value"], generated["balanced_accuracy"]["value"]),
        "score_over_generated_zh": _points(
            score["by_language"]["zh"]["value"], generated["by_language"]["zh"]["value"]
        ),
        "score_over_generated_en": _points(
            score["by_language"]["en"]["value"], generated["by_language"]["en"]["value"]
        ),
        "sentences_behind": _points(score["balanced_accuracy"]["value"], sentences["balanced_accuracy"]["value"]),
        "context_gain_en": _points(context["by_language"]["en"]["value"], sentences["by_language"]["en"]["value"]),
        "context_change_zh": _points(context["by_language"]["zh"]["value"], sentences["by_language"]["zh"]["value"]),
        "faithful_passed": sentences["positive_accuracy"]["correct"] / sentences["positive_accuracy"]["n"],
        "generated_faithful_passed": generated["positive_accuracy"]["correct"] / generated["positive_accuracy"]["n"],
        **_corpus_by_language(score, load("calibration_dev.json")),
    }


def _corpus_by_language(test: dict[str, Any], dev: dict[str, Any]) -> dict[str, int]:
    """The quality corpus's answers per language: dev's as calibrate_precision.py counted them, test's as bench did."""
    scored = next(m for m in dev["scored"] if m["method"] == "lface4rag:strategy=holistic_score")
    return {f"corpus_{lang}": scored["by_lang"][lang]["n"] + test["by_language"][lang]["n"] for lang in ("en", "zh")}


def _sample6(data: dict[str, Any], load: Callable[[str], Any]) -> dict[str, Any]:
    paper = next(m for m in data["precision"] if m["method"] == "lface4rag:strategy=paper")
    usage, answers = paper["usage"], paper["answers"]
    return {
        "paper_right": round(paper["accuracy"]["value"] * paper["accuracy"]["n"]),
        "paper_minutes": round(usage["model_s"] / answers / 60),
        "paper_tokens": round((usage["prompt_tokens"] + usage["completion_tokens"]) / answers, -2),
        "paper_calls": usage["calls"] / answers,
        "paper_prompt": usage["prompt_tokens"] / answers,
        "paper_completion": usage["completion_tokens"] / answers,
        "paper_model_s": usage["model_s"] / answers,
    }


def _prompt_tokens(metrics: list[dict[str, Any]], method: str) -> int:
    return sum(m["prompt_tokens"] for m in metrics if m["method"] == method)


def _recall_small_model(data: dict[str, Any], load: Callable[[str], Any]) -> dict[str, Any]:
    humans = load("recall_head.json")["humans"]
    shares = {(m["method"], m["answer_type"]): m["true_fraction"] for m in data["metrics"]}
    return {
        "scores_vs_faaf_prompt": _prompt_tokens(data["metrics"], "fact-scores")
        / _prompt_tokens(data["metrics"], "faaf-tfn"),
        "scores_above_humans_ungrounded": 100
        * (shares["fact-scores", "ungrounded_answer"] - humans["ungrounded_answer"]),
        "scores_above_humans_poor": 100 * (shares["fact-scores", "poor_answer"] - humans["poor_answer"]),
    }


def _recall_head(data: dict[str, Any], load: Callable[[str], Any]) -> dict[str, Any]:
    faaf = _prompt_tokens(load("recall_small_model.json")["metrics"], "faaf-tfn")
    judged, humans = data["judged_true"], data["humans"]
    return {
        "within_ungrounded": math.ceil(100 * (judged["ungrounded_answer"] - humans["ungrounded_answer"])),
        "within_poor": math.ceil(100 * (judged["poor_answer"] - humans["poor_answer"])),
        "vs_faaf_prompt": sum(data["prompt_tokens"].values()) / faaf,
    }


def _faaf_chunk_size(data: dict[str, Any], load: Callable[[str], Any]) -> dict[str, Any]:
    """The facts are those of the recall_local.py run the chunk sizes were measured on (its --facts-from)."""
    facts = load("recall_local.json")["facts"]
    one, all_in_one = (data["sizes"][size]["judged_true"]["ungrounded_answer"] for size in ("1", "all"))
    return {"facts": facts, "ungrounded_gap_facts": round(abs(all_in_one - one) * facts)}


def _recall_local(data: dict[str, Any], load: Callable[[str], Any]) -> dict[str, Any]:
    def completion(method: str) -> int:
        return sum(m["completion_tokens"] for m in data["metrics"] if m["method"] == method)

    return {
        "failed_calls": sum(m["failed_calls"] for m in data["metrics"]),
        "prompting_vs_faaf_completion": completion("prompt-tf") / completion("faaf-tfn"),
    }


# The English sources of the quality corpus (docs/results/precision.md names them); each is balanced, so English's
# balanced accuracy is close to their balanced accuracies weighed by their answers.
ENGLISH_SOURCES = ("Factcheck-GPT", "FaithBench", "HaluEval QA", "SummEdits")
ENGLISH_GOAL = 0.80


def _trained_head(data: dict[str, Any], load: Callable[[str], Any]) -> dict[str, Any]:
    with_paraphrases = load("trained_head_with_paraphrases.json")["sizes"]["train"]["rows"]
    shipped = resolve(data, ALIASES["shipped"])
    english = {source: shipped[f"source:{source}"] for source in ENGLISH_SOURCES}
    answers = sum(figure["n"] for figure in english.values())
    hard, easy = english["FaithBench"], english["HaluEval QA"]
    rest = answers - hard["n"]
    hardest = rest - easy["n"]  # the sources left once FaithBench and HaluEval QA are where the head has them
    return {
        "pairs_read": sum(split["extracted"] for split in data["sizes"].values()),
        # the training paraphrases: the rows the study trained with them reads beyond this one's
        "paraphrases_train": with_paraphrases - data["sizes"]["train"]["rows"],
        "english_answers": answers,
        "english_others": rest,
        # what the other English sources would need, on average, for English to reach ENGLISH_GOAL with FaithBench
        # where the head has it
        "english_others_needed": (ENGLISH_GOAL * answers - hard["value"] * hard["n"]) / rest,
        "english_hardest": hardest,
        "english_hardest_needed": (ENGLISH_GOAL * answers - hard["value"] * hard["n"] - easy["value"] * easy["n"])
        / hardest,
    }


def _precision_small_model(data: dict[str, Any], load: Callable[[str], Any]) -> dict[str, Any]:
    probe = data["results"]["precision_probe/lface4rag:strategy=sentence_scores"]
    by_threshold = probe["summary"]["balanced_accuracy_by_threshold"]
    return {"probe_threshold": max(by_threshold, key=by_threshold.get)}


DERIVED: dict[str, Callable[[Any, Callable[[str], Any]], dict[str, Any]]] = {
    "trained_head.json": _trained_head,
    "quality_test_scores.json": _quality_test,
    "bench_embedded_sample6.json": _sample6,
    "recall_small_model.json": _recall_small_model,
    "recall_head.json": _recall_head,
    "recall_local.json": _recall_local,
    "faaf_chunk_size.json": _faaf_chunk_size,
    "precision_small_model.json": _precision_small_model,
}

README = "README.md"
INDEX = "docs/results/index.md"
CALIBRATION = "docs/results/calibration.md"
RECALL = "docs/results/recall.md"
PRECISION = "docs/results/precision.md"

FIGURES: list[Figure] = [
    # README.md
    Figure(
        README,
        "embedded_default.json",
        "On {provenance.machine.cores} CPU cores that took {seconds_per_row.median:.1f} s a row (median; "
        "{seconds_per_row.mean:.1f} s mean, {seconds_per_row.flagged_mean:.1f} s for a flagged row, "
        "{passes_per_row:.2f} forward passes a row, {generated_tokens} generated tokens, "
        "{prompt_tokens_per_s:.0f} prompt tokens/s) on {rows} rows of the test split",
    ),
    Figure(
        README,
        "recall_calibration.json",
        "(balanced accuracy {test_chosen.balanced_accuracy!p:.1f} [{test_chosen.balanced_accuracy_interval[0]!p:.1f}, "
        "{test_chosen.balanced_accuracy_interval[1]!p:.1f}] on its test split",
    ),
    Figure(
        "docs/results/precision.md",
        "default_bench_all.json",
        "On all {rows} answers of the test split, `ragfacts bench` scores {intervals.bench!i} against the replay's "
        "{intervals.replay!i}, the figure above, with the same label on {labels_agreeing} of them and nothing "
        "generated",
    ),
    Figure(
        "docs/results/precision.md",
        "default_bench_all.json",
        "`ragfacts bench` and the replay of the stored states differ in P(faithful) by "
        "{probability_difference.median:.3f} at the median and {probability_difference.max:.3f} at most over all "
        "{rows} answers of the test split",
    ),
    Figure(
        "docs/results/precision.md",
        "default_bench.json",
        "run end to end by `ragfacts bench` on {rows} answers of the test split, gives the label the replay gives on "
        "{labels_agreeing} of them (P(faithful) differs by {probability_difference.median:.3f} at the median, "
        "{probability_difference.max:.3f} at most;",
    ),
    Figure(
        README,
        "trained_head.json",
        "faithful answers reworded by rules pass "
        "{paraphrases_passed[test paraphrases][@choice.shipped].all.value!p:.1f}% of the time",
    ),
    Figure(
        "docs/results/precision.md",
        "trained_head_with_paraphrases.json",
        "a head scores {$shipped_choice.dev_balanced_accuracy_out_of_fold!p:.1f} out of fold on dev against",
    ),
    Figure(
        "docs/results/precision.md",
        "trained_head_with_paraphrases.json",
        "and passes no more of dev's paraphrases "
        "({paraphrases_passed[dev paraphrases][@choice.shipped].all.value!p:.1f}% against",
    ),
    Figure(
        "docs/results/precision.md",
        "trained_head.json",
        "against {$shipped_choice.dev_balanced_accuracy_out_of_fold!p:.1f} without,",
    ),
    Figure(
        "docs/results/precision.md",
        "trained_head.json",
        "against {paraphrases_passed[dev paraphrases][@choice.shipped].all.value!p:.1f}%), so the head without them",
    ),
    Figure(
        "docs/results/precision.md",
        "trained_head_with_paraphrases.json",
        "(on test, with them: {$shipped.balanced_accuracy!i}, "
        "{paraphrases_passed[test paraphrases][@choice.shipped].all.value!p:.1f}% of the test paraphrases passed;",
    ),
    Figure(
        README,
        "trained_head.json",
        "on the {sizes.test.rows}-answer test split of public labelled data: the default judge reaches a balanced "
        "accuracy of **{$shipped.balanced_accuracy!i}**, English {$shipped[lang:en]!i}, Chinese {$shipped[lang:zh]!i}",
    ),
    Figure(
        README,
        "calibration.json",
        "it leaves {$head.band_test.abstain!p:.1f}% of the answers uncertain and judges the rest at "
        "{$head.band_test[ba:all]!i}.",
    ),
    # docs/results/index.md
    Figure(
        INDEX,
        "trained_head.json",
        "balanced accuracy **{$shipped.balanced_accuracy!i}** on the {sizes.test.rows} answers of the quality corpus's "
        "test split",
    ),
    Figure(
        INDEX,
        "trained_head.json",
        "**{$shipped[lang:en].value!p:.1f}** [{$shipped[lang:en].low!p:.1f}, {$shipped[lang:en].high!p:.1f}] in "
        "English, **{$shipped[lang:zh].value!p:.1f}** [{$shipped[lang:zh].low!p:.1f}, {$shipped[lang:zh].high!p:.1f}] "
        "in Chinese; AUC {$shipped.auc:.3f}. `holistic_score`, the default for small models no head ships for, "
        "measured {$previous.balanced_accuracy.value!p:.1f}.",
    ),
    Figure(
        INDEX,
        "calibration.json",
        "{$head.band_test.abstain!p:.1f}% of the answers are left uncertain and the rest are judged at "
        "{$head.band_test[ba:all]!i} (Chinese {$head.band_test[ba:zh].value!p:.1f}, English "
        "{$head.band_test[ba:en].value!p:.1f}). P(faithful) is calibrated: ECE {$head.test.temperature.ece!u:.3f}.",
    ),
    Figure(
        INDEX,
        "bench_embedded_sample6.json",
        "{derived.paper_right} of {$paper.answers} right on a {$paper.answers}-item sample, at about "
        "{derived.paper_minutes} minutes and {derived.paper_tokens:,.0f} tokens an answer",
    ),
    # docs/results/calibration.md
    Figure(CALIBRATION, "calibration.json", "on the {$head.test_rows} answers of the test split"),
    Figure(
        CALIBRATION,
        "train_head_cli.json",
        "{data.answers} labelled answers (the first {data.answers} rows of the training file), from nothing, with the "
        "embedded model on {cores} cores",
    ),
    Figure(
        CALIBRATION,
        "train_head_cli.json",
        "a test split of {split.test} answers gives intervals about ±{derived.half_width} points wide.",
    ),
    # docs/results/recall.md
    Figure(RECALL, "recall_small_model.json", "on the {spec.dataset.rows} WikiEval rows of our sample"),
    Figure(
        RECALL,
        "recall_head.json",
        "The humans of the FaaF paper judged {humans.answer!p:.0f}% / {humans.ungrounded_answer!p:.2f}% / "
        "{humans.poor_answer!p:.2f}% of such facts True.",
    ),
    Figure(
        RECALL,
        "recall_small_model.json",
        "at {derived.scores_vs_faaf_prompt:.2f}× FaaF's prompt tokens, but still "
        "{derived.scores_above_humans_ungrounded:.0f} and {derived.scores_above_humans_poor:.0f} points above the "
        "humans for ungrounded and poor answers.",
    ),
    Figure(RECALL, "recall_small_model.json", "these {spec.dataset.rows} rows are all the WikiEval data used here"),
    Figure(
        RECALL,
        "recall_head.json",
        "came within {derived.within_ungrounded} and {derived.within_poor} points of the humans for ungrounded and "
        "poor answers, at {derived.vs_faaf_prompt:.2f}× FaaF's prompt tokens:",
    ),
    Figure(
        RECALL,
        "recall_local.json",
        "All facts of an answer in one FaaF call (the default), {derived.failed_calls} failed calls:",
    ),
    Figure(
        RECALL,
        "recall_local.json",
        "({derived.prompting_vs_faaf_completion:.0f}× fewer completion tokens than prompting)",
    ),
    Figure(RECALL, "recall_local.json", "FaaF T/F/N on the same {facts} facts"),
    Figure(
        RECALL,
        "faaf_chunk_size.json",
        "one fact per call judged {sizes.1.judged_true.ungrounded_answer!p:.1f}% of the ungrounded answers' facts True "
        "and all facts in one call {sizes.all.judged_true.ungrounded_answer!p:.1f}%",
    ),
    Figure(
        RECALL,
        "faaf_chunk_size.json",
        "({sizes.1.judged_true.poor_answer!p:.1f}% and {sizes.all.judged_true.poor_answer!p:.1f}% for poor answers)",
    ),
    Figure(
        RECALL,
        "faaf_chunk_size.json",
        "{sizes.all.calls} calls and {sizes.all.prompt_tokens:,} prompt tokens against {sizes.1.calls} and "
        "{sizes.1.prompt_tokens:,} for one fact per call",
    ),
    Figure(
        RECALL,
        "faaf_chunk_size.json",
        "for poor answers): {derived.ungrounded_gap_facts} of {derived.facts} facts apart, and both far above",
    ),
    # docs/results/precision.md
    Figure(
        PRECISION,
        "quality_test_scores.json",
        "{derived.corpus_en} English items (FaithBench summaries, HaluEval QA, Factcheck-GPT claims with retrieved "
        "evidence, SummEdits) and {derived.corpus_zh} Chinese ones",
    ),
    Figure(PRECISION, "trained_head.json", "into **dev** ({sizes.dev.rows}) and **test** ({sizes.test.rows})."),
    Figure(PRECISION, "trained_head.json", "extracted it for {derived.pairs_read:,} pairs"),
    Figure(
        PRECISION,
        "trained_head.json",
        "BEGIN — {sizes.train.extracted:,} of their {sizes.train.rows:,} pairs were used.",
    ),
    Figure(
        PRECISION,
        "trained_head.json",
        "with dev rows weighing {$shipped_choice.dev_row_weight:.0f}× (chosen by out-of-fold dev AUC, 5 folds grouped "
        "by document: {$shipped_choice.dev_auc_out_of_fold:.3f}),",
    ),
    Figure(
        PRECISION,
        "trained_head.json",
        "thresholds (en {$shipped_choice.thresholds.en:.2f}, zh {$shipped_choice.thresholds.zh:.2f}) and the veto "
        "chosen on the out-of-fold scores (dev balanced accuracy "
        "{$shipped_choice.dev_balanced_accuracy_out_of_fold!p:.1f} out of fold).",
    ),
    Figure(
        PRECISION,
        "trained_head.json",
        "{derived.paraphrases_train} from the training answers, to train on, and "
        "{paraphrases_passed[dev paraphrases][@choice.shipped].all.n} and "
        "{paraphrases_passed[test paraphrases][@choice.shipped].all.n} from the dev and test answers, to measure.",
    ),
    Figure(
        PRECISION, "trained_head.json", "Trained with the {derived.paraphrases_train}, a head passes no more of them"
    ),
    Figure(PRECISION, "trained_head.json", "English stays at {$shipped[lang:en].value!p:.1f} —"),
    Figure(
        PRECISION,
        "paraphrase_invariance.json",
        "Passing {target!p:.0f}% of them costs accuracy either way (`python benchmarks/paraphrase_invariance.py`: the "
        "shipped head's configuration refitted by `benchmarks/train_head.py`, which passes "
        "{$pi_base.test_paraphrases.all.value!p:.1f}% of the test paraphrases and scores "
        "{$pi_base.quality_test.balanced_accuracy.value!p:.1f} on test; every choice made on dev, out of fold). Taught "
        "to score each of the {pairs} training paraphrases as its original (a penalty on the difference of their "
        "logits), the head passes at most {$pi_taught_dev.dev_paraphrases_out_of_fold!p:.1f}% of the dev "
        "paraphrases; at that strength it passes {$pi_taught.test_paraphrases.all.value!p:.1f}% "
        "[{$pi_taught.test_paraphrases.all.low!p:.1f}, {$pi_taught.test_paraphrases.all.high!p:.1f}] of the test "
        "paraphrases and scores {$pi_taught.quality_test.balanced_accuracy!i} on test (English "
        "{$pi_taught.quality_test[lang:en].value!p:.1f}, Chinese {$pi_taught.quality_test[lang:zh].value!p:.1f}). "
        "Lowering the thresholds until {target!p:.0f}% of the dev paraphrases pass passes "
        "{$pi_lowered.test_paraphrases.all.value!p:.1f}% of the test ones and scores "
        "{$pi_lowered.quality_test.balanced_accuracy.value!p:.1f}. Neither ships: out of fold on dev they score "
        "{$pi_taught_dev.dev_balanced_accuracy_out_of_fold!p:.1f} and "
        "{thresholds_lowered.dev_balanced_accuracy_out_of_fold!p:.1f}, against "
        "{$pi_base_dev.dev_balanced_accuracy_out_of_fold!p:.1f} without.",
    ),
    Figure(
        PRECISION,
        "trained_head.json",
        "FaithBench's summaries ({$shipped[source:FaithBench].n} of the {derived.english_answers} answers of the "
        "four English sources)",
    ),
    Figure(
        PRECISION,
        "trained_head.json",
        "the head scores {$shipped[source:FaithBench].value!p:.1f} there. With FaithBench where it is, an English "
        "figure of 80 needs {derived.english_others_needed!p:.1f} on average over the other "
        "{derived.english_others} answers. The head has {$shipped[source:HaluEval QA].value!p:.1f} on HaluEval QA's "
        "{$shipped[source:HaluEval QA].n} already, so Factcheck-GPT's and SummEdits' {derived.english_hardest} would "
        "need {derived.english_hardest_needed!p:.1f}:",
    ),
    Figure(
        PRECISION,
        "trained_head.json",
        "({$shipped[source:SummEdits].value!p:.1f} against {$previous[source:SummEdits].value!p:.1f}, "
        "{$shipped[source:SummEdits].n} items, intervals overlapping)",
    ),
    Figure(
        PRECISION,
        "quality_test_scores.json",
        "its figure here ({$q_holistic_score.balanced_accuracy.value!p:.1f}) differs slightly",
    ),
    Figure(
        PRECISION,
        "trained_head.json",
        "from the one in the head's table ({$previous.balanced_accuracy.value!p:.1f})",
    ),
    Figure(
        PRECISION,
        "quality_test_scores.json",
        "scored {derived.score_over_generated:.0f} points better overall when its P(Yes) was read and thresholded "
        "(`holistic_score`, {$q_holistic_score.balanced_accuracy.value!p:.1f}) than when it wrote a "
        "grammar-constrained verdict (`holistic`, {$q_holistic.balanced_accuracy.value!p:.1f}): "
        "+{derived.score_over_generated_zh:.0f} points in Chinese ({$q_holistic_score.by_language.zh.value!p:.1f} "
        "against {$q_holistic.by_language.zh.value!p:.1f}), +{derived.score_over_generated_en:.0f} in English "
        "({$q_holistic_score.by_language.en.value!p:.1f} against {$q_holistic.by_language.en.value!p:.1f}). "
        "The generated verdict passes only {derived.generated_faithful_passed!p:.1f}% of the faithful answers",
    ),
    Figure(
        PRECISION,
        "quality_test_scores.json",
        "{$q_holistic.unscored} of its {$q_holistic.answers} replies never validated.",
    ),
    Figure(
        PRECISION,
        "quality_test_scores.json",
        "`holistic_score` gains {derived.score_over_generated:.0f} points over the single holistic judgement overall "
        "and {derived.score_over_generated_zh:.0f} in Chinese, but only {derived.score_over_generated_en:.0f} in "
        "English",
    ),
    Figure(
        PRECISION,
        "quality_test_scores.json",
        "passes faithful answers ({derived.faithful_passed!p:.0f}%) but catches "
        "{$q_sentences.recall_inconsistent!p:.0f}% of flawed ones",
    ),
    Figure(
        PRECISION,
        "precision_small_model.json",
        "its probe-chosen threshold ({derived.probe_threshold}) did not transfer",
    ),
    Figure(
        PRECISION,
        "quality_test_scores.json",
        "still leaves it {derived.sentences_behind:.1f} points behind `holistic_score`.",
    ),
    Figure(
        PRECISION,
        "quality_test_scores.json",
        "fixed some pronoun failures in English (+{derived.context_gain_en:.1f}). In Chinese, where the answers are "
        "one sentence and its prompts the same as `context=0`'s, it moved by {derived.context_change_zh:+.1f}:",
    ),
    Figure(
        PRECISION,
        "calibration_dev.json",
        "({$dev_sentences.per_lang_thresholds.zh.threshold:.2f} instead of {$dev_sentences.threshold:.2f}:",
    ),
    Figure(
        PRECISION,
        "calibration_dev.json",
        "{$dev_sentences.per_lang_thresholds.zh.ba!p:.1f} against {$dev_sentences.by_lang.zh.ba!p:.1f} on dev), but "
        "{$dev_sentences.by_lang.zh.n} dev items per language",
    ),
    Figure(
        PRECISION,
        "quality_dev_scores.json",
        "dev scores {precision[method=lface4rag:strategy=holistic_score].balanced_accuracy.value!p:.1f} and "
        "{precision[method=lface4rag:explain=none,strategy=sentence_scores].balanced_accuracy.value!p:.1f} at them",
    ),
    Figure(
        PRECISION,
        "calibration_dev.json",
        "would choose {scored[method=lface4rag:strategy=holistic_score].threshold:.2f} and "
        "{$dev_sentences.threshold:.2f} instead, where it scores "
        "{scored[method=lface4rag:strategy=holistic_score].ba!p:.1f} and {$dev_sentences.ba!p:.1f}",
    ),
    Figure(
        PRECISION,
        "calibration_dev.json",
        "FaithBench ({scored[method=lface4rag:strategy=holistic_score].by_source.faithbench.ba:.2f}, chance)",
    ),
    Figure(
        PRECISION,
        "bench_embedded_sample6.json",
        "Every method ran on **{$paper.answers} items**",
    ),
    Figure(
        PRECISION,
        "bench_embedded_sample6.json",
        "{$paper.positives} faithful, {$paper.negatives} flawed; {$paper.by_language.en.n} English, "
        "{$paper.by_language.zh.n} Chinese.",
    ),
    Figure(
        PRECISION,
        "bench_embedded_sample6.json",
        "the paper pipeline took about {derived.paper_minutes} minutes and {derived.paper_tokens:,.0f} tokens per "
        "answer on 2 cores, and {$paper.failed_calls} of its {$paper.answers} answers ended with a failed call",
    ),
]
