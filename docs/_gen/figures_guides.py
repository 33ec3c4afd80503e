"""Figures typed into the guides of docs/, each tied to the results file it is read from (what a snippet holds:
`_gen.figures`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from _gen.figures import Figure, wall_minutes

ALIASES = {
    # server_vs_inprocess.json
    "server1": "runs[server c1]",
    "server8": "runs[server c8]",
    "inprocess1": "runs[in-process c1]",
    "inprocess8": "runs[in-process c8]",
    # http_stack.json
    "direct32": "rows[client=ragfacts check][stack=direct][concurrency=32]",
    "direct64": "rows[client=ragfacts check][stack=direct][concurrency=64]",
    "sdk32": "rows[client=ragfacts check][stack=aiohttp][concurrency=32]",
    "sdk64": "rows[client=ragfacts check][stack=aiohttp][concurrency=64]",
    "httpx32": "rows[client=ragfacts check][stack=httpx][concurrency=32]",
    "httpx64": "rows[client=ragfacts check][stack=httpx][concurrency=64]",
    "bare32": "rows[client=bare openai client][stack=aiohttp][concurrency=32]",
    "bare64": "rows[client=bare openai client][stack=aiohttp][concurrency=64]",
    # train_head_cli.json
    "trained": "test.head",
}


def _train_head_cli(data: dict[str, Any], load: Callable[[str], Any]) -> dict[str, Any]:
    reading = data["timing_s"]["reading"]
    stat = data["test"]["head"]["balanced_accuracy"]
    return {
        "reading_per_answer": reading / data["data"]["answers"],
        "half_width": round(100 * (stat["high"] - stat["low"]) / 2),
    }


def _synth_local(data: dict[str, Any], load: Callable[[str], Any]) -> dict[str, Any]:
    synth = data["synth"]
    by_type = synth["by_type"].values()
    written = synth["positives"]["written"]
    return {
        "faithful": synth["items"] - sum(kind["kept"] for kind in by_type),
        "flawed": sum(kind["kept"] for kind in by_type),
        "rejected": sum(kind["rejected"] for kind in by_type),
        "asked": sum(kind["asked"] for kind in by_type),
        "given": sum(row["answer"] == "given" for row in data["rows"]),
        "written": sum(row["answer"] != "given" for row in data["rows"]),
        "written_rejected": written["rejected"],
        "written_asked": written["asked"],
    }


def _server_vs_inprocess(data: dict[str, Any], load: Callable[[str], Any]) -> dict[str, Any]:
    runs = data["runs"]
    return {
        **{
            f"faster{level}": runs[f"in-process c{level}"]["answers_per_s"] / runs[f"server c{level}"]["answers_per_s"]
            for level in (1, 8)
        },
        "minutes": wall_minutes(data),
    }


def _grammar_cost(data: dict[str, Any], load: Callable[[str], Any]) -> dict[str, Any]:
    checked = [call for call in data["calls"] if "same_text_as_grammar" in call]
    return {
        "slower": data["summary"]["grammar"]["wall_s"] / data["summary"]["json_text"]["wall_s"],
        "same_text": sum(call["same_text_as_grammar"] for call in checked),
        "checked": len(checked),
        **_grammar_build(data, load),
        "minutes": wall_minutes(data),
    }


def _http_stack(data: dict[str, Any], load: Callable[[str], Any]) -> dict[str, Any]:
    def wall(stack: str, level: int) -> float:
        return next(
            row["wall_s"]
            for row in data["rows"]
            if row["client"] == "ragfacts check" and row["stack"] == stack and row["concurrency"] == level
        )

    return {
        **{f"direct_vs_sdk{level}": wall("direct", level) / wall("aiohttp", level) for level in (32, 64)},
        "latency_ms": 1000 * data["latency_s"],
        "minutes": wall_minutes(data),
    }


def _calibration(data: dict[str, Any], load: Callable[[str], Any]) -> dict[str, Any]:
    head = next(study for study in data["studies"] if study["strategy"] == "trained_head")
    bins = [b for b in head["reliability"][head["chosen"]] if 0.6 <= b["low"] < 0.8 and b["n"]]
    over = sum(b["n"] * (b["mean_probability"] - b["share_faithful"]) for b in bins) / sum(b["n"] for b in bins)
    # where the head's ECE lies against a perfectly calibrated judge's on the same split, as the prose words it
    ece, floor = round(head["test"]["temperature"]["ece"]["value"], 3), head["ece_of_a_calibrated_judge"]
    if ece > round(floor["high"], 3):
        against_floor = "above that range's upper end: a little worse than a perfectly calibrated judge would measure"
    else:
        against_floor = "inside that range: a split this size cannot tell it from a perfectly calibrated judge"
    return {"head_too_high_06_08": over, "head_ece_against_floor": against_floor}


def _grammar_build(data: dict[str, Any], load: Callable[[str], Any]) -> dict[str, Any]:
    """The bounds the prose gives for building a grammar: the slowest schema's time, to the tenth of a ms above."""

    def under(key: str) -> float:
        return (math.floor(10 * max(schema[key] for schema in data["grammar_build"].values())) + 1) / 10

    return {"convert_under_ms": under("json_schema_to_gbnf_ms"), "parse_under_ms": under("llama_grammar_parse_ms")}


def _recall_default(data: dict[str, Any], load: Callable[[str], Any]) -> dict[str, Any]:
    """The rows and answers of the WikiEval sample, as recall_small_model.json records them for the same file."""
    dataset = load("recall_small_model.json")["spec"]["dataset"]
    if dataset["sha256"] not in data["provenance"]["data"].values():
        raise ValueError("recall_default_wikieval.json and recall_small_model.json read different WikiEval files")
    return {"rows": dataset["rows"], "answers": dataset["items"]}


def _service_load(data: dict[str, Any], load: Callable[[str], Any]) -> dict[str, Any]:
    spec = data["spec"]
    cpu = [level["server_cpu_ms_per_request"] for level in data["levels"]]
    return {
        "ceiling": round(spec["model_concurrency"] / (spec["model_delay_ms"] / 1000)),
        "answered": math.floor(max(level["answered_per_s"] for level in data["levels"])),
        "cpu": f"{min(cpu):.0f}–{max(cpu):.0f}",
    }


DERIVED: dict[str, Callable[[Any, Callable[[str], Any]], dict[str, Any]]] = {
    "calibration.json": _calibration,
    "recall_default_wikieval.json": _recall_default,
    "server_vs_inprocess.json": _server_vs_inprocess,
    "train_head_cli.json": _train_head_cli,
    "service_load.json": _service_load,
    "synth_local.json": _synth_local,
    "grammar_cost.json": _grammar_cost,
    "http_stack.json": _http_stack,
}

GUIDE_CALIBRATION = "docs/guides/calibration.md"
GUIDE_MODELS = "docs/guides/models.md"
GUIDE_RECALL = "docs/guides/recall.md"
GUIDE_PRECISION = "docs/guides/precision.md"
GUIDE_SERVE = "docs/guides/serve.md"
GUIDE_SYNTH = "docs/guides/synth.md"

FIGURES: list[Figure] = [
    # docs/guides/calibration.md
    Figure(GUIDE_CALIBRATION, "calibration.json", "Measured on the test split ({$head.test_rows} answers)"),
    Figure(
        GUIDE_CALIBRATION,
        "calibration.json",
        "The map chosen for the head by dev's cross-validation is {$head.chosen}, and the head's score is close to "
        "calibrated with or without it: ECE {$head.test.temperature.ece.value:.3f} calibrated, "
        "{$head.test.raw.ece.value:.3f} raw; its probabilities of 0.6–0.8 are about "
        "{derived.head_too_high_06_08:.2f} too high, and those above 0.8 too low. On {$head.test_rows} answers ECE "
        "has a noise floor",
    ),
    Figure(
        GUIDE_CALIBRATION,
        "calibration.json",
        "would measure {$head.ece_of_a_calibrated_judge.mean:.3f} [{$head.ece_of_a_calibrated_judge.low:.3f}, "
        "{$head.ece_of_a_calibrated_judge.high:.3f}] (labels drawn from those probabilities; "
        "{studies[strategy=holistic_score].ece_of_a_calibrated_judge.mean:.3f} "
        "[{studies[strategy=holistic_score].ece_of_a_calibrated_judge.low:.3f}, "
        "{studies[strategy=holistic_score].ece_of_a_calibrated_judge.high:.3f}] for `holistic_score`'s). The head's "
        "{$head.test.temperature.ece.value:.3f} is {derived.head_ece_against_floor}.",
    ),
    Figure(
        GUIDE_CALIBRATION,
        "calibration.json",
        "`holistic_score`'s raw P(Yes) was far off ({studies[strategy=holistic_score].test.raw.ece.value:.3f}), and "
        "its calibrated value lands at {studies[strategy=holistic_score].test.isotonic.ece.value:.3f}.",
    ),
    Figure(
        GUIDE_CALIBRATION,
        "calibration.json",
        "({$head.band_test[ba:zh].value!p:.1f} on the decided answers against {$head.no_band_test[ba:zh].value!p:.1f} "
        "with no band), and does not help English, where it does not separate them "
        "({$head.band_test[ba:en].value!p:.1f} against {$head.no_band_test[ba:en].value!p:.1f}).",
    ),
    Figure(
        GUIDE_CALIBRATION,
        "train_head_cli.json",
        "with the embedded model on {data.answers} labelled answers (the first {data.answers} rows of our training "
        "file: {rows_by_language.zh} Chinese, {rows_by_language.en} English), from nothing, on {cores} cores, reading "
        "the answers took {timing_s.reading:.0f} s ({derived.reading_per_answer:.1f} s an answer, one forward pass "
        "each) and everything else {timing_s.fitting:.1f} s",
    ),
    Figure(
        GUIDE_CALIBRATION,
        "train_head_cli.json",
        "On the {split.test} answers of its test split that head reached a balanced accuracy of "
        "{$trained.balanced_accuracy!i} with an ECE of {$trained.ece:.3f}, against {test.default!i} for the shipped "
        "head.",
    ),
    Figure(
        GUIDE_CALIBRATION,
        "train_head_cli.json",
        "A test split of {split.test} answers gives intervals about ±{derived.half_width} points wide",
    ),
    # docs/guides/models.md
    Figure(
        GUIDE_MODELS,
        "server_vs_inprocess.json",
        "(about {derived.minutes} minutes on {provenance.machine.cores} cores) judges the same {items!n} answers of "
        "the quality corpus's",
    ),
    Figure(
        GUIDE_MODELS,
        "server_vs_inprocess.json",
        "In-process is faster here: {derived.faster1:.1f}× at 1 in flight and {derived.faster8:.1f}× at 8 "
        "({$inprocess1.answers_per_s!m:.1f} and {$inprocess8.answers_per_s!m:.1f} answers a minute against "
        "{$server1.answers_per_s!m:.1f} and {$server8.answers_per_s!m:.1f}).",
    ),
    Figure(
        GUIDE_MODELS,
        "server_vs_inprocess.json",
        "({$server1.prompt_tokens:,} prompt tokens against {$inprocess1.prompt_tokens:,})",
    ),
    Figure(
        GUIDE_MODELS,
        "recall_schema_hidden.json",
        'answered "True" for {metrics[method=faaf-tfn][answer_type=ungrounded_answer].true_fraction!p:.1f}% of the '
        "facts of WikiEval's ungrounded answers and "
        "{metrics[method=faaf-tfn][answer_type=poor_answer].true_fraction!p:.1f}% of its poor answers",
    ),
    Figure(GUIDE_MODELS, "grammar_cost.json", "{summary.grammar.calls} representative calls"),
    Figure(
        GUIDE_MODELS,
        "grammar_cost.json",
        "(`python benchmarks/grammar_cost.py`, about {derived.minutes} minutes on {provenance.machine.cores} cores;",
    ),
    Figure(
        GUIDE_MODELS,
        "grammar_cost.json",
        "a generated token costs {summary.grammar.ms_per_token.forward_pass:.0f} ms of forward pass; the "
        "grammar-constrained sampler adds {summary.grammar.ms_per_token.sampler:.0f} ms "
        "({summary.grammar.sampler_share_of_generation!p:.0f}% of generation), against "
        "{summary.json_text.ms_per_token.sampler:.1f} ms when decoding freely",
    ),
    Figure(
        GUIDE_MODELS,
        "grammar_cost.json",
        "the whole calls take {summary.grammar.wall_s:.0f} s with the grammar and {summary.json_text.wall_s:.0f} s "
        "without it ({derived.slower:.2f}×)",
    ),
    Figure(
        GUIDE_MODELS,
        "grammar_cost.json",
        "building the grammar is negligible: under {derived.convert_under_ms:.1f} ms to convert a schema and under "
        "{derived.parse_under_ms:.1f} ms to parse it, per call",
    ),
    Figure(
        GUIDE_MODELS,
        "grammar_cost.json",
        "cuts the sampler to {summary.grammar_check_first.ms_per_token.sampler:.1f} ms a token, but gave the same "
        "text as the grammar in only {derived.same_text} of the {derived.checked} calls",
    ),
    Figure(
        GUIDE_MODELS,
        "http_stack.json",
        "runs `ragfacts check` (L-Face4RAG, paper mode) on {answers} answers each way, against a server that answers "
        "every call after {derived.latency_ms:.0f} ms",
    ),
    Figure(GUIDE_MODELS, "http_stack.json", "medians of {$direct32.repeats}, alternated."),
    Figure(
        GUIDE_MODELS,
        "http_stack.json",
        "`python benchmarks/http_stack.py` (about {derived.minutes} minutes on {provenance.machine.cores} cores)",
    ),
    Figure(
        GUIDE_MODELS,
        "http_stack.json",
        "Sent directly, `ragfacts check` spent {$direct32.cpu_ms_per_call:.2f} ms of client CPU per call at 32 in "
        "flight and {$direct64.cpu_ms_per_call:.2f} ms at 64, against {$sdk32.cpu_ms_per_call:.2f} and "
        "{$sdk64.cpu_ms_per_call:.2f} ms through the SDK on aiohttp and {$httpx32.cpu_ms_per_call:.2f} and "
        "{$httpx64.cpu_ms_per_call:.2f} ms on httpx, and finished in {derived.direct_vs_sdk32:.2f}× and "
        "{derived.direct_vs_sdk64:.2f}× the time it took through the SDK on aiohttp: faster than the bare `openai` "
        "client replaying the same requests, at 32 in flight ({$direct32.wall_s:.2f} s against {$bare32.wall_s:.2f} "
        "s) and at 64 ({$direct64.wall_s:.2f} s against {$bare64.wall_s:.2f} s).",
    ),
    # docs/guides/recall.md
    Figure(
        GUIDE_RECALL,
        "one_pass_cost.json",
        "{sentences_scored} facts cost {median_over_rows.facts_over_verdict:.2f}× one precision verdict pass",
    ),
    Figure(
        GUIDE_RECALL,
        "recall_calibration.json",
        "than the precision head's probability (out-of-fold AUC {weights.dev_auc_out_of_fold.recalibrated:.3f} against "
        "{weights.dev_auc_out_of_fold[the precision head's probability]:.3f}). The recall threshold ({threshold:.3f})",
    ),
    Figure(
        GUIDE_RECALL,
        "recall_calibration.json",
        "On the test split ({test_chosen.pairs} fully or not covered pairs) the head judges covered insights present "
        "{test_chosen.covered_judged_present!p:.1f}% of the time and not covered ones "
        "{test_chosen.not_covered_judged_present!p:.1f}%: a balanced accuracy of "
        "**{test_chosen.balanced_accuracy!p:.1f} [{test_chosen.balanced_accuracy_interval[0]!p:.1f}, "
        "{test_chosen.balanced_accuracy_interval[1]!p:.1f}]**",
    ),
    Figure(
        GUIDE_RECALL,
        "recall_calibration.json",
        "partially covered insights are judged present {partially_covered_judged_present!p:.1f}% of the time.",
    ),
    Figure(
        GUIDE_RECALL,
        "recall_default_wikieval.json",
        "On the {derived.rows} WikiEval rows of the check set ({by_answer_type.answer.facts} facts a type, generated "
        "from the ground truths by the model), the default on the embedded model judged present "
        "{by_answer_type.answer.share!p:.0f}%, {by_answer_type.ungrounded_answer.share!p:.1f}% and "
        "{by_answer_type.poor_answer.share!p:.1f}% of the facts of the answers, the ungrounded and the poor answers, "
        "against the FaaF paper's humans' {by_answer_type.answer.humans!p:.0f}%, "
        "{by_answer_type.ungrounded_answer.humans!p:.1f}% and {by_answer_type.poor_answer.humans!p:.1f}%",
    ),
    Figure(
        GUIDE_RECALL,
        "recall_small_model.json",
        "(FaaF's structured call on the same model: {$faaf_ungrounded.true_fraction!p:.1f}% and "
        "{$faaf_poor.true_fraction!p:.1f}% for the last two)",
    ),
    Figure(
        GUIDE_RECALL,
        "recall_default_wikieval.json",
        "{by_answer_type.answer.points_from_humans:.0f}, {by_answer_type.ungrounded_answer.points_from_humans:.1f} and "
        "{by_answer_type.poor_answer.points_from_humans:.1f} points from the humans",
    ),
    Figure(
        GUIDE_RECALL,
        "recall_default_wikieval.json",
        "{usage_of_the_run.model_s:.0f} model-seconds for the {derived.answers} answers on "
        "{provenance.machine.cores} shared cores",
    ),
    # docs/guides/precision.md
    Figure(
        GUIDE_PRECISION,
        "trained_head.json",
        "On the test split they flag {evidence_flagged.test[en flawed]!p:.1f}% of the flawed English answers and "
        "{evidence_flagged.test[zh flawed]!p:.1f}% of the Chinese ones, and wrongly "
        "{evidence_flagged.test[en faithful]!p:.1f}% of the faithful English answers and "
        "{evidence_flagged.test[zh faithful]!p:.1f}% of the Chinese ones",
    ),
    # docs/guides/serve.md
    Figure(
        GUIDE_SERVE,
        "service_load.json",
        "answers each call after {spec.model_delay_ms:.0f} ms; ragfacts makes {spec.model_concurrency} model calls "
        "at once (`--concurrency {spec.model_concurrency}`) and the service admits {spec.max_concurrent} requests "
        "(`--max-concurrent {spec.max_concurrent}`); at most {spec.requests_per_level:,} requests or "
        "{spec.seconds_per_level:.0f} s per level; {spec.cpus} cores, client and server on the same machine.",
    ),
    Figure(
        GUIDE_SERVE,
        "service_load.json",
        "The service's ceiling here is the model's: {spec.model_concurrency} calls of {spec.model_delay_ms:.0f} ms at "
        "once is {derived.ceiling} answers/s, and it answers {derived.answered}. Past its {spec.max_concurrent} places",
    ),
    Figure(
        GUIDE_SERVE,
        "service_load.json",
        "Over the {totals.sent:,} requests: none lost",
    ),
    Figure(
        GUIDE_SERVE,
        "service_load.json",
        "`/metrics` counted {totals.check_requests_per_server_metrics:,} `/check` requests",
    ),
    Figure(GUIDE_SERVE, "service_load.json", "{derived.cpu} ms of server CPU per request."),
    # docs/guides/synth.md
    Figure(
        GUIDE_SYNTH,
        "synth_local.json",
        "Measured on {synth.rows} rows of the quality corpus's dev split ({derived.given} English FaithBench "
        "summaries with their answer, {derived.written} Chinese RGB items",
    ),
    Figure("docs/guides/bench.md", "bench_embedded_sample6.json", "every method on a {$paper.answers}-item sample"),
    Figure(
        GUIDE_SYNTH,
        "synth_local.json",
        "The dataset holds {derived.faithful} faithful and {derived.flawed} flawed answers. **The 1.5B model is no use "
        "as a synthesiser**: its verifier rejected {derived.rejected} of the {derived.asked} edits it was asked for, "
        "{derived.written_rejected} of its {derived.written_asked} written Chinese answers were not supported by their "
        "own reference, and {synth.positives.paraphrase.failed} of the {synth.positives.paraphrase.asked} paraphrases "
        "failed validation after the re-asks (rows left incomplete, {synth.incomplete} here, are retried by the next "
        "run).",
    ),
    Figure(
        GUIDE_SYNTH,
        "synth_local.json",
        "`bench` on the {judges[method=lface4rag].answers} answers (`lface4rag` "
        "{judges[method=lface4rag].accuracy.value!p:.0f}% accuracy, `holistic` "
        "{judges[method=holistic].accuracy.value!p:.0f}%; {judges[method=holistic].answers} answers say little",
    ),
    # other guides
    Figure("docs/guides/datasets.md", "runner_faults.json", "{rows} RAGAS rows, precision and recall"),
    Figure("docs/guides/datasets.md", "runner_faults.json", "with faults injected into {faulty_rows} rows"),
    Figure("docs/guides/reports.md", "report_scale.json", "measures a {answers:,}-answer report"),
    Figure(
        "docs/guides/reports.md",
        "default_bench.json",
        "![The report of a bench run of the default judge on {rows} answers of the test split "
        "(benchmarks/default_bench.py)",
    ),
    Figure(
        "docs/guides/reports.md",
        "default_bench.json",
        "The report of a bench run of the default judge on {rows} answers of the test split (the run of",
    ),
]
