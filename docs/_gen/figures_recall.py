"""Figures typed into the results pages about recall by the embedded model's default (`faaf` verifying each fact
with the head), each tied to the results file it is read from (what a snippet holds: `_gen.figures`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from _gen.figures import Figure

ALIASES: dict[str, str] = {}
DERIVED: dict[str, Callable[[Any, Callable[[str], Any]], dict[str, Any]]] = {}

RECALL = "docs/results/recall.md"
INDEX = "docs/results/index.md"

FIGURES: list[Figure] = [
    Figure(
        RECALL,
        "recall_default_wikieval.json",
        "On the same 10 rows it judged {by_answer_type.answer.share!p:.0f}%, "
        "{by_answer_type.ungrounded_answer.share!p:.1f}% and {by_answer_type.poor_answer.share!p:.1f}% of the facts "
        "present, against the humans' {by_answer_type.answer.humans!p:.0f}%, "
        "{by_answer_type.ungrounded_answer.humans!p:.1f}% and {by_answer_type.poor_answer.humans!p:.1f}%: "
        "{by_answer_type.answer.points_from_humans:.0f}, {by_answer_type.ungrounded_answer.points_from_humans:.1f} "
        "and {by_answer_type.poor_answer.points_from_humans:.1f} points from the humans",
    ),
    Figure(
        RECALL,
        "recall_calibration.json",
        "not covered insights at a balanced accuracy of {test_chosen.balanced_accuracy!p:.1f} "
        "[{test_chosen.balanced_accuracy_interval[0]!p:.1f}, {test_chosen.balanced_accuracy_interval[1]!p:.1f}]",
    ),
    Figure(
        INDEX,
        "recall_default_wikieval.json",
        "judged {by_answer_type.ungrounded_answer.share!p:.1f}% and {by_answer_type.poor_answer.share!p:.1f}% of the "
        "facts present for answers that lack them, where the FaaF paper's humans judged "
        "{by_answer_type.ungrounded_answer.humans!p:.1f}% and {by_answer_type.poor_answer.humans!p:.1f}%",
    ),
    Figure(
        INDEX,
        "recall_small_model.json",
        "FaaF's generated verdicts on the same model judged {$faaf_ungrounded.true_fraction!p:.1f}% and "
        "{$faaf_poor.true_fraction!p:.1f}%",
    ),
]
