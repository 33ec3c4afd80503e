"""ragfacts: is a RAG answer faithful to its reference (L-Face4RAG), and does it recall the expected facts (FaaF)?

import ragfacts
results = ragfacts.evaluate("data.jsonl", model="openai:gpt-4o-mini")
ragfacts.check(reference="...", answer="...")[0]["label"]
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
__all__ = ["Item", "Results", "__version__", "check", "evaluate", "read_run", "recall"]


def __getattr__(name: str) -> Any:
    # Imported on first use: `import ragfacts` (and `ragfacts --help`) stays fast.
    if name in ("evaluate", "check", "recall", "read_run", "Results"):
        from ragfacts import api

        return getattr(api, name)
    if name == "Item":
        from ragfacts.items import Item

        return Item
    raise AttributeError(f"module 'ragfacts' has no attribute {name!r}")
