"""How calls are sent: on aiohttp directly (ragfacts' default), or through the `openai` SDK on aiohttp
(`DefaultAioHttpClient`, `-M http=aiohttp`) or on httpx (the SDK's default, `-M http=httpx`).

This measures what each is worth, on the same requests, in one session, alternating the transports so that the
machine's drifts hit all alike:

- `ragfacts check` (L-Face4RAG, paper mode: 5 calls per answer) on 200 answers at 32 and 64 in flight, against
  `latency_server.py` at 200 ms, as a user runs it (a fresh process), with each transport; its requests are recorded;
- the bare clients replaying those requests: aiohttp alone for the direct transport (`sdk_replay.py --http
  raw-aiohttp`), the bare `openai` client on the SDK's stacks (`--http aiohttp|httpx`).

For each: the wall time, its share of the bound (calls × latency / in flight) and the CPU time per call (start-up
included). Medians of `--repeats` (default 3).

    python benchmarks/http_stack.py [--repeats 3]   # about 6 minutes on 2 cores; writes results/http_stack.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from statistics import median
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from _provenance import elapsed, provenance  # noqa: E402
from latency_server import start  # noqa: E402
from performance import KEY, LATENCY, byte_compile, sdk_replay, timed, write_rows  # noqa: E402

ANSWERS = 200
LEVELS = (32, 64)
STACKS = ("direct", "aiohttp", "httpx")  # -M http=
BARE = {  # what replays each transport's requests, bare: (client, its --http)
    "direct": ("aiohttp without the SDK", "raw-aiohttp"),
    "aiohttp": ("bare openai client", "aiohttp"),
    "httpx": ("bare openai client", "httpx"),
}


def check(url: str, data: Path, out: Path, concurrency: int, stack: str, env: dict[str, str]) -> dict[str, Any]:
    """One `ragfacts check` run on `stack`: wall and CPU time, and the calls its report counts."""
    flags = ["--model", "openai:bench", "--base-url", url, "--concurrency", str(concurrency), "--no-cache"]
    args = ["-M", f"http={stack}", "--json", "check", str(data), "--method", "lface4rag:strategy=paper", "-o", str(out)]
    done = timed([sys.executable, "-m", "ragfacts", *flags, *args], env)
    usage = json.loads(done["stdout"])["report"]["usage"]
    if usage["failures"]:
        raise SystemExit(f"{usage['failures']} failed calls on {stack}: the comparison would not be like for like")
    return {"wall_s": done["wall_s"], "cpu_s": done["cpu_s"], "calls": usage["calls"]}


def measure(repeats: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The rows of the comparison, and the provenance block (the answers are made here)."""
    byte_compile()
    found = []
    with tempfile.TemporaryDirectory(prefix="ragfacts-http-") as name:
        scratch = Path(name)
        env = {**os.environ, "OPENAI_API_KEY": KEY, "RAGFACTS_HOME": str(scratch / "home")}
        data = write_rows(scratch / "answers.jsonl", ANSWERS)
        made_from = provenance(data={"answers.jsonl (performance.write_rows)": data})
        for concurrency in LEVELS:
            runs: dict[tuple[str, str], list[dict[str, Any]]] = {}
            for repeat in range(repeats):
                for stack in STACKS:
                    requests = scratch / f"{concurrency}-{repeat}-{stack}.jsonl"
                    process, url = start(LATENCY, record=requests)
                    try:
                        out = scratch / f"run-{concurrency}-{repeat}-{stack}"
                        runs.setdefault(("ragfacts check", stack), []).append(
                            check(url, data, out, concurrency, stack, env)
                        )
                    finally:
                        process.kill()
                    name, replayed_on = BARE[stack]
                    process, url = start(LATENCY)
                    try:
                        bare = sdk_replay(url, requests, concurrency, http=replayed_on)
                    finally:
                        process.kill()
                    runs.setdefault((name, replayed_on), []).append(bare)
            for (client, stack), done in runs.items():
                calls = done[0]["calls"]
                wall = median(d["wall_s"] for d in done)
                bound = calls * LATENCY / concurrency
                found.append(
                    {
                        "client": client,
                        "stack": stack,
                        "concurrency": concurrency,
                        "calls": calls,
                        "repeats": repeats,
                        "wall_s": round(wall, 2),
                        "share_of_bound": round(bound / wall, 3),
                        "cpu_ms_per_call": round(median(1000 * d["cpu_s"] / calls for d in done), 2),
                    }
                )
                print(json.dumps(found[-1]), flush=True)
    return found, made_from


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rows, made_from = measure(args.repeats)
    made_from["wall_s"] = elapsed()
    out = ROOT / "benchmarks" / "results" / "http_stack.json"
    out.write_text(
        json.dumps({"provenance": made_from, "answers": ANSWERS, "latency_s": LATENCY, "rows": rows}, indent=2) + "\n"
    )
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
