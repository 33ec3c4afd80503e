"""Performance and scale of the runner and the model layer, against a latency-simulating OpenAI-compatible server.

One command, under 10 minutes on a 2-core machine; results to benchmarks/results/performance.json and .md:

    python benchmarks/performance.py [--quick] [--profile]

What it measures (the server is benchmarks/latency_server.py, in its own process, on 127.0.0.1):
1. the server itself: the bare `openai` client (`sdk_replay.py`) sending 2,000 calls at 64 in flight and 200 ms
   reaches what share of the bound;
2. the commands as users run them: `ragfacts check`, `recall` and `evaluate` on 200 answers at 32 and 64 in
   flight (200 ms per call; `check` is lface4rag:strategy=paper, 5 calls per answer: the server decomposes every
   answer into 2 segments; `recall` faaf, 2 calls; `evaluate` both, 7 calls), each a fresh process: its wall time
   (what the user waits for, start-up and the end's summaries included), its runner time (the report's), its CPU
   time per call, and the bare `openai` client replaying the very requests it sent (recorded by the server) at the
   same concurrency in a fresh process; each pair 3 times, medians reported. The bound counts each answer's
   critical path: N answers of c calls with a chain of d dependent calls (decomposition then stages: d = 2) take
   at least max(N·c·L/C, d·L) at latency L and C calls in flight;
3. local overhead per call at zero latency, one call at a time: ragfacts' `complete` (schema, validation,
   ledger) against the bare `openai` client and raw httpx, on the same request;
4. a fully cached re-run of 1,000 answers (`ragfacts evaluate` into a new run directory, the response cache
   full): wall time of the command and model calls made; then resuming the finished run; medians of 3;
5. peak RSS of `ragfacts evaluate` for 100, 1,000 and 5,000 answers (zero latency);
6. calls and tokens per answer for every method (2 segments, 2 facts per answer; prompt tokens from the
   request's characters, so they follow our prompts; completion tokens are the server's short replies);
7. start-up time of `ragfacts --help`.

ragfacts' modules are byte-compiled first, as `pip install` leaves an installed package and as the `openai` SDK the
commands are compared with already is: in an environment that sets PYTHONDONTWRITEBYTECODE, an editable install
would otherwise compile its sources again in every process (about 0.2 s of every start on 2 cores).
"""

from __future__ import annotations

import argparse
import asyncio
import compileall
import cProfile
import io
import json
import os
import pstats
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))  # its siblings: latency_server, _provenance

import httpx  # noqa: E402
from _provenance import provenance  # noqa: E402
from latency_server import start  # noqa: E402

from ragfacts.datasets.dataset import Dataset  # noqa: E402
from ragfacts.methods.base import create_method  # noqa: E402
from ragfacts.methods.precision.schemas import Decomposition  # noqa: E402
from ragfacts.models import Message, ModelOptions  # noqa: E402
from ragfacts.models.http.openai_compat import OpenAICompatibleModel  # noqa: E402
from ragfacts.runs.evaluation import Evaluation  # noqa: E402
from ragfacts.runs.progress import NoProgress  # noqa: E402

KEY = "sk-benchmark"
LATENCY = 0.2
COMMANDS = {  # name: (method specs, calls per answer, critical path)
    "check": (["lface4rag:strategy=paper"], 5, 2),
    "recall": (["faaf"], 2, 2),
    "evaluate": (["lface4rag:strategy=paper", "faaf"], 7, 2),
}
METHODS = [
    "lface4rag:strategy=paper",
    "lface4rag:strategy=paper,batched=true",
    "lface4rag:strategy=paper,batched=true,joint_stages=true",
    "lface4rag:strategy=holistic_then_localise",
    "lface4rag:strategy=sentence_scores",
    "lface4rag:strategy=holistic_score",
    "holistic",
    "factscore",
    "felm",
    "ragas",
    "refchecker",
    "faaf",
    "faaf:mode=tf",
    "prompt-tf",
    "fact-scores",
]
REFERENCE = (
    "The Nile flows north through Egypt into the Mediterranean Sea. Heavy rain in the Ethiopian highlands swells "
    "the river every summer, so the valley used to flood in August and September. The floods left silt on the "
    "fields, which made the land fertile. The Aswan High Dam, finished in 1970, ended the yearly flood and now "
    "stores water in Lake Nasser, one of the largest reservoirs in the world."
)


def rows(count: int) -> list[dict[str, Any]]:
    """`count` distinct answers with a reference and a ground truth (distinct, so nothing is shared)."""
    return [
        {
            "id": f"a{n}",
            "question": f"Why did the Nile valley flood (case {n})?",
            "answer": f"Case {n}: the Nile flows north through Egypt. Summer rain in Ethiopia swelled it, so the "
            "valley flooded.",
            "reference": f"Case {n}. {REFERENCE}",
            "ground_truth": f"Case {n}: summer rain in the Ethiopian highlands swelled the Nile, so the valley "
            "flooded until the Aswan High Dam was finished in 1970.",
        }
        for n in range(count)
    ]


def model(url: str, concurrency: int, cache_dir: Path | None = None) -> OpenAICompatibleModel:
    from ragfacts.models.cache import ResponseCache

    cache = ResponseCache(cache_dir / "cache.sqlite3") if cache_dir is not None else None
    options = ModelOptions(concurrency=concurrency, max_retries=0)
    return OpenAICompatibleModel("bench", options, base_url=url, api_key=KEY, cache=cache)


async def run_methods(url: str, specs: list[str], count: int, concurrency: int, out: Path) -> dict[str, Any]:
    """Run `specs` over `count` answers through the evaluation entry; the ledger (for calls and tokens per answer)."""
    chat = model(url, concurrency)
    evaluation = Evaluation(
        Dataset.from_rows(rows(count)), [create_method(s) for s in specs], output=out, in_flight=2 * concurrency
    )
    report = (await evaluation.run(chat, NoProgress())).report
    await chat.aclose()
    usage = report.usage
    return {"results": report.ran, "calls": usage.calls, "failures": usage.failures, "usage": usage}


def timed(command: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run `command` in a fresh process: its wall time, its CPU time (user + system) and its output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command[:4])} … exited {done.returncode}:\n{done.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": wall, "cpu_s": cpu, "stdout": done.stdout, "stderr": done.stderr}


def sdk_replay(url: str, requests: Path, concurrency: int, http: str = "aiohttp") -> dict[str, Any]:
    """The bare `openai` client sending `requests` again at `concurrency`, from a fresh process, on the HTTP stack
    `http` (aiohttp by default: the SDK's fastest)."""
    done = timed(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "sdk_replay.py"),
            url,
            str(requests),
            "--concurrency",
            str(concurrency),
            "--http",
            http,
        ]
    )
    return {**done, **json.loads(done["stdout"])}


def server_check(calls: int, concurrency: int, scratch: Path) -> dict[str, Any]:
    """The bare `openai` client against the server: the share of the bound the server allows."""
    requests = scratch / "server-check.jsonl"
    body = {"model": "bench", "messages": [{"role": "user", "content": "hello"}]}
    requests.write_text((json.dumps(body) + "\n") * calls, encoding="utf-8")
    process, url = start(LATENCY)
    try:
        replay = sdk_replay(url, requests, concurrency)
    finally:
        process.kill()
    ideal = calls * LATENCY / concurrency
    return {
        "calls": calls,
        "concurrency": concurrency,
        "seconds": round(replay["seconds"], 2),
        "share_of_bound": round(ideal / replay["seconds"], 3),
    }


def command_args(command: str, data: Path, out: Path) -> list[str]:
    specs, _, _ = COMMANDS[command]
    if command == "evaluate":
        return ["evaluate", str(data), "--precision", specs[0], "--recall", specs[1], "-o", str(out)]
    return [command, str(data), "--method", specs[0], "-o", str(out)]


def commands(levels: list[int], answers: int, repeats: int, scratch: Path) -> list[dict[str, Any]]:
    """Each command on `answers` answers at each concurrency, `repeats` times, each run followed by the bare client
    replaying its requests, then aiohttp alone replaying them (no SDK, no dependencies between calls: the floor of
    any Python client here): the medians of wall, runner and CPU time, and of the ratio of the pairs."""
    env = {**os.environ, "OPENAI_API_KEY": KEY, "RAGFACTS_HOME": str(scratch / "home-commands")}
    data = write_rows(scratch / "commands.jsonl", answers)
    found = []
    for concurrency in levels:
        for command, (_, _, chain) in COMMANDS.items():
            pairs = [command_and_replay(command, concurrency, data, scratch, env) for _ in range(repeats)]
            ours, bare = [p[0] for p in pairs], [p[1] for p in pairs]
            calls = ours[0]["calls"]
            bound = max(calls * LATENCY / concurrency, chain * LATENCY)
            wall, runner, sdk_wall = (
                median([r[key] for r in rows]) for rows, key in ((ours, "wall_s"), (ours, "runner_s"), (bare, "wall_s"))
            )
            found.append(
                {
                    "command": command,
                    "concurrency": concurrency,
                    "answers": answers,
                    "repeats": repeats,
                    "calls": calls,
                    "failures": sum(r["failures"] for r in ours),
                    "bound_s": round(bound, 2),
                    "wall_s": round(wall, 2),
                    "runner_s": round(runner, 2),
                    "share_of_bound_wall": round(bound / wall, 3),
                    "share_of_bound_runner": round(bound / runner, 3),
                    "cpu_ms_per_call": round(median([1000 * r["cpu_s"] / calls for r in ours]), 2),
                    "sdk_wall_s": round(sdk_wall, 2),
                    "sdk_share_of_bound": round(bound / sdk_wall, 3),
                    "sdk_cpu_ms_per_call": round(median([1000 * r["cpu_s"] / r["calls"] for r in bare]), 2),
                    "raw_wall_s": round(median([r["raw_wall_s"] for r in bare]), 2),
                    "raw_share_of_bound": round(bound / median([r["raw_wall_s"] for r in bare]), 3),
                    "wall_vs_sdk": round(median([o["wall_s"] / b["wall_s"] for o, b in pairs]), 3),
                    "wall_vs_sdk_range": [
                        round(min(o["wall_s"] / b["wall_s"] for o, b in pairs), 3),
                        round(max(o["wall_s"] / b["wall_s"] for o, b in pairs), 3),
                    ],
                }
            )
            print(json.dumps(found[-1]), flush=True)
    return found


def command_and_replay(
    command: str, concurrency: int, data: Path, scratch: Path, env: dict[str, str]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """One run of `command` (its requests recorded by the server), then the bare client replaying them."""
    requests = scratch / f"{command}-{concurrency}.requests.jsonl"
    requests.unlink(missing_ok=True)
    out = scratch / f"{command}-{concurrency}"
    process, url = start(LATENCY, record=requests)
    try:
        flags = ["--model", "openai:bench", "--base-url", url, "--concurrency", str(concurrency), "--no-cache"]
        run = timed([sys.executable, "-m", "ragfacts", *flags, "--json", *command_args(command, data, out)], env)
    finally:
        process.kill()
    shutil.rmtree(out)
    report = json.loads(run["stdout"])["report"]
    ours = {
        **run,
        "runner_s": report["seconds"],
        "calls": report["usage"]["calls"],
        "failures": report["usage"]["failures"],
    }
    process, url = start(LATENCY)
    try:
        bare = sdk_replay(url, requests, concurrency)
    finally:
        process.kill()
    process, url = start(LATENCY)
    try:
        bare["raw_wall_s"] = sdk_replay(url, requests, concurrency, http="raw-aiohttp")["wall_s"]
    finally:
        process.kill()
    return ours, bare


def overhead(calls: int, profile: bool) -> dict[str, Any]:
    """Per-call time at zero latency, one at a time: ragfacts complete vs the bare openai client vs raw httpx."""
    from openai import AsyncOpenAI, DefaultAioHttpClient

    process, url = start(0.0)
    messages = [{"role": "user", "content": f"Split this answer into segments. {REFERENCE}"}]
    schema = Decomposition.model_json_schema()
    body = {
        "model": "bench",
        "messages": messages,
        "temperature": 0.0,
        "response_format": {"type": "json_schema", "json_schema": {"name": "Decomposition", "schema": schema}},
    }
    profiler = cProfile.Profile() if profile else None

    async def measure() -> dict[str, float]:
        timings: dict[str, list[float]] = {"httpx": [], "openai": [], "ragfacts": []}
        async with httpx.AsyncClient(base_url=url, timeout=60) as client:
            sdk = AsyncOpenAI(base_url=url, api_key=KEY, http_client=DefaultAioHttpClient())  # the SDK's fastest
            chat = model(url, 1)
            for _ in range(10):  # warm-up: connections, imports, schema caches
                await client.post("/chat/completions", json=body)
                await sdk.chat.completions.create(**body)
                await chat.complete([Message(role="user", content=messages[0]["content"])], Decomposition)
            for _round in range(3):  # interleaved, so drifts of the machine hit all three alike
                for _ in range(calls // 3):
                    started = time.perf_counter()
                    (await client.post("/chat/completions", json=body)).raise_for_status()
                    timings["httpx"].append(time.perf_counter() - started)
                for _ in range(calls // 3):
                    started = time.perf_counter()
                    await sdk.chat.completions.create(**body)
                    timings["openai"].append(time.perf_counter() - started)
                if profiler:
                    profiler.enable()
                for _ in range(calls // 3):
                    started = time.perf_counter()
                    completion = await chat.complete(
                        [Message(role="user", content=messages[0]["content"])], Decomposition
                    )
                    timings["ragfacts"].append(time.perf_counter() - started)
                    assert completion.ok, completion.failure
                if profiler:
                    profiler.disable()
            await chat.aclose()
            await sdk.close()
        return {name: statistics.median(values) * 1000 for name, values in timings.items()}

    try:
        medians = asyncio.run(measure())
    finally:
        process.kill()
    found: dict[str, Any] = {
        "calls_each": calls // 3 * 3,
        "median_ms": {k: round(v, 3) for k, v in medians.items()},
        "overhead_vs_openai_ms": round(medians["ragfacts"] - medians["openai"], 3),
        "overhead_vs_httpx_ms": round(medians["ragfacts"] - medians["httpx"], 3),
    }
    if profiler:
        found["profile"] = top_functions(profiler)
    return found


def top_functions(profiler: cProfile.Profile, count: int = 15) -> list[str]:
    stream = io.StringIO()
    pstats.Stats(profiler, stream=stream).sort_stats("tottime").print_stats(count)
    lines = [line.strip() for line in stream.getvalue().splitlines() if line.strip()]
    start_at = next(i for i, line in enumerate(lines) if line.startswith("ncalls"))
    return lines[start_at : start_at + count + 1]


def cli(args: list[str], env: dict[str, str], measure_rss: bool = False) -> dict[str, Any]:
    """Run the ragfacts command line in a fresh process: exit code, wall time and (optionally) its peak RSS."""
    if measure_rss:
        # The process's own peak (VmHWM). Not getrusage's ru_maxrss: on Linux a child starts with its parent's peak
        # at the fork, so it reported this script's size whatever ragfacts used.
        code = (
            "import sys\nfrom ragfacts.cli import main\ntry:\n    main(sys.argv[1:])\nfinally:\n"
            "    peak = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0].split()[1]\n"
            "    print('RSS_KB', peak, file=sys.stderr)"
        )
        command = [sys.executable, "-c", code, *args]
    else:
        command = [sys.executable, "-m", "ragfacts", *args]
    done = timed(command, env)
    found: dict[str, Any] = {"seconds": round(done["wall_s"], 2), "stdout": done["stdout"], "stderr": done["stderr"]}
    if measure_rss:
        found["rss_mb"] = round(int(done["stderr"].rsplit("RSS_KB", 1)[1].split()[0]) / 1024, 1)
    return found


def write_rows(path: Path, count: int) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows(count)), encoding="utf-8")
    return path


def cached_and_resume(scratch: Path, count: int) -> dict[str, Any]:
    process, url = start(0.0)
    env = {**os.environ, "OPENAI_API_KEY": KEY, "RAGFACTS_HOME": str(scratch / "home")}
    data = write_rows(scratch / "cached.jsonl", count)
    common = ["--model", "openai:bench", "--base-url", url, "--concurrency", "32", "--json", "evaluate", str(data)]
    common += ["--precision", "lface4rag:strategy=paper", "--recall", "faaf"]
    try:
        first = cli([*common, "-o", str(scratch / "first")], env)
        # Three of each, medians: on a shared machine one run of a few seconds can take half as long again
        cached = [cli([*common, "-o", str(scratch / f"cached-{n}")], env) for n in range(3)]
        resumed = [cli([*common, "-o", str(scratch / f"cached-{n}")], env) for n in range(3)]
    finally:
        process.kill()

    def calls(done: dict[str, Any]) -> int:
        return json.loads(done["stdout"])["report"]["usage"]["calls"]

    def runs(done: list[dict[str, Any]]) -> dict[str, Any]:
        seconds = [d["seconds"] for d in done]
        return {"seconds": median(seconds), "each": seconds, "calls": max(calls(d) for d in done)}

    return {
        "answers": count,
        "first_run": {"seconds": first["seconds"], "calls": calls(first)},
        "cached_rerun": runs(cached),
        "resume_finished": runs(resumed),
    }


def memory(scratch: Path, sizes: list[int]) -> list[dict[str, Any]]:
    process, url = start(0.0)
    env = {**os.environ, "OPENAI_API_KEY": KEY, "RAGFACTS_HOME": str(scratch / "home-rss")}
    found = []
    try:
        for size in sizes:
            data = write_rows(scratch / f"rss-{size}.jsonl", size)
            args = ["--model", "openai:bench", "--base-url", url, "--concurrency", "32", "--no-cache", "evaluate"]
            args += [str(data), "--precision", "lface4rag:strategy=paper", "--recall", "faaf"]
            done = cli([*args, "-o", str(scratch / f"rss-{size}")], env, measure_rss=True)
            output_mb = (scratch / f"rss-{size}" / "results.jsonl").stat().st_size / 2**20
            found.append(
                {
                    "answers": size,
                    "peak_rss_mb": done["rss_mb"],
                    "seconds": done["seconds"],
                    "output_mb": round(output_mb, 1),
                }
            )
            print(json.dumps(found[-1]), flush=True)
    finally:
        process.kill()
    return found


def per_method(scratch: Path, count: int) -> list[dict[str, Any]]:
    process, url = start(0.0)
    found = []
    try:
        for spec in METHODS:
            done = asyncio.run(run_methods(url, [spec], count, 8, scratch / f"method-{len(found)}"))
            usage = done["usage"]
            found.append(
                {
                    "method": spec,
                    "calls_per_answer": round(usage.calls / count, 2),
                    "prompt_tokens_per_answer": round(usage.prompt_tokens / count),
                    "completion_tokens_per_answer": round(usage.completion_tokens / count),
                    "failures": usage.failures,
                }
            )
    finally:
        process.kill()
    return found


def startup(times: int = 5) -> dict[str, Any]:
    env = {**os.environ}
    seconds = [cli(["--help"], env)["seconds"] for _ in range(times)]
    return {"runs": times, "best_s": min(seconds), "median_s": statistics.median(seconds)}


def byte_compile() -> None:
    """Byte-compile ragfacts' modules (a no-op where they are up to date), as an installed package is."""
    import ragfacts

    compileall.compile_dir(Path(ragfacts.__file__).parent, quiet=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, to check the script runs")
    parser.add_argument("--profile", action="store_true", help="profile the zero-latency calls")
    parser.add_argument("--only", nargs="*", help="run only these parts (server, commands, overhead, ...)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "performance.json")
    args = parser.parse_args()
    quick = args.quick
    parts = set(args.only or ["server", "commands", "overhead", "cached", "memory", "methods", "startup"])
    largest = 300 if quick else 5000  # the memory part's largest set: every part's answers are its first rows
    answers = "".join(json.dumps(row) + "\n" for row in rows(largest)).encode()
    report: dict[str, Any] = {
        "provenance": provenance(data={f"answers (performance.rows, the first {largest:,})": answers}),
        "command": " ".join(["python", "benchmarks/performance.py", *sys.argv[1:]]),
        "latency_ms": LATENCY * 1000,
        "cpu_count": os.cpu_count(),
        "load_average_before": os.getloadavg()[0],
        "quick": quick,
    }
    byte_compile()
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ragfacts-perf-") as name:
        scratch = Path(name)
        if "server" in parts:
            report["server"] = server_check(500 if quick else 2000, 64, scratch)
            print("server", json.dumps(report["server"]), flush=True)
        if "commands" in parts:
            report["commands"] = commands([32, 64], 40 if quick else 200, 1 if quick else 3, scratch)
        if "overhead" in parts:
            report["overhead"] = overhead(60 if quick else 600, args.profile)
            print("overhead", json.dumps({k: v for k, v in report["overhead"].items() if k != "profile"}), flush=True)
        if "cached" in parts:
            report["cached"] = cached_and_resume(scratch, 100 if quick else 1000)
            print("cached", json.dumps(report["cached"]), flush=True)
        if "memory" in parts:
            report["memory"] = memory(scratch, [100, 300] if quick else [100, 1000, 5000])
        if "methods" in parts:
            report["methods"] = per_method(scratch, 4 if quick else 20)
        if "startup" in parts:
            report["startup"] = startup()
            print("startup", json.dumps(report["startup"]), flush=True)
    report["total_s"] = round(time.perf_counter() - began, 1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, default=str) + "\n", encoding="utf-8")
    args.out.with_suffix(".md").write_text(markdown(report), encoding="utf-8")
    print(markdown(report))
    print(f"wrote {args.out} and {args.out.with_suffix('.md').name} ({report['total_s']} s)")


def markdown(report: dict[str, Any]) -> str:
    """The report's tables in Markdown (docs/performance.md renders its own from the JSON)."""
    lines = [f"`{report['command']}` ({report['cpu_count']} CPUs, {report['total_s']} s)", ""]
    if "server" in report:
        s = report["server"]
        lines += [
            f"Test server alone (the bare openai client, {s['calls']:,} calls, {s['concurrency']} in flight, "
            f"{report['latency_ms']:.0f} ms each): {100 * s['share_of_bound']:.0f}% of the bound.",
            "",
        ]
    if "commands" in report:
        lines += [
            "| command | in flight | calls | bound s | wall s | runner s | share of bound (wall / runner) | "
            "bare client wall s | wall vs bare client | CPU ms per call (ours / bare client) |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {t['command']} | {t['concurrency']} | {t['calls']:,} | {t['bound_s']:.1f} | {t['wall_s']:.1f} | "
            f"{t['runner_s']:.1f} | {100 * t['share_of_bound_wall']:.0f}% / {100 * t['share_of_bound_runner']:.0f}% | "
            f"{t['sdk_wall_s']:.1f} | {t['wall_vs_sdk']:.2f}× | "
            f"{t['cpu_ms_per_call']:.2f} / {t['sdk_cpu_ms_per_call']:.2f} |"
            for t in report["commands"]
        ]
        lines.append("")
    if "overhead" in report:
        o = report["overhead"]["median_ms"]
        lines += [
            f"Local cost per call at zero latency (median of {report['overhead']['calls_each']}): ragfacts "
            f"{o['ragfacts']:.2f} ms, bare openai client {o['openai']:.2f} ms, raw httpx {o['httpx']:.2f} ms.",
            "",
        ]
    if "cached" in report:
        c = report["cached"]
        lines += [
            f"{c['answers']:,} answers: first run {c['first_run']['seconds']:.1f} s ({c['first_run']['calls']:,} "
            f"calls); fully cached re-run {c['cached_rerun']['seconds']:.2f} s ({c['cached_rerun']['calls']} calls); "
            f"resuming the finished run {c['resume_finished']['seconds']:.2f} s ({c['resume_finished']['calls']} "
            "calls); medians of 3.",
            "",
        ]
    if "memory" in report:
        lines += ["| answers | peak RSS MB | output MB | seconds |", "|---|---|---|---|"]
        lines += [
            f"| {m['answers']:,} | {m['peak_rss_mb']:.0f} | {m['output_mb']:.1f} | {m['seconds']:.1f} |"
            for m in report["memory"]
        ]
        lines.append("")
    if "methods" in report:
        lines += ["| method | calls/answer | prompt tokens | completion tokens |", "|---|---|---|---|"]
        lines += [
            f"| `{m['method']}` | {m['calls_per_answer']:.1f} | {m['prompt_tokens_per_answer']:,} | "
            f"{m['completion_tokens_per_answer']:,} |"
            for m in report["methods"]
        ]
        lines.append("")
    if "startup" in report:
        lines += [
            f"`ragfacts --help`: {report['startup']['median_s']:.2f} s (median of {report['startup']['runs']}).",
            "",
        ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
