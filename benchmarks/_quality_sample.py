"""`ragfacts bench` with the default precision judge on a stratified sample of the quality test split: the run that
default_bench.py and embedded_default.py make and then summarise."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data" / "quality" / "test.jsonl"


def sample_arguments(description: str, sample: int, seed: int, run: Path) -> argparse.Namespace:
    """The command line: ``--sample`` rows, ``--seed`` of the sample, ``--run`` (the resumable run directory)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--sample", type=int, default=sample)
    parser.add_argument("--seed", type=int, default=seed)
    parser.add_argument("--run", type=Path, default=run)
    return parser.parse_args()


def bench_sample(args: argparse.Namespace, *options: str) -> tuple[list[str], str]:
    """Run ``ragfacts --json <options> bench`` on ``args.sample`` rows of DATA (``args.seed``) into ``args.run``.

    Returns the command and its standard output; exits with the end of its standard error if it fails.
    """
    command = [
        *("ragfacts", "--json", *options, "bench", str(DATA), "--methods", "lface4rag"),
        *("--sample", str(args.sample), "--seed", str(args.seed), "-o", str(args.run)),
    ]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(done.stderr[-2000:])
    return command, done.stdout
