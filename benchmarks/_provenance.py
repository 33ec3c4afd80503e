"""What made a results file: the command, the commit, the data's SHA-256 and the machine.

Every script that writes `benchmarks/results/*.json` stores `provenance(...)` under the key "provenance", so each
figure can be traced to the command that made it, the code it ran and the data it read:

    report = {..., "provenance": provenance(data=files(DATA))}
"""

from __future__ import annotations

import hashlib
import os
import platform
import shlex
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# When this module was first imported: a benchmark imports it with its other imports, before it runs anything, so
# `provenance()` can say how long the run took.
_STARTED = time.monotonic()


def command_line() -> str:
    """The command that started this process, as it is typed at the repository's root."""
    script = Path(sys.argv[0]).resolve()
    shown = script.relative_to(ROOT) if script.is_relative_to(ROOT) else script
    return "python " + shlex.join([str(shown), *sys.argv[1:]])


def commit() -> str | None:
    """The checkout's commit, with "+dirty" when tracked code or data differ from it (results files and the pages
    that quote them aside); None outside a git checkout."""
    try:
        found = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
    except FileNotFoundError:  # no git on this machine
        return None
    if found.returncode != 0:
        return None
    # Results files are left out (a benchmark rewrites its own, which would mark every later run dirty), and so are
    # the pages that quote them (README.md, docs/): neither changes what a benchmark runs.
    changed = subprocess.run(
        [
            *("git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no", "--", "."),
            *(":!benchmarks/results", ":!docs", ":!README.md"),
        ],
        capture_output=True,
        text=True,
    )
    return found.stdout.strip() + ("+dirty" if changed.stdout.strip() else "")


def machine() -> dict[str, Any]:
    """The machine: its cores, its CPU's model name and the Python version."""
    cpuinfo = Path("/proc/cpuinfo")
    lines = cpuinfo.read_text(encoding="utf-8").splitlines() if cpuinfo.is_file() else []
    model = next((line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")), None)
    return {"cores": os.cpu_count(), "cpu": model or platform.processor() or None, "python": platform.python_version()}


def sha256_of(source: Path | bytes) -> str:
    """The SHA-256 of a file's bytes, or of the bytes given."""
    return hashlib.sha256(source if isinstance(source, bytes) else source.read_bytes()).hexdigest()


def files(*paths: Path) -> dict[str, Path]:
    """Data files named as provenance names them: by their path in the repository, else by their file name."""
    named = {}
    for path in paths:
        resolved = path.resolve()
        named[str(resolved.relative_to(ROOT)) if resolved.is_relative_to(ROOT) else resolved.name] = path
    return named


# The checkout as the run started: the code that ran is the code at its start, whatever is committed or edited
# while it runs (a benchmark imports this module with its other imports, before it runs anything).
_STARTED_AT = commit()


def commit_at_start() -> str | None:
    """`commit()` as this process started (read when this module was first imported)."""
    return _STARTED_AT


def elapsed() -> float:
    """Seconds since this module was first imported: a run's wall time so far."""
    return round(time.monotonic() - _STARTED, 1)


def provenance(command: str | None = None, data: Mapping[str, Path | bytes] | None = None) -> dict[str, Any]:
    """The provenance block of a results file.

    Args:
        command: the command that reproduces the file; by default, the one that started this process.
        data: what the figures were computed from, by name: a file, or the bytes of data made on the fly.

    Returns:
        {"command", "commit", "data": {name: SHA-256}, "machine": {"cores", "cpu", "python"}, "wall_s"}: the commit
        is the checkout's as the run started (`commit_at_start`), `wall_s`
        is `elapsed()` at this call, the run's wall time when called as it ends (a script that takes its provenance
        before it measures sets "wall_s" again from `elapsed()` as it writes).
    """
    return {
        "command": command or command_line(),
        "commit": commit_at_start(),
        "data": {name: sha256_of(source) for name, source in (data or {}).items()},
        "machine": machine(),
        "wall_s": elapsed(),
    }
