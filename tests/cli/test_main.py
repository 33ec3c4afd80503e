"""The entry point: global options anywhere, --version, exit codes, and no traceback for a bug."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from pydantic import BaseModel, ConfigDict
from typer.testing import CliRunner

from ragfacts.cli import app, hoist_global_options, main
from ragfacts.methods import base
from ragfacts.usage import Usage
from tests.conftest import TEST_KEY
from tests.methods.test_lface4rag import REFERENCE, SEG1, decomposition

runner = CliRunner()


def test_global_options_after_the_command_are_moved_in_front_of_it():
    args = ["check", "-r", "R", "--model", "local", "--json", "-a", "A", "--concurrency=3", "--", "--model"]
    assert hoist_global_options(args) == [
        "--model", "local", "--json", "--concurrency=3", "check", "-r", "R", "-a", "A", "--", "--model",
    ]  # fmt: skip
    assert hoist_global_options(["--no-cache", "recall", "x.jsonl"]) == ["--no-cache", "recall", "x.jsonl"]
    assert hoist_global_options(["--bogus", "check"]) == ["--bogus", "check"]  # click reports it


def test_no_command_option_shares_a_name_with_a_global_option():
    group = typer.main.get_command(app)
    globals_ = {name for param in group.params for name in param.opts}
    for name, command in group.commands.items():
        own = {opt for param in command.params for opt in getattr(param, "opts", [])}
        assert not (own & globals_), f"{name} redefines {own & globals_}"


def test_global_options_work_after_the_command(scripted_server, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
    scripted_server.enqueue(decomposition(SEG1))
    args = ["check", "-r", REFERENCE, "-a", SEG1, "--model", "openai:scripted", "--base-url"]
    with pytest.raises(SystemExit) as exit_info:
        main([*args, scripted_server.base_url, "--json"])
    assert exit_info.value.code == 0
    assert json.loads(capsys.readouterr().out)["label"] == "consistent"


def test_a_command_after_a_double_dash_runs_as_itself(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--", "check"])
    assert exit_info.value.code == 2 and "give --reference and --answer" in capsys.readouterr().err


def test_version():
    result = subprocess.run([sys.executable, "-m", "ragfacts", "--version"], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.startswith("ragfacts 0.")


class NoOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")


@pytest.fixture
def broken_method() -> Iterator[None]:
    with base.METHODS.restored():

        @base.method("broken")
        class Broken(base.Method):
            kind = "precision"
            Options = NoOptions

            async def evaluate(self, item, model):
                raise RuntimeError("a bug")

            def estimate(self, item, model):
                return Usage(calls=1)

        yield


def test_a_bug_is_a_message_and_exit_4_not_a_traceback(broken_method, scripted_server, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
    args = ["--model", "openai:s", "--base-url", scripted_server.base_url, "check", "-r", "R", "-a", "A"]
    with pytest.raises(SystemExit) as exit_info:
        main([*args, "--method", "broken"])
    assert exit_info.value.code == 4
    stderr = capsys.readouterr().err
    assert "internal error: RuntimeError: a bug" in stderr and "RAGFACTS_DEBUG=1" in stderr
    assert "Traceback" not in stderr


def test_methods_lists_every_method_with_its_options():
    result = runner.invoke(app, ["--json", "methods"])
    assert result.exit_code == 0
    methods = {m["name"]: m for m in json.loads(result.stdout)}
    assert {"lface4rag", "faaf", "prompt-tf"} <= set(methods)
    options = {tuple(o["names"]): o for o in methods["lface4rag"]["options"]}
    assert options[("chain_of_thought", "cot")]["default"] is True
    assert "w/o COT" in options[("chain_of_thought", "cot")]["help"]
    human = runner.invoke(app, ["methods"])
    assert "prompt-tf (recall)" in human.stderr and "chunk_size" in human.stderr


def test_model_options_reach_the_requests_and_a_misspelled_one_is_refused(scripted_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
    scripted_server.enqueue(decomposition(SEG1))
    base = ["--model", "openai:s", "--base-url", scripted_server.base_url, "--no-cache"]
    result = runner.invoke(
        app, [*base, "-M", "mode=tool", "-M", "schema_in_prompt=true", "check", "-r", REFERENCE, "-a", SEG1]
    )
    assert result.exit_code == 0, result.output
    first = scripted_server.requests[0].body
    assert first["tool_choice"]["function"]["name"] == "Decomposition" and "response_format" not in first
    assert "Reply with one JSON object" in scripted_server.requests[0].prompt
    refused = runner.invoke(app, [*base, "-M", "moda=tool", "models"])
    assert refused.exit_code == 2 and "moda" in refused.output and "schema_in_prompt" in refused.output


def test_judging_with_the_embedded_model_says_what_it_is_and_measured(capsys):
    from ragfacts.cli._common import AppState, build_runtime
    from ragfacts.runtime import Settings

    build_runtime(AppState(Settings(model="local", use_cache=False), as_json=False))
    notice = " ".join(capsys.readouterr().err.split())
    assert "embedded 1.5B model" in notice and "balanced accuracy" in notice and "--model openai:" in notice
    build_runtime(AppState(Settings(model="local:/models/other.gguf", use_cache=False), as_json=False))
    assert "embedded" not in capsys.readouterr().err


def test_the_command_table_lists_every_command_in_order_with_its_own_summary():
    from ragfacts.cli import COMMANDS

    group = typer.main.get_command(app)
    assert isinstance(group, typer.core.TyperGroup)
    assert group.list_commands(group.context_class(group)) == list(COMMANDS) and set(group.commands) == set(COMMANDS)
    assert {name: command.get_short_help_str(limit=300) for name, command in group.commands.items()} == {
        name: command.summary for name, command in COMMANDS.items()
    }


@pytest.mark.parametrize(
    ("args", "loaded", "not_loaded"),
    [
        (["--help"], [], ["ragfacts.cli.check", "ragfacts.methods.base", "ragfacts.models", "numpy"]),
        (["methods", "--json"], ["ragfacts.cli.methods"], ["ragfacts.cli.check", "ragfacts.cli.bench"]),
        (["check", "--help"], ["ragfacts.cli.check"], ["ragfacts.cli.bench", "ragfacts.cli.evaluate"]),
        (["chek"], [], ["ragfacts.cli.check", "ragfacts.methods.base"]),
    ],
)
def test_a_run_loads_its_own_command_only(args, loaded, not_loaded):
    code = (
        "import sys\nfrom ragfacts.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        "print('MODULES', ' '.join(sorted(sys.modules)), file=sys.stderr)"
    )
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60)
    modules = set(done.stderr.rsplit("MODULES", 1)[1].split())
    assert all(name in modules for name in loaded) and not any(name in modules for name in not_loaded)
    if args == ["--help"]:
        assert all(f" {name} " in done.stdout for name in ("check", "evaluate", "train-head"))


def _program(prelude: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`ragfacts ARGS` as the installed program runs it (`ragfacts.cli.run`), after `prelude` in the same process."""
    code = f"import sys\n{prelude}\nsys.argv = ['ragfacts', *sys.argv[1:]]\nfrom ragfacts.cli import run\nrun()\n"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # stdout buffered, as it is for most users
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60, env=env)


def test_the_program_ends_with_the_commands_exit_code_its_output_flushed_and_the_exit_handlers_run():
    prelude = "import atexit\natexit.register(lambda: print('exit handler ran', file=sys.stderr))"
    done = _program(prelude, "methods", "--json")
    assert done.returncode == 0 and "lface4rag" in done.stdout
    assert done.stderr.count("exit handler ran") == 1

    done = _program("", "check", "no-such-file.jsonl")
    assert done.returncode == 2 and "no-such-file.jsonl" in done.stderr and "Traceback" not in done.stderr

    # what is left in stdout's buffer when the process ends (here by the last exit handler) reaches the reader
    done = _program("import atexit\natexit.register(lambda: sys.stdout.write('the last words'))", "--version")
    assert done.returncode == 0 and done.stdout.endswith("\nthe last words")


def test_the_program_waits_for_a_thread_that_is_still_working(tmp_path: Path):
    marker = tmp_path / "finished"
    prelude = (
        "import threading, time, pathlib\n"
        f"threading.Thread(target=lambda: (time.sleep(0.5), pathlib.Path({str(marker)!r}).write_text('done'))).start()"
    )
    done = _program(prelude, "--version")
    assert done.returncode == 0 and marker.read_text() == "done"
