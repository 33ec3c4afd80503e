"""The README stays short and keeps CI's test command; the documentation's generated pages cover everything."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
RESULTS = ROOT / "benchmarks" / "results"


def _generator(name: str) -> ModuleType:
    """A module of docs/_gen/, imported the way docs/_hooks.py imports it."""
    if str(DOCS) not in sys.path:
        sys.path.insert(0, str(DOCS))
    return importlib.import_module(f"_gen.{name}")


def test_readme_is_at_most_200_lines_and_keeps_the_test_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    assert "\npython -m pytest -q\n" in readme  # CI runs the README's test command


def test_cli_reference_names_every_top_level_command() -> None:
    from ragfacts.cli import app

    cli_reference = _generator("cli_reference")
    page = cli_reference.render_cli_reference(app)
    commands = cli_reference.cli_commands(app)
    assert {"check", "evaluate", "bench", "report"} <= set(commands)
    for command in commands:
        assert f"## `ragfacts {command}`" in page


def test_methods_reference_names_every_registered_method() -> None:
    from ragfacts.methods.base import registered_methods

    methods_reference = _generator("methods_reference")
    page = methods_reference.render_methods_reference()
    assert methods_reference.method_names() == list(registered_methods())
    for name, cls in registered_methods().items():
        assert f"### `{name}`" in page
        for option in cls.Options.model_fields:
            assert f"`{option}`" in page


def test_every_results_table_renders_and_is_shown_on_a_page() -> None:
    results = _generator("results")
    tables = results.load_tables()
    asked = {table_id for page in DOCS.rglob("*.md") for table_id in results.markers(page.read_text(encoding="utf-8"))}
    assert asked - set(tables) <= {"files", "unlisted"}, "a page asks for a table nobody generates"
    assert set(tables) <= asked, "a generated table is shown on no page"
    for table_id in tables:
        assert results.render_table(table_id, RESULTS).startswith("|")
    assert results.render_unlisted(RESULTS)


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs")
    pytest.importorskip("material")
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    build(load_config(str(ROOT / "mkdocs.yml"), site_dir=str(tmp_path / "site"), strict=True))
    assert (tmp_path / "site" / "reference" / "cli" / "index.html").is_file()
