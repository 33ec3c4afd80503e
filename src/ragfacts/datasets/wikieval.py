"""WikiEval and WikiEvalFacts texts: fact lists, human label dicts, the "Question:"/"Answer:" prefixes, the hub file.

WikiEvalFacts (hub dataset `Vaskatr/WikiEvalFacts`) is one CSV of 50 rows; its `gt_facts` column is a
"- fact" list and the `human_evaluated_facts_*` columns are stringified dicts {fact: "True"/"False"}.
They are parsed with json or ast.literal_eval, never eval. The second context column is spelled
`contetx_v2` in the original. The layouts in `ragfacts.datasets.layouts` use these helpers to read both
WikiEval (three answers per question, facts generated from `answer`) and WikiEvalFacts (given facts with
human labels) into one item per answer.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any, TypeGuard

from ragfacts.datasets.reader import DatasetError
from ragfacts.text import normalise

HUB_REPO = "Vaskatr/WikiEvalFacts"
HUB_FILE = "wikiEval_human_annotated_facts_.csv"
ANSWER_TYPES = ("answer", "ungrounded_answer", "poor_answer")
LABEL_COLUMNS = {kind: f"human_evaluated_facts_{kind}" for kind in ANSWER_TYPES}
_PREFIXES = {"question": "Question:", "answer": "Answer:"}
_BULLET = re.compile(r"^\s*[-*•]\s+")


def download_wikieval_facts(revision: str | None = None) -> Path:
    """Download the WikiEvalFacts CSV into the hub cache and return its path (needs internet)."""
    try:
        from huggingface_hub import hf_hub_download
    except ImportError as error:
        raise DatasetError(
            "loading WikiEvalFacts from the hub needs huggingface_hub: pip install huggingface_hub "
            f"(or download {HUB_FILE} and pass its path)"
        ) from error
    return Path(hf_hub_download(repo_id=HUB_REPO, filename=HUB_FILE, repo_type="dataset", revision=revision))


def parse_fact_list(text: str, where: str = "gt_facts") -> list[str]:
    """Split a "- fact" list (one per line, or all on one line) or a stringified list into facts."""
    text = (text or "").strip()
    if text.startswith("["):
        listed = literal_value(text, where)
        if not _is_str_list(listed):
            raise DatasetError(f"{where}: the fact list must hold strings")
        return [f.strip() for f in listed if f.strip()]
    lines = [line for line in text.splitlines() if line.strip()]
    if sum(bool(_BULLET.match(line)) for line in lines) >= 2:
        facts: list[str] = []
        for line in lines:
            if _BULLET.match(line) or not facts:
                facts.append(_BULLET.sub("", line).strip())
            else:
                facts[-1] = f"{facts[-1]} {line.strip()}"  # a fact wrapped over two lines
    else:
        # All on one line, "- a - b": split only on a dash that starts the text or follows a space.
        facts = [part.strip() for part in re.split(r"(?:^|\s)-\s+", text)]
    return [fact for fact in facts if fact]


def parse_label_dict(text: str, where: str = "labels") -> dict[str, bool | None]:
    """Parse a stringified {fact: "True"/"False"} dict; other values (e.g. "No_response") become None."""
    value = literal_value(text, where)
    if not isinstance(value, dict):
        raise DatasetError(f"{where}: human labels must be a dict of fact -> True/False")
    return {str(fact): as_label(label) for fact, label in value.items()}


def align_labels(facts: list[str], labels: dict[str, bool | None]) -> list[bool | None]:
    """Give each fact its human label: by leniently normalised text, else by position when counts agree."""
    by_text = {normalise(fact): label for fact, label in labels.items()}
    matched = [by_text.get(normalise(fact)) for fact in facts]
    unmatched = sum(normalise(fact) not in by_text for fact in facts)
    if unmatched and len(labels) == len(facts):
        return list(labels.values())  # the original keys were rewritten (dashes, dots, quotes removed)
    return matched


def literal_value(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except (json.JSONDecodeError, TypeError):
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as error:
        raise DatasetError(f"{where}: cannot parse {text[:60]!r}…: {error}") from error


def as_label(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    folded = str(value).strip().casefold()
    return {"true": True, "false": False}.get(folded)


def strip_prefix(text: str, kind: str) -> str:
    """WikiEval keeps "Question: " and "Answer: " in front of some texts; the model should not see them."""
    text = text.strip()
    prefix = _PREFIXES.get(kind)
    if prefix and text.startswith(prefix):
        return text[len(prefix) :].strip()
    return text


def _is_str_list(value: object) -> TypeGuard[list[str]]:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)
