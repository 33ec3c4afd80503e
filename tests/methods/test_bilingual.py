"""The digest of the schemas the methods send: computed once, stored, and read back only for the same sources."""

from __future__ import annotations

import json
from pathlib import Path

from ragfacts.methods import bilingual


def test_the_schemas_digest_is_stored_and_a_later_process_with_the_same_sources_reads_it(isolated_home, monkeypatch):
    monkeypatch.setattr(bilingual, "_DIGESTS", {})  # as in a fresh process
    computed = bilingual.schemas_digest("ragfacts.methods")
    store = isolated_home / "cache" / "schemas_digest.json"
    (key, stored), *_ = json.loads(store.read_text(encoding="utf-8")).items()
    assert stored == computed

    store.write_text(json.dumps({key: "read-from-the-store"}), encoding="utf-8")
    monkeypatch.setattr(bilingual, "_DIGESTS", {})
    assert bilingual.schemas_digest("ragfacts.methods") == "read-from-the-store"

    store.write_text(json.dumps({"other sources": "stale"}), encoding="utf-8")  # another version's digest
    monkeypatch.setattr(bilingual, "_DIGESTS", {})
    assert bilingual.schemas_digest("ragfacts.methods") == computed


def test_the_sources_key_changes_with_any_source_file_and_with_the_texts(tmp_path: Path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("X = 1\n", encoding="utf-8")
    (tmp_path / "b.py").write_text("Y = 2\n", encoding="utf-8")
    before = bilingual.sources_key(tmp_path, "p", ["texts"])
    assert bilingual.sources_key(tmp_path, "p", ["texts"]) == before
    assert bilingual.sources_key(tmp_path, "p", ["other texts"]) != before
    (tmp_path / "pkg" / "a.py").write_text("X = 3\n", encoding="utf-8")
    assert bilingual.sources_key(tmp_path, "p", ["texts"]) != before
