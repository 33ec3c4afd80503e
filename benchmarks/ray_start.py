"""What `evaluate --engine ray` pays before its first result, and what each result costs it after that.

Each repetition is a fresh Python process, cold as a command is. It imports Ray, starts a local Ray (`ray.init`),
runs one trivial task, starts the engine's workers (each builds its model client) and judges ROWS rows with
lface4rag and faaf through the real runner, against the scripted OpenAI-compatible server on 127.0.0.1 (replies
at once, so what is measured is ragfacts' and Ray's own cost per result, not a model's). It then judges the same
rows in a single process with the local engine, for comparison, and stops Ray. Reported: per phase, the median,
minimum and maximum over repetitions, with the machine's CPUs and load (another job may share them).

    python benchmarks/ray_start.py [--repeats 3] [--workers 2] [--rows 100]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _provenance import provenance  # noqa: E402
from tests.scripted_server import ScriptedServer  # noqa: E402

PHASES = ("import_s", "init_s", "first_task_s", "workers_ready_s", "first_result_s", "shutdown_s")
COMMAND_PATH = ("import_s", "init_s", "workers_ready_s", "first_result_s")


class FirstResult:
    """A progress that notes when the first result came back and when the last did."""

    def __init__(self) -> None:
        self.started = self.first = self.last = 0.0

    def start(self, total: int) -> None:
        self.started = time.perf_counter()

    def advance(self, outcome: object, usage: object) -> None:
        self.last = time.perf_counter()
        self.first = self.first or self.last

    def finish(self) -> None:
        pass


def rows(count: int) -> list[dict]:
    return [{"answer": "x", "reference": f"Context {n}.", "ground_truth": f"Truth {n}."} for n in range(count)]


async def child(url: str, count: int, workers: int, directory: Path) -> dict:
    """One cold repetition, in this process; returns its timings."""
    timings: dict[str, float] = {}
    started = time.perf_counter()
    import ray

    timings["import_s"] = time.perf_counter() - started
    mark = time.perf_counter()
    ray.init(include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
    timings["init_s"] = time.perf_counter() - mark

    @ray.remote
    def one() -> int:
        return 1

    mark = time.perf_counter()
    ray.get(one.remote())
    timings["first_task_s"] = time.perf_counter() - mark

    from ragfacts.datasets.dataset import Dataset
    from ragfacts.methods.base import create_method
    from ragfacts.runs.evaluation import Evaluation
    from ragfacts.runs.ray_engine import RayEngine, RayOptions
    from ragfacts.runs.runner import run
    from ragfacts.runtime import Runtime, Settings

    data = directory / "rows.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows(count)), encoding="utf-8")

    def evaluation(name: str) -> Evaluation:
        methods = [create_method("lface4rag"), create_method("faaf")]
        return Evaluation(Dataset.open(data), methods, output=directory / name)

    def runtime() -> Runtime:
        return Runtime(Settings(model="openai:scripted", base_url=url, use_cache=False))

    on_ray = runtime()
    engine = RayEngine(RayOptions(workers=workers))
    mark = time.perf_counter()
    on_workers = evaluation("ray")  # in the timed start: it opens the data, as this phase always has
    # Started here, not by the evaluation's engine (`run_on_ray`), so that the workers' start is timed on its own.
    await engine.start(on_ray, on_workers.plan)
    timings["workers_ready_s"] = time.perf_counter() - mark
    progress = FirstResult()
    report = (
        await on_workers.run(
            on_ray.model(),
            progress,
            # The engine: the runner, judging on the workers started above.
            engine=lambda run_dir, plan, shown: run(run_dir, plan, on_ray.model(), shown, judge=engine.judge),
        )
    ).report
    timings["first_result_s"] = progress.first - progress.started
    timings["ray_results_per_s"] = report.ran / (progress.last - progress.started)
    await engine.close()
    await on_ray.aclose()

    here = runtime()
    progress = FirstResult()
    report = (await evaluation("local").run(here.model(), progress)).report
    timings["local_results_per_s"] = report.ran / (progress.last - progress.started)
    await here.aclose()

    mark = time.perf_counter()
    ray.shutdown()
    timings["shutdown_s"] = time.perf_counter() - mark
    return {key: round(value, 3) for key, value in timings.items()}


def spread(values: list[float]) -> dict:
    return {"median": round(statistics.median(values), 3), "min": min(values), "max": max(values)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rows", type=int, default=100)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "ray_start.json")
    parser.add_argument("--child", help=argparse.SUPPRESS)  # URL: run one repetition here, print its timings
    args = parser.parse_args()
    if args.child:
        with tempfile.TemporaryDirectory() as directory:
            print(json.dumps(asyncio.run(child(args.child, args.rows, args.workers, Path(directory)))))
        return

    import ray

    server = ScriptedServer().start()
    env = {**os.environ, "OPENAI_API_KEY": "sk-benchmark"}
    env.pop("RAY_ADDRESS", None)
    runs = []
    loads = []
    try:
        for _ in range(args.repeats):
            loads.append(os.getloadavg()[0])
            command = [sys.executable, __file__, "--child", server.base_url]
            command += ["--rows", str(args.rows), "--workers", str(args.workers)]
            done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=ROOT, check=False)
            if done.returncode != 0:
                raise SystemExit(f"a repetition failed:\n{done.stderr}")
            runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    finally:
        server.stop()
    keys = [*PHASES, "ray_results_per_s", "local_results_per_s"]
    report = {
        "provenance": provenance(),
        "what": "cold start of a local Ray and of the ray engine's workers; results per second with an endpoint "
        "that answers at once (ragfacts' and Ray's own cost), on Ray and in one process",
        "command": f"python benchmarks/ray_start.py --repeats {args.repeats} --workers {args.workers} "
        f"--rows {args.rows}",
        "machine": {
            "cpus": os.cpu_count(),
            "load_average_1m_before_each": [round(load, 2) for load in loads],
            "python": platform.python_version(),
            "ray": ray.__version__,
        },
        "workers": args.workers,
        "results_per_run": 2 * args.rows,
        "summary": {key: spread([run[key] for run in runs]) for key in keys},
        # What a command waits for before its first result: the trivial task is measured apart, not on this path.
        "start_to_first_result_s": spread([sum(run[key] for key in COMMAND_PATH) for run in runs]),
        "runs": runs,
    }
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report["summary"], indent=2))
    print("start to first result:", report["start_to_first_result_s"])


if __name__ == "__main__":
    main()
