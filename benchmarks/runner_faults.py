"""The runner under injected faults: rows in = rows out, failures counted, retried by the next run.

Starts the scripted OpenAI-compatible server (tests/scripted_server.py) on 127.0.0.1 and evaluates N RAGAS
v0.2 rows (precision and recall) through the real CLI, twice, into one run directory. During the first run a
share of the requests fail (HTTP 500 with retries off, or a reply that never validates); the second run has
no faults. Reported: results in and out, failures, what the second run redid, calls and wall time.

    python benchmarks/runner_faults.py [--rows 200] [--fault-rate 0.05]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _provenance import elapsed, provenance  # noqa: E402
from tests.scripted_server import Reply, ScriptedServer  # noqa: E402


def rows(count: int) -> list[dict]:
    return [
        {
            "user_input": f"What does item {n} say?",
            "response": f"Item {n} says the river flows north.",
            "retrieved_contexts": [f"Item {n}: the river flows north.", f"Item {n}: it floods in summer."],
            "reference": f"Item {n} says the river flows north and floods in summer.",
        }
        for n in range(count)
    ]


def evaluate(url: str, data: Path, run: Path, home: Path, retries: int) -> tuple[dict, float]:
    command = [sys.executable, "-m", "ragfacts", "--model", "openai:scripted", "--base-url", url, "--json"]
    command += ["--max-retries", str(retries), "--concurrency", "8", "evaluate", str(data), "-o", str(run)]
    env = {**os.environ, "OPENAI_API_KEY": "sk-benchmark", "RAGFACTS_HOME": str(home)}
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=ROOT)
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"ragfacts exited {done.returncode}:\n{done.stderr}")
    return json.loads(done.stdout), seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--fault-rate", type=float, default=0.05)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "runner_faults.json")
    args = parser.parse_args()
    server = ScriptedServer().start()
    chooser = random.Random(7)
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        data = work / "ragas.jsonl"
        data.write_text("".join(json.dumps(row) + "\n" for row in rows(args.rows)), encoding="utf-8")
        made_from = provenance(data={"ragas.jsonl (runner_faults.rows)": data})
        faults = 0
        for n in range(args.rows):  # one fault per faulty row, on its decomposition or its fact generation
            if chooser.random() < args.fault_rate:
                faults += 1
                marker = (
                    f"Item {n} says the river flows north." if n % 2 else f"Item {n} says the river flows north and"
                )
                reply = Reply.error(500) if n % 3 else Reply.malformed()
                server.when(marker, reply, times=1 if reply.status != 200 else 3)
        first, first_s = evaluate(server.base_url, data, work / "run", work / "home", retries=0)
        first_calls = len(server.requests)
        server.reset()
        second, second_s = evaluate(server.base_url, data, work / "run", work / "home", retries=0)
        lines = (work / "run" / "results.jsonl").read_text(encoding="utf-8").splitlines()
    server.stop()
    report = {
        "provenance": {**made_from, "wall_s": elapsed()},
        "rows": args.rows,
        "faulty_rows": faults,
        "first_run": {
            "rows_out": len(first["rows"]),
            "results": first["report"]["results"],
            "incomplete": first["report"]["incomplete"],
            "requests": first_calls,
            "wall_s": round(first_s, 2),
            "summary": [
                {k: s[k] for k in ("method", "judged", "incomplete", "failed_calls")} for s in first["summary"]
            ],
        },
        "second_run": {
            "rows_out": len(second["rows"]),
            "ran": second["report"]["ran"],
            "reused": second["report"]["reused"],
            "incomplete": second["report"]["incomplete"],
            "requests": len(server.requests),
            "wall_s": round(second_s, 2),
        },
        "lines_in_results_file": len(lines),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
