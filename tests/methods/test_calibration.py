"""Calibrated probabilities and the abstain band: the maths against hand-computed values, and the band's label
where a user meets it (a check's result, the summary rule, the gate)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from pydantic import ValidationError

from ragfacts.methods.lface4rag import AnswerLabel, CheckOptions, check_answer
from ragfacts.methods.precision.calibration import (
    Calibration,
    expected_calibration_error,
    fit_calibration,
    in_band,
    isotonic_points,
    reliability,
)
from ragfacts.methods.precision.head import Head
from ragfacts.methods.precision.probability import decide
from ragfacts.models import ConfigurationError
from tests.methods.test_lface4rag_scored import ANSWER, REFERENCE, yes


def test_expected_calibration_error_is_the_answer_weighted_gap_per_bin():
    p = np.array([0.1, 0.15, 0.8, 0.9])
    y = np.array([0, 1, 1, 1])
    # bin [0.1, 0.2): mean 0.125, half faithful; bin [0.8, 0.9): 0.8 vs 1; bin [0.9, 1]: 0.9 vs 1
    assert expected_calibration_error(p, y) == pytest.approx(0.5 * 0.375 + 0.25 * 0.2 + 0.25 * 0.1)
    rows = reliability(p, y)
    assert [r["n"] for r in rows] == [0, 2, 0, 0, 0, 0, 0, 0, 1, 1]
    assert rows[1]["mean_probability"] == pytest.approx(0.125) and rows[1]["share_faithful"] == 0.5
    assert rows[0]["mean_probability"] is None  # an empty bin is said to be empty, not 0


def test_isotonic_pools_adjacent_violators_into_steps_and_never_says_0_or_1():
    points = isotonic_points(np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 0.0, 1.0, 1.0]))
    assert points == {"x": [1.5, 3.5], "y": [0.5, 0.995]}
    calibration = Calibration("isotonic", {"default": points})
    # between the steps' centres the map is linear: logit(0.5) = 0 is below the first centre, so 0.5
    assert calibration.apply(0.5, "en") == pytest.approx(0.5)
    assert calibration.apply(1 / (1 + np.exp(-2.5)), "en") == pytest.approx((0.5 + 0.995) / 2)


def test_platt_and_temperature_apply_their_formula_per_language_and_to_flagged_answers():
    platt = Calibration("platt", {"default": [1.0, 0.0, 0.0], "en": [2.0, -1.0, -3.0]})
    assert platt.apply(0.5, "en") == pytest.approx(1 / (1 + np.exp(1.0)))
    assert platt.apply(0.5, "en", flagged=True) == pytest.approx(1 / (1 + np.exp(4.0)))
    assert platt.apply(0.7, "zh") == pytest.approx(0.7)  # a language it was not fitted on: the default map
    temperature = Calibration("temperature", {"temperature": 2.0, "flagged": 0.0})
    z = np.log(0.9 / 0.1)
    assert temperature.apply(0.9, "zh") == pytest.approx(1 / (1 + np.exp(-z / 2)))


def test_fitting_recovers_a_known_temperature_and_lowers_the_error_of_an_overconfident_score():
    rng = np.random.default_rng(0)
    z = rng.normal(0, 4, 20000)
    truth = (rng.uniform(size=z.size) < 1 / (1 + np.exp(-z / 2))).astype(float)  # the score is twice too sure
    raw = 1 / (1 + np.exp(-z))
    langs = ["en"] * z.size
    fitted = fit_calibration("temperature", raw, truth, langs)
    assert fitted.params["temperature"] == pytest.approx(2.0, rel=0.05)
    for method in ("platt", "isotonic"):
        calibrated = fit_calibration(method, raw, truth, langs).apply_many(raw, langs)
        assert expected_calibration_error(calibrated, truth) < 0.02 < expected_calibration_error(raw, truth)


def test_a_calibration_survives_the_head_file_round_trip(tmp_path):
    calibration = Calibration("platt", {"default": [1.5, 0.2, -1.0]}, {"rows": 10}, band=(0.3, 0.7))
    head = Head(
        model_sha256=None,
        model_size=0,
        model_id="gpt-test",
        prompts={},
        state_weights=np.zeros(0),
        baseline_weight=1.0,
        evidence_weights=np.zeros(16),
        bias=0.0,
        thresholds={"default": 0.5},
        calibrations={"holistic_score": calibration},
    )
    head.save(tmp_path / "head.json")
    loaded = Head.load(tmp_path / "head.json")
    assert loaded.calibrations["holistic_score"] == calibration and loaded.model_id == "gpt-test"
    assert json.loads((tmp_path / "head.json").read_text())["calibration"]["holistic_score"]["band"] == [0.3, 0.7]
    assert loaded.digest == head.digest and not loaded.uses_state


def test_the_band_is_low_inclusive_high_exclusive():
    assert in_band(0.3, (0.3, 0.7)) and in_band(0.69, (0.3, 0.7))
    assert not in_band(0.7, (0.3, 0.7)) and not in_band(0.29, (0.3, 0.7)) and not in_band(0.5, None)


def test_a_decision_maps_the_default_threshold_through_the_calibration_unless_one_is_given():
    calibration = Calibration("platt", {"default": [1.0, 1.0, 0.0]})  # shifts every logit up by 1
    decision = decide(0.5, "en", 0.5, CheckOptions(), calibration)
    assert decision.calibrated and decision.probability == pytest.approx(0.731059, abs=1e-6)
    assert decision.threshold == pytest.approx(0.731059, abs=1e-6) and decision.verdict == "consistent"
    given = decide(0.5, "en", 0.5, CheckOptions(threshold=0.8), calibration)
    assert given.threshold == 0.8 and given.verdict == "inconsistent"
    vetoed = decide(0.99, "en", 0.5, CheckOptions(), None, vetoed=True)
    assert vetoed.verdict == "inconsistent" and not vetoed.calibrated


def test_the_band_option_reads_low_high_or_auto_and_refuses_anything_else():
    assert CheckOptions(uncertain="0.3,0.7").uncertain == (0.3, 0.7)
    assert CheckOptions(uncertain="AUTO").uncertain == "auto"
    for bad in ("0.7,0.3", "0.3", "a,b", "0.5,1.5"):
        with pytest.raises(ValidationError):
            CheckOptions(uncertain=bad)


def test_the_band_needs_a_strategy_that_gives_a_probability():
    from ragfacts.models import ModelProfile

    with pytest.raises(ConfigurationError, match="--uncertain needs a strategy that gives a probability"):
        CheckOptions(strategy="paper", uncertain="0.3,0.7").resolved_for(ModelProfile())


async def test_an_answer_in_the_band_is_uncertain_with_its_probability_and_costs_one_call(make_model, scripted_server):
    scripted_server.enqueue(yes(0.5))
    options = CheckOptions(strategy="holistic_score", uncertain="0.4,0.6")
    result = await check_answer(make_model(), REFERENCE, ANSWER, options=options)
    assert result.label is AnswerLabel.UNCERTAIN and len(scripted_server.requests) == 1  # no localisation
    assert result.holistic.probability == pytest.approx(0.5) and result.holistic.band == (0.4, 0.6)
    assert result.reason == (
        "uncertain: P(supported) = 0.50 < 0.58 (uncalibrated; the threshold for English, chosen on dev), in the "
        "uncertain band [0.40, 0.60)"
    )
    outcome = result.outcome()
    assert outcome.label == "uncertain" and outcome.complete and outcome.score is None


async def test_auto_band_without_a_calibration_is_refused_with_the_fix_before_any_call(make_model, scripted_server):
    options = CheckOptions(strategy="holistic_score", uncertain="auto")
    with pytest.raises(ConfigurationError, match="give the band"):
        await check_answer(make_model(), REFERENCE, ANSWER, options=options)
    assert scripted_server.requests == []
