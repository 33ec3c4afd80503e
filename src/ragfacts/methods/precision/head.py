"""A trained head: P(faithful) read from the model's hidden state at the whole-answer verdict.

`holistic_score` reads P(Yes) - P(No) at the position where the reply starts: one fixed direction of the
model's final hidden state (the difference of two rows of its output layer). A head is a logistic model over
the same state, fitted on labelled pairs, with the Yes-No log-odds and the evidence checks (`ragfacts.evidence`)
beside it: it reads the best direction instead of that one, at the same cost (one forward pass, no generation).

The file (JSON, a few KB) records the model it was trained for (SHA-256 and size of the GGUF), the prompt
versions the states came from, the weights (standardisation folded in), the thresholds per language chosen on
a dev split, and the training manifest (data, sizes, dev/test figures). A head is used only with that model
and those prompts: anything else is refused, because the numbers would mean nothing.

A head may also read a long answer sentence by sentence (`sentences`): each sentence of a multi-sentence answer
is scored alone, and the answer's verdict combines its own logit with its sentences' (the lowest, the mean, the
share under a cut), so that one unsupported sentence in a long answer is not diluted in the answer's state. Its
sentence weights, fitted on labelled sentences, may also only mark the unsupported sentences of a flagged answer,
deciding no verdict.
Long answers may also have thresholds of their own (`long_answers`): the probability shifts with length.

A head file also carries the calibrations (`calibration.Calibration`) of the model's probability strategies,
fitted on labelled answers the head was not fitted on: the head's own ("trained_head") and the model's P(Yes)
("holistic_score"), each with the abstain band chosen there (`--uncertain auto`).
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from ragfacts.evidence import FEATURE_NAMES, feature_vector
from ragfacts.files import read_regular_file, replace_text
from ragfacts.methods.precision.calibration import Calibration

FORMAT = "ragfacts-head/1"
PACKAGED = "ragfacts.heads"  # heads shipped with the package, one JSON file each
MAX_BYTES = 8 * 1024 * 1024  # a head file is a few KB (weights over a hidden state of thousands of floats)


class HeadMismatch(ValueError):
    """A head used with another model or other prompts than it was trained for."""


def encode_weights(values: np.ndarray) -> str:
    """Weights as a head file stores them: little-endian float32, base64."""
    return base64.b64encode(np.asarray(values, dtype="<f4").tobytes()).decode("ascii")


def decode_weights(text: str) -> np.ndarray:
    """The weights `encode_weights` stored."""
    return np.frombuffer(base64.b64decode(text), dtype="<f4").astype(np.float64)


@dataclass
class Head:
    """Weights over [state, Yes-No log-odds, evidence features], a bias and a threshold per language."""

    model_sha256: str | None  # None for a head over an endpoint's log-probabilities: `model_id` names the model
    model_size: int
    prompts: dict[str, str]  # lang -> prompt id the states were read under, e.g. holistic_score/en@2
    state_weights: np.ndarray
    baseline_weight: float
    evidence_weights: np.ndarray
    bias: float
    thresholds: dict[str, float]
    evidence_names: tuple[str, ...] = FEATURE_NAMES
    # An unsupported number, date, amount or name in the answer (ragfacts.evidence) flags it whatever the score.
    evidence_veto: bool = False
    name: str = "head"
    training: dict[str, Any] = field(default_factory=dict)
    calibrations: dict[str, Calibration] = field(default_factory=dict)  # strategy -> calibration
    model_id: str | None = None  # the model as the user named it (an endpoint's model)
    # Recall by the head (faaf's verify=head): P(the answer states the fact) >= this, per language, chosen on
    # labelled recall data; with its provenance, and where it was fitted on such data, weights of its own (read
    # from the same state, log-odds and evidence features). Not part of `digest`: it changes no precision verdict.
    recall: dict[str, Any] = field(default_factory=dict)
    # Long answers read sentence by sentence, in the languages its "thresholds" name (others: the answer head
    # alone): each sentence of a multi-sentence answer is scored too (the sentence alone as the answer, the
    # reference's KV cache reused) and the answer's verdict is a logistic model ("combine") over [answer logit,
    # lowest sentence logit, mean sentence logit, share of sentences under "cut"]; an answer of one sentence reads
    # its own logit as its sentence's. "state_f32_base64" and "bias", where given, score a sentence by weights
    # fitted on labelled sentences, in the languages "sentence_threshold" names (else those of "thresholds"; a
    # sentence in another language is scored as an answer of one sentence); "sentence_threshold" marks a sentence
    # (else the answer threshold). A block with sentence weights and no "thresholds" decides nothing: it only
    # scores the sentences of a flagged answer, to show which are unsupported (no "combine" then). A
    # "trained_head" calibration of a head that decides with sentences is one fitted on the combined probability.
    # Part of `digest`.
    sentences: dict[str, Any] = field(default_factory=dict)
    # Long answers judged against thresholds of their own: {"from_sentences": 3, "thresholds": {"en": 0.54}}. The
    # head's probability shifts with an answer's length (a long answer's state dilutes its claims), so an answer of
    # at least "from_sentences" sentences in a language named here is compared with that language's threshold
    # here (chosen on long dev answers), others with `thresholds`. Part of `digest`.
    long_answers: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.sentences:
            _check_sentences(self.sentences, len(self.state_weights))
        if self.long_answers:
            _check_long_answers(self.long_answers)

    def logit(self, state: np.ndarray | None, log_odds: float, evidence: np.ndarray) -> float:
        """The head's log-odds that the answer is faithful; `state` is read only by a head over the state."""
        value = 0.0
        if self.uses_state:
            if state is None:
                raise ValueError(f"the head {self.name!r} reads the model's hidden state, and none was given")
            value = float(state @ self.state_weights)
        value += self.baseline_weight * log_odds
        return value + float(evidence @ self.evidence_weights) + self.bias

    def probability(self, state: np.ndarray, log_odds: float, answer: str, reference: str, lang: str) -> float:
        """P(faithful) of an answer from its verdict-position state, the model's Yes-No log-odds and the texts (the
        answer head's alone; `combined_probability` adds the sentences where the head reads them)."""
        evidence = np.asarray(feature_vector(answer, reference, lang), dtype=np.float64)
        return sigmoid(self.logit(np.asarray(state, dtype=np.float64), log_odds, evidence))

    def recall_probability(self, state: np.ndarray, log_odds: float, fact: str, answer: str, lang: str) -> float:
        """P(the answer states the fact): by the recall weights where the head carries them, else as an answer
        supported by a reference (the fact as the answer, the answer as its reference)."""
        weights = self.recall.get("weights")
        if not weights:
            return self.probability(state, log_odds, fact, answer, lang)
        evidence = np.asarray(feature_vector(fact, answer, lang), dtype=np.float64)
        value = (
            float(np.asarray(state, dtype=np.float64) @ decode_weights(weights["state_f32_base64"]))
            if self.uses_state
            else 0.0
        )
        value += (
            float(weights["baseline"]) * log_odds
            + float(evidence @ np.asarray(weights["evidence"]))
            + float(weights["bias"])
        )
        return sigmoid(value)

    def sentence_logit(self, state: np.ndarray, log_odds: float, sentence: str, reference: str, lang: str) -> float:
        """A sentence's log-odds of being supported: by the sentence weights where the head carries them, else as
        an answer of one sentence."""
        weights = self.sentences.get("state_f32_base64")
        marks = self.sentences.get("sentence_threshold") or self.sentences.get("thresholds") or {}
        if not weights or lang not in marks:
            evidence = np.asarray(feature_vector(sentence, reference, lang), dtype=np.float64)
            return self.logit(np.asarray(state, dtype=np.float64), log_odds, evidence)
        return float(np.asarray(state, dtype=np.float64) @ decode_weights(weights)) + float(self.sentences["bias"])

    @property
    def decides_with_sentences(self) -> bool:
        """Whether the sentences block decides verdicts in some language (else it only marks sentences, or is none)."""
        return bool(self.sentences.get("thresholds"))

    def reads_sentences(self, lang: str) -> bool:
        """Whether answers in `lang` are decided with their sentences (the block names a threshold for it)."""
        return self.decides_with_sentences and lang in self.sentences["thresholds"]

    def sentence_threshold(self, lang: str) -> float:
        """The probability under which a sentence scored alone is marked unsupported."""
        chosen = self.sentences.get("sentence_threshold")
        return float(chosen.get(lang, self.answer_threshold(lang))) if chosen else self.answer_threshold(lang)

    def combined_probability(self, answer_logit: float, sentence_logits: list[float]) -> float:
        """P(faithful) of an answer from its own logit and its sentences' (an answer of one sentence: its own)."""
        combine = self.sentences["combine"]
        logits = np.asarray(sentence_logits or [answer_logit], dtype=np.float64)
        share = float(np.mean(logits < float(combine["cut"])))
        value = (
            float(combine["answer"]) * answer_logit
            + float(combine["min"]) * float(logits.min())
            + float(combine["mean"]) * float(logits.mean())
            + float(combine["share"]) * share
            + float(combine["bias"])
        )
        return sigmoid(value)

    def threshold(self, lang: str, sentences: int = 1) -> float:
        """The raw probability at or above which an answer in `lang` of `sentences` sentences passes (chosen on
        dev): the combined probability's where the head reads the sentences of answers in `lang`."""
        if self.reads_sentences(lang):
            return float(self.sentences["thresholds"][lang])
        return self.answer_threshold(lang, sentences)

    def answer_threshold(self, lang: str, sentences: int = 1) -> float:
        """The threshold of the answer head's own probability (`probability`), sentences aside: the long answers'
        where the answer has enough sentences and the head has one for `lang`."""
        if self.is_long(lang, sentences):
            return float(self.long_answers["thresholds"][lang])
        return self.thresholds.get(lang, self.thresholds.get("default", 0.5))

    def is_long(self, lang: str, sentences: int) -> bool:
        """Whether an answer of `sentences` sentences in `lang` is judged against the long answers' threshold."""
        chosen = self.long_answers
        return bool(chosen) and lang in chosen["thresholds"] and sentences >= int(chosen["from_sentences"])

    def recall_threshold(self, lang: str) -> float:
        """The probability at or above which the head judges a fact stated (chosen on labelled recall data where
        the head carries one, else its precision threshold)."""
        chosen: dict[str, float] = self.recall.get("thresholds", {})
        return float(chosen.get(lang, chosen.get("default", self.answer_threshold(lang))))

    @property
    def uses_state(self) -> bool:
        """False for a head over the log-odds and the evidence alone (an endpoint without hidden states)."""
        return len(self.state_weights) > 0

    def check(self, *, sha256: str | None, prompt_ids: dict[str, str], model_id: str | None = None) -> None:
        """Refuse use with another model or prompt version; the message names what differs."""
        if self.model_sha256 is None:
            if model_id is not None and self.model_id is not None and model_id != self.model_id:
                raise HeadMismatch(
                    f"the head {self.name!r} was trained on the answers of {self.model_id}, not {model_id}; train one "
                    "for this model (ragfacts train-head)"
                )
        elif sha256 is not None and sha256 != self.model_sha256:
            raise HeadMismatch(
                f"the head {self.name!r} was trained for the model with SHA-256 {(self.model_sha256 or '')[:12]}…, not "
                f"{sha256[:12]}…; train one for this model or use the model it was made for"
            )
        for lang, prompt_id in prompt_ids.items():
            if lang in self.prompts and self.prompts[lang] != prompt_id:
                raise HeadMismatch(
                    f"the head {self.name!r} read states under the prompt {self.prompts[lang]}, this version of "
                    f"ragfacts sends {prompt_id}; retrain the head"
                )
        if tuple(self.evidence_names) != tuple(FEATURE_NAMES):
            raise HeadMismatch(f"the head {self.name!r} was trained on other evidence features; retrain it")

    @property
    def digest(self) -> str:
        """What identifies the head's behaviour: a hash of its weights, thresholds, model and prompts."""
        data = {k: v for k, v in self.to_json().items() if k not in ("training", "recall")}
        if "sentences" in data:  # how its sentence weights were made is not what they do
            data["sentences"] = {k: v for k, v in data["sentences"].items() if k != "training"}
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "name": self.name,
            "model": {"sha256": self.model_sha256, "size": self.model_size, "id": self.model_id},
            "prompts": self.prompts,
            "features": {"state": len(self.state_weights), "evidence": list(self.evidence_names)},
            "weights": {
                "state_f32_base64": encode_weights(self.state_weights),
                "baseline": self.baseline_weight,
                "evidence": [float(v) for v in self.evidence_weights],
                "bias": self.bias,
            },
            "thresholds": self.thresholds,
            "evidence_veto": self.evidence_veto,
            "calibration": {name: c.to_json() for name, c in sorted(self.calibrations.items())},
            **({"recall": self.recall} if self.recall else {}),
            **({"sentences": self.sentences} if self.sentences else {}),
            **({"long_answers": self.long_answers} if self.long_answers else {}),
            "training": self.training,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Head:
        if data.get("format") != FORMAT:
            raise ValueError(f"not a ragfacts head file (format {data.get('format')!r}, expected {FORMAT})")
        weights = data["weights"]
        return cls(
            name=data.get("name", "head"),
            model_sha256=data["model"]["sha256"],
            model_size=int(data["model"]["size"]),
            model_id=data["model"].get("id"),
            prompts=dict(data["prompts"]),
            state_weights=decode_weights(weights["state_f32_base64"]),
            baseline_weight=float(weights["baseline"]),
            evidence_weights=np.asarray(weights["evidence"], dtype=np.float64),
            bias=float(weights["bias"]),
            thresholds={k: float(v) for k, v in data["thresholds"].items()},
            evidence_names=tuple(data["features"]["evidence"]),
            evidence_veto=bool(data.get("evidence_veto", False)),
            training=data.get("training", {}),
            calibrations={k: Calibration.from_json(v) for k, v in (data.get("calibration") or {}).items()},
            recall=dict(data.get("recall") or {}),
            sentences=dict(data.get("sentences") or {}),
            long_answers=dict(data.get("long_answers") or {}),
        )

    def save(self, path: Path) -> None:
        """Write the head file, replacing `path` whole (a reader never sees half a head)."""
        replace_text(path, json.dumps(self.to_json(), ensure_ascii=False, indent=1) + "\n")

    @classmethod
    def load(cls, path: Path) -> Head:
        """The head in `path`: a regular file of at most `MAX_BYTES` (nothing else is read); ValueError otherwise."""
        try:
            data = read_regular_file(path, MAX_BYTES)
        except OSError as error:
            raise ValueError(f"{path}: not a readable head file ({error.strerror or error})") from error
        try:
            return cls.from_json(json.loads(data.decode("utf-8")))
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"{path}: not a readable head file ({error})") from error


_COMBINE = ("answer", "min", "mean", "share", "bias", "cut")


def _check_sentences(block: dict[str, Any], state_size: int) -> None:
    """ValueError unless `block` is a readable `Head.sentences`: its combine weights and its thresholds where it
    decides verdicts, else sentence weights and a sentence threshold; sentence weights over a state of the head's
    size."""
    weights = block.get("state_f32_base64")
    decides = block.get("thresholds")
    if decides or not weights:  # a block that decides verdicts
        combine = block.get("combine")
        if not isinstance(combine, dict) or set(combine) != set(_COMBINE):
            raise ValueError(f"the sentences block needs combine weights {', '.join(_COMBINE)}")
        if not isinstance(decides, dict) or not decides:
            raise ValueError("the sentences block needs a threshold per language it decides, or sentence weights")
        marks = block.get("sentence_threshold")
        if weights and marks and not set(decides) <= set(marks):
            raise ValueError("the sentences block's sentence_threshold must name every language it decides")
    else:
        if not isinstance(block.get("sentence_threshold"), dict) or not block["sentence_threshold"]:
            raise ValueError("a sentences block that decides nothing needs a sentence_threshold per language")
        if "combine" in block:
            raise ValueError("a sentences block that decides nothing has no combine weights")
    for value in (block.get("sentence_threshold") or {}).values():
        if not isinstance(value, int | float) or isinstance(value, bool) or not 0.0 <= value <= 1.0:
            raise ValueError("the sentences block's sentence_threshold values must be probabilities")
    if weights and ("bias" not in block or not state_size or len(decode_weights(weights)) != state_size):
        raise ValueError(f"the sentences block's weights need a bias and a state of {state_size} numbers")


def _check_long_answers(block: dict[str, Any]) -> None:
    """ValueError unless `block` is a readable `Head.long_answers`: a number of sentences of at least 2 and a
    probability per language."""
    start = block.get("from_sentences")
    if not isinstance(start, int) or isinstance(start, bool) or start < 2:
        raise ValueError("the long_answers block needs from_sentences, a whole number of at least 2")
    chosen = block.get("thresholds")
    if not isinstance(chosen, dict) or not chosen:
        raise ValueError("the long_answers block needs a threshold per language")
    for lang, value in chosen.items():
        if not isinstance(value, int | float) or isinstance(value, bool) or not 0.0 <= value <= 1.0:
            raise ValueError(f"the long_answers block's threshold for {lang!r} must be a probability")


@cache
def shipped_head(sha256: str | None) -> Head | None:
    """The head shipped with ragfacts for the model with this SHA-256, if there is one."""
    if sha256 is None:
        return None
    for entry in resources.files(PACKAGED).iterdir():
        if entry.name.endswith(".json"):
            data = json.loads(entry.read_text(encoding="utf-8"))
            if data.get("model", {}).get("sha256") == sha256:
                return Head.from_json(data)
    return None


def log_odds(logprobs: dict[str, float | None], yes: str, no: str) -> float:
    """The model's Yes-No log-odds at the verdict; a label not among the top candidates counts as -30."""
    values = [logprobs.get(label) for label in (yes, no)]
    first, second = (-30.0 if value is None else value for value in values)
    return first - second


def sigmoid(value: float) -> float:
    """The logistic function, without overflow."""
    if value >= 0:
        return 1.0 / (1.0 + math.exp(-value))
    exp = math.exp(value)
    return exp / (1.0 + exp)
