"""From a judge's raw probability to a verdict a user can act on: calibrated, thresholded, or left uncertain.

The probability strategies (holistic_score, trained_head) call `decide` with their raw score. Where a calibration
is known for the model and strategy (a head file given with -O head=FILE, else the head that ships for the
model), the probability reported is the calibrated P(faithful), and the threshold is on that scale: the
strategy's raw default mapped through the calibration, or `-O threshold=` as given. Without one the raw score is
reported, marked uncalibrated.

The abstain band (`-O uncertain=LOW,HIGH`, `--uncertain`): an answer whose probability falls in [LOW, HIGH) is
labelled "uncertain", whatever side of the threshold it is on; `auto` is the band chosen with the calibration on
its dev split. An uncertain answer is a decided result (not retried), counted apart in every summary and table,
and never passes a gate.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ragfacts.methods.precision.calibration import Calibration, in_band
from ragfacts.methods.precision.head import Head, HeadMismatch, shipped_head
from ragfacts.methods.precision.options import CheckOptions
from ragfacts.methods.precision.schemas import Verdict
from ragfacts.models import ChatModel, ConfigurationError
from ragfacts.prompts import load_prompt

HOLISTIC_PROMPT = "holistic_score"  # the prompt whose probabilities heads and calibrations are made from


@cache
def head_file(path: str) -> Head:
    """A head file, read once; an unreadable one is a configuration error (exit 2), not a traceback."""
    try:
        return Head.load(Path(path).expanduser())
    except ValueError as error:
        raise ConfigurationError(str(error)) from error


def checked_head(model: ChatModel, path: str) -> Head:
    """The head file at `path`, refused (a configuration error naming what differs) if it was made for another
    model or prompt version: another GGUF (by SHA-256) or another endpoint model (by name)."""
    head = head_file(path)
    sha256 = None
    if head.model_sha256 is not None:
        sha256 = model.profile().sha256 or getattr(model, "weights_sha256", lambda: None)()
    prompts = {lang: load_prompt(HOLISTIC_PROMPT, lang).id for lang in head.prompts}
    try:
        head.check(sha256=sha256, prompt_ids=prompts, model_id=model.model_id)
    except HeadMismatch as error:
        raise ConfigurationError(str(error)) from error
    return head


def calibration_for(model: ChatModel, options: CheckOptions, strategy: str) -> Calibration | None:
    """The calibration of `strategy`'s probability on `model`: from -O head=FILE, else the shipped head's."""
    head = checked_head(model, options.head) if options.head is not None else shipped_head(model.profile().sha256)
    return None if head is None else head.calibrations.get(strategy)


_LANGUAGES = {"en": "English", "zh": "Chinese"}


@dataclass(frozen=True)
class Decision:
    """What one probability decides."""

    probability: float  # calibrated where `calibrated`, else the raw score
    raw: float
    threshold: float  # on the same scale as `probability`
    calibrated: bool
    verdict: Verdict  # the threshold's side (and the veto)
    band: tuple[float, float] | None
    passed: bool = False  # the score reached the threshold (before any veto)
    lang: str = ""  # whose threshold it is: thresholds are chosen per language
    given: bool = False  # the user's threshold (-O threshold=), not the one chosen on dev
    scope: str = ""  # which answers the threshold is for, where not all of the language's: "answers of 3+ sentences"

    @property
    def uncertain(self) -> bool:
        return in_band(self.probability, self.band)

    def explain(self, name: str, source: str = "") -> str:
        """e.g. "P(faithful) = 0.41 < 0.55 (trained head, calibrated; the threshold for English, chosen on dev)";
        the band named when the answer is in it. Thresholds differ by language, hence the words."""
        relation = ">=" if self.passed else "<"
        scale = "calibrated" if self.calibrated else "uncalibrated"
        language = _LANGUAGES.get(self.lang, "this language")
        scope = f" {self.scope}" if self.scope else ""
        whose = "the threshold given" if self.given else f"the threshold for {language}{scope}, chosen on dev"
        text = f"{name} = {self.probability:.2f} {relation} {self.threshold:.2f} ({source}{scale}; {whose})"
        if self.uncertain and self.band is not None:
            text += f", in the uncertain band [{self.band[0]:.2f}, {self.band[1]:.2f})"
        return text


def band_for(options: CheckOptions, calibration: Calibration | None) -> tuple[float, float] | None:
    """The abstain band of these options: as given, or the calibration's (`auto`)."""
    if options.uncertain != "auto":
        return options.uncertain
    if calibration is None or calibration.band is None:
        raise ConfigurationError(
            "--uncertain auto uses the band chosen with the model's calibration, and none is known for this model "
            "and strategy; give the band (--uncertain 0.3,0.7) or train a head on labelled answers "
            "(ragfacts train-head)"
        )
    return calibration.band


def decide(
    raw: float,
    lang: str,
    raw_threshold: float,
    options: CheckOptions,
    calibration: Calibration | None,
    *,
    flagged: bool = False,
    vetoed: bool = False,
    scope: str = "",
) -> Decision:
    """Calibrate `raw`, compare it with the threshold (vetoed answers fail), and apply the band."""
    if calibration is None:
        probability, threshold = raw, raw_threshold
    else:
        probability = calibration.apply(raw, lang, flagged)
        threshold = calibration.apply(raw_threshold, lang)
    # The default threshold is compared on the raw scale: a calibration is monotone but may be flat (isotonic
    # steps), and a flat step must not flip a verdict. A threshold the user gives is on the scale they see.
    if options.threshold is not None:
        threshold = options.threshold
        passed = probability >= threshold
    else:
        passed = raw >= raw_threshold
    return Decision(
        probability=round(probability, 6),
        raw=raw,
        threshold=round(threshold, 6),
        calibrated=calibration is not None,
        verdict="consistent" if passed and not vetoed else "inconsistent",
        band=band_for(options, calibration),
        passed=passed,
        lang=lang,
        given=options.threshold is not None,
        scope=scope,
    )
