"""The books of a run directory: every call paid for is counted even when the process is killed, every invocation
is recorded, and a torn or foreign ledger never fails a run (it is rebuilt)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragfacts.cli import app
from tests.conftest import TEST_KEY
from tests.scripted_server import Reply

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def rows(path: Path, n: int) -> Path:
    lines = [{"id": f"r{i}", "reference": "The tower is 300 m tall.", "answer": f"It is {i} m tall."} for i in range(n)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def command(url: str, data: Path, run: Path) -> list[str]:
    return [
        *("ragfacts", "--model", "openai:m", "--base-url", url, "--concurrency", "2", "--no-cache", "evaluate"),
        *(str(data), "-o", str(run), "--precision", "holistic:cot=false", "--recall", "none"),
    ]


def test_every_call_of_a_killed_run_stays_in_the_books_and_every_invocation_is_recorded(server, tmp_path):
    server.when("", Reply.json({"verdict": "consistent"}, delay_s=0.05))
    data, run = rows(tmp_path / "rows.jsonl", 60), tmp_path / "run"
    env = {**os.environ, "OPENAI_API_KEY": TEST_KEY, "RAGFACTS_HOME": str(tmp_path / "home")}
    argv = [sys.executable, "-m", *command(server.base_url, data, run)]
    kills = 0
    for target in (8, 20, 32):
        process = subprocess.Popen(argv, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(server.requests) < target:
            time.sleep(0.01)
        process.send_signal(signal.SIGKILL)
        process.wait()
        kills += 1
    time.sleep(0.2)  # replies still in flight reach a dead socket: the server counts them, nobody paid them
    done = subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    ledger = json.loads((run / "ledger.json").read_text())
    served = len(server.requests)
    # Each kill may lose the replies in flight (2 at most): every other call the server answered is counted.
    assert served - 2 * kills <= ledger["total"]["calls"] <= served
    statuses = [entry["status"] for entry in json.loads((run / "manifest.json").read_text())["invocations"]]
    assert statuses == ["interrupted", "interrupted", "interrupted", "finished"]


def test_a_torn_or_foreign_ledger_never_fails_a_run_it_is_rebuilt(server, tmp_path):
    server.when("", Reply.json({"verdict": "consistent"}))
    data, run = rows(tmp_path / "rows.jsonl", 3), tmp_path / "run"
    args = command(server.base_url, data, run)[1:]
    assert runner.invoke(app, args).exit_code == 0
    for foreign in ('{"stages": {"x": ', '["not", "a", "ledger"]', '{"stages": {"x": {"calls": "many"}}}'):
        (run / "usage.jsonl").unlink(
            missing_ok=True
        )  # a run directory from before the journal, whose ledger.json broke
        (run / "ledger.json").write_text(foreign, encoding="utf-8")
        data.write_text(
            data.read_text() + json.dumps({"id": f"n{len(foreign)}", "reference": "R.", "answer": "A."}) + "\n"
        )
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        ledger = json.loads((run / "ledger.json").read_text())
        assert ledger["stages"]["(rebuilt from results.jsonl)"]["calls"] >= 3 and ledger["stages"]["holistic_direct"]


def test_an_answer_unscored_by_design_is_kept_with_its_reason_one_unscored_by_a_failure_is_retried(server, tmp_path):
    server.when("Nothing here.", Reply.json({"statements": []}))  # a valid reply: no claim to check
    server.when("A.", Reply.error(400))  # a request the server will not change its mind about: failed, unscored
    data, run = tmp_path / "rows.jsonl", tmp_path / "run"
    lines = [
        {"id": "nothing", "reference": "R.", "answer": "Nothing here."},
        {"id": "failed", "reference": "R.", "answer": "A."},
    ]
    data.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    args = ["--model", "openai:m", "--base-url", server.base_url, "--json", "check", str(data), "-o", str(run)]
    args += ["--method", "ragas", "--stop-after", "0", "--max-failed", "1"]
    assert runner.invoke(app, args).exit_code == 0
    results = {json.loads(x)["id"]: json.loads(x) for x in (run / "results.jsonl").read_text().splitlines()}
    assert results["nothing"]["outcome"]["label"] == "unscored" and results["nothing"]["complete"] is True
    assert results["nothing"]["result"]["reason"] == "no claims were extracted from the answer"
    assert results["failed"]["outcome"]["label"] == "unscored" and results["failed"]["complete"] is False
    again = runner.invoke(app, args)
    report = json.loads(again.stdout)["report"]
    assert (report["reused"], report["ran"]) == (1, 1)  # the decided one is kept; the failed one is retried


@pytest.mark.parametrize("flags", [[], ["--force"]])
def test_a_directory_holding_someone_elses_manifest_is_refused_whatever_the_flags(server, tmp_path, flags):
    run = tmp_path / "theirs"
    run.mkdir()
    theirs = json.dumps({"name": "a deployment manifest", "version": 3})
    (run / "manifest.json").write_text(theirs, encoding="utf-8")
    data = rows(tmp_path / "rows.jsonl", 2)
    result = runner.invoke(app, [*command(server.base_url, data, run)[1:], *flags])
    assert result.exit_code == 2 and "is not a ragfacts run directory" in result.stderr
    assert (run / "manifest.json").read_text(encoding="utf-8") == theirs and sorted(p.name for p in run.iterdir()) == [
        "manifest.json"
    ]
    assert server.requests == []


def test_ctrl_c_is_recorded_as_interrupted_and_says_how_to_resume(server, tmp_path):
    server.when("", Reply.json({"verdict": "consistent"}, delay_s=0.05))
    data, run = rows(tmp_path / "rows.jsonl", 60), tmp_path / "run"
    env = {**os.environ, "OPENAI_API_KEY": TEST_KEY, "RAGFACTS_HOME": str(tmp_path / "home")}
    argv = [sys.executable, "-m", *command(server.base_url, data, run)]
    process = subprocess.Popen(
        argv,
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        # as a terminal starts it: a suite run in the background (a shell's `&`) ignores SIGINT, and so would the child
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(server.requests) < 10:
        time.sleep(0.01)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert "interrupted" in stderr and f"-o {run}" in stderr
    (entry,) = json.loads((run / "manifest.json").read_text())["invocations"]
    assert entry["status"] == "interrupted" and entry["not_run"] > 0
    done = subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"{entry['ran']} reused" in done.stderr  # what finished before Ctrl-C is kept


def test_a_torn_last_line_of_the_journal_swallows_no_later_record(server, tmp_path):
    server.when("", Reply.json({"verdict": "consistent"}))
    data, run = rows(tmp_path / "rows.jsonl", 3), tmp_path / "run"
    args = command(server.base_url, data, run)[1:]
    assert runner.invoke(app, args).exit_code == 0
    with (run / "usage.jsonl").open("ab") as journal:
        journal.write(b'{"invocation": "killed", "stage": "fa')  # a process killed mid-write
    rows(data, 5)
    assert runner.invoke(app, args).exit_code == 0
    ledger = json.loads((run / "ledger.json").read_text())
    assert ledger["total"]["calls"] == len(server.requests) == 5 and "warning" not in ledger


def test_a_journal_cut_short_is_said_not_hidden_in_a_smaller_ledger(server, tmp_path):
    server.when("", Reply.json({"verdict": "consistent"}))
    data, run = rows(tmp_path / "rows.jsonl", 4), tmp_path / "run"
    args = command(server.base_url, data, run)[1:]
    assert runner.invoke(app, args).exit_code == 0
    journal = (run / "usage.jsonl").read_text().splitlines(keepends=True)
    (run / "usage.jsonl").write_text("".join(journal[:1]))
    rows(data, 5)
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    ledger = json.loads((run / "ledger.json").read_text())
    assert "usage.jsonl accounts for" in ledger["warning"] and "manifest's invocations for 5" in ledger["warning"]
    assert "warning:" in result.stderr and "usage.jsonl accounts for" in result.stderr


@pytest.mark.parametrize("name", ["ledger.json", "usage.jsonl", "results.jsonl", "manifest.json.tmp"])
def test_a_directory_where_a_run_file_belongs_is_bad_input(server, tmp_path, name):
    server.when("", Reply.json({"verdict": "consistent"}))
    data, run = rows(tmp_path / "rows.jsonl", 2), tmp_path / "run"
    args = command(server.base_url, data, run)[1:]
    assert runner.invoke(app, args).exit_code == 0
    target = run / name
    if target.exists():
        target.unlink()
    target.mkdir()
    for _ in range(2):  # every rerun: a message and exit 2, not "a bug"
        result = runner.invoke(app, args)
        assert result.exit_code == 2, result.output
        assert f"{target} is a directory" in result.stderr.replace("\n", "")


def test_a_run_directory_holding_a_link_is_refused_with_exit_2_and_the_target_untouched(server, tmp_path):
    server.when("", Reply.json({"verdict": "consistent"}))
    data, run = rows(tmp_path / "rows.jsonl", 2), tmp_path / "run"
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n", encoding="utf-8")
    run.mkdir()
    (run / ".lock").symlink_to(victim)
    result = runner.invoke(app, command(server.base_url, data, run)[1:])
    assert result.exit_code == 2 and "is a symbolic link" in result.stderr
    assert victim.read_text(encoding="utf-8") == "precious\n" and server.requests == []


def test_a_garbage_line_in_the_results_is_refused_with_an_offer_and_repair_keeps_the_good_ones(server, tmp_path):
    server.when("", Reply.json({"verdict": "consistent"}))
    data, run = rows(tmp_path / "rows.jsonl", 6), tmp_path / "run"
    args = command(server.base_url, data, run)[1:]
    assert runner.invoke(app, args).exit_code == 0
    lines = (run / "results.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (run / "results.jsonl").write_text("".join([*lines[:3], "garbage\n", *lines[3:]]), encoding="utf-8")
    refused = runner.invoke(app, args)
    assert refused.exit_code == 2 and "--repair" in refused.stderr
    calls = len(server.requests)
    repaired = runner.invoke(app, [*args, "--repair"])
    assert repaired.exit_code == 0, repaired.output
    assert "6 reused, 0 judged now" in repaired.stderr and "--repair dropped 1 unreadable" in repaired.stderr
    assert len(server.requests) == calls and "garbage" not in (run / "results.jsonl").read_text(encoding="utf-8")
