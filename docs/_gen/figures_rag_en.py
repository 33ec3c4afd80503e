"""Figures typed into docs/results/long-answers.md and the README about long English RAG answers, each tied to
`rag_en_report.json` (`benchmarks/rag_en_report.py`; what a snippet holds: `_gen.figures`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from _gen.figures import Figure

ALIASES: dict[str, str] = {}
DERIVED: dict[str, Callable[[Any, Callable[[str], Any]], dict[str, Any]]] = {}

PAGE = "docs/results/long-answers.md"

FIGURES: list[Figure] = []
