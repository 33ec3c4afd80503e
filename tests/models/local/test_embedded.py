"""Assembling the embedded model: found through package metadata, accepted only if verified."""

from __future__ import annotations

import hashlib

import pytest

from ragfacts.models import ConfigurationError
from ragfacts.models.local.embedded import (
    EmbeddedModel,
    assemble,
    embedded_status,
    find_parts,
    is_verified,
    stderr_progress,
)


def _parts(tmp_path, chunks):
    paths = []
    for i, data in enumerate(chunks):
        path = tmp_path / f"part{i:02d}.bin"
        path.write_bytes(data)
        paths.append(path)
    return paths


def test_assembles_parts_in_order_and_marks_them_verified(tmp_path):
    parts = _parts(tmp_path, [b"GGUF", b"-body-", b"end"])
    blob = b"GGUF-body-end"
    target = assemble(parts, tmp_path / "m" / "model.gguf", len(blob), hashlib.sha256(blob).hexdigest())
    assert target.read_bytes() == blob
    assert is_verified(target, len(blob), hashlib.sha256(blob).hexdigest())


def test_assembly_says_what_it_does_with_the_size_on_stderr(tmp_path, capsys):
    parts = _parts(tmp_path, [b"GGUF", b"-body-", b"end"])
    blob = b"GGUF-body-end"
    target = tmp_path / "m" / "model.gguf"
    assemble(parts, target, len(blob), hashlib.sha256(blob).hexdigest(), stderr_progress(target))
    line = capsys.readouterr().err
    assert line == f"assembling the embedded model (0.00 GB, first use only) into {target} ... 100%\n"


def test_refuses_a_file_whose_hash_differs_and_leaves_nothing(tmp_path):
    parts = _parts(tmp_path, [b"GGUF", b"tampered"])
    target = tmp_path / "m" / "model.gguf"
    with pytest.raises(ConfigurationError, match="refusing"):
        assemble(parts, target, 12, "0" * 64)
    assert not target.exists() and list(target.parent.iterdir()) == []


def test_a_file_without_its_marker_is_not_trusted(tmp_path):
    target = tmp_path / "model.gguf"
    target.write_bytes(b"abc")
    assert not is_verified(target, 3, hashlib.sha256(b"abc").hexdigest())


def test_missing_parts_say_how_to_install(tmp_path):
    absent = EmbeddedModel("x.gguf", "ragfacts-test-no-such-part{n}", 2, 1, "0" * 64)
    with pytest.raises(ConfigurationError, match=r"pip install 'ragfacts\[local\]'"):
        find_parts(absent)
    assert "not installed" in embedded_status(tmp_path, absent)
