"""A fully cached `evaluate` of 1,000 answers, this checkout against another revision of ragfacts, in one session.

On a shared machine the speed of a whole run can vary by half from one hour to the next, so an absolute figure
taken today is not comparable with one taken last week. This script runs both versions in turn, as a user runs
them (fresh processes, `--json`, byte-compiled sources, timed as `performance.py` times its commands), against one
response cache filled beforehand: the ratio of the medians, of wall time and of CPU time, is what changed in
ragfacts, whatever the machine did meanwhile.

    python benchmarks/cached_against.py REVISION [--pairs 9]   # about 2 minutes; writes results/cached_against.json
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from statistics import median
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from _provenance import elapsed, provenance  # noqa: E402
from latency_server import start  # noqa: E402
from performance import KEY, byte_compile, timed, write_rows  # noqa: E402

ANSWERS = 1_000
METHODS = ["--precision", "lface4rag:strategy=paper", "--recall", "faaf"]


def measure(revision: str, pairs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="ragfacts-against-") as name:
        scratch = Path(name)
        other = scratch / "other"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(other), revision], check=True)
        try:
            compileall.compile_dir(str(other / "src" / "ragfacts"), quiet=1)
            byte_compile()
            data = write_rows(scratch / "answers.jsonl", ANSWERS)
            made_from = provenance(data={"answers.jsonl (performance.write_rows)": data})
            process, url = start(0.0)
            # A home each: the schemas' digest is stored there per version of the sources, one at a time
            base = {**os.environ, "OPENAI_API_KEY": KEY, "RAGFACTS_HOME": str(scratch / "home")}
            envs = {
                "this checkout": base,
                revision: {**base, "PYTHONPATH": str(other / "src"), "RAGFACTS_HOME": str(scratch / "home-other")},
            }
            flags = ["--model", "openai:bench", "--base-url", url, "--concurrency", "32", "--json", "evaluate"]
            seconds: dict[str, list[float]] = {name: [] for name in envs}
            cpu: dict[str, list[float]] = {name: [] for name in envs}
            try:
                for version, env in envs.items():  # fill the cache (once per version, should their keys differ)
                    fill = [sys.executable, "-m", "ragfacts", *flags, str(data), *METHODS, "-o", str(scratch / version)]
                    timed(fill, env)
                for pair in range(pairs):
                    for version, env in envs.items():
                        out = scratch / f"{version}-{pair}"
                        args = [sys.executable, "-m", "ragfacts", *flags, str(data), *METHODS, "-o", str(out)]
                        done = timed(args, env)
                        seconds[version].append(round(done["wall_s"], 2))
                        cpu[version].append(round(done["cpu_s"], 2))
                    print(json.dumps({v: [s[-1], cpu[v][-1]] for v, s in seconds.items()}), flush=True)
            finally:
                process.kill()
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(other)], check=False)
    medians = {version: median(values) for version, values in seconds.items()}
    cpu_medians = {version: median(values) for version, values in cpu.items()}
    return {
        "provenance": {**made_from, "wall_s": elapsed()},
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
