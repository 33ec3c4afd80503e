"""The run directory: whole lines, torn tails dropped, foreign files never touched, one run at a time."""

from __future__ import annotations

import json

import pytest

from ragfacts.runs.manifest import Manifest
from ragfacts.runs.rundir import RESULTS_VERSION, RunDir, RunError


def line(item_id: str, method: str = "m", complete: bool = True) -> dict:
    return {
        "v": RESULTS_VERSION,
        "id": item_id,
        "method": method,
        "content_hash": "c",
        "config_hash": "k",
        "complete": complete,
        "outcome": {"kind": "precision"},
    }


def test_a_run_directory_or_a_jsonl_file_with_its_files_beside_it(tmp_path):
    as_dir = RunDir(tmp_path / "run")
    assert as_dir.results == tmp_path / "run" / "results.jsonl" and as_dir.manifest.name == "manifest.json"
    as_file = RunDir(tmp_path / "out.jsonl")
    assert as_file.results == tmp_path / "out.jsonl" and as_file.manifest.name == "out.jsonl.manifest.json"


def test_appended_lines_are_indexed_and_the_latest_line_of_an_item_wins(tmp_path):
    run_dir = RunDir(tmp_path / "run")
    with run_dir.log.appender() as append:
        append(line("a", complete=False))
        append(line("b"))
        append(line("a"))
    index = run_dir.index()
    assert index.lines == 3 and index.superseded == 1
    assert index.get("a", "m").complete and index.get("a", "m").line == 3


def test_a_torn_last_line_is_dropped_on_repair_and_nothing_else_changes(tmp_path):
    run_dir = RunDir(tmp_path / "run")
    with run_dir.log.appender() as append:
        append(line("a"))
    run_dir.save_manifest(Manifest(ragfacts="0", methods=[]))
    whole = run_dir.results.read_text(encoding="utf-8")
    run_dir.results.write_text(whole + json.dumps(line("b"))[:25], encoding="utf-8")
    assert run_dir.index().lines == 1
    assert run_dir.results.read_text(encoding="utf-8") != whole  # reading alone changes nothing
    run_dir.index(repair=True)
    assert run_dir.results.read_text(encoding="utf-8") == whole


def test_a_file_that_is_not_ours_is_refused_and_left_as_it_was(tmp_path):
    target = tmp_path / "notes.jsonl"
    target.write_text('{"my": "data"}', encoding="utf-8")  # one line, no final newline
    with pytest.raises(RunError, match="not a ragfacts results file"):
        RunDir(target).check_target([])
    assert target.read_text(encoding="utf-8") == '{"my": "data"}'


def test_a_bad_line_in_the_middle_is_an_error_not_a_guess(tmp_path):
    run_dir = RunDir(tmp_path / "run")
    run_dir.results.parent.mkdir()
    run_dir.results.write_text(json.dumps(line("a")) + "\nhello\n", encoding="utf-8")
    with pytest.raises(RunError, match="line 2 is not a ragfacts results line"):
        run_dir.index()


@pytest.mark.parametrize("name", ["data.jsonl", "run"])
def test_an_output_that_is_also_an_input_is_refused(tmp_path, name):
    data = tmp_path / "data.jsonl"
    data.write_text("{}\n", encoding="utf-8")
    target = tmp_path / name
    if name == "run":
        data = target / "results.jsonl"
    with pytest.raises(RunError, match="is also an input"):
        RunDir(target).check_target([data])


def test_the_wrong_kind_of_output_path_is_refused(tmp_path):
    (tmp_path / "dir.jsonl").mkdir()
    with pytest.raises(RunError, match="is a directory"):
        RunDir(tmp_path / "dir.jsonl").check_target([])
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(RunError, match="is a file"):
        RunDir(tmp_path / "file").check_target([])


def test_a_second_run_on_a_locked_directory_is_refused(tmp_path):
    run_dir = RunDir(tmp_path / "run")
    with (
        run_dir.locked(),
        pytest.raises(RunError, match="in use by another ragfacts run"),
        RunDir(run_dir.target).locked(),
    ):
        pass
    with run_dir.locked():  # released when the first run ended
        pass


def test_rewrite_keeps_only_the_lines_asked_for_atomically(tmp_path):
    run_dir = RunDir(tmp_path / "run")
    with run_dir.log.appender() as append:
        for name in "abc":
            append(line(name))
    assert run_dir.log.rewrite(lambda number, data: data["id"] != "b") == 1
    assert [entry["id"] for entry in run_dir.lines()] == ["a", "c"]
    assert not list(tmp_path.glob("run/*.tmp"))


def test_the_index_reads_only_the_head_of_a_line_even_when_texts_look_like_its_keys(tmp_path):
    run_dir = RunDir(tmp_path / "run")
    tricky = 'x, "item": {"id": "y"}'
    with run_dir.log.appender() as append:
        append({**line(tricky), "item": {"answer": ', "item": '}, "result": {"big": "x" * 10_000}})
    entry = run_dir.index().get(tricky, "m")
    assert entry is not None and entry.complete and entry.outcome == {"kind": "precision"}
    (full,) = run_dir.lines()
    assert full["item"]["answer"] == ', "item": ' and len(full["result"]["big"]) == 10_000


def test_a_manifest_reads_and_writes_back_unchanged_with_keys_this_version_does_not_know(tmp_path):
    run_dir = RunDir(tmp_path / "run")
    written = {
        "ragfacts": "9.9",
        "future_key": {"kept": True},
        "dataset": {"path": "/d.jsonl", "sha256": "ab", "rows": 2, "items": 2, "selection": None, "new": 1},
        "model": {"spec": "openai:m", "fingerprint": {"model": "m"}},
        "methods": [{"key": "faaf", "name": "faaf", "kind": "recall", "config_hash": "h", "prompts": {"en": "x"}}],
        "invocations": [{"id": "1", "status": "finished", "stopped": None, "usage": {"calls": 3}, "host": "x"}],
    }
    run_dir.manifest.parent.mkdir(parents=True)
    run_dir.manifest.write_text(json.dumps(written), encoding="utf-8")
    manifest = run_dir.load_manifest()
    assert manifest is not None and manifest.configs() == {"faaf": "h"} and manifest.invocations[0].usage.calls == 3
    run_dir.save_manifest(manifest)
    again = json.loads(run_dir.manifest.read_text(encoding="utf-8"))
    assert again["future_key"] == {"kept": True} and again["dataset"]["new"] == 1 and again["invocations"][0]["host"]
    assert again["invocations"][0]["usage"]["calls"] == 3 and again["methods"] == written["methods"]


RUN_FILES = [".lock", "usage.jsonl", "results.jsonl", "ledger.json", "manifest.json", "manifest.json.tmp"]


@pytest.mark.parametrize("name", RUN_FILES)
def test_a_run_file_that_is_a_symbolic_link_is_refused_and_its_target_left_as_it_was(tmp_path, name):
    """A run directory shipped in a cloned repository or left in a shared /tmp may hold links to other files: a
    run refuses it (before its lock) instead of truncating or appending through them."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n", encoding="utf-8")
    run_dir = RunDir(tmp_path / "run")
    run_dir.target.mkdir()
    (run_dir.target / name).symlink_to(victim)
    with pytest.raises(RunError, match="is a symbolic link"):
        run_dir.check_target([])
    with pytest.raises(RunError, match="is a symbolic link"), run_dir.locked():
        pass
    assert victim.read_text(encoding="utf-8") == "precious\n"


@pytest.mark.parametrize("name", ["usage.jsonl", "results.jsonl"])
def test_appends_never_follow_a_link_that_appears_after_the_check(tmp_path, name):
    """Opened with O_NOFOLLOW: a link planted between the check and the write makes the open fail."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n", encoding="utf-8")
    run_dir = RunDir(tmp_path / "run")
    run_dir.target.mkdir()
    (run_dir.target / name).symlink_to(victim)
    with pytest.raises(OSError), run_dir.usage_journal("i") if name == "usage.jsonl" else run_dir.log.appender():
        pass
    assert victim.read_text(encoding="utf-8") == "precious\n"


def test_a_file_replaced_whole_never_writes_through_a_link_at_its_temporary_name(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n", encoding="utf-8")
    run_dir = RunDir(tmp_path / "run")
    run_dir.target.mkdir()
    (run_dir.target / "ledger.json.tmp").symlink_to(victim)
    run_dir.save_ledger({"stages": {}})
    assert victim.read_text(encoding="utf-8") == "precious\n"
    assert json.loads(run_dir.ledger.read_text(encoding="utf-8")) == {"stages": {}}
