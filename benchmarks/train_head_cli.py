"""What `ragfacts train-head` costs on 2 cores: 300 labelled answers with the embedded model, from nothing.

Runs the command as a user would (`ragfacts --model local --no-cache --json train-head FILE -o HEAD`) on the
first 300 rows of benchmarks/data/train/train.jsonl (a balanced prefix: 160 Chinese, 140 English), with an empty
feature cache and the response cache bypassed, so that every answer is read by the model. It records the report:
the split it made, test balanced accuracy and ECE, the default it was compared with, and the seconds spent
reading the answers (the model's forward passes) against fitting the head. The shipped head was trained on these
rows, so the comparison with it is not a fair one; the point here is the time.

    python benchmarks/train_head_cli.py [--rows 300] [--out benchmarks/results/train_head_cli.json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data" / "train" / "train.jsonl"

sys.path.insert(0, str(ROOT / "benchmarks"))
from _provenance import elapsed, files, provenance  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=300)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "train_head_cli.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "labelled.jsonl"
        lines = DATA.read_text(encoding="utf-8").splitlines()[: args.rows]
        data.write_text("\n".join(lines) + "\n", encoding="utf-8")
        made_from = provenance(data={**files(DATA), f"labelled.jsonl (its first {args.rows} lines)": data})
        command = [
            sys.executable,
            "-m",
            "ragfacts",
            "--model",
            "local",
            "--no-cache",
            "--json",
            "train-head",
            str(data),
        ]
        command += ["-o", str(Path(folder) / "head.json")]
        done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "COLUMNS": "160"})
        if done.returncode not in (0, 1):  # 1: a head worse than the default was not written; still measured
            raise SystemExit(done.stderr)
        report = json.loads(done.stdout)
        langs: dict[str, int] = {}
        for line in lines:
            lang = json.loads(line)["lang"]
            langs[lang] = langs.get(lang, 0) + 1
        report["rows_by_language"] = langs
        report["written"] = done.returncode == 0
        report["cores"] = os.cpu_count()
    report = {"provenance": {**made_from, "wall_s": elapsed()}, **report}
    args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({k: report[k] for k in ("timing_s", "split", "default", "written")}, indent=1))


if __name__ == "__main__":
    main()
