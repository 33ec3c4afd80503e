"""Files replaced whole: the old file or the new one, never part of one, and no temporary file left behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragfacts.files import replace_text, replacing


def test_a_file_is_replaced_when_the_writing_ends(tmp_path: Path):
    path = tmp_path / "sub" / "out.txt"
    replace_text(path, "first\n")
    with replacing(path) as handle:
        handle.write("second\n")
        assert path.read_text(encoding="utf-8") == "first\n"  # not yet: readers still see the old file
    assert path.read_text(encoding="utf-8") == "second\n" and sorted(p.name for p in path.parent.iterdir()) == [
        "out.txt"
    ]


def test_a_write_that_fails_leaves_the_old_file_and_no_temporary_one(tmp_path: Path):
    path = tmp_path / "out.txt"
    replace_text(path, "kept\n")
    with pytest.raises(RuntimeError), replacing(path) as handle:
        handle.write("half")
        raise RuntimeError("killed half-way")
    assert path.read_text(encoding="utf-8") == "kept\n" and [p.name for p in tmp_path.iterdir()] == ["out.txt"]
