"""The Python API's `settings`: the model's and the run's, declared once (`runtime.Settings`, `RunSettings`)."""

from __future__ import annotations

import pytest

import ragfacts
from ragfacts.api import settings_names
from ragfacts.runs.evaluation import RunSettings
from ragfacts.runtime import Settings
from tests.methods.test_lface4rag import REFERENCE, SEG1

ROWS = [{"question": "Where?", "answer": SEG1, "reference": REFERENCE}]


def test_the_settings_are_the_fields_of_the_model_and_run_settings():
    names = settings_names()
    assert {"base_url", "concurrency", "cache", "cache_dir", "model_options", "progress"} <= set(names)
    assert {"limit", "force", "keep_failed", "repair", "stop_after"} <= set(names)
    assert len(names) == len(Settings.model_fields) - 1 + len(RunSettings.model_fields) - 1 + 1  # no model, max_failed


def test_an_unknown_setting_is_refused_naming_the_settings_there_are(make_model):
    with pytest.raises(TypeError, match="unknown concurency; the settings are base_url, concurrency"):
        ragfacts.check(ROWS, model=make_model(), settings={"concurency": 2})


def test_a_setting_out_of_bounds_is_refused_before_any_call(make_model, scripted_server):
    with pytest.raises(ValueError, match="concurrency"):
        ragfacts.check(ROWS, model=make_model(), settings={"concurrency": 0})
    assert scripted_server.requests == []


def test_every_run_setting_reaches_the_run(make_model, tmp_path):
    settings = {"limit": 1, "keep_failed": True, "stop_after": 0, "repair": True, "force": True}
    results = ragfacts.check(ROWS * 2, model=make_model(), output=tmp_path / "run", settings=settings)
    assert (results.report.ran, results.report.not_run) == (1, 1)
