"""The model's readings of labelled answers, for fitting a head: one forward pass each, kept in a file to resume.

Each answer is asked the holistic_score question (`scored.holistic_request`, the prompt the head will read at run
time); the reading is P(Yes), the Yes-No log-odds and, on a model that gives it, the hidden state at the verdict.
Readings are appended to a JSON-lines file as they come, keyed by SHA-256 of (model identity, prompt id, prompt),
so an interrupted run reads only what is left and a changed prompt or model is read again.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ragfacts.evidence import FEATURE_NAMES
from ragfacts.items import Item
from ragfacts.methods.precision.head import log_odds, shipped_head
from ragfacts.methods.precision.options import DEFAULT_THRESHOLDS
from ragfacts.methods.precision.scored import holistic_request
from ragfacts.methods.precision.training import VETO_FEATURES, Example, evidence_of
from ragfacts.models import ChatModel, ConfigurationError, ModelProfile
from ragfacts.text import detect_lang, split_sentences

CHUNK = 16  # answers sent at once; the progress callback is called after each chunk
_FLAG_COLUMNS = [FEATURE_NAMES.index(n) for n in VETO_FEATURES]


async def read_all(
    model: ChatModel, items: list[Item], cache: Path, progress: Callable[[int, int], None] = lambda done, total: None
) -> tuple[list[Example], int, str]:
    """Every answer read by the model once (from the cache where it was read before); failures counted."""
    if await model.probe_label_scores() is False:
        raise ConfigurationError(f"{model.model_id} gives no log-probabilities; a head needs them")
    profile = model.profile()
    use_state = profile.hidden_state
    identity = model_identity(model, profile)
    known = read_cache(cache)
    examples: list[Example] = []
    failed = 0
    with cache.open("a", encoding="utf-8") as sink:
        for start in range(0, len(items), CHUNK):
            chunk = items[start : start + CHUNK]
            rows = await asyncio.gather(*(read_one(model, item, identity, use_state, known) for item in chunk))
            for item, (key, row) in zip(chunk, rows, strict=True):
                if row is None:
                    failed += 1
                    continue
                if key not in known:
                    known[key] = row
                    sink.write(json.dumps({"key": key, **row}) + "\n")
                    sink.flush()
                examples.append(example_of(item, row))
            progress(min(start + CHUNK, len(items)), len(items))
    return examples, failed, identity


def model_identity(model: ChatModel, profile: ModelProfile) -> str:
    """What readings are keyed by: the weights' SHA-256 where the hidden state is read (a head over it fits those
    weights only), else the backend and the model's name."""
    if not profile.hidden_state:
        return f"{model.backend}:{model.model_id}"
    if profile.sha256:
        return profile.sha256
    # Not every backend can hash its weights (`ChatModel` has no such method): the local GGUF backend can.
    weights_sha256 = getattr(model, "weights_sha256", None)
    if weights_sha256 is None:
        raise ConfigurationError(f"{model.model_id} gives a hidden state but no SHA-256 of its weights to key it by")
    sha256: str = weights_sha256()
    return sha256


async def read_one(
    model: ChatModel, item: Item, identity: str, use_state: bool, known: dict[str, dict[str, Any]]
) -> tuple[str, dict[str, Any] | None]:
    lang = detect_lang(item.answer)
    messages, (yes, no), prompt_id = holistic_request(item, lang)
    key = hashlib.sha256(f"{identity}\n{prompt_id}\n{messages[0].content}".encode()).hexdigest()
    if key in known:
        return key, known[key]
    completion = await model.score_labels(
        messages, [yes, no], stage="train_head", prompt_version=prompt_id, hidden_state=use_state
    )
    if not completion.ok:
        return key, None
    scores = completion.parsed
    row = {
        "lang": lang,
        "prompt": prompt_id,
        "p_yes": scores.probabilities[yes],
        "log_odds": log_odds(scores.logprobs, yes, no),
        "state": scores.state,
    }
    return key, row


def read_cache(path: Path) -> dict[str, dict[str, Any]]:
    """The readings kept by an earlier run; a line cut short by an interruption is read again."""
    found: dict[str, dict[str, Any]] = {}
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
                found[row.pop("key")] = row
            except (json.JSONDecodeError, KeyError, AttributeError):
                continue
    return found


def example_of(item: Item, row: dict[str, Any]) -> Example:
    from ragfacts.models._types import decode_state

    state = np.asarray(decode_state(row["state"]), dtype=np.float64) if row.get("state") else None
    return Example(
        group=hashlib.sha256((item.reference or "").encode()).hexdigest(),
        lang=row["lang"],
        gold=1 if item.label == "consistent" else 0,
        p_yes=float(row["p_yes"]),
        log_odds=float(row["log_odds"]),
        evidence=evidence_of(item.answer, item.reference or "", row["lang"]),
        state=state,
        sentences=len(split_sentences(item.answer)) or 1,
    )


def default_judge(identity: str) -> tuple[str, Any]:
    """What the head must beat: the head that ships for the model (its answer head: readings hold no sentences),
    else holistic_score at its default threshold."""
    shipped = shipped_head(identity)
    if shipped is not None:

        def by_head(rows: list[Example]) -> list[int]:
            out = []
            for r in rows:
                z = shipped.logit(r.state, r.log_odds, r.evidence)
                flagged = shipped.evidence_veto and any(r.evidence[i] > 0 for i in _FLAG_COLUMNS)
                out.append(int(z >= _logit(shipped.answer_threshold(r.lang, r.sentences)) and not flagged))
            return out

        return f"the shipped head {shipped.name}", by_head
    cut = DEFAULT_THRESHOLDS["holistic_score"]
    return f"holistic_score (P(Yes) >= {cut})", lambda rows: [int(r.p_yes >= cut) for r in rows]


def head_fields(model: ChatModel, identity: str, examples: list[Example]) -> dict[str, Any]:
    """What the head records of the model and prompts it was trained with."""
    use_state = all(r.state is not None for r in examples)
    path = getattr(model, "model_path", None)
    prompts = {
        lang: holistic_request(Item(answer="x", reference="x"), lang)[2] for lang in sorted({r.lang for r in examples})
    }
    return {
        "model_sha256": identity if use_state else None,
        "model_size": path.stat().st_size if use_state and path is not None else 0,
        "model_id": model.model_id,
        "prompts": prompts,
    }


def _logit(p: float) -> float:
    p = min(max(p, 1e-9), 1 - 1e-9)
    return float(np.log(p / (1 - p)))
