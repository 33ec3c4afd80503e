"""Tables of accuracy: the quality corpus, calibration, recall, the peers and synthetic data."""

from __future__ import annotations

from typing import Any

from _gen.markdown import cell, code, table
from _gen.results import ANSWER_TYPES, count, interval, pct, results_table

# The quality corpus: trained head, scored strategies, bench runs.


def _head_rows(data: dict[str, Any], split: str) -> list[list[str]]:
    rows = []
    for result in data["results"]:
        if result["split"] == split:
            rows.append(
                [
                    cell(result["method"]),
                    interval(result["balanced_accuracy"]),
                    interval(result.get("lang:en")),
                    interval(result.get("lang:zh")),
                    f"{result['auc']:.3f}",
                    pct(result["f1_hallucinated"]["value"]),
                ]
            )
    return rows


_HEAD_HEADER = ["judge on the embedded model", "balanced accuracy", "English", "Chinese", "AUC", "F1 (flawed)"]


@results_table("trained_head", "trained_head.json")
def _trained_head(data: dict[str, Any]) -> str:
    shipped = data["choice"]["shipped"]
    return (
        table(_HEAD_HEADER, _head_rows(data, "test"))
        + f"\nShipped as `trained_head`: **{cell(shipped)}**. Test split: {data['sizes']['test']['rows']} answers; "
        f"balanced accuracy in % with bootstrap 95% intervals; one forward pass per answer (median "
        f"{data['timing_2_cores']['median_tokens']} prompt tokens, "
        f"{data['timing_2_cores']['median_seconds_per_pair_up_to_500_tokens']} s on 2 cores).\n"
    )


@results_table("trained_head.dev", "trained_head.json")
def _trained_head_dev(data: dict[str, Any]) -> str:
    return table(_HEAD_HEADER, _head_rows(data, "dev"))


@results_table("trained_head.sources", "trained_head.json")
def _trained_head_sources(data: dict[str, Any]) -> str:
    tests = [result for result in data["results"] if result["split"] == "test"]
    sources = sorted({key for result in tests for key in result if key.startswith("source:")})
    rows = [[cell(result["method"]), *(pct((result.get(s) or {}).get("value")) for s in sources)] for result in tests]
    return table(["judge (test split)", *(cell(s.removeprefix("source:")) for s in sources)], rows)


@results_table("trained_head.evidence", "trained_head.json")
def _trained_head_evidence(data: dict[str, Any]) -> str:
    flagged = data["evidence_flagged"]
    groups = list(next(iter(flagged.values())))
    rows = [[split, *(pct(shares[group]) + "%" for group in groups)] for split, shares in flagged.items()]
    return table(["answers flagged by the evidence checks", *groups], rows)


@results_table("trained_head.paraphrases", "trained_head.json")
def _trained_head_paraphrases(data: dict[str, Any]) -> str:
    rows = []
    for split, judges in data["paraphrases_passed"].items():
        for judge, rates in judges.items():
            rows.append(
                [
                    split,
                    cell(judge),
                    *(_passed(rates.get(lang)) for lang in ("all", "en", "zh")),
                ]
            )
    return table(["faithful paraphrases", "judge", "passed, %", "English", "Chinese"], rows)


def _passed(rate: dict[str, Any] | None) -> str:
    if not rate:
        return "-"
    return f"{interval(rate)} of {rate['n']} (originals: {pct(rate['originals_passed'])})"


def _bench_precision(data: dict[str, Any]) -> str:
    rows = []
    for metrics in data["precision"]:
        answers, usage = metrics["answers"], metrics["usage"]
        languages = metrics.get("by_language") or {}
        rows.append(
            [
                code(metrics["method"]),
                interval(metrics["balanced_accuracy"]),
                interval(languages.get("en")),
                interval(languages.get("zh")),
                f"{metrics['positive_accuracy']['correct']}/{metrics['positive_accuracy']['n']}",
                f"{metrics['negative_accuracy']['correct']}/{metrics['negative_accuracy']['n']}",
                str(metrics["unscored"]),
                f"{usage['calls'] / answers:.1f}",
                count(usage["prompt_tokens"] / answers),
                count(usage["completion_tokens"] / answers),
                f"{usage['cache_hits'] / answers:.1f}",
                f"{usage['model_s'] / answers:.1f}",
            ]
        )
    header = ["method", "balanced accuracy", "English", "Chinese", "faithful passed", "flawed caught", "unscored"]
    header += ["calls", "prompt tok", "completion tok", "cache hits", "model s"]
    return table(header, rows) + "\nCosts are per answer, from the run's ledger; an unscored answer counts as wrong.\n"


for _table_id, _file in (
    ("quality.test", "quality_test_scores.json"),
    ("quality.dev", "quality_dev_scores.json"),
    ("bench.sample6", "bench_embedded_sample6.json"),
):
    results_table(_table_id, _file)(_bench_precision)


@results_table("quality.dev_thresholds", "calibration_dev.json")
def _dev_thresholds(data: dict[str, Any]) -> str:
    rows = []
    for study in [*data["scored"], *data["labelled"], *data["combined"]]:
        languages = study.get("by_lang", {})
        per_language = study.get("per_lang_thresholds") or {}
        rows.append(
            [
                code(study["method"]),
                str(study["n"]),
                f"{study['threshold']:.2f}" if "threshold" in study else "-",
                f"{pct(study['ba'])} [{pct(study['ba_95ci'][0])}, {pct(study['ba_95ci'][1])}]",
                f"{study['auc']:.3f}" if "auc" in study else "-",
                *(pct(languages.get(lang, {}).get("ba")) for lang in ("en", "zh")),
                ", ".join(f"{lang} {v['threshold']:.2f} → {pct(v['ba'])}" for lang, v in per_language.items()) or "-",
            ]
        )
    header = ["strategy on dev", "answers", "threshold", "balanced accuracy", "AUC", "English", "Chinese"]
    return table([*header, "per-language thresholds (not adopted)"], rows)


@results_table("precision_small_model", "precision_small_model.json")
def _precision_small_model(data: dict[str, Any]) -> str:
    rows = []
    for name, run in data["results"].items():
        summary = run["summary"]
        rows.append(
            [
                code(name),
                str(summary["items"]),
                pct(summary["balanced_accuracy"]),
                str(summary["faithful_passed"]),
                str(summary["flawed_caught"]),
                f"{summary['calls_per_answer']:.1f}",
                count(summary["prompt_tokens_per_answer"]),
                f"{summary['model_s_per_answer']:.1f}",
            ]
        )
    header = ["set / strategy", "answers", "balanced accuracy", "faithful passed", "flawed caught", "calls"]
    return table([*header, "prompt tok", "model s"], rows)


# Calibration and the abstain band.


@results_table("calibration.ece", "calibration.json")
def _calibration_ece(data: dict[str, Any]) -> str:
    rows = []
    for study in data["studies"]:
        chosen, floor = study["chosen"], study["ece_of_a_calibrated_judge"]
        rows.append(
            [
                code(study["strategy"]),
                interval(study["test"]["raw"]["ece"], scale=1, digits=3),
                "**" + interval(study["test"][chosen]["ece"], scale=1, digits=3) + "**",
                f"{chosen} (dev CV {study['dev_cv'][chosen]['ece']:.3f})",
                f"{floor['mean']:.3f} [{floor['low']:.3f}, {floor['high']:.3f}]",
            ]
        )
    header = ["judge on the embedded model", "raw score: ECE", "calibrated, as shipped: ECE", "map chosen on dev"]
    return table([*header, "ECE of a perfectly calibrated judge"], rows)


@results_table("calibration.maps", "calibration.json")
def _calibration_maps(data: dict[str, Any]) -> str:
    rows = []
    for study in data["studies"]:
        for name, measured in study["test"].items():
            dev = study["dev_cv"].get(name, {}).get("ece")
            label = f"{name} (chosen)" if name == study["chosen"] else name
            rows.append(
                [
                    code(study["strategy"]),
                    label,
                    "-" if dev is None else f"{dev:.3f}",
                    interval(measured["ece"], scale=1, digits=3),
                    f"{measured['log_loss']:.3f}",
                ]
            )
    return table(["judge", "map", "dev ECE (5-fold CV)", "test ECE", "test log-loss"], rows)


@results_table("calibration.band", "calibration.json")
def _calibration_band(data: dict[str, Any]) -> str:
    rows = []
    for study in data["studies"]:
        low, high = study["band"]
        for label, measured in (("no band", study["no_band_test"]), (f"[{low:.2f}, {high:.2f})", study["band_test"])):
            rows.append(
                [
                    code(study["strategy"]),
                    label,
                    f"{pct(measured['abstain'])}% "
                    f"(en {pct(measured['abstain:en'])}%, zh {pct(measured['abstain:zh'])}%)",
                    interval(measured["ba:all"]),
                    interval(measured["ba:en"]),
                    interval(measured["ba:zh"]),
                ]
            )
    header = ["judge (test split)", "band", "left uncertain", "balanced accuracy on the rest", "English", "Chinese"]
    return table(header, rows) + f"\nBands chosen on dev: at most {pct(data['max_abstain'], 0)}% abstentions.\n"


@results_table("train_head_cli", "train_head_cli.json")
def _train_head_cli(data: dict[str, Any]) -> str:
    head, split = data["test"]["head"], data["split"]
    band = head["band"]
    rows = [
        [
            "answers (train / dev / test)",
            f"{data['data']['answers']} ({split['train']} / {split['dev']} / {split['test']})",
        ],
        ["by language", ", ".join(f"{lang} {n}" for lang, n in data["rows_by_language"].items())],
        ["features", cell(data["features"])],
        ["reading the answers (model)", f"{data['timing_s']['reading']:.0f} s on {data['cores']} cores"],
        ["fitting, choosing, calibrating", f"{data['timing_s']['fitting']:.1f} s"],
        ["test: balanced accuracy", interval(head["balanced_accuracy"])],
        [
            "test: English / Chinese",
            f"{interval(head['balanced_accuracy:en'])} / {interval(head['balanced_accuracy:zh'])}",
        ],
        ["test: ECE, AUC", f"{head['ece']:.3f}, {head['auc']:.3f}"],
        [
            f"test: band [{band['band'][0]:.2f}, {band['band'][1]:.2f})",
            f"{pct(band['abstain'])}% uncertain; {interval(band['balanced_accuracy_decided'])} on the rest",
        ],
        [f"test: {cell(data['default'])}", interval(data["test"]["default"])],
    ]
    return table(["`ragfacts train-head`", "measured"], rows)


# Recall.


def _judged_true(values: dict[str, float]) -> str:
    return " / ".join(pct(values.get(kind)) + "%" for kind in ANSWER_TYPES)


def _recall_rows(data: dict[str, Any]) -> list[list[str]]:
    by_method: dict[str, dict[str, dict[str, Any]]] = {}
    for metrics, extra in zip(data["metrics"], data["extra"], strict=True):
        by_method.setdefault(metrics["method"], {})[metrics["answer_type"]] = {**metrics, **extra}
    rows = []
    for method, types in by_method.items():
        total = {key: sum(t.get(key) or 0 for t in types.values()) for key in ("calls", "prompt_tokens")}
        total |= {key: sum(t.get(key) or 0 for t in types.values()) for key in ("completion_tokens", "model_seconds")}
        cited = sum(t.get("citations_given") or 0 for t in types.values())
        verified = sum(t.get("citations_verified") or 0 for t in types.values())
        rows.append(
            [
                code(method),
                _judged_true({kind: t["true_fraction"] for kind, t in types.items()}),
                count(total["calls"]),
                count(total["prompt_tokens"]),
                count(total["completion_tokens"]),
                f"{total['model_seconds']:.0f}",
                f"{verified} of {cited}" if cited else "-",
            ]
        )
        corrected = {kind: t["true_fraction_corrected_parsing"] for kind, t in types.items()}
        if all(value is not None for value in corrected.values()):
            rows.append([f"{code(method)}, negation-aware parsing (same replies)", _judged_true(corrected), *"-" * 5])
    return rows


_RECALL_HEADER = ["method", "facts judged True: answer / ungrounded / poor", "calls", "prompt tok", "completion tok"]
_RECALL_HEADER += ["model s", "citations found in the answer"]


@results_table("recall.small_model", "recall_small_model.json")
def _recall_small_model(data: dict[str, Any]) -> str:
    return table(_RECALL_HEADER, _recall_rows(data)) + f"\n{data['facts']} facts, generated from the ground truths.\n"


@results_table("recall.local", "recall_local.json")
def _recall_local(data: dict[str, Any]) -> str:
    note = f"\n{data['facts']} facts from {data['spec']['dataset']['rows']} rows.\n"
    return table(_RECALL_HEADER, _recall_rows(data)) + note


@results_table("recall.head", "recall_head.json")
def _recall_head(data: dict[str, Any]) -> str:
    rows = [
        ["the FaaF paper's humans", _judged_true(data["humans"]), "-"],
        [
            f"the trained head on (answer ⊨ fact), threshold {data['threshold']:.2f}",
            _judged_true(data["judged_true"]),
            count(sum(data["prompt_tokens"].values())),
        ],
    ]
    return table(["judge", "facts judged True: answer / ungrounded / poor", "prompt tok"], rows)


@results_table("faaf_chunk_size", "faaf_chunk_size.json")
def _faaf_chunk_size(data: dict[str, Any]) -> str:
    rows = [
        [
            "all (default)" if size == "all" else size,
            count(run["calls"]),
            count(run["prompt_tokens"]),
            count(run["completion_tokens"]),
            f"{run['model_s']:.0f}",
            _judged_true(run["judged_true"]),
        ]
        for size, run in data["sizes"].items()
    ]
    header = ["facts per call", "calls", "prompt tok", "completion tok", "model s"]
    return table([*header, "facts judged True: answer / ungrounded / poor"], rows)


# Peers and synthetic data.


@results_table("peers", "peers.json")
def _peers(data: dict[str, Any]) -> str:
    rows = []
    for comparison in data["comparison"]:
        name = comparison["method"]
        peer, ours = data["cost"][f"{name} (peer)"], data["cost"][f"{name} (ragfacts)"]
        n = comparison["items"]
        rows.append(
            [
                code(name),
                f"{round(comparison['label_agreement'] * comparison['compared'])} of {comparison['compared']}",
                f"{comparison['score_correlation']:.1f}",
                f"{round(comparison['peer_accuracy'] * n)}/{n} / {round(comparison['ours_accuracy'] * n)}/{n}",
                f"{peer['calls']} / {ours['calls']}",
                f"{count(peer['prompt_tokens'])} + {count(peer['completion_tokens'])} / "
                f"{count(ours['prompt_tokens'])} + {count(ours['completion_tokens'])}",
                f"{peer['wall_s']:.0f} / {ours['wall_s']:.0f}",
                f"{comparison['peer_failures']} / {comparison['ours_unscored']}",
            ]
        )
    header = ["peer", "label agreement", "score correlation", "accuracy vs gold: peer / ours", "calls: peer / ours"]
    header += ["prompt + completion tokens: peer / ours", "wall s: peer / ours", "peer failures / our unscored"]
    return table(header, rows) + f"\nItems: {', '.join(code(item) for item in data['items'])}.\n"


@results_table("synth_local", "synth_local.json")
def _synth_local(data: dict[str, Any]) -> str:
    synth = data["synth"]

    def row(label: str, counts: dict[str, int]) -> list[str]:
        keys = ("asked", "kept", "rejected", "not_applied", "failed")
        return [label, *(str(counts[key]) for key in keys)]

    rows = [row(error_type, counts) for error_type, counts in synth["by_type"].items()]
    totals = {key: sum(c[key] for c in synth["by_type"].values()) for key in next(iter(synth["by_type"].values()))}
    rows.append(row("**all types**", totals))
    rows += [row(f"consistent: {kind}", counts) for kind, counts in synth["positives"].items()]
    usage = data["synth_usage"]
    note = (
        f"\n{usage['calls']} calls, {count(usage['prompt_tokens'])} prompt + {count(usage['completion_tokens'])} "
        f"completion tokens, {data['steps']['synth']['wall_s'] / 60:.0f} minutes; {synth['items']} answers written.\n"
    )
    header = ["asked of", "asked", "kept", "rejected by the check", "no usable edit", "failed calls"]
    return table(header, rows) + note
