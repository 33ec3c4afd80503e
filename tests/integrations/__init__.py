"""The adapters (ragfacts.integrations) tested against the real pytest, RAGAS, LlamaIndex and DeepEval.

Each adapter's tests skip when its library is not installed, unless RAGFACTS_REQUIRE_ADAPTER_TESTS=1 (CI), where
they fail instead: an adapter that CI meant to test must not silently go untested.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import pytest


def import_or_skip(module: str, extra: str) -> ModuleType:
    """`module`; the test skips without it, or fails where CI asks for it (RAGFACTS_REQUIRE_ADAPTER_TESTS=1)."""
    if os.environ.get("RAGFACTS_REQUIRE_ADAPTER_TESTS") == "1":
        return importlib.import_module(module)
    return pytest.importorskip(module, reason=f"needs the [{extra}] extra")
