"""The embedded model behind `python -m llama_cpp.server` vs in-process, through the CLI, at concurrency 1 and 8.

The same answers (a stratified sample of a labelled set) are judged by the same method four times, each by one
`ragfacts ... check` process with the cache off:
  - server: `ragfacts --model openai:local --base-url http://127.0.0.1:PORT/v1 -M mode=tool
    -M schema_in_prompt=true` against `python -m llama_cpp.server`, started here on 127.0.0.1 with the context
    and threads the in-process backend uses (the server's own default is half the cores for generation);
  - in-process: `ragfacts --model local` (llama-cpp-python in the ragfacts process, grammar mode).
Reported per run: wall time of the process, answers/s, calls, prompt and completion tokens, failures and model
time from the run's ledger, and each answer's label; then whether the labels agree between runs. The server's
start-up (loading the weights) is timed apart; the in-process runs load the weights inside their wall time,
so the load time is also measured here (one `Llama(...)` in this process, page cache warm) and answers/s
is given both with and without it.

Needs the server extra of the installed llama-cpp-python (not a ragfacts dependency):
    pip install "llama-cpp-python[server]==$(python -c 'import llama_cpp; print(llama_cpp.__version__)')"
    python benchmarks/server_vs_inprocess.py                        # 6 answers, holistic, ~10 min on 2 cores
    python benchmarks/server_vs_inprocess.py --sample 1 --concurrency 1 -M max_tokens=8 -M reasks=0  # smoke test
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from ragfacts.bench.sampling import stratified_sample
from ragfacts.datasets.dataset import Dataset
from ragfacts.models.local.embedded import ensure_default_model
from ragfacts.models.local.llamacpp import DEFAULT_CONTEXT
from ragfacts.models.spec import ragfacts_home

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import files, provenance

RAGFACTS = Path(sys.executable).with_name("ragfacts")


def start_server(gguf: Path, n_ctx: int, threads: int) -> tuple[subprocess.Popen[bytes], str, float]:
    """Start llama_cpp.server on a free port; return the process, its /v1 URL and the seconds it took to answer."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1"]
    command += ["--port", str(port), "--n_ctx", str(n_ctx), "--model_alias", "local"]
    command += ["--n_threads", str(threads), "--n_threads_batch", str(threads)]
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    while time.perf_counter() - started < 600:
        if process.poll() is not None:
            raise SystemExit("llama_cpp.server exited: is llama-cpp-python[server] installed? (see the docstring)")
        try:
            if httpx.get(url + "/models", timeout=2).status_code == 200:
                return process, url, time.perf_counter() - started
        except httpx.HTTPError:
            time.sleep(0.5)
    process.kill()
    raise SystemExit("llama_cpp.server did not answer within 10 minutes")


def load_seconds(gguf: Path, n_ctx: int, threads: int) -> float:
    """How long the in-process backend takes to load the weights (what its runs spend before the first call)."""
    import llama_cpp

    started = time.perf_counter()
    llama = llama_cpp.Llama(model_path=str(gguf), n_ctx=n_ctx, n_threads=threads, verbose=False)
    seconds = time.perf_counter() - started
    llama.close()
    return seconds


def run_cli(model_args: list[str], data: Path, method: str, concurrency: int, out: Path) -> dict[str, Any]:
    """One `ragfacts check` process; its wall time, the ledger's totals and each answer's label."""
    command = [str(RAGFACTS), *model_args, "--concurrency", str(concurrency), "--no-cache"]
    command += ["check", str(data), "-o", str(out), "--method", method]
    started = time.perf_counter()
    finished = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "COLUMNS": "160"})
    wall = time.perf_counter() - started
    if finished.returncode not in (0, 1):  # 1: a quality gate, which check does not set here
        raise SystemExit(f"{' '.join(command)} exited {finished.returncode}:\n{finished.stderr[-3000:]}")
    total = json.loads((out / "ledger.json").read_text(encoding="utf-8"))["total"]
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    return {
        "command": " ".join(command),
        "wall_s": round(wall, 2),
        "answers": len(rows),
        "answers_per_s": round(len(rows) / wall, 4),
        "calls": total["calls"],
        "prompt_tokens": total["prompt_tokens"],
        "completion_tokens": total["completion_tokens"],
        "failures": total["failures"],
        "retries": total["retries"],
        "reasks": total["reasks"],
        "model_s": round(total["model_s"], 2),
        "labels": {row["id"]: row["outcome"]["label"] for row in rows},
    }


def agreement(runs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """For each pair of runs, the share of answers given the same label."""
    names = list(runs)
    pairs = {}
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            ids = runs[a]["labels"].keys() & runs[b]["labels"].keys()
            same = sum(runs[a]["labels"][k] == runs[b]["labels"][k] for k in ids)
            pairs[f"{a} vs {b}"] = f"{same}/{len(ids)}"
    return pairs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(__file__).parent / "data" / "quality" / "dev.jsonl")
    parser.add_argument("--sample", type=int, default=6, help="answers, stratified by label and source")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--method", default="holistic")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--gguf", type=Path, default=None, help="default: the embedded model")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="as the in-process backend")
    parser.add_argument(
        "-M", "--model-option", action="append", default=[], help="passed to both as -M KEY=VALUE (smoke tests)"
    )
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "server_vs_inprocess.json")
    args = parser.parse_args()
    gguf = args.gguf or ensure_default_model(ragfacts_home() / "models")
    n_ctx = int(os.environ.get("RAGFACTS_LOCAL_N_CTX", DEFAULT_CONTEXT))
    items = list(stratified_sample(Dataset.open(args.data), args.sample, args.seed).items())
    extra = [arg for option in args.model_option for arg in ("-M", option)]
    runs: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="server_vs_inprocess-") as tmp:
        data = Path(tmp) / "sample.jsonl"
        data.write_text("".join(item.model_dump_json(exclude_none=True) + "\n" for item in items), encoding="utf-8")
        server, url, startup_s = start_server(gguf, n_ctx, args.threads)
        try:
            for concurrency in args.concurrency:
                model_args = ["--model", "openai:local", "--base-url", url, "-M", "mode=tool"]
                model_args += ["-M", "schema_in_prompt=true", *extra]
                name = f"server c{concurrency}"
                runs[name] = run_cli(model_args, data, args.method, concurrency, Path(tmp) / name.replace(" ", "-"))
                print(f"{name}: {runs[name]['wall_s']} s", file=sys.stderr, flush=True)
        finally:
            server.terminate()
            server.wait(timeout=60)
        load_s = load_seconds(gguf, n_ctx, args.threads)
        for concurrency in args.concurrency:
            name = f"in-process c{concurrency}"
            runs[name] = run_cli(
                ["--model", "local", *extra], data, args.method, concurrency, Path(tmp) / f"ip{concurrency}"
            )
            runs[name]["answers_per_s_without_load"] = round(runs[name]["answers"] / (runs[name]["wall_s"] - load_s), 4)
            print(f"{name}: {runs[name]['wall_s']} s", file=sys.stderr, flush=True)
    report = {
        "provenance": provenance(data=files(args.data)),
        "model": gguf.name,
        "method": args.method,
        "data": str(args.data),
        "items": [item.id for item in items],
        "gold": {item.id: item.label for item in items},
        "n_ctx": n_ctx,
        "threads": args.threads,
        "server_startup_s": round(startup_s, 2),
        "in_process_load_s": round(load_s, 2),
        "runs": runs,
        "label_agreement": agreement(runs),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
