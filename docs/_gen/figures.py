"""Figures typed into prose, each read back from the results file it comes from.

A figure that a results table does not render (a number in a sentence of README.md or of a page in docs/) is
declared in `_gen.figures_results`, `_gen.figures_guides` or `_gen.figures_performance`: the page, the results file,
and the words around the figure with the figure as a `{field}`. `check_figures` renders every declared snippet from
its file and returns those a page no longer contains, so a figure changed by hand, or a results file changed without
the prose that quotes it, fails the suite (`tests/test_figures.py`) and the documentation's build. Figure-like tokens
that no snippet covers are inventoried by `_gen.undeclared`, which lists those that need no results file or have none
yet; the suite fails on any other.

A field is a path into the file's JSON, formatted as `str.format` formats it:

- `a.b.c` reads keys; `a[b:c]` reads a key that holds `.`, `:` or spaces; `runs[0]` an item of a list;
- `results[split=test]` is the one item of a list whose `split` is `test` (`[method=@choice.shipped]` compares
  with another field of the file); filters chain: `results[split=test][method=holistic]`;
- `$name` at the start of a field stands for the path the declaring module's `ALIASES[name]` gives, and
  `derived.NAME` for a value its `DERIVED[file]` computes from the file (and others it reads): a difference, a
  ratio, a range that the prose states and no file stores;
- `!i` formats `{"value", "low", "high"}` as `interval()` does (`76.1 [71.9, 80.2]`), `!u` the same unscaled
  (`:.3f` gives `0.073 [0.052, 0.119]`), `!p` multiplies by 100 (`:.1f` gives `17.5`), `!m` by 60 (per minute),
  `!n` counts the items of a list.
"""

from __future__ import annotations

import importlib
import json
import re
import string
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _gen.results import interval

_STEP = re.compile(r"\[([^\]]*)\]|([^.\[\]]+)")


@dataclass(frozen=True)
class Figure:
    """Figures in one snippet of a page, and the results file they are read from."""

    page: str  # from the repository's root: "README.md", "docs/results/index.md"
    file: str  # in benchmarks/results/
    text: str  # the snippet as the page has it, every figure a field


def wall_minutes(data: Mapping[str, Any]) -> int | None:
    """A results file's run time (its provenance's `wall_s`) in whole minutes, as the prose gives how long a script
    runs; None where the file does not record it."""
    wall = data.get("provenance", {}).get("wall_s")
    return None if wall is None else round(wall / 60)


def resolve(data: Any, path: str) -> Any:
    """The value at `path` in `data` (see the module's docstring); KeyError naming the step that fails."""
    value, matched = data, None  # matched: the items the filters so far leave, while filters follow one another
    for bracket, name in _STEP.findall(path):
        step = bracket or name
        if step.startswith("@"):
            step = str(resolve(data, step[1:]))
        if isinstance(value, list) and "=" in step:
            key, wanted = step.split("=", 1)
            if wanted.startswith("@"):
                wanted = str(resolve(data, wanted[1:]))
            matched = [item for item in (value if matched is None else matched) if _has(item, key, wanted)]
            continue
        if matched is not None:
            if len(matched) != 1:
                raise KeyError(f"{path}: {len(matched)} items match before {step!r}")
            value, matched = matched[0], None
        if isinstance(value, list):
            value = value[int(step)]
        elif isinstance(value, Mapping) and step in value:
            value = value[step]
        else:
            raise KeyError(f"{path}: no {step!r}")
    if matched is not None:
        if len(matched) != 1:
            raise KeyError(f"{path}: {len(matched)} items match")
        value = matched[0]
    return value


def _has(item: Any, key: str, wanted: str) -> bool:
    return isinstance(item, Mapping) and str(item.get(key)) == wanted


class _Interval:
    def __init__(self, stat: Mapping[str, float], scale: float) -> None:
        self.stat, self.scale = stat, scale

    def __format__(self, spec: str) -> str:
        digits = int(spec.strip(".f")) if spec else 1
        return interval(dict(self.stat), scale=self.scale, digits=digits)


class _FigureFormatter(string.Formatter):
    """`str.format` with JSON paths for fields and the conversions of the module's docstring."""

    def __init__(self, aliases: Mapping[str, str]) -> None:
        self.aliases = aliases

    def get_field(self, field_name: str, args: Any, kwargs: Mapping[str, Any]) -> tuple[Any, str]:
        if field_name.startswith("$"):
            name = re.match(r"\$(\w+)", field_name)
            if name is None or name.group(1) not in self.aliases:
                raise KeyError(f"{field_name}: no such alias")
            field_name = self.aliases[name.group(1)] + field_name[name.end() :]
        return resolve(kwargs["data"], field_name), field_name

    def convert_field(self, value: Any, conversion: str | None) -> Any:
        if conversion == "i":
            return _Interval(value, 100)
        if conversion == "u":
            return _Interval(value, 1)
        if conversion == "n":
            return len(value)
        if conversion == "p":
            return 100 * value  # as `pct()` scales it, so that prose and tables round alike
        if conversion == "m":
            return 60 * value
        return super().convert_field(value, conversion)


def render(figure: Figure, data: Any, aliases: Mapping[str, str] | None = None) -> str:
    """The snippet with its figures read from `data`, the results file's JSON (with "derived" where computed)."""
    return _FigureFormatter(aliases or {}).format(figure.text, data=data)


def flat(text: str) -> str:
    """Text with every run of white space made one space: a snippet may be wrapped anywhere on the page."""
    return " ".join(text.split())


Derive = Callable[[Any, Callable[[str], Any]], Mapping[str, Any]]
DECLARING_MODULES = ("figures_results", "figures_guides", "figures_performance", "figures_recall", "figures_rag_en")


@dataclass(frozen=True)
class Declared:
    """Every declared figure, with the aliases and the derived values their snippets use."""

    figures: list[Figure]
    aliases: dict[str, str]
    derived: dict[str, Derive]


def load_figures() -> Declared:
    """The figures, aliases and derived values of every declaring module; ValueError on a name declared twice."""
    declared = Declared([], {}, {})
    for name in DECLARING_MODULES:
        module = importlib.import_module(f"_gen.{name}")
        for mine, theirs in ((declared.aliases, module.ALIASES), (declared.derived, module.DERIVED)):
            if set(mine) & set(theirs):
                raise ValueError(f"_gen.{name} declares again: {sorted(set(mine) & set(theirs))}")
            mine.update(theirs)
        declared.figures.extend(module.FIGURES)
    return declared


def expected(figure: Figure, results: Path, declared: Declared) -> str:
    """The figure's snippet as its results file (in `results`) gives it, its white space made single spaces."""

    def load(name: str) -> Any:
        return json.loads((results / name).read_text(encoding="utf-8"))

    data = load(figure.file)
    if figure.file in declared.derived:
        data["derived"] = dict(declared.derived[figure.file](data, load))
    return flat(render(figure, data, declared.aliases))


def check_figures(root: Path, figures: Iterable[Figure] | None = None) -> list[str]:
    """What is wrong, one line per snippet: absent from its page as its file gives it, or not readable from the file.

    Args:
        root: the repository's root (pages are named from it, results files are in benchmarks/results/).
        figures: the snippets to check; by default every declared one.
    """
    declared = load_figures()
    pages: dict[str, str] = {}
    problems = []
    for figure in declared.figures if figures is None else figures:
        if figure.page not in pages:
            pages[figure.page] = flat((root / figure.page).read_text(encoding="utf-8"))
        try:
            text = expected(figure, root / "benchmarks" / "results", declared)
        except (KeyError, IndexError, TypeError, ValueError, OSError) as error:
            problems.append(f"{figure.page}: {figure.text!r} cannot be read from {figure.file}: {error}")
            continue
        if text not in pages[figure.page]:
            near = _near(text, pages[figure.page])
            problems.append(f"{figure.page}: {text!r} (from {figure.file}) is not on the page{near}")
    return problems


def _near(text: str, page: str) -> str:
    """What the page says where the snippet's first words are found, if they are."""
    opening = re.split(r"\d", text, maxsplit=1)[0]
    at = page.find(opening) if len(opening) >= 8 else -1
    return "" if at < 0 else f"; it says {page[at : at + len(text) + 20]!r}"
