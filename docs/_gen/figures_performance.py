"""Figures typed into docs/performance.md, each tied to the results file it is read from (what a snippet holds:
`_gen.figures`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from _gen.figures import Figure, wall_minutes

ALIASES = {
    # embedded_throughput.json
    "auto": "runs[strategy=auto]",
    "holistic_score": "runs[strategy=holistic_score]",
    # performance.json
    "check32": "commands[command=check][concurrency=32]",
    "recall32": "commands[command=recall][concurrency=32]",
    "evaluate32": "commands[command=evaluate][concurrency=32]",
    "check64": "commands[command=check][concurrency=64]",
    "recall64": "commands[command=recall][concurrency=64]",
    "evaluate64": "commands[command=evaluate][concurrency=64]",
    # peers_speed.json
    "ragas": "systems[system=RAGAS faithfulness]",
    "deepeval": "systems[system=DeepEval faithfulness]",
    "paper_mode": "systems[system=ragfacts lface4rag (default: paper)]",
    "batched": "systems[system=ragfacts lface4rag batched]",
    "joint": "systems[system=ragfacts lface4rag batched, joint stages]",
    "our_ragas": "systems[system=ragfacts ragas]",
    "holistic": "systems[system=ragfacts holistic]",
    # prefix_reuse.json
    "reused": "timed.runs[reuse_prefix=True]",
}


def _performance(data: dict[str, Any], load: Callable[[str], Any]) -> dict[str, Any]:
    def span(values: list[float], digits: int = 1, scale: int = 1) -> str:
        return f"{scale * min(values):.{digits}f}–{scale * max(values):.{digits}f}"

    def of(command: str, key: str) -> list[float]:
        return [run[key] for run in data["commands"] if run["command"] == command]

    def bare(level: int) -> str:
        return span([run["sdk_share_of_bound"] for run in data["commands"] if run["concurrency"] == level], 0, 100)

    above_floor = [round(run["wall_s"] - run["raw_wall_s"], 2) for run in data["commands"]]
    outside_runner = [run["wall_s"] - run["runner_s"] for run in data["commands"]]  # start-up and the end
    memory = {run["answers"]: run for run in data["memory"]}
    check64 = next(r for r in data["commands"] if r["command"] == "check" and r["concurrency"] == 64)
    return {
        "cpu_evaluate": span(of("evaluate", "cpu_ms_per_call")),
        "cpu_check": span(of("check", "cpu_ms_per_call")),
        "cpu_recall": span(of("recall", "cpu_ms_per_call")),
        "cpu_bare_check_evaluate": span(of("check", "sdk_cpu_ms_per_call") + of("evaluate", "sdk_cpu_ms_per_call")),
        "cpu_bare_recall": span(of("recall", "sdk_cpu_ms_per_call")),
        "bare32": bare(32),
        "bare64": bare(64),
        "above_floor": span(above_floor),
        "outside_runner": span(outside_runner, 2),
        "check64_range": "{:.2f}× to {:.2f}×".format(*check64["wall_vs_sdk_range"]),
        "cached_range": span(data["cached"]["cached_rerun"]["each"], 2),
        "kb_per_answer": round(1000 * (memory[5000]["peak_rss_mb"] - memory[100]["peak_rss_mb"]) / (5000 - 100)),
        "minutes": round(data["total_s"] / 60),
    }


def _peers_speed(data: dict[str, Any], load: Callable[[str], Any]) -> dict[str, Any]:
    ours = [s for s in data["systems"] if s["method"]]
    calls = [round(s["calls_per_answer"] * s["answers"]) for s in ours]
    cpu = [s["cpu_s"] for s in ours]
    by = {s["system"]: s for s in data["systems"]}
    return {
        "our_cpu": f"{min(cpu):.1f}–{max(cpu):.1f}",
        "our_calls": f"{min(calls)} to {max(calls)}",
        "deepeval_calls": round(
            by["DeepEval faithfulness"]["calls_per_answer"] * by["DeepEval faithfulness"]["answers"]
        ),
        "ragas_calls": round(by["RAGAS faithfulness"]["calls_per_answer"] * by["RAGAS faithfulness"]["answers"]),
        "minutes": wall_minutes(data),
    }


def _one_pass_cost(data: dict[str, Any], load: Callable[[str], Any]) -> dict[str, Any]:
    tokens = [row["prompt_tokens"] for row in data["per_row"].values()]
    return {"rows": len(tokens), "tokens": f"{min(tokens)} to {max(tokens)}"}


def _prefix_cacheable(data: dict[str, Any], load: Callable[[str], Any]) -> dict[str, Any]:
    calls = data["cacheable_share"]["timed_answer_sentences"]["schema_last"]["calls"]
    return {"timed_sentences": (calls - 1) // 2}  # paper mode: 1 decomposition, then a fact and a logic call each


def _prefix_reuse(data: dict[str, Any], load: Callable[[str], Any]) -> dict[str, Any]:
    tokens = data["timed"]["comparison"]["evaluated_prompt_tokens"]
    reused = next(run for run in data["timed"]["runs"] if run["reuse_prefix"])
    return {
        "skipped": 1 - tokens["with_reuse"] / tokens["without"],
        "minutes": round(reused["wall_s"] / 60),
        "run_minutes": wall_minutes(data),  # the whole script's
    }


def _joint_stages(data: dict[str, Any], load: Callable[[str], Any]) -> dict[str, Any]:
    batched, joint = data["batched"]["precision"][0], data["joint"]["precision"][0]
    return {
        "batched_calls": batched["usage"]["calls"] / batched["answers"],
        "batched_prompt": batched["usage"]["prompt_tokens"] / batched["answers"],
        "batched_completion": batched["usage"]["completion_tokens"] / batched["answers"],
        "batched_model_s": batched["usage"]["model_s"] / batched["answers"],
        "batched_right": round(batched["accuracy"]["value"] * batched["answers"]),
        "joint_right": round(joint["accuracy"]["value"] * joint["answers"]),
        "joint_calls": joint["usage"]["calls"],
        "joint_calls_per_answer": joint["usage"]["completions"] / joint["answers"],
        # the joint run's decompositions came from the cache: its row adds them back at their cost with stages apart
        **{
            f"joint_{name}": (joint["usage"][key] + data["ledgers"]["batched"]["decompose"][key]) / joint["answers"]
            for name, key in (("prompt", "prompt_tokens"), ("completion", "completion_tokens"), ("model_s", "model_s"))
        },
        # the stages apart: their calls without the decompositions, one per answer
        "batched_stage_calls": batched["usage"]["calls"] - batched["answers"],
    }


DERIVED: dict[str, Callable[[Any, Callable[[str], Any]], dict[str, Any]]] = {
    "performance.json": _performance,
    "peers_speed.json": _peers_speed,
    "one_pass_cost.json": _one_pass_cost,
    "prefix_cacheable.json": _prefix_cacheable,
    "prefix_reuse.json": _prefix_reuse,
    "joint_stages_embedded.json": _joint_stages,
}

PERFORMANCE = "docs/performance.md"

FIGURES: list[Figure] = [
    Figure(
        PERFORMANCE,
        "peers_speed.json",
        "`python benchmarks/peers_speed.py` (about {derived.minutes} minutes;",
    ),
    Figure(
        PERFORMANCE,
        "peers_speed.json",
        "on the same {answers} answers, against the same server, with {concurrency} as each system's concurrency "
        "setting.",
    ),
    Figure(
        PERFORMANCE,
        "peers_speed.json",
        "(RAGAS {$ragas.chain}, DeepEval {$deepeval.chain}, ours {$paper_mode.chain}, holistic {$holistic.chain}).",
    ),
    Figure(PERFORMANCE, "bench_embedded_sample6.json", "[the {$paper.answers}-item sample]"),
    Figure(PERFORMANCE, "bench_embedded_sample6.json", "| right (of {$paper.answers}) |"),
    # docs/performance.md
    Figure(
        PERFORMANCE,
        "performance.json",
        "`python benchmarks/performance.py` (about {derived.minutes} minutes on {cpu_count} cores), against "
        "`benchmarks/latency_server.py`, an OpenAI-compatible server on 127.0.0.1 that answers every call after "
        "{latency_ms:.0f} ms. Each command runs as a user runs it, in a fresh process, on {$check32.answers} answers",
    ),
    Figure(
        PERFORMANCE,
        "performance.json",
        "Then aiohttp alone replays them too: the floor. Medians of {$check32.repeats}.",
    ),
    Figure(
        PERFORMANCE,
        "performance.json",
        "`check`, `recall` and `evaluate` take {$check32.wall_vs_sdk:.2f}×, {$recall32.wall_vs_sdk:.2f}× and "
        "{$evaluate32.wall_vs_sdk:.2f}× the bare `openai` client's wall time for the same requests at 32 in flight; "
        "{$check64.wall_vs_sdk:.2f}×, {$recall64.wall_vs_sdk:.2f}× and {$evaluate64.wall_vs_sdk:.2f}× at 64.",
    ),
    Figure(PERFORMANCE, "performance.json", "(`check` at 64: {derived.check64_range})"),
    Figure(
        PERFORMANCE,
        "performance.json",
        "As the command's wall time: {$check32.share_of_bound_wall!p:.0f}%, {$recall32.share_of_bound_wall!p:.0f}% "
        "and {$evaluate32.share_of_bound_wall!p:.0f}% of the bound for `check`, `recall` and `evaluate` at 32 in "
        "flight, {$check64.share_of_bound_wall!p:.0f}%, {$recall64.share_of_bound_wall!p:.0f}% and "
        "{$evaluate64.share_of_bound_wall!p:.0f}% at 64; as the runner's time: "
        "{$check32.share_of_bound_runner!p:.0f}%, {$recall32.share_of_bound_runner!p:.0f}% and "
        "{$evaluate32.share_of_bound_runner!p:.0f}% at 32, {$check64.share_of_bound_runner!p:.0f}%, "
        "{$recall64.share_of_bound_runner!p:.0f}% and {$evaluate64.share_of_bound_runner!p:.0f}% at 64. The bare "
        "`openai` client reaches {derived.bare32}% at 32 and {derived.bare64}% at 64.",
    ),
    Figure(
        PERFORMANCE,
        "performance.json",
        "reaches {$check32.raw_share_of_bound!p:.0f}%, {$recall32.raw_share_of_bound!p:.0f}% and "
        "{$evaluate32.raw_share_of_bound!p:.0f}% at 32, {$check64.raw_share_of_bound!p:.0f}%, "
        "{$recall64.raw_share_of_bound!p:.0f}% and {$evaluate64.raw_share_of_bound!p:.0f}% at 64",
    ),
    Figure(PERFORMANCE, "performance.json", "their wall time is within {derived.above_floor} s of it."),
    Figure(
        PERFORMANCE,
        "performance.json",
        "separates a command's wall time from its runner's, {derived.outside_runner} s here, is its start-up",
    ),
    Figure(
        PERFORMANCE,
        "performance.json",
        "{derived.cpu_evaluate} ms for `evaluate`, {derived.cpu_check} ms for `check`, against the bare client's "
        "{derived.cpu_bare_check_evaluate} ms; {derived.cpu_recall} ms for `recall`, against "
        "{derived.cpu_bare_recall} ms: with 2 calls an answer, its {$recall32.calls} calls",
    ),
    Figure(
        PERFORMANCE,
        "performance.json",
        "costs {overhead.median_ms.ragfacts:.2f} ms, against {overhead.median_ms.openai:.2f} ms for the bare client's "
        "`chat.completions.create` on the same request and {overhead.median_ms.httpx:.2f} ms for a raw httpx post.",
    ),
    Figure(
        PERFORMANCE,
        "performance.json",
        "**A fully cached re-run** of {cached.answers:,} answers makes {cached.cached_rerun.calls} calls in "
        "{cached.cached_rerun.seconds:.2f} s ({derived.cached_range} s over {cached.cached_rerun.each!n} runs).",
    ),
    Figure(
        PERFORMANCE,
        "performance.json",
        "Resuming the finished run takes {cached.resume_finished.seconds:.2f} s.",
    ),
    Figure(PERFORMANCE, "performance.json", "the runner serving {cached.first_run.calls:,} cached calls"),
    Figure(
        PERFORMANCE,
        "performance.json",
        "{memory[answers=100].peak_rss_mb:.0f} MB peak for {memory[answers=100].answers} answers, "
        "{memory[answers=1000].peak_rss_mb:.0f} MB for {memory[answers=1000].answers:,} and "
        "{memory[answers=5000].peak_rss_mb:.0f} MB for {memory[answers=5000].answers:,}",
    ),
    Figure(PERFORMANCE, "performance.json", "about {derived.kb_per_answer} KB an answer"),
    Figure(
        PERFORMANCE,
        "performance.json",
        "`ragfacts --help` takes {startup.median_s:.2f} s here (median of {startup.runs}; {startup.best_s:.2f} s at "
        "best).",
    ),
    Figure(PERFORMANCE, "redaction_speed.json", "on the same {lines:,} results-like lines"),
    Figure(
        PERFORMANCE,
        "redaction_speed.json",
        "`python benchmarks/redaction_speed.py` ({provenance.wall_s:.1f} s on {provenance.machine.cores} cores) runs",
    ),
    *(
        Figure(page, "install_time.json", "({minutes:.1f} minutes on {provenance.machine.cores} cores, measured)")
        for page in ("README.md", "docs/index.md")
    ),
    Figure(
        "docs/install.md",
        "install_time.json",
        "(measured: {minutes:.1f} minutes on {provenance.machine.cores} cores with no GPU, `python\n"
        "benchmarks/install_time.py`)",
    ),
    Figure(
        "docs/install.md",
        "model_assembly.json",
        "a {gb:.1f} GB file, about {assembly_s.first:.0f} seconds on {provenance.machine.cores} cores;",
    ),
    Figure(
        PERFORMANCE,
        "redaction_speed.json",
        "each of the key's {rows[key=project key (56 characters)].runs} eight-character runs",
    ),
    Figure(
        PERFORMANCE,
        "peers_speed.json",
        "{$paper_mode.share_of_bound_wall!p:.0f}% for L-Face4RAG's paper mode, {$batched.share_of_bound_wall!p:.0f}% "
        "batched, {$joint.share_of_bound_wall!p:.0f}% batched with joint stages and for our `ragas` baseline, "
        "{$holistic.share_of_bound_wall!p:.0f}% for holistic, against {$ragas.share_of_bound_wall!p:.0f}% for RAGAS "
        "and {$deepeval.share_of_bound_wall!p:.0f}% for DeepEval.",
    ),
    Figure(PERFORMANCE, "peers_speed.json", "and for our `ragas` baseline, {$holistic.share_of_bound_wall!p:.0f}%"),
    Figure(
        PERFORMANCE,
        "peers_speed.json",
        "paper mode {$paper_mode.share_of_bound_eval!p:.0f}%, batched {$batched.share_of_bound_eval!p:.0f}%, joint "
        "stages and our `ragas` {$joint.share_of_bound_eval!p:.0f}%, holistic {$holistic.share_of_bound_eval!p:.0f}%; "
        "RAGAS {$ragas.share_of_bound_eval!p:.0f}%, DeepEval {$deepeval.share_of_bound_eval!p:.0f}%.",
    ),
    Figure(PERFORMANCE, "peers_speed.json", "our `ragas` {$our_ragas.share_of_bound_eval!p:.0f}%"),
    Figure(
        PERFORMANCE,
        "peers_speed.json",
        "RAGAS makes {$ragas.calls_per_answer:.0f} calls an answer with {$ragas.prompt_tokens_per_answer:,} prompt "
        "tokens (its prompts carry few-shot examples); our `ragas` baseline makes the same "
        "{$our_ragas.calls_per_answer:.0f} calls with {$our_ragas.prompt_tokens_per_answer:,}. Batched L-Face4RAG "
        "makes {$batched.calls_per_answer:.0f}",
    ),
    Figure(
        PERFORMANCE,
        "peers_speed.json",
        "{$joint.calls_per_answer:.0f} with joint stages (the decomposition, then one call for both stages of all the "
        "segments: {$joint.prompt_tokens_per_answer:,} prompt tokens)",
    ),
    Figure(
        PERFORMANCE,
        "peers_speed.json",
        "DeepEval makes {$deepeval.calls_per_answer:.0f} (truths, claims, verdicts, reason)",
    ),
    Figure(
        PERFORMANCE,
        "peers_speed.json",
        "it held up to {$deepeval.peak_in_flight} calls at once for a setting of {concurrency}.",
    ),
    Figure(
        PERFORMANCE,
        "peers_speed.json",
        "DeepEval spent {$deepeval.cpu_s:.1f} s of CPU on {derived.deepeval_calls} calls, RAGAS {$ragas.cpu_s:.1f} s "
        "on {derived.ragas_calls}; ragfacts {derived.our_cpu} s per run ({derived.our_calls} calls)",
    ),
    Figure(
        PERFORMANCE,
        "peers_speed.json",
        "({$joint.prompt_tokens_per_answer:,} prompt tokens an answer against {$batched.prompt_tokens_per_answer:,} "
        "against the scripted server,",
    ),
    Figure(
        PERFORMANCE,
        "bench_embedded_sample6.json",
        "| paper (its own run) | {derived.paper_calls:.1f} | {derived.paper_prompt:,.0f} + "
        "{derived.paper_completion:,.0f} | {derived.paper_model_s:.0f} | {derived.paper_right} | {$paper.unscored} | "
        "{$paper.failed_calls} |",
    ),
    Figure(
        PERFORMANCE,
        "joint_stages_embedded.json",
        "| batched, stages apart | {derived.batched_calls:.1f} | {derived.batched_prompt:,.0f} + "
        "{derived.batched_completion:,.0f} | {derived.batched_model_s:.0f} | {derived.batched_right} | "
        "{batched.precision[0].unscored} | {batched.precision[0].failed_calls} |",
    ),
    Figure(
        PERFORMANCE,
        "joint_stages_embedded.json",
        "| batched, joint stages | {derived.joint_calls_per_answer:.1f} | {derived.joint_prompt:,.0f} + "
        "{derived.joint_completion:,.0f} | {derived.joint_model_s:.0f} |",
    ),
    Figure(
        PERFORMANCE,
        "joint_stages_embedded.json",
        "| {derived.joint_right} | {joint.precision[0].unscored} | {joint.precision[0].failed_calls} |",
    ),
    Figure(
        PERFORMANCE,
        "joint_stages_embedded.json",
        "{joint.precision[0].failed_calls} of its {derived.joint_calls} calls ran past the 120 s limit (against "
        "{batched.precision[0].failed_calls} of {derived.batched_stage_calls} with the stages apart)",
    ),
    Figure(
        PERFORMANCE,
        "embedded_throughput.json",
        "judges {$auto.answers_per_min_wall:.1f} answers a minute, loading the weights included.",
    ),
    Figure(
        PERFORMANCE,
        "embedded_throughput.json",
        "{$auto.calls_per_answer:.1f} calls and {$auto.model_s_per_answer:.1f} model-seconds per answer here.",
    ),
    Figure(
        PERFORMANCE,
        "embedded_throughput.json",
        '**`holistic_score`**, the model\'s own probability of "Yes", judges '
        "{$holistic_score.answers_per_min_wall:.1f} a minute: one forward pass an answer.",
    ),
    Figure(
        PERFORMANCE,
        "one_pass_cost.json",
        "`{provenance.command}` times",
    ),
    Figure(
        PERFORMANCE,
        "one_pass_cost.json",
        "(medians over {derived.rows} English answers of six sentences",
    ),
    Figure(
        PERFORMANCE,
        "one_pass_cost.json",
        '{derived.tokens} prompt tokens; {provenance.machine.cores} cores, "{provenance.machine.cpu}";',
    ),
    Figure(
        PERFORMANCE,
        "embedded_default.json",
        "On {rows} rows of the test split the default took {seconds_per_row.median:.1f} s a row (median) with "
        "{generated_tokens} generated tokens",
    ),
    Figure(
        PERFORMANCE,
        "prefix_cacheable.json",
        "over the dev split's answers (segments stood in for by sentences; Qwen2.5 tokens) and for one "
        "{derived.timed_sentences}-sentence answer",
    ),
    Figure(
        PERFORMANCE,
        "prefix_cacheable.json",
        "(from {cacheable_share.rules.provider_min_tokens:,} tokens, in steps of "
        "{cacheable_share.rules.provider_step_tokens})",
    ),
    Figure(
        PERFORMANCE,
        "prefix_reuse.json",
        "(`python benchmarks/prefix_reuse.py --no-replay`, about {derived.run_minutes} minutes on "
        "{provenance.machine.cores} cores)",
    ),
    Figure(
        PERFORMANCE,
        "prefix_reuse.json",
        "one {$reused.by_stage.fact_consistency.calls}-segment answer judged in paper mode "
        "({$reused.by_stage.decompose.calls} decomposition, then a fact and a logic call per segment)",
    ),
    Figure(
        PERFORMANCE,
        "prefix_reuse.json",
        "Reuse skips {derived.skipped!p:.0f}% of the prompt tokens, which makes prompt evaluation "
        "{timed.comparison.prompt_eval_speedup:.2f}× faster and the whole answer "
        "{timed.comparison.total_speedup:.2f}× faster",
    ),
    Figure(
        PERFORMANCE,
        "prefix_reuse.json",
        "{derived.minutes} minutes for this answer with reuse ({$reused.prompt_eval_s:.0f} s reading prompts, "
        "{$reused.generation_eval_s:.0f} s of forward passes generating the stages' reasoning, "
        "{$reused.sample_s:.0f} s in the grammar-constrained sampler)",
    ),
]
