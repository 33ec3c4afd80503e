"""Source files read at a pinned commit and checked against a pinned digest: what every corpus builder shares.

A source is a bare git mirror (read with ``git cat-file``) or a plain checkout of the pinned commit; each file
read is checked against its pinned digest (SHA-256 unless the builder says otherwise), so a rebuild is
byte-for-byte identical or fails saying which file differs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path


class SourceError(RuntimeError):
    pass


def read_bytes(root: Path, commit: str, path: str) -> bytes:
    """Read ``path`` at ``commit`` from a bare git mirror, or from a checkout of that commit."""
    if (root / "objects").is_dir() and (root / "HEAD").is_file():
        done = subprocess.run(
            ["git", f"--git-dir={root}", "cat-file", "blob", f"{commit}:{path}"],
            capture_output=True,
            check=False,
        )
        if done.returncode != 0:
            raise SourceError(f"{root}: cannot read {commit}:{path}: {done.stderr.decode(errors='replace').strip()}")
        return done.stdout
    file = root / path
    if not file.is_file():
        raise SourceError(f"{file} is missing")
    return file.read_bytes()


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def git_blob_id(data: bytes) -> str:
    """Git's id of a blob: what a repository's tree records for a file too large to keep its text."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class PinnedSource:
    """One source repository: its pinned commit and the digest of every file read from it."""

    def __init__(
        self,
        name: str,
        root: Path,
        commit: str,
        files: dict[str, str],
        pin_only: bool = False,
        digest: Callable[[bytes], str] = sha256,
    ) -> None:
        self.name, self.root, self.commit, self.files = name, root, commit, files
        self.pin_only = pin_only  # the commit is pinned, the files' digests are not checked
        self.digest = digest
        self.digests: dict[str, str] = {}  # SHA-256 of every file read, for --print-digests

    def read(self, path: str) -> bytes:
        data = read_bytes(self.root, self.commit, path)
        expected, actual = self.files[path], self.digest(data)
        if expected and actual != expected and not self.pin_only:
            raise SourceError(f"{self.name}: {path} has digest {actual}, expected {expected}")
        self.digests[path] = sha256(data)
        return data

    def text(self, path: str) -> str:
        return self.read(path).decode("utf-8")

    def json(self, path: str) -> object:
        return json.loads(self.text(path))

    def jsonl(self, path: str) -> list[dict]:
        return [json.loads(line) for line in self.text(path).split("\n") if line.strip()]


def add_source_arguments(parser: argparse.ArgumentParser, names: Iterable[str]) -> None:
    """Add a required ``--<name>`` path per source, and ``--check``, ``--print-digests`` and ``--no-verify``."""
    for name in names:
        parser.add_argument(f"--{name}", type=Path, required=True, help=f"git mirror or checkout of the {name} source")
    parser.add_argument("--check", action="store_true", help="compare with the files in --out, write nothing")
    parser.add_argument("--print-digests", action="store_true", help="print the SHA-256 of every source file read")
    parser.add_argument("--no-verify", action="store_true", help="do not check source files against their pins")


def open_sources(pinned: Mapping[str, tuple[str, dict[str, str]]], args: argparse.Namespace) -> dict[str, PinnedSource]:
    """One source per entry of ``pinned`` (name -> (commit, {path: sha256})), at the path given as ``--<name>``."""
    return {
        name: PinnedSource(name, getattr(args, name), commit, files, pin_only=args.no_verify)
        for name, (commit, files) in pinned.items()
    }


def print_digests(sources: Mapping[str, PinnedSource]) -> None:
    """Print the SHA-256 of every file read, one line each: source, commit, path, digest."""
    for name, src in sources.items():
        for path, digest in src.digests.items():
            print(f"{name} {src.commit} {path} {digest}")
