"""The options of a precision check: the strategy, and the paper's ablations as switches."""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from ragfacts.text import detect_lang

Strategy = Literal["auto", "paper", "holistic_then_localise", "sentence_scores"]
DecompositionMethod = Literal["logic_preserving", "conventional"]


class CheckOptions(BaseModel):
    """How to check: the strategy, and the paper's ablations (Tables 6-8) as switches.

    The defaults are the paper's L-Face4RAG: logic-preserving decomposition, chain-of-thought prompts,
    both the fact and the logic stage.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    strategy: Strategy = Field(
        "auto",
        description="paper: decompose, then fact and logic stages per segment; holistic_then_localise: one "
        "whole-answer judgement, and the paper's pipeline only to localise and type errors when it fails; "
        "sentence_scores: P(Yes) per answer sentence against a threshold, the fact stage only to explain "
        "failures (for small models); auto: sentence_scores on the local backend, else paper",
    )
    threshold: float = Field(
        0.75,
        ge=0.0,
        le=1.0,
        description="sentence_scores: a sentence passes iff P(supported) >= threshold (chosen on our 20-item "
        "probe set with the embedded 1.5B model; see benchmarks/precision_small_model.py)",
    )
    explain_failures: bool = Field(True, description="sentence_scores: run the fact stage on failing sentences")
    decomposition: DecompositionMethod = Field(
        "logic_preserving", description="conventional = one atomic statement per fact, as in RAGAS (ablation A.D.)"
    )
    chain_of_thought: bool = Field(
        True,
        validation_alias=AliasChoices("chain_of_thought", "cot"),
        description="False = direct verdicts without reasoning fields (w/o COT)",
    )
    logic_stage: bool = Field(
        True,
        validation_alias=AliasChoices("logic_stage", "logic"),
        description="False = fact stage only (w/o logi. eval)",
    )
    lang: Literal["auto", "zh", "en"] = Field("auto", description="prompt language; auto = detected from the answer")

    def resolve_strategy(self, backend: str) -> CheckOptions:
        """These options with `auto` replaced by the strategy that suits the model's backend."""
        if self.strategy != "auto":
            return self
        return self.model_copy(update={"strategy": default_strategy(backend)})

    def resolve_lang(self, answer: str) -> str:
        """The prompt language for this answer: the option, else the answer's language."""
        return detect_lang(answer) if self.lang == "auto" else self.lang


def default_strategy(backend: str) -> Strategy:
    """The strategy for a backend: sentence_scores for small local models, the paper's pipeline otherwise.

    On the embedded 1.5B model the paper's pipeline reached a balanced accuracy of 0.50 and sentence_scores
    0.75-1.0 (benchmarks/precision_small_model.py); capable API models are what the paper was made for.
    """
    return "sentence_scores" if backend == "local" else "paper"
