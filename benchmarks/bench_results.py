"""A `ragfacts bench` run kept as a results file: the run's metrics and tables, with the provenance of the run.

    python benchmarks/bench_results.py quality_test_scores --run /tmp/q-test -- \\
        --model local bench benchmarks/data/quality/test.jsonl --methods lface4rag:strategy=holistic_score,holistic
    python benchmarks/bench_results.py bench_embedded_sample6 --run /tmp/sample6 --max-answer-chars 200 -- \\
        --model local bench benchmarks/data/quality/test.jsonl --methods lface4rag,holistic --sample 6 --seed 0

Everything after `--` is a `ragfacts` command line without its run directory (`-o RUN` is added, so a rerun resumes).
With `--max-answer-chars N`, the data file (the argument after `bench`) is first cut to its rows whose answer has at
most N characters, written into the run directory, and the run reads that file (both are named, with their
SHA-256, in the provenance). Writes benchmarks/results/NAME.json (the run's metrics.json under "precision" and
"recall", with "provenance") and NAME.md (the run's tables.md).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import ROOT, files, provenance

RESULTS = ROOT / "benchmarks" / "results"


def shortened(data: Path, run: Path, limit: int) -> Path:
    """The rows of ``data`` whose answer has at most ``limit`` characters, written into ``run`` (the same bytes for
    the same data; where the data changed, a resumed `ragfacts bench` reuses only the rows whose content did not)."""
    out = run / f"{data.stem}_answers_up_to_{limit}.jsonl"
    rows = [line for line in data.read_text(encoding="utf-8").splitlines() if line.strip()]
    kept = [line for line in rows if len(json.loads(line)["answer"]) <= limit]
    run.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(line + "\n" for line in kept), encoding="utf-8")
    return out


def bench(command: list[str], run: Path) -> dict[str, Any]:
    """Run ``ragfacts <command> -o run`` and return the run's metrics.json; exits, saying how to resume, if it fails."""
    done = subprocess.run(["ragfacts", *command, "-o", str(run)], check=False)
    if done.returncode != 0:
        sys.exit(f"ragfacts {' '.join(command)} exited {done.returncode}; rerun this command to resume the run")
    return json.loads((run / "metrics.json").read_text(encoding="utf-8"))


def arguments(given: list[str]) -> tuple[argparse.Namespace, list[str]]:
    """This script's options, and the ragfacts command line after `--` (exits with usage if it has no bench DATA)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("name", help="the results file's name, without .json")
    parser.add_argument("--run", type=Path, required=True, help="the run directory (resumable)")
    parser.add_argument("--max-answer-chars", type=int, default=None, help="keep rows with answers this short")
    parser.usage = "%(prog)s NAME --run DIR [--max-answer-chars N] -- RAGFACTS_ARGUMENTS"
    cut = given.index("--") if "--" in given else len(given)
    args = parser.parse_args(given[:cut])
    command = given[cut + 1 :]
    if "bench" not in command or command.index("bench") + 1 >= len(command):
        parser.error("give a ragfacts bench command line after --")
    return args, command


def main() -> None:
    args, command = arguments(sys.argv[1:])
    where = command.index("bench") + 1
    data = Path(command[where])
    read = [data]
    if args.max_answer_chars is not None:
        short = shortened(data, args.run.parent / f"{args.run.name}-data", args.max_answer_chars)
        command[where] = str(short)
        read.append(short)
    metrics = bench(command, args.run)
    report = {"provenance": provenance(data=files(*read)), **metrics}
    RESULTS.joinpath(f"{args.name}.json").write_text(
        json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    shutil.copyfile(args.run / "tables.md", RESULTS / f"{args.name}.md")
    print(f"wrote benchmarks/results/{args.name}.json and .md")


if __name__ == "__main__":
    main()
