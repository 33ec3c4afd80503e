"""The options of a precision check: the strategy, and the paper's ablations as switches."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator, model_validator

from ragfacts.models import ConfigurationError, ModelProfile
from ragfacts.text import detect_lang

Strategy = Literal["auto", "paper", "holistic_then_localise", "sentence_scores", "holistic_score", "trained_head"]
PROBABILITY_STRATEGIES = ("holistic_score", "trained_head")  # one P(faithful) per answer: calibrated, banded
DecompositionMethod = Literal["logic_preserving", "conventional"]
Explain = Literal["auto", "none", "scores", "generate"]
_EXPLAIN_FAILURES = {"true": "generate", "1": "generate", "yes": "generate", "false": "none", "0": "none", "no": "none"}


class CheckOptions(BaseModel):
    """How to check: the strategy, and the paper's ablations (Tables 6-8) as switches.

    The defaults are the paper's L-Face4RAG: logic-preserving decomposition, chain-of-thought prompts,
    both the fact and the logic stage.
    """

    # Fields are taken by name too (each name is also the first of its alias choices, so this accepts nothing
    # more): it lets the pydantic mypy plugin type the constructor's keywords despite the aliases.
    model_config = ConfigDict(extra="forbid", frozen=True, validate_by_name=True)
    # Options that name a file on this machine: the service refuses them in a request (`methods.base.file_options`).
    # A class variable, not a field's schema extra: the options' JSON schema enters every configuration hash.
    file_options: ClassVar[frozenset[str]] = frozenset({"head"})

    strategy: Strategy = Field(
        "auto",
        description="paper: decompose, then fact and logic stages per segment; holistic_then_localise: one "
        "whole-answer judgement, and the paper's pipeline only to localise and type errors when it fails; "
        "holistic_score: P(Yes) of the whole answer against a threshold, a failure localised to its least "
        "supported sentence and explained by the fact stage (for small models); sentence_scores: P(Yes) per "
        "answer sentence against a threshold, the fact stage only to explain failures; trained_head: "
        "P(faithful) from a head trained on the model's hidden state at the verdict plus evidence checks of "
        "numbers and names, one forward pass (local GGUF models with a head); auto: trained_head where a head "
        "ships for the model, else holistic_score for small models that give log-probabilities (4B parameters "
        "or fewer, read from the GGUF or declared with -M size_b=), else paper",
    )
    head: str | None = Field(
        None,
        description="trained_head: a head file (JSON) to use; none = the head shipped for the model",
    )
    threshold: float | None = Field(
        None,
        ge=0.0,
        le=1.0,
        description="sentence_scores, holistic_score and trained_head: a unit passes iff its probability >= "
        "threshold (the calibrated P(faithful) where the model has a calibration); none = the strategy's default "
        "chosen on dev",
    )
    uncertain: tuple[float, float] | Literal["auto"] | None = Field(
        None,
        description="holistic_score and trained_head: LOW,HIGH labels an answer whose P(faithful) is in [LOW, "
        "HIGH) 'uncertain' (counted apart, never passes a gate); auto = the band chosen on dev with the "
        "model's calibration",
    )
    explain: Explain = Field(
        "auto",
        validation_alias=AliasChoices("explain", "explain_failures"),
        description="holistic_score, sentence_scores and trained_head: how a flagged answer is explained. scores: "
        "by scoring alone, no generation (the evidence checks' mismatches in words, each sentence's score, the "
        "clause that differs from the closest reference sentence, an error type from what was found); generate: "
        "that, and the paper's fact stage on the least supported sentence, best effort (its failure never "
        "changes the verdict, the exit code or --max-failed); none: the verdict alone; auto: scores on a model "
        "run in-process (a local GGUF), generate on an endpoint. explain_failures=true/false, its earlier name, "
        "means generate/none",
    )
    context: int = Field(
        0,
        ge=0,
        le=5,
        description="sentence_scores: show each sentence's N preceding sentences, so pronouns have their referents",
    )
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
    batched: bool = Field(
        False,
        description="check all segments of an answer in one call per stage (3 calls per answer in paper mode, "
        "whatever its length) instead of one call per segment and stage",
    )
    joint_stages: bool = Field(
        False,
        description="with batched: the fact and the logic stage of every segment in one call (2 calls per answer, "
        "as RAGAS makes) instead of one call per stage",
    )
    lang: Literal["auto", "zh", "en"] = Field("auto", description="prompt language; auto = detected from the answer")

    @model_validator(mode="after")
    def _joint_needs_both_stages_batched(self) -> CheckOptions:
        if self.joint_stages and not (self.batched and self.logic_stage):
            raise ValueError(
                "joint_stages puts the fact and the logic stage of every segment in one batched call: "
                "it needs batched=true and the logic stage"
            )
        return self

    @field_validator("explain", mode="before")
    @classmethod
    def _explain_failures(cls, value: object) -> object:
        """`explain_failures=true/false` (the option's earlier name and values) as generate/none."""
        if isinstance(value, bool):
            return "generate" if value else "none"
        if isinstance(value, str):
            return _EXPLAIN_FAILURES.get(value.strip().lower(), value.strip().lower())
        return value

    @field_validator("uncertain", mode="before")
    @classmethod
    def _band(cls, value: object) -> object:
        """Read "LOW,HIGH" (as written on a command line) and check 0 <= LOW < HIGH <= 1."""
        if isinstance(value, str) and value.strip().lower() != "auto":
            parts = [p.strip() for p in value.split(",")]
            try:
                value = tuple(float(p) for p in parts)
            except ValueError:
                raise ValueError(f"the band is LOW,HIGH (e.g. 0.3,0.7) or auto, not {value!r}") from None
        if isinstance(value, (tuple, list)):
            if len(value) != 2 or not 0.0 <= float(value[0]) < float(value[1]) <= 1.0:
                raise ValueError(f"the band is LOW,HIGH with 0 <= LOW < HIGH <= 1, not {value!r}")
            return (float(value[0]), float(value[1]))
        return value.strip().lower() if isinstance(value, str) else value

    def resolved_for(self, profile: ModelProfile) -> CheckOptions:
        """These options with `auto` replaced by the strategy that suits the model, and the threshold set."""
        options = self
        if options.strategy == "auto":
            options = options.model_copy(update={"strategy": default_strategy(profile)})
        if options.explain == "auto":  # generation is slow in-process on a CPU; on an endpoint it is the method
            options = options.model_copy(update={"explain": "scores" if profile.in_process else "generate"})
        if options.uncertain is not None and options.strategy not in PROBABILITY_STRATEGIES:
            raise ConfigurationError(
                f"--uncertain needs a strategy that gives a probability ({', '.join(PROBABILITY_STRATEGIES)}), not "
                f"{options.strategy}"
            )
        # holistic_score and trained_head take their default threshold where they know whether it is calibrated
        if options.threshold is None and options.strategy not in PROBABILITY_STRATEGIES:
            options = options.model_copy(update={"threshold": DEFAULT_THRESHOLDS.get(options.strategy, 0.5)})
        return options

    def resolve_lang(self, answer: str) -> str:
        """The prompt language for this answer: the option, else the answer's language."""
        return detect_lang(answer) if self.lang == "auto" else self.lang


def default_strategy(profile: ModelProfile) -> Strategy:
    """The strategy for a model: its trained head where one ships, else the paper's pipeline unless it is small.

    Small models (parameters_b <= 4) that give log-probabilities get holistic_score: on the quality corpus's
    dev split (benchmarks/data/quality, 242 items) the embedded 1.5B model reached a balanced accuracy of
    0.71 with it, against 0.64 for sentence_scores and 0.56 for its own generated whole-answer verdict
    (benchmarks/calibrate_precision.py; the paper's pipeline reached 0.50 on an earlier Chinese set). A model of
    unknown size (an endpoint, unless -M size_b=... declares it) is assumed capable: the paper's pipeline was
    made for GPT-4-class models.
    """
    from ragfacts.methods.precision.head import shipped_head  # numpy: imported only for a model with a hidden state

    if profile.hidden_state and shipped_head(profile.sha256) is not None:
        return "trained_head"
    if profile.small and profile.label_scores is not False:
        return "holistic_score"
    return "paper"


# Per strategy, P(supported) at or above which a unit passes. Both were chosen on the dev split of the quality
# corpus with the embedded model (the best balanced accuracy, benchmarks/calibrate_precision.py), never on test.
DEFAULT_THRESHOLDS: dict[str, float] = {
    "holistic_score": 0.58,  # dev: balanced accuracy 0.711 (0.5, the argmax, gave less)
    "sentence_scores": 0.47,  # dev: 0.640 (0.75, chosen earlier on a 20-item probe set, gave 0.632)
}
