"""The settings' flags: the run settings' made from `RunSettings`, the global options' help and defaults the same as
the fields of `runtime.Settings` (declared beside the application, which `ragfacts --help` loads without pydantic)."""

from __future__ import annotations

import inspect
from typing import get_args

import pytest
from typer.testing import CliRunner

from ragfacts.cli import app
from ragfacts.cli._app import main_options
from ragfacts.runs.evaluation import RunSettings
from ragfacts.runtime import Settings

runner = CliRunner()


@pytest.mark.parametrize("command", ["evaluate", "check", "recall", "bench", "synth"])
def test_every_dataset_command_takes_each_run_setting_as_a_flag(command):
    shown = runner.invoke(app, [command, "--help"], env={"COLUMNS": "300"}).output
    for name in RunSettings.model_fields:
        assert f"--{name.replace('_', '-')}" in shown


def test_a_run_setting_is_checked_by_its_field_bounds(tmp_path):
    result = runner.invoke(app, ["evaluate", str(tmp_path / "x.jsonl"), "--max-failed", "2"])
    assert result.exit_code == 2 and "--max-failed" in result.output


@pytest.mark.parametrize("name", ["model", "base_url", "concurrency", "cache_dir"])
def test_a_global_option_says_and_defaults_what_its_model_setting_does(name):
    parameter = inspect.signature(main_options, eval_str=True).parameters[name]
    (option,) = [a for a in get_args(parameter.annotation)[1:]]
    field = Settings.model_fields[name]
    assert option.help == field.description
    assert parameter.default == field.default


@pytest.mark.parametrize(("name", "option"), [("max_retries", "max_retries"), ("timeout", "timeout_s")])
def test_a_global_model_option_defaults_what_the_model_options_do(name, option):
    from ragfacts.models.options import ModelOptions

    default = inspect.signature(main_options).parameters[name].default
    assert default == ModelOptions.model_fields[option].default
