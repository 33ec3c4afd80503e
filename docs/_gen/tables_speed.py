"""Tables of speed and scale: the local backend, throughput, prefix reuse, the service, Ray, reports, faults."""

from __future__ import annotations

from typing import Any

from _gen.markdown import cell, code, table
from _gen.results import count, pct, results_table

# Speed, scale and the service.


@results_table("local_backend", "local_backend.json")
def _local_backend(data: dict[str, Any]) -> str:
    judgement, scoring = data["structured_judgement"], data["label_scoring"]
    off, on = scoring["without_reuse"], scoring["with_reuse"]
    rows = [
        ["load (first call)", f"{data['load_s']:.1f} s"],
        ["prompt evaluation", f"{data['prompt_tokens_per_s']:.1f} tokens/s"],
        ["generation, grammar-constrained", f"~{data['generation_tokens_per_s']:.0f} tokens/s"],
        [
            f"one structured judgement ({judgement['mean_prompt_tokens']:.0f} prompt + "
            f"{judgement['mean_completion_tokens']:.0f} completion tokens)",
            f"{judgement['mean_latency_s']:.1f} s",
        ],
        ["peak RSS", f"{data['peak_rss_mb'] / 1000:.1f} GB"],
        [
            f"label scoring of {off['calls']} answer sentences, KV prefix cache off → on",
            f"{off['seconds']:.1f} s → {on['seconds']:.1f} s ({data['kv_reuse_speedup']:.1f}× faster; "
            f"{count(off['evaluated_tokens'])} → {count(on['evaluated_tokens'])} tokens evaluated)",
        ],
    ]
    return table(["measure (embedded model, 2 cores)", "value"], rows)


@results_table("one_pass_cost", "one_pass_cost.json")
def _one_pass_cost(data: dict[str, Any]) -> str:
    median, targets, sentences = data["median_over_rows"], data["targets"], data["sentences_scored"]
    rows = [
        ["the default verdict of a row / bare llama.cpp evaluation of its prompt", "verdict_over_bare"],
        [
            f"scoring the answer's {sentences} sentences, after the verdict (the reference's KV state reused) / one "
            "verdict pass",
            "sentences_over_verdict",
        ],
        ["the same without prefix reuse / one verdict pass", "sentences_without_reuse_over_verdict"],
        [
            f"{sentences} facts scored against the answer (the answer's KV state reused) / one verdict pass",
            "facts_over_verdict",
        ],
    ]
    return table(
        ["", "ratio", "target"],
        ([label, f"{median[key]:.2f}", f"≤ {targets[key]:g}" if key in targets else ""] for label, key in rows),
    )


@results_table("performance.commands", "performance.json")
def _commands(data: dict[str, Any]) -> str:
    rows = [
        [
            run["command"],
            str(run["concurrency"]),
            count(run["calls"]),
            f"{run['bound_s']:.1f}",
            f"{run['wall_s']:.1f} ({pct(run['share_of_bound_wall'], 0)}%)",
            f"{run['runner_s']:.1f} ({pct(run['share_of_bound_runner'], 0)}%)",
            f"{run['sdk_wall_s']:.1f} ({pct(run['sdk_share_of_bound'], 0)}%)",
            f"{run['raw_wall_s']:.1f} ({pct(run['raw_share_of_bound'], 0)}%)" if "raw_wall_s" in run else "-",
            f"{run['wall_vs_sdk']:.2f}×",
            f"{run['cpu_ms_per_call']:.2f} / {run['sdk_cpu_ms_per_call']:.2f}",
        ]
        for run in data["commands"]
    ]
    server = data["server"]
    note = (
        f"\n{data['cpu_count']} CPUs, {data['latency_ms']:.0f} ms per call, {data['total_s']:.1f} s in all. Seconds, "
        "with the share of the bound in brackets. The test server alone (the bare `openai` client, "
        f"{count(server['calls'])} calls, {server['concurrency']} in flight): {pct(server['share_of_bound'], 0)}% "
        "of the bound.\n"
    )
    headers = [
        "command",
        "in flight",
        "calls",
        "bound s",
        "command wall s",
        "runner s",
        "bare client wall s",
        "aiohttp alone wall s",
        "wall vs bare client",
        "CPU ms/call (ours / bare)",
    ]
    return table(headers, rows) + note


@results_table("embedded_throughput", "embedded_throughput.json")
def _embedded_throughput(data: dict[str, Any]) -> str:
    rows = [
        [
            code(f"lface4rag:strategy={run['strategy']}"),
            str(run["answers"]),
            f"{run['answers_per_min_wall']:.1f}",
            f"{run['answers_per_min_runner']:.1f}",
            f"{run['calls_per_answer']:.1f}",
            count(run["prompt_tokens_per_answer"]),
            f"{run['model_s_per_answer']:.1f}",
            str(run["failures"]),
        ]
        for run in data["runs"]
    ]
    headers = [
        "verdict",
        "answers",
        "answers/min (process)",
        "answers/min (runner)",
        "calls/answer",
        "prompt tokens/answer",
        "model s/answer",
        "failures",
    ]
    note = f"\n`{data['command']}`: {data['data']}; {data['cpu_count']} CPUs, {data['total_s']:.0f} s in all.\n"
    return table(headers, rows) + note


@results_table("performance.costs", "performance.json")
def _performance_costs(data: dict[str, Any]) -> str:
    overhead, cached = data["overhead"], data["cached"]
    median = overhead["median_ms"]
    rows = [
        [
            f"local cost per call at zero latency (median of {overhead['calls_each']})",
            f"ragfacts {median['ragfacts']:.2f} ms, bare openai client {median['openai']:.2f} ms, "
            f"raw httpx {median['httpx']:.2f} ms",
        ],
        [
            f"{count(cached['answers'])} answers: first run",
            f"{cached['first_run']['seconds']:.1f} s ({count(cached['first_run']['calls'])} calls)",
        ],
        [
            f"fully cached re-run{_of(cached['cached_rerun'])}",
            f"{cached['cached_rerun']['seconds']:.2f} s ({cached['cached_rerun']['calls']} calls)",
        ],
        [
            f"resuming the finished run{_of(cached['resume_finished'])}",
            f"{cached['resume_finished']['seconds']:.2f} s ({cached['resume_finished']['calls']} calls)",
        ],
        [f"`ragfacts --help` (median of {data['startup']['runs']})", f"{data['startup']['median_s']:.2f} s"],
    ]
    return table(["measure", "value"], rows)


def _of(runs: dict[str, Any]) -> str:
    """The label's " (median of N)", where the figure is the median of several runs."""
    return f" (median of {len(runs['each'])})" if "each" in runs else ""


@results_table("performance.memory", "performance.json")
def _performance_memory(data: dict[str, Any]) -> str:
    rows = [
        [count(run["answers"]), f"{run['peak_rss_mb']:.0f}", f"{run['output_mb']:.1f}", f"{run['seconds']:.1f}"]
        for run in data["memory"]
    ]
    return table(["answers", "peak RSS MB", "output MB", "seconds"], rows)


@results_table("performance.redaction", "redaction_speed.json")
def _performance_redaction(data: dict[str, Any]) -> str:
    rows = [
        [
            cell(row["key"]),
            row["runs"],
            f"{row['megabytes']:.1f}",
            f"{row['automaton_s']:.3f} s ({row['automaton_mb_per_s']} MB/s)",
            f"{row['regex_s']:.3f} s ({row['regex_mb_per_s']} MB/s)",
            f"{row['speed_up']:.1f}×",
        ]
        for row in data["rows"]
    ]
    return table(
        ["registered key", "8-character runs", "MB of lines", "one-pass scan", "regular expression", "faster"], rows
    )


@results_table("performance.http_stack", "http_stack.json")
def _performance_http_stack(data: dict[str, Any]) -> str:
    rows = [
        [
            row["client"],
            code(row["stack"]),
            row["concurrency"],
            f"{row['wall_s']:.2f} s",
            f"{100 * row['share_of_bound']:.0f}%",
            f"{row['cpu_ms_per_call']:.2f} ms",
        ]
        for row in data["rows"]
    ]
    return table(["client", "sent on", "in flight", "wall time", "share of the bound", "CPU per call"], rows)


@results_table("performance.methods", "performance.json")
def _performance_methods(data: dict[str, Any]) -> str:
    rows = [
        [
            code(run["method"]),
            f"{run['calls_per_answer']:.1f}",
            count(run["prompt_tokens_per_answer"]),
            count(run["completion_tokens_per_answer"]),
        ]
        for run in data["methods"]
    ]
    return table(["method", "calls/answer", "prompt tokens", "completion tokens"], rows)


@results_table("performance.peers", "peers_speed.json")
def _performance_peers(data: dict[str, Any]) -> str:
    rows = [
        [
            cell(run["system"]),
            f"{run['calls_per_answer']:g}",
            f"{count(run['prompt_tokens_per_answer'])} + {count(run['completion_tokens_per_answer'])}",
            str(run["peak_in_flight"]),
            f"{run['unscored']}/{run['answers']}",
            f"{run['bound_s']:.1f}",
            f"{run['wall_s']:.1f} ({pct(run['share_of_bound_wall'], 0)}%)",
            f"{run['eval_s']:.1f} ({pct(run['share_of_bound_eval'], 0)}%)",
            f"{run['cpu_s']:.1f}",
        ]
        for run in data["systems"]
    ]
    versions = ", ".join(f"{name} {version}" for name, version in data["versions"].items())
    note = (
        f"\n{data['answers']} answers, {data['concurrency']} in flight, {data['latency_ms']:.0f} ms per call, "
        f"{data['cpus']} CPUs, medians of {data['repeats']} runs; {versions}. Seconds, with the share of the bound "
        "in brackets.\n"
    )
    headers = [
        "system",
        "calls / answer",
        "tokens / answer (prompt + completion)",
        "most calls in flight",
        "answers without a score",
        "bound s",
        "process wall s",
        "evaluation s",
        "CPU s",
    ]
    return table(headers, rows) + note


@results_table("prefix_reuse", "prefix_reuse.json")
def _prefix_reuse(data: dict[str, Any]) -> str:
    timed = data["timed"]
    rows = [
        [
            "on" if run["reuse_prefix"] else "off",
            str(run["calls"]),
            f"{count(run['prompt_tokens'])} / {count(run['evaluated_prompt_tokens'])}",
            f"{run['prompt_eval_s']:.0f}",
            f"{count(run['completion_tokens'])} in {run['generation_eval_s']:.0f} s",
            f"{run['wall_s']:.0f}",
            str(run["failures"]),
        ]
        for run in timed["runs"]
    ]
    compared = timed["comparison"]
    same = "yes" if compared["same_segments_and_verdicts_in_every_run"] else "no"
    note = (
        f"\n`{cell(data['item'])}`, `{cell(data['method'])}`, the embedded model in-process. Prompt evaluation "
        f"{compared['prompt_eval_speedup']:.2f}× faster with reuse, the whole answer {compared['total_speedup']:.2f}× "
        f"(same segments and verdicts in every run: {same}).\n"
    )
    headers = [
        "KV prefix reuse",
        "calls",
        "prompt tokens / evaluated",
        "prompt evaluation s",
        "generated tokens",
        "wall s",
        "failed calls",
    ]
    return table(headers, rows) + note


@results_table("server_vs_inprocess", "server_vs_inprocess.json")
def _server_vs_inprocess(data: dict[str, Any]) -> str:
    rows = [
        [
            name,
            str(run["answers"]),
            f"{run['wall_s']:.0f}",
            f"{60 * run['answers_per_s']:.2f}",
            f"{60 * run['answers_per_s_without_load']:.2f}" if "answers_per_s_without_load" in run else "-",
            str(run["calls"]),
            f"{count(run['prompt_tokens'])} + {count(run['completion_tokens'])}",
            str(run["failures"]),
        ]
        for name, run in data["runs"].items()
    ]
    agreement = "; ".join(f"{pair}: {same}" for pair, same in data["label_agreement"].items())
    note = (
        f"\n`{cell(data['method'])}`, {data['threads']} threads, context {count(data['n_ctx'])}. The server took "
        f"{data['server_startup_s']:.1f} s to start (apart from its runs); in-process, loading the weights takes "
        f"{data['in_process_load_s']:.1f} s inside each run. Same labels: {cell(agreement)}.\n"
    )
    headers = [
        "run (cN: --concurrency N)",
        "answers",
        "wall s",
        "answers/min",
        "answers/min without loading",
        "calls",
        "tokens (prompt + completion)",
        "failed calls",
    ]
    return table(headers, rows) + note


@results_table("prefix_cacheable", "prefix_cacheable.json")
def _prefix_cacheable(data: dict[str, Any]) -> str:
    shares = data["cacheable_share"]
    columns = [*shares["dataset_segments_are_sentences"].items(), ("answer", shares["timed_answer_sentences"])]
    layouts = {
        "schema_last": "schema last (what ragfacts sends with a schema in the prompt)",
        "schema_first": "schema first (OpenAI structured outputs)",
        "what_if_segment_last_by_stage": "what-if: segment last, calls grouped by stage (not sent today)",
    }
    header = ["layout"]
    for name, measured in columns:
        if name == "answer":
            header.append(f"`{cell(data['item'])}` ({measured['schema_last']['calls']} calls): local / provider")
        else:
            header.append(f"dev, {name} ({measured['answers']} answers): local / provider")
    rows = []
    for key, label in layouts.items():
        values = []
        for _, measured in columns:
            layout = measured[key]
            values.append(f"{pct(layout['local_share'])}% / {pct(layout['provider_share'])}%")
        rows.append([label, *values])
    return table(header, rows)


@results_table("service_load", "service_load.json")
def _service_load(data: dict[str, Any]) -> str:
    rows = []
    for level in data["levels"]:
        latency = level["latency_ms"]
        rows.append(
            [
                str(level["concurrency"]),
                count(level["requests"]),
                f"{level['answered_per_s']:.1f}",
                *(f"{latency[p]:.0f}" for p in ("p50", "p90", "p99")),
                count(level["statuses"].get("200", 0)),
                count(level["refused_429"]),
                str(level["lost"]),
                str(level["mixed_up"]),
            ]
        )
    totals = data["totals"]
    header = ["clients", "requests", "answered/s", "p50 ms", "p90 ms", "p99 ms", "200", "429", "lost", "mixed up"]
    note = (
        f"\n{count(totals['sent'])} requests sent; "
        f"`/metrics` counted {count(totals['check_requests_per_server_metrics'])}; "
        f"{totals['lost']} lost, {totals['mixed_up']} mixed up, {totals['server_warnings_and_errors_logged']} warnings "
        "or errors logged.\n"
    )
    return table(header, rows) + note


@results_table("ray_start", "ray_start.json")
def _ray_start(data: dict[str, Any]) -> str:
    summary = data["summary"]
    steps = [
        ("import_s", "`import ray`"),
        ("init_s", "`ray.init()`: a local Ray started"),
        ("first_task_s", "first task"),
        ("workers_ready_s", f"{data['workers']} worker actors ready (model client and cache each)"),
        ("first_result_s", "first result"),
    ]
    rows = [[label, f"{summary[key]['median']:.2f}"] for key, label in steps]
    rows.append(["**start to first result**", f"**{data['start_to_first_result_s']['median']:.1f}**"])
    rows.append(["shutdown", f"{summary['shutdown_s']['median']:.2f}"])
    rate = (
        f"\nResults per second with an endpoint that answers at once ({data['results_per_run']} results): "
        f"{summary['ray_results_per_s']['median']:.0f} on Ray with {data['workers']} workers, "
        f"{summary['local_results_per_s']['median']:.0f} in one process ({data['machine']['cpus']} cores).\n"
    )
    header = f"step (median of {len(data['runs'])}, {data['workers']} workers, Ray {data['machine']['ray']})"
    return table([header, "seconds"], rows) + rate


@results_table("report_scale", "report_scale.json")
def _report_scale(data: dict[str, Any]) -> str:
    browser = data["browser_ms"]
    row = [
        count(data["answers"]),
        f"{data['html_bytes'] / 1e6:.2f} MB",
        f"{data['render_s']:.1f} s",
        f"{browser['interactive'] / 1000:.2f} s",
        f"{browser['filter_ms'] / 1000:.2f} s ({cell(browser['after_filter'])})",
    ]
    header = ["answers", "HTML file", "written in", "headless Chromium: page interactive", "a filter over all rows"]
    return table(header, [row])


@results_table("runner_faults", "runner_faults.json")
def _runner_faults(data: dict[str, Any]) -> str:
    first, second = data["first_run"], data["second_run"]
    rows = [
        [
            "first",
            f"{first['rows_out']} of {data['rows']}",
            f"{first['results']} written, {first['incomplete']} with failed calls",
            count(first["requests"]),
            f"{first['wall_s']:.1f}",
        ],
        [
            "second (resume)",
            f"{second['rows_out']} of {data['rows']}",
            f"{second['reused']} reused, {second['ran']} redone, {second['incomplete']} with failed calls",
            count(second["requests"]),
            f"{second['wall_s']:.1f}",
        ],
    ]
    note = (
        f"\nFaults injected into {data['faulty_rows']} rows; "
        f"{data['lines_in_results_file']} complete lines at the end.\n"
    )
    return table(["run", "rows", "results", "requests", "seconds"], rows) + note
