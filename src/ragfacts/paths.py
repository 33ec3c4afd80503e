"""Where ragfacts keeps its state: one directory, which RAGFACTS_HOME overrides (imports nothing of ragfacts)."""

from __future__ import annotations

import os
from pathlib import Path


def ragfacts_home() -> Path:
    """The one directory that holds ragfacts state (cache, assembled models); RAGFACTS_HOME overrides it."""
    if os.environ.get("RAGFACTS_HOME"):
        return Path(os.environ["RAGFACTS_HOME"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "ragfacts"
