"""Peers side by side on speed and cost: RAGAS and DeepEval faithfulness beside ragfacts' precision methods.

Every system judges the same answers (`performance.rows`: distinct answers of two sentences, a four-sentence
reference) against the same scripted server (`latency_server.py`: every call answered after --latency-ms, in the
format the caller asks for: a JSON-schema response format as ragfacts and DeepEval's structured outputs send, or
the JSON schema RAGAS writes into its prompt, so no peer fails for a parsing reason), at the same setting of
concurrency, each run in a fresh process as a user runs it, with each system's defaults otherwise:
  - RAGAS 0.4 `Faithfulness` through `ragas.evaluate` (LangChain's ChatOpenAI), `RunConfig(max_workers=C)`;
  - DeepEval `FaithfulnessMetric` through `deepeval.evaluate` (its `GPTModel` with the server's base URL),
    `AsyncConfig(max_concurrent=C)`, reasons on (its default);
  - ragfacts `check` with `--concurrency C --no-cache` and the method named.
Reported per system (medians of --repeats runs; servers fresh per run): calls and prompt and completion tokens
per answer, counted by the server from the requests it got (4 characters a token, the same rule for everyone);
the most requests the server held at once (a peer's setting bounds test cases, not calls); answers without a
score; the process's wall time, the evaluation's own time (imports and start-up excluded) and the process's CPU
time; and the share of the bound, bound = max(calls × latency / C, chain × latency), chain = the longest run of
dependent calls per answer (RAGAS: statements, then verdicts; DeepEval: truths and claims, then verdicts, then the
reason; ragfacts' paper and batched modes (stages apart or joint) and its `ragas`: decomposition, then the checks;
holistic: one call).

Needs RAGAS and DeepEval beside ragfacts, e.g. the adapters' venv:
    python -m venv /tmp/peers-speed && /tmp/peers-speed/bin/pip install -e ".[ragas,deepeval]" uvicorn
    /tmp/peers-speed/bin/python benchmarks/peers_speed.py          # 50 answers, 16 in flight, 3 repeats, ~4 min
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from statistics import median
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).parent))
# The server's module imports the standard library only: a peer's process imports no ragfacts.
from latency_server import start

KEY = "sk-benchmark"
RUN_TIMEOUT_S = 900
PEER_MODEL = "gpt-4o-mini"  # a name DeepEval knows to support structured outputs; the server ignores it
# name: (how it runs, method, longest chain of dependent calls per answer)
SYSTEMS: dict[str, tuple[str, str, int]] = {
    "RAGAS faithfulness": ("ragas", "", 2),
    "DeepEval faithfulness": ("deepeval", "", 3),
    "ragfacts lface4rag (default: paper)": ("ragfacts", "lface4rag", 2),
    "ragfacts lface4rag batched": ("ragfacts", "lface4rag:batched=true", 2),
    "ragfacts lface4rag batched, joint stages": ("ragfacts", "lface4rag:batched=true,joint_stages=true", 2),
    "ragfacts ragas": ("ragfacts", "ragas", 2),
    "ragfacts holistic": ("ragfacts", "holistic", 1),
}


def child_ragas(url: str, data: list[dict[str, Any]], concurrency: int) -> Callable[[], list[float | None]]:
    from langchain_openai import ChatOpenAI
    from ragas import EvaluationDataset, evaluate
    from ragas.llms import LangchainLLMWrapper
    from ragas.metrics import Faithfulness
    from ragas.run_config import RunConfig

    llm = LangchainLLMWrapper(ChatOpenAI(model=PEER_MODEL, base_url=url, api_key=KEY, temperature=0))
    samples = [
        {"user_input": r["question"], "response": r["answer"], "retrieved_contexts": [r["reference"]]} for r in data
    ]

    def run() -> list[float | None]:
        result = evaluate(
            EvaluationDataset.from_list(samples),
            metrics=[Faithfulness()],
            llm=llm,
            run_config=RunConfig(max_workers=concurrency),
            show_progress=False,
        )
        return [None if score != score else float(score) for score in result.to_pandas()["faithfulness"]]

    return run


def child_deepeval(url: str, data: list[dict[str, Any]], concurrency: int) -> Callable[[], list[float | None]]:
    from deepeval import evaluate
    from deepeval.evaluate.configs import AsyncConfig, CacheConfig, DisplayConfig
    from deepeval.metrics import FaithfulnessMetric
    from deepeval.models import GPTModel
    from deepeval.test_case import LLMTestCase

    metric = FaithfulnessMetric(model=GPTModel(model=PEER_MODEL, base_url=url, api_key=KEY))
    cases = [
        LLMTestCase(input=r["question"], actual_output=r["answer"], retrieval_context=[r["reference"]]) for r in data
    ]

    def run() -> list[float | None]:
        result = evaluate(
            cases,
            [metric],
            async_config=AsyncConfig(max_concurrent=concurrency),
            display_config=DisplayConfig(show_indicator=False, print_results=False, inspect_after_run=False),
            cache_config=CacheConfig(write_cache=False),
        )
        scored = {case.input: case.metrics_data[0].score if case.metrics_data else None for case in result.test_results}
        return [scored.get(r["question"]) for r in data]  # test results come back in completion order

    return run


def child(system: str, url: str, data_path: Path, concurrency: int) -> None:
    """Run one peer in this (fresh) process; print its evaluation time (imports and set-up excluded; ragfacts'
    report includes importing the `openai` SDK, which it does at the first call) and its scores as one JSON line."""
    data = [json.loads(line) for line in data_path.read_text().splitlines()]
    run = {"ragas": child_ragas, "deepeval": child_deepeval}[system](url, data, concurrency)
    started = time.perf_counter()
    scores = run()
    print(json.dumps({"eval_s": time.perf_counter() - started, "scores": scores}))


def run_once(name: str, data: Path, concurrency: int, latency: float, scratch: Path) -> dict[str, Any]:
    """`name` once in a fresh process against a fresh server: the server's counts, times, unscored answers."""
    kind, method, _ = SYSTEMS[name]
    env = {
        **os.environ,
        "OPENAI_API_KEY": KEY,
        "RAGFACTS_HOME": str(scratch / "home"),
        "RAGAS_DO_NOT_TRACK": "true",
        "DEEPEVAL_TELEMETRY_OPT_OUT": "1",
        "DEEPEVAL_NO_INSPECT_PROMPT": "1",
    }
    server, url = start(latency)
    out = scratch / f"run-{time.monotonic_ns()}"
    if kind == "ragfacts":
        flags = ["--model", "openai:bench", "--base-url", url, "--concurrency", str(concurrency), "--no-cache"]
        command = [sys.executable, "-m", "ragfacts", *flags, "--json", "check", str(data), "--method", method]
        command += ["-o", str(out)]
    else:
        out.mkdir()
        command = [sys.executable, __file__, "--child", kind, "--url", url, "--data", str(data)]
        command += ["--concurrency", str(concurrency)]
    try:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        cwd = out if kind != "ragfacts" else None  # DeepEval writes a .deepeval folder where it runs
        done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=cwd, timeout=RUN_TIMEOUT_S)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        stats = httpx.get(url + "/stats", timeout=10).json()
    finally:
        server.kill()
        server.wait()
    if done.returncode != 0:
        raise SystemExit(f"{name} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    found = json.loads(done.stdout.strip().splitlines()[-1] if kind != "ragfacts" else done.stdout)
    if kind == "ragfacts":
        eval_s = found["report"]["seconds"]
        scores = [row["faithfulness"] for row in found["rows"]]
    else:
        eval_s, scores = found["eval_s"], found["scores"]
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "wall_s": wall,
        "eval_s": eval_s,
        "cpu_s": cpu,
        "unscored": sum(score is None for score in scores),
        "answers": len(scores),
        **{key: stats[key] for key in ("calls", "prompt_tokens", "completion_tokens", "peak_in_flight")},
    }


def measure(
    name: str, data: Path, answers: int, concurrency: int, latency: float, repeats: int, scratch: Path
) -> dict[str, Any]:
    runs = [run_once(name, data, concurrency, latency, scratch) for _ in range(repeats)]
    calls = median(r["calls"] for r in runs)
    chain = SYSTEMS[name][2]
    bound = max(calls * latency / concurrency, chain * latency)
    wall, eval_s = median(r["wall_s"] for r in runs), median(r["eval_s"] for r in runs)
    return {
        "system": name,
        "method": SYSTEMS[name][1] or None,
        "answers": answers,
        "concurrency": concurrency,
        "repeats": repeats,
        "calls_per_answer": round(calls / answers, 2),
        "prompt_tokens_per_answer": round(median(r["prompt_tokens"] for r in runs) / answers),
        "completion_tokens_per_answer": round(median(r["completion_tokens"] for r in runs) / answers),
        "peak_in_flight": max(r["peak_in_flight"] for r in runs),
        "unscored": max(r["unscored"] for r in runs),
        "chain": chain,
        "bound_s": round(bound, 2),
        "wall_s": round(wall, 2),
        "eval_s": round(eval_s, 2),
        "cpu_s": round(median(r["cpu_s"] for r in runs), 2),
        "share_of_bound_wall": round(bound / wall, 3),
        "share_of_bound_eval": round(bound / eval_s, 3),
    }


def markdown(report: dict[str, Any]) -> str:
    lines = [
        f"{report['answers']} answers, {report['concurrency']} in flight, {report['latency_ms']:.0f} ms per call, "
        f"medians of {report['repeats']} runs; `{report['command']}`.",
        "",
        "| system | calls / answer | tokens / answer (prompt + completion) | peak in flight | unscored | bound s | "
        "wall s | evaluation s | share of bound (wall / evaluation) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in report["systems"]:
        lines.append(
            f"| {row['system']} | {row['calls_per_answer']:g} | {row['prompt_tokens_per_answer']:,} + "
            f"{row['completion_tokens_per_answer']:,} | {row['peak_in_flight']} | {row['unscored']} | "
            f"{row['bound_s']:.1f} | {row['wall_s']:.1f} | {row['eval_s']:.1f} | "
            f"{100 * row['share_of_bound_wall']:.0f}% / {100 * row['share_of_bound_eval']:.0f}% |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=50)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--systems", nargs="+", default=list(SYSTEMS), choices=list(SYSTEMS))
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "peers_speed.json")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.url, args.data, args.concurrency)
        return
    from _provenance import elapsed, provenance
    from performance import byte_compile, rows

    byte_compile()  # ragfacts as installed, as the peers are (see performance.py)
    latency = args.latency_ms / 1000
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        data = scratch / "answers.jsonl"
        data.write_text("".join(json.dumps(row) + "\n" for row in rows(args.answers)))
        made_from = provenance(data={"answers.jsonl (performance.rows)": data})
        systems = []
        for name in args.systems:
            systems.append(measure(name, data, args.answers, args.concurrency, latency, args.repeats, scratch))
            print(json.dumps(systems[-1]), flush=True)
    versions = {
        package: version(package) for package in ("ragfacts", "ragas", "deepeval", "langchain-openai", "openai")
    }
    report = {
        "provenance": {**made_from, "wall_s": elapsed()},
        "command": "python benchmarks/peers_speed.py" + "".join(f" {a}" for a in sys.argv[1:]),
        "answers": args.answers,
        "concurrency": args.concurrency,
        "latency_ms": args.latency_ms,
        "repeats": args.repeats,
        "cpus": os.cpu_count(),
        "versions": versions,
        "systems": systems,
    }
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    args.out.with_suffix(".md").write_text(markdown(report))
    print(markdown(report))


if __name__ == "__main__":
    main()
