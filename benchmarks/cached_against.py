"""A fully cached `evaluate` of 1,000 answers, this checkout against another revision of ragfacts, in one session.

On a shared machine the speed of a whole run can vary by half from one hour to the next, so an absolute figure
taken today is not comparable with one taken last week. This script runs both versions in turn, as a user runs
them (fresh processes, `--json` into a file, byte-compiled sources), against one response cache filled beforehand:
the ratio of the medians, of wall time and of CPU time, is what changed in ragfacts, whatever the machine did
meanwhile.

    python benchmarks/cached_against.py REVISION [--pairs 9]   # about 2 minutes; writes results/cached_against.json
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from latency_server import start  # noqa: E402
from performance import KEY, byte_compile, write_rows  # noqa: E402

ANSWERS = 1_000
METHODS = ["--precision", "lface4rag:strategy=paper", "--recall", "faaf"]


def timed(args: list[str], env: dict[str, str], scratch: Path) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one run; its output goes to files, as `--json > FILE` would."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    with (scratch / "stdout").open("wb") as out, (scratch / "stderr").open("wb") as err:
        code = subprocess.run(args, env=env, stdout=out, stderr=err, check=False).returncode
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if code != 0:
        tail = (scratch / "stderr").read_text(encoding="utf-8", errors="replace")[-2000:]
        raise SystemExit(f"{' '.join(args[:4])} … failed ({code}): {tail}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(revision: str, pairs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="ragfacts-against-") as name:
        scratch = Path(name)
        other = scratch / "other"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(other), revision], check=True)
        try:
            compileall.compile_dir(str(other / "src" / "ragfacts"), quiet=1)
            byte_compile()
            data = write_rows(scratch / "answers.jsonl", ANSWERS)
            process, url = start(0.0)
            base = {**os.environ, "OPENAI_API_KEY": KEY, "RAGFACTS_HOME": str(scratch / "home")}
            envs = {"this checkout": base, revision: {**base, "PYTHONPATH": str(other / "src")}}
            flags = ["--model", "openai:bench", "--base-url", url, "--concurrency", "32", "--json", "evaluate"]
            seconds: dict[str, list[float]] = {name: [] for name in envs}
            cpu: dict[str, list[float]] = {name: [] for name in envs}
            try:
                for version, env in envs.items():  # fill the cache (once per version, should their keys differ)
                    fill = [sys.executable, "-m", "ragfacts", *flags, str(data), *METHODS, "-o", str(scratch / version)]
                    timed(fill, env, scratch)
                for pair in range(pairs):
                    for version, env in envs.items():
                        out = scratch / f"{version}-{pair}"
                        args = [sys.executable, "-m", "ragfacts", *flags, str(data), *METHODS, "-o", str(out)]
                        wall, used = timed(args, env, scratch)
                        seconds[version].append(round(wall, 2))
                        cpu[version].append(round(used, 2))
                    print(json.dumps({v: [s[-1], cpu[v][-1]] for v, s in seconds.items()}), flush=True)
            finally:
                process.kill()
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(other)], check=False)
    medians = {version: median(values) for version, values in seconds.items()}
    cpu_medians = {version: median(values) for version, values in cpu.items()}
    return {
        "command": f"python benchmarks/cached_against.py {revision} --pairs {pairs}",
        "answers": ANSWERS,
        "revision": revision,
        "seconds": seconds,
        "median_s": medians,
        "cpu_s": cpu,
        "median_cpu_s": cpu_medians,
        "ratio": round(medians["this checkout"] / medians[revision], 3),
        "cpu_ratio": round(cpu_medians["this checkout"] / cpu_medians[revision], 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("revision", help="a git revision of ragfacts to compare with (e.g. a commit)")
    parser.add_argument("--pairs", type=int, default=9)
    args = parser.parse_args()
    report = measure(args.revision, args.pairs)
    out = ROOT / "benchmarks" / "results" / "cached_against.json"
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report["median_s"]), "ratio", report["ratio"], "CPU ratio", report["cpu_ratio"], f"\nwrote {out}")


if __name__ == "__main__":
    main()
