"""Figures typed into docs/results/long-answers.md and the README about long English RAG answers, each tied to
`rag_en_report.json` (`benchmarks/rag_en_report.py`; what a snippet holds: `_gen.figures`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from _gen.figures import Figure

ALIASES: dict[str, str] = {}


def _report(data: dict[str, Any], load: Callable[[str], Any]) -> dict[str, Any]:
    ares = data["answers"]["ares"]
    return {"ares_flawed": ares["flawed_caught"]["n"]}


DERIVED: dict[str, Callable[[Any, Callable[[str], Any]], dict[str, Any]]] = {"rag_en_report.json": _report}

PAGE = "docs/results/long-answers.md"

FIGURES: list[Figure] = [
    Figure(
        PAGE,
        "rag_en_report.json",
        "The head catches two in three negations (KCont. {injections.by_type[KCont.].all.value!p:.1f}%) and two in "
        "five swapped figures or names (KInve. {injections.by_type[KInve.].all.value!p:.1f}%), but few logic errors: "
        "a reversed cause {injections.by_type[LCaus.].all.value!p:.1f}%, a swapped condition "
        "{injections.by_type[LConf.].all.value!p:.1f}%, a hedge made universal "
        "{injections.by_type[LOver.].all.value!p:.1f}%. It passes {injections.by_type.faithful.all.value!p:.1f}% "
        "of the faithful sentences mined with them, and {injections.originals_passed.value!p:.1f}% of the faithful "
        "answers the others were injected into.",
    ),
    Figure(
        "README.md",
        "rag_en_report.json",
        "it is weaker: {answers.lfqa.balanced_accuracy.value!p:.1f}, {answers.mtrag.balanced_accuracy.value!p:.1f} and "
        "{answers.ares.balanced_accuracy.value!p:.1f}, passing {answers.mtrag.faithful_passed.value!p:.1f}% of MTRAG's "
        "faithful answers",
    ),
    Figure(
        "docs/results/index.md",
        "rag_en_report.json",
        "balanced accuracy {answers.lfqa.balanced_accuracy!i}, {answers.mtrag.balanced_accuracy!i} and "
        "{answers.ares.balanced_accuracy!i}; the head ranks MTRAG's answers well (AUC {answers.mtrag.auc:.3f}) but its "
        "threshold, chosen on short answers, passes only {answers.mtrag.faithful_passed.value!p:.1f}% of the long "
        "faithful ones",
    ),
    Figure(
        PAGE,
        "rag_en_report.json",
        "The head ranks MTRAG's answers well (AUC {answers.mtrag.auc:.3f}) but passes only "
        "{answers.mtrag.faithful_passed.value!p:.1f}% of the faithful ones",
    ),
    Figure(
        PAGE,
        "rag_en_report.json",
        "On ARES it ranks near chance (AUC {answers.ares.auc:.3f}; {derived.ares_flawed} of its "
        "{answers.ares.rows} answers are flawed), and the evidence checks flag "
        "{answers.ares.evidence_flagged_faithful.value!p:.1f}% of the faithful answers",
    ),
    Figure(
        PAGE,
        "rag_en_report.json",
        "Reading an answer of these splits took {extraction.median_answer_seconds:.1f} s at the median "
        "({extraction.median_answer_tokens} prompt tokens, {provenance.machine.cores} cores), and each sentence scored "
        "after it {extraction.median_sentence_seconds:.1f} s.",
    ),
    Figure(
        PAGE,
        "sentence_aggregate.json",
        "fitted on {sentence_head.train_sentences:,} sentences of LFQA's train answers labelled supported or",
    ),
    Figure(
        PAGE,
        "sentence_aggregate.json",
        'its F1 of "not supported" is {sentence_f1[sentence head].test!i} against {sentence_f1[answer head].test!i} '
        "when the answer head scores each sentence as an answer of one sentence (AUC "
        "{sentence_f1[sentence head].test_auc:.3f} against {sentence_f1[answer head].test_auc:.3f};",
    ),
    Figure(
        PAGE,
        "sentence_aggregate.json",
        "balanced accuracy {methods[answer + sentences (sentence head)].dev.all.value!p:.1f} with the sentences "
        "against {methods[head, dev thresholds].dev.all.value!p:.1f} for the answer's own score",
    ),
    Figure(
        PAGE,
        "sentence_aggregate.json",
        "its dev split's English answers fall from "
        "{quality_corpus[sentence head].dev[answer alone][lang:en].value!p:.1f} to "
        "{quality_corpus[sentence head].dev[with sentences][lang:en].value!p:.1f}, and the dev paraphrases passed "
        "from {quality_corpus[sentence head].dev[answer alone].paraphrases_passed!p:.1f}% to "
        "{quality_corpus[sentence head].dev[with sentences].paraphrases_passed!p:.1f}%.",
    ),
    Figure(
        PAGE,
        "trained_head_rag_en.json",
        "({sizes.train.extracted:,} of the {sizes.train.rows:,} train rows extracted;",
    ),
    Figure(
        PAGE,
        "trained_head_rag_en.json",
        "judges LFQA at {results[split=lfqa_test][method=@choice.shipped].balanced_accuracy!i}, MTRAG at "
        "{results[split=mtrag_test][method=@choice.shipped].balanced_accuracy!i} and ARES at "
        "{results[split=ares_test][method=@choice.shipped].balanced_accuracy!i}, and the quality corpus's test split "
        "at {results[split=test][method=@choice.shipped].balanced_accuracy!i}. It passes "
        "{paraphrases_passed[test paraphrases][@choice.shipped].all.value!p:.1f}% of the test split's faithful "
        "paraphrases, where the shipped head passes "
        "{paraphrases_passed[test paraphrases][the head shipped before this run].all.value!p:.1f}%,",
    ),
    Figure(
        PAGE,
        "rag_en_report_candidate.json",
        "it catches {injections.by_type[KCont.].all.value!p:.1f}% of the injected negations and "
        "{injections.by_type[LCaus.].all.value!p:.1f}% of the reversed causes",
    ),
    Figure(
        PAGE,
        "trained_head_injections_dev.json",
        "the quality test split scored {results[split=test][method=@choice.shipped].balanced_accuracy.value!p:.1f},",
    ),
    Figure(
        PAGE,
        "trained_head_per_genre.json",
        "LFQA scores {results[split=lfqa_test][method=@choice.shipped].balanced_accuracy!i} and "
        "{paraphrases_passed[test paraphrases][@choice.shipped].all.value!p:.1f}% of the test paraphrases pass, but "
        "the quality corpus's test split falls to {results[split=test][method=@choice.shipped].balanced_accuracy!i}\n"
        "(English {results[split=test][method=@choice.shipped][lang:en].value!p:.1f}) and MTRAG to "
        "{results[split=mtrag_test][method=@choice.shipped].balanced_accuracy.value!p:.1f}.",
    ),
    Figure(
        PAGE,
        "trained_head_per_genre_no_injections.json",
        "the head ranks the quality test split best of all\n(AUC "
        "{results[split=test][method=@choice.shipped].auc:.3f}), yet its dev-chosen thresholds give "
        "{results[split=test][method=@choice.shipped].balanced_accuracy.value!p:.1f} there.",
    ),
    Figure(
        PAGE,
        "rag_en_report.json",
        "The shipped head gives a reversed cause a lower P(faithful) than its original in "
        "{injections.below_twin[LCaus.].ranked_below!p:.1f}% of {injections.below_twin[LCaus.].pairs} pairs, but "
        "lowers it by {injections.below_twin[LCaus.].median_drop:.3f} at the median, while the P(faithful) of the "
        "faithful answers the injections were made from spreads over "
        "{injections.below_twin.faithful_originals.iqr:.3f} between its quartiles;",
    ),
    Figure(
        PAGE,
        "rag_en_report_candidate.json",
        "candidate above lowers it by {injections.below_twin[LCaus.].median_drop:.3f} "
        "({injections.below_twin[LCaus.].ranked_below!p:.1f}% of pairs)",
    ),
]
