"""The built-in demo examples: a reference, a ground truth, a faithful and a flawed answer each."""

from __future__ import annotations

import json
from importlib import resources

from pydantic import BaseModel


class DemoExample(BaseModel):
    """One demo item; `flawed_errors` lists the Face4RAG error types planted in the flawed answer."""

    id: str
    lang: str
    question: str
    reference: str
    ground_truth: str
    answers: dict[str, str]
    flawed_errors: list[str]


def load_demo_examples() -> list[DemoExample]:
    """Return the shipped examples (at least one Chinese and one English)."""
    text = resources.files(__package__).joinpath("data").joinpath("demo.jsonl").read_text(encoding="utf-8")
    return [DemoExample.model_validate(json.loads(line)) for line in text.splitlines() if line.strip()]
