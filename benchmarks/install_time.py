"""What installing the `[local]` extra costs where PyPI has no wheel: llama-cpp-python compiled from source.

Creates a fresh venv in a temporary directory (with this interpreter; not timed), then times one
`pip install --no-binary llama-cpp-python --no-cache-dir llama-cpp-python==VERSION` in it: the download, the build
environment, the compile and the install, as a user pays them, with nothing from pip's cache. VERSION is the one
installed beside ragfacts here (pyproject.toml asks for >=0.3.2 and pins none), or `--version`. CMAKE_ARGS, if set,
passes through to the build and is recorded. It uses every core for minutes: run it on an idle machine.

    python benchmarks/install_time.py [--version V]   # writes benchmarks/results/install_time.json
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
from importlib import metadata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import provenance

PACKAGE = "llama-cpp-python"
OUT = Path(__file__).resolve().parent / "results" / "install_time.json"


def installed_version() -> str | None:
    try:
        return metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:
        return None


def children_cpu_s() -> float:
    """CPU seconds of the child processes waited for so far (pip, and the compilers it waited for)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", default=installed_version(), help="default: the version installed here")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    if not args.version:
        parser.error(f"{PACKAGE} is not installed here: give --version")

    pip_args = ["install", "--no-binary", PACKAGE, "--no-cache-dir", f"{PACKAGE}=={args.version}"]
    with tempfile.TemporaryDirectory(prefix="install-time-") as scratch:
        venv = Path(scratch) / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        python = str(venv / "bin" / "python")
        pip = subprocess.run([python, "-m", "pip", "--version"], capture_output=True, text=True, check=True)
        cpu_before, started = children_cpu_s(), time.perf_counter()
        done = subprocess.run([python, "-m", "pip", *pip_args], capture_output=True, text=True)
        seconds, cpu_s = time.perf_counter() - started, children_cpu_s() - cpu_before
    if done.returncode != 0:
        sys.exit(f"pip failed ({done.returncode}):\n{(done.stdout + done.stderr)[-4000:]}")

    report = {
        "provenance": provenance(),
        "what": f"{PACKAGE} compiled from source into a fresh venv, nothing from pip's cache",
        "pip_command": "pip " + " ".join(pip_args),
        "pip": pip.stdout.split(" from ")[0].strip(),
        "version": args.version,
        "cmake_args": os.environ.get("CMAKE_ARGS"),
        "seconds": round(seconds, 1),
        "minutes": round(seconds / 60, 1),
        "cpu_s": round(cpu_s, 1),
    }
    args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(f"{report['pip_command']}: {report['minutes']} minutes ({report['cpu_s']} s of CPU); wrote {args.out}")


if __name__ == "__main__":
    main()
