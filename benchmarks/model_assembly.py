"""What the first command with the embedded model costs: assembling the GGUF from its installed parts, verified.

`ensure_default_model` on an empty models directory (a fresh `$RAGFACTS_HOME`) concatenates the parts that the
model packages installed (`find_parts`) into one file and checks its size and SHA-256, as the first `ragfacts demo`
does; the second call finds it verified and returns at once. Timed `--repeats` times, each into a fresh temporary
directory (deleted after), so the page cache is warm after the first: the first figure is the one a new user sees
right after `pip install`, the median the one of a re-assembly.

    python benchmarks/model_assembly.py [--repeats 3]   # writes benchmarks/results/model_assembly.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import provenance

from ragfacts.models.local.embedded import DEFAULT_MODEL, ensure_default_model, find_parts

OUT = Path(__file__).resolve().parent / "results" / "model_assembly.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    parts = find_parts(DEFAULT_MODEL)
    assembled, verified = [], []
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory(prefix="model-assembly-") as scratch:
            started = time.perf_counter()
            target = ensure_default_model(Path(scratch), progress=lambda done, total: None)
            assembled.append(time.perf_counter() - started)
            started = time.perf_counter()
            ensure_default_model(Path(scratch), progress=lambda done, total: None)
            verified.append(time.perf_counter() - started)
            size = target.stat().st_size
    report = {
        "provenance": provenance(),
        "what": "ensure_default_model on an empty models directory: the parts concatenated, size and SHA-256 checked",
        "parts": len(parts),
        "bytes": size,
        "gb": round(size / 1e9, 2),
        "assembly_s": {
            "first": round(assembled[0], 2),
            "median": round(statistics.median(assembled), 2),
            "each": [round(s, 2) for s in assembled],
        },
        "already_verified_s": round(statistics.median(verified), 4),
    }
    OUT.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
