"""Every figure typed into README.md and docs/ agrees with the results file it comes from, and every results file
says what made it: the command, the commit, the data's SHA-256 and the machine."""

from __future__ import annotations

import importlib
import json
import re
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest
from benchmarks import _provenance

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
RESULTS = ROOT / "benchmarks" / "results"
# Written by a script that does not record its provenance yet; strict, so that the day it does, this list shrinks.
NO_PROVENANCE_YET: dict[str, str] = {}


def _generator(name: str) -> ModuleType:
    """A module of docs/_gen/, imported the way docs/_hooks.py imports it."""
    if str(DOCS) not in sys.path:
        sys.path.insert(0, str(DOCS))
    return importlib.import_module(f"_gen.{name}")


def _problems(root: Path, page: str | None = None) -> list[str]:
    figures = _generator("figures")
    return figures.check_figures(root, [f for f in figures.load_figures().figures if page in (None, f.page)])


def _copy_of_the_repository(tmp_path: Path) -> Path:
    """README.md, the pages of docs/ and the results files, where a test may change them."""
    root = tmp_path / "repo"
    shutil.copytree(DOCS, root / "docs", ignore=shutil.ignore_patterns("_gen", "*.py", "*.png", "*.svg"))
    shutil.copytree(RESULTS, root / "benchmarks" / "results")
    shutil.copy(ROOT / "README.md", root / "README.md")
    return root


def _flip_first_digit(text: str) -> str:
    return re.sub(r"\d", lambda digit: str((int(digit.group()) + 1) % 10), text, count=1)


def test_every_figure_in_the_prose_agrees_with_its_results_file() -> None:
    assert _problems(ROOT) == []


def test_the_readme_and_the_results_pages_have_their_figures_declared() -> None:
    pages = {figure.page for figure in _generator("figures").load_figures().figures}
    assert {"README.md", "docs/performance.md"} <= pages
    assert {str(page.relative_to(ROOT)) for page in (DOCS / "results").glob("*.md")} <= pages


def test_a_readme_figure_changed_by_hand_fails(tmp_path: Path) -> None:
    figures = _generator("figures")
    declared = figures.load_figures()
    root = _copy_of_the_repository(tmp_path)
    readme = root / "README.md"
    original = figures.flat(readme.read_text(encoding="utf-8"))
    in_readme = [figure for figure in declared.figures if figure.page == "README.md"]
    assert in_readme
    for figure in in_readme:
        snippet = figures.expected(figure, RESULTS, declared)
        assert snippet in original
        readme.write_text(original.replace(snippet, _flip_first_digit(snippet)), encoding="utf-8")
        problems = _problems(root, "README.md")
        assert len(problems) == 1 and f"from {figure.file}" in problems[0]
    readme.write_text(original, encoding="utf-8")
    assert _problems(root, "README.md") == []


def test_every_measured_figure_in_the_prose_is_declared_or_listed() -> None:
    """A decimal, a percentage, a ratio, an interval or a number with a unit in README.md or docs/ is read from its
    results file (`_gen.figures_*`), is code, or is listed in `_gen.undeclared` as no measurement or as a
    measurement no results file holds yet; and every listed entry is still on its page and still needed."""
    undeclared = _generator("undeclared")
    assert [str(token) for token in undeclared.undeclared(ROOT)] == []
    assert undeclared.stale(ROOT) == []


def test_a_figure_added_to_the_readme_undeclared_fails(tmp_path: Path) -> None:
    undeclared = _generator("undeclared")
    root = _copy_of_the_repository(tmp_path)
    readme = root / "README.md"
    original = readme.read_text(encoding="utf-8")
    assert undeclared.undeclared(root) == []
    readme.write_text(
        original.replace("## Python", "It judges 12.5 answers a minute, 3.2× faster.\n\n## Python"), encoding="utf-8"
    )
    found = undeclared.undeclared(root)
    assert [(token.page, token.text) for token in found] == [
        ("README.md", "12.5 answers a minute"),
        ("README.md", "3.2×"),
    ]
    assert found[0].line == original[: original.index("## Python")].count("\n") + 1
    # a listed figure changed by hand is no longer covered by its entry, which no longer matches the page
    readme.write_text(original.replace("reports 93.38 with GPT-4", "reports 95.38 with GPT-4"), encoding="utf-8")
    assert [token.text for token in undeclared.undeclared(root)] == ["95.38"]
    assert any("93.38" in problem for problem in undeclared.stale(root))


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        (
            "0.82 and 76.1 [71.9, 80.3]; 17.0% of 1,234.5 rows, 1.4× the tokens",
            ["0.82", "76.1", "[71.9, 80.3]", "17.0%", "1,234.5", "1.4×"],
        ),
        (
            "5.3 s a row, 120 ms, 108 prompt tokens/s, 12 minutes, 2.4 answers a minute, 90 MB, 6 points",
            ["5.3 s", "120 ms", "108 prompt tokens/s", "12 minutes", "2.4 answers a minute", "90 MB", "6 points"],
        ),
        (
            "Qwen2.5, the 1.5B model, v0.4.3, Python 3.10.1, 127.0.0.1, Apache-2.0, 2 × segments, 40 rows, 6 sentences",
            [],
        ),
        ("It measured 76.1.", ["76.1"]),
    ],
)
def test_the_inventory_finds_figures_and_not_names(text: str, tokens: list[str]) -> None:
    assert [match.group() for match in _generator("undeclared").TOKEN.finditer(text)] == tokens


def test_a_results_file_changed_without_its_prose_fails(tmp_path: Path) -> None:
    root = _copy_of_the_repository(tmp_path)
    path = root / "benchmarks" / "results" / "trained_head.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    shipped = next(r for r in data["results"] if r["split"] == "test" and r["method"] == data["choice"]["shipped"])
    shipped["balanced_accuracy"]["value"] += 0.01
    path.write_text(json.dumps(data), encoding="utf-8")
    pages = {problem.split(":", 1)[0] for problem in _problems(root)}
    assert {"README.md", "docs/results/index.md"} <= pages


def test_a_figure_path_filters_lists_follows_aliases_and_formats_as_the_tables_do() -> None:
    figures = _generator("figures")
    data = {
        "choice": {"shipped": "head"},
        "results": [
            {"split": "dev", "method": "head", "ba": {"value": 0.5, "low": 0.4, "high": 0.6}},
            {
                "split": "test",
                "method": "head",
                "ba": {"value": 0.7614, "low": 0.7189, "high": 0.8023},
                "lang:en": 0.945,
            },
            {"split": "test", "method": "other", "ba": {"value": 0.1, "low": 0.0, "high": 0.2}},
        ],
        "runs": [3.75, 4.35, 3.5],
    }
    figure = figures.Figure(
        "README.md", "x.json", "**{$shipped.ba!i}**, English {$shipped[lang:en]!p:.0f}%, {runs!n} runs"
    )
    aliases = {"shipped": "results[split=test][method=@choice.shipped]"}
    assert figures.render(figure, data, aliases) == "**76.1 [71.9, 80.2]**, English 94%, 3 runs"
    with pytest.raises(KeyError, match="2 items match"):
        figures.resolve(data, "results[split=test].ba")


@pytest.mark.parametrize("name", sorted(path.relative_to(RESULTS).as_posix() for path in RESULTS.rglob("*.json")))
def test_every_results_file_records_what_made_it(name: str, request: pytest.FixtureRequest) -> None:
    if name in NO_PROVENANCE_YET:
        request.applymarker(pytest.mark.xfail(strict=True, reason=f"{NO_PROVENANCE_YET[name]} records none yet"))
    made = _generator("results").provenance_of(json.loads((RESULTS / name).read_text(encoding="utf-8")))
    assert made is not None, f"{name} records neither its command nor its commit"
    assert isinstance(made["command"], str) and made["command"]
    assert made.get("commit") or (made.get("committed_in") and made.get("note")), "the commit, or where it was added"
    assert isinstance(made.get("data"), dict)
    assert made.get("machine") or made.get("note"), "the machine, or a note saying it was not recorded"


@pytest.mark.parametrize("script", sorted(path.name for path in (ROOT / "benchmarks").glob("[a-z]*.py")))
def test_every_script_that_writes_a_results_file_records_its_provenance(
    script: str, request: pytest.FixtureRequest
) -> None:
    source = (ROOT / "benchmarks" / script).read_text(encoding="utf-8")
    if not ("results" in source and ".json" in source and "write_text(" in source):
        pytest.skip("writes no results file")
    if script in NO_PROVENANCE_YET:
        request.applymarker(pytest.mark.xfail(strict=True, reason="records no provenance yet"))
    assert "provenance(" in source or ("commit_at_start()" in source and "machine()" in source)


def test_the_provenance_helper_records_the_command_the_commit_the_data_and_the_machine(tmp_path: Path) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text('{"id": 1}\n', encoding="utf-8")
    made = _provenance.provenance("python benchmarks/x.py --rows 3", {"rows.jsonl": data, "generated": b"abc"})
    assert made["command"] == "python benchmarks/x.py --rows 3"
    assert made["commit"] is None or re.fullmatch(r"[0-9a-f]{40}(\+dirty)?", made["commit"])
    assert made["data"] == {
        "rows.jsonl": _provenance.sha256_of(b'{"id": 1}\n'),
        "generated": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    }
    assert made["machine"]["cores"] >= 1 and set(made["machine"]) == {"cores", "cpu", "python"}
    assert isinstance(made["wall_s"], float) and made["wall_s"] >= 0  # the run's wall time, when called at its end
    assert _provenance.files(ROOT / "benchmarks" / "data" / "quality" / "test.jsonl") == {
        "benchmarks/data/quality/test.jsonl": ROOT / "benchmarks" / "data" / "quality" / "test.jsonl"
    }


def test_the_provenance_records_the_commit_the_run_started_from(monkeypatch: pytest.MonkeyPatch) -> None:
    """Edits or commits made while a benchmark runs do not change the commit its file records: git is read once, as
    the run starts."""

    def no_git(*args: object, **kwargs: object) -> None:
        raise AssertionError("git read again as the results are written")

    now = _provenance.commit()  # the checkout is not edited while the suite runs: the same as at the start
    if now is None:
        pytest.skip("not a git checkout")
    assert _provenance.commit_at_start() == now
    monkeypatch.setattr(_provenance.subprocess, "run", no_git)
    assert _provenance.provenance("python benchmarks/x.py")["commit"] == now


def test_the_shipped_default_run_end_to_end_agrees_with_the_replay_its_figures_come_from() -> None:
    """`ragfacts bench` with the default judge, on a sample of the test split, gives the labels that the replay of the
    stored states gives (benchmarks/default_bench.py): the figures of benchmarks/train_head.py are the product's."""
    from ragfacts.methods.precision.head import shipped_head
    from ragfacts.models.local.embedded import DEFAULT_MODEL

    compared = json.loads((RESULTS / "default_bench.json").read_text(encoding="utf-8"))
    head = shipped_head(DEFAULT_MODEL.sha256)
    assert head is not None and compared["head_digest"] == head.digest, "rerun benchmarks/default_bench.py"
    assert compared["replayed"] == compared["rows"] >= 60
    assert compared["labels_agreeing"] >= 0.9 * compared["replayed"]
    assert compared["generated_tokens"] == 0


def test_the_shipped_defaults_accuracy_on_the_whole_test_split_is_reproduced_by_ragfacts_bench() -> None:
    """`ragfacts bench` on all of the test split (benchmarks/default_bench.py --sample 365): the balanced accuracy the
    README states, which benchmarks/train_head.py computes by replaying stored states, is the replay's here, and the
    run's own balanced accuracy lies within the replay's bootstrap interval."""
    from ragfacts.methods.precision.head import shipped_head
    from ragfacts.models.local.embedded import DEFAULT_MODEL

    compared = json.loads((RESULTS / "default_bench_all.json").read_text(encoding="utf-8"))
    head = shipped_head(DEFAULT_MODEL.sha256)
    assert head is not None and compared["head_digest"] == head.digest, "rerun benchmarks/default_bench.py --sample 365"
    test_rows = (ROOT / "benchmarks" / "data" / "quality" / "test.jsonl").read_text(encoding="utf-8").splitlines()
    assert compared["rows"] == compared["replayed"] == len(test_rows)
    replay, bench = compared["intervals"]["replay"], compared["intervals"]["bench"]
    assert replay["value"] == head.training["test"]["balanced_accuracy"]["value"]
    assert replay["low"] <= bench["value"] <= replay["high"]
    assert compared["generated_tokens"] == 0
