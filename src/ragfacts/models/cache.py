"""Persistent response cache: SQLite, user-only file, keyed on everything that changes the output."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

from ragfacts import jsontext, redaction
from ragfacts.hashing import canonical_json

CACHE_KEY_VERSION = "ragfacts-cache-v2"  # v2: the model without its URL; schema and model as digests

# Append-only: each entry upgrades the file by one version. Never edit a released entry.
_MIGRATIONS: list[str] = [
    """CREATE TABLE responses (
         key TEXT PRIMARY KEY,
         backend TEXT NOT NULL,
         model TEXT NOT NULL,
         stage TEXT NOT NULL,
         record TEXT NOT NULL,
         created REAL NOT NULL
       )""",
]


def cache_key(request: dict[str, Any], messages: list[tuple[str, str]], settings: str | None = None) -> str:
    """Return the key of a request: a versioned SHA-256 of its settings' canonical JSON and its messages (hashed as
    they are: the prompts are most of a request, and escaping them into JSON first would only cost time).

    `settings`, where given, is `canonical_json(request)` already made (the caller keeps it for settings it sees
    again)."""
    sha = hashlib.sha256((canonical_json(request) if settings is None else settings).encode("utf-8"))
    for role, content in messages:
        sha.update(b"\0" + role.encode("utf-8") + b"\0" + str(len(content)).encode("ascii") + b"\0")
        sha.update(content.encode("utf-8"))
    return f"v2:{sha.hexdigest()}"


class ResponseCache:
    """Successful, validated replies by request key. Failures are never cached."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not self.path.exists():
            # Create the file user-only before SQLite opens it; its journal files inherit the mode.
            os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY, 0o600))
        os.chmod(self.path, 0o600)
        self._db = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        self._use_wal()
        # With WAL, NORMAL commits without an fsync per reply; a crash can lose the last replies, never corrupt.
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._migrate()

    def _use_wal(self) -> None:
        """Switch to WAL (once per file: it persists). Two connections switching a new file at once get "database is
        locked" at once, without the busy timeout: the loser waits for the winner, whose switch then stands."""
        deadline = time.monotonic() + 30
        while True:
            try:
                self._db.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) or time.monotonic() > deadline:
                    raise
                time.sleep(0.01)

    def _migrate(self) -> None:
        """Bring the schema up to date in one write transaction: two processes or threads opening a new cache at once
        migrate it once (the second waits, then finds it current), never "table responses already exists"."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            for index, statement in enumerate(_MIGRATIONS[version:], start=version + 1):
                self._db.execute(statement)
                self._db.execute(f"PRAGMA user_version = {index}")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def get(self, key: str) -> dict[str, Any] | None:
        row = self._db.execute("SELECT record FROM responses WHERE key = ?", (key,)).fetchone()
        return jsontext.loads(row[0]) if row else None

    def put(self, key: str, *, backend: str, model: str, stage: str, record: dict[str, Any]) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO responses (key, backend, model, stage, record, created) VALUES (?, ?, ?, ?, ?, ?)",
            (key, backend, redaction.redact(model), stage, redaction.redact(canonical_json(record)), time.time()),
        )

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        self._db.close()
