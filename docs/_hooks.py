"""MkDocs hooks: the generated pages and tables, made on every build from the code and the result files.

`reference/cli.md` and `reference/methods.md` are added as generated files (never written to disk);
`<!-- results: TABLE_ID -->` lines in any page become tables read from `benchmarks/results/*.json`, and every figure
typed into a page's prose that `_gen/figures_*.py` ties to a results file is checked against that file.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

DOCS = Path(__file__).resolve().parent
RESULTS = DOCS.parent / "benchmarks" / "results"
if str(DOCS) not in sys.path:  # the generators live beside this file, in docs/_gen/
    sys.path.insert(0, str(DOCS))

from _gen import results  # noqa: E402
from _gen.cli_reference import render_cli_reference  # noqa: E402
from _gen.figures import check_figures, load_figures  # noqa: E402
from _gen.markdown import table  # noqa: E402
from _gen.methods_reference import render_methods_reference  # noqa: E402

GENERATED_PAGES = ("reference/cli.md", "reference/methods.md")
_table_pages: dict[str, str] = {}  # table id -> the page that shows it, for the index of result files


def on_files(files: Files, config: MkDocsConfig, **kwargs: Any) -> Files:
    """Add the generated reference pages, and note which page shows which results table."""
    from ragfacts.cli import app

    contents = {"reference/cli.md": render_cli_reference(app), "reference/methods.md": render_methods_reference()}
    for src_uri, content in contents.items():
        if files.get_file_from_path(src_uri) is not None:
            raise PluginError(f"docs/{src_uri} is generated at build time: delete the file on disk")
        files.append(File.generated(config, src_uri, content=content))
    _table_pages.clear()
    for file in files.documentation_pages():
        if file.src_uri not in GENERATED_PAGES:
            for table_id in results.markers(file.content_string):
                _table_pages.setdefault(table_id, file.src_uri)
    in_docs = [figure for figure in load_figures().figures if figure.page.startswith("docs/")]
    problems = check_figures(DOCS.parent, in_docs)
    if problems:
        raise PluginError("figures in the prose differ from their results files:\n" + "\n".join(problems))
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files, **kwargs: Any) -> str:
    """Replace results markers with their tables; fill the index of result files."""
    tables = results.load_tables()
    unknown = [table_id for table_id in results.markers(markdown) if table_id not in tables | _SPECIAL]
    if unknown:
        raise PluginError(f"{page.file.src_uri}: unknown results table(s) {unknown}; known: {sorted(tables)}")
    markdown = markdown.replace("<!-- results: unlisted -->", results.render_unlisted(RESULTS))
    markdown = markdown.replace("<!-- results: files -->", _files_index(page.file.src_uri))
    return results.fill_tables(markdown, RESULTS)


_SPECIAL = {"unlisted": None, "files": None}


def _files_index(from_page: str) -> str:
    """A table: every result file, and the pages that show its tables."""
    pages_by_file: dict[str, set[str]] = {}
    for table_id, entry in results.load_tables().items():
        if table_id in _table_pages:
            pages_by_file.setdefault(entry.file, set()).add(_table_pages[table_id])
    rows = []
    for path in sorted(RESULTS.glob("*.json")):
        pages = sorted(pages_by_file.get(path.name, set()))
        links = ", ".join(f"[{page}]({os.path.relpath(page, os.path.dirname(from_page) or '.')})" for page in pages)
        made_by = results.made_by(json.loads(path.read_text(encoding="utf-8")))
        rows.append([f"`{path.name}`", links or "[below](#other-result-files)", made_by])
    return table(["result file", "shown on", "made by"], rows)
