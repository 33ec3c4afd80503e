"""Gates, declared once: thresholds on a run's summaries that fail it. The command line's `--min-*` options and
the service's request fields are named after them; every surface checks them here and says why in the same words.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from ragfacts.methods.base import Kind
from ragfacts.runs.summary import MethodSummary


@dataclass(frozen=True)
class GateSpec:
    """A threshold on one measure of a method's summary."""

    name: str  # min_consistent: the option --min-consistent, the request field min_consistent
    kind: Kind  # the methods it applies to
    measures: str  # what it is a least value of, for help texts
    measure: Callable[[MethodSummary], float | None]
    # The measure were every failed call to succeed in the gate's favour (unscored rows whose calls failed counted
    # consistent, their missing scores 1): a gate that fails even so failed whatever the failures hide.
    best: Callable[[MethodSummary], float | None]


def _best_share(summary: MethodSummary) -> float | None:
    return (summary.consistent + summary.undecided) / summary.judged if summary.judged else None


GATES: dict[str, GateSpec] = {
    spec.name: spec
    for spec in (
        GateSpec(
            "min_consistent",
            "precision",
            "the share of consistent answers",
            lambda s: s.consistent_share.value if s.consistent_share else None,
            _best_share,
        ),
        GateSpec(
            "min_faithfulness",
            "precision",
            "the mean faithfulness",
            lambda s: s.score.value,
            lambda s: s.score_if_failed_is_1,
        ),
        GateSpec("min_recall", "recall", "the mean recall", lambda s: s.score.value, lambda s: s.score_if_failed_is_1),
    )
}


def gates_of(kind: Kind) -> tuple[str, ...]:
    """The names of the gates on methods of `kind`."""
    return tuple(name for name, spec in GATES.items() if spec.kind == kind)


@dataclass(frozen=True)
class GateResult:
    """One threshold checked against one method's summary."""

    name: str
    threshold: float
    method: str
    value: float | None  # None: the method judged no row
    apart: str = ""  # what was counted as not consistent without a verdict (uncertain, unscored)
    best: float | None = None  # the value were every failed call to succeed in the gate's favour

    @property
    def passed(self) -> bool:
        return self.value is not None and self.value >= self.threshold

    @property
    def decided(self) -> bool:
        """Whether the outcome stands whatever the failed calls hide: it passed, or it fails even were every failed
        call to succeed in its favour. A gate that fails only through failed calls is undecided."""
        return self.passed or (self.best is not None and self.best < self.threshold)

    def message(self, gate: str | None = None) -> str:
        """Why it failed, naming the gate as `gate` (default its name; the CLI gives its option)."""
        shown = gate or self.name
        if self.value is None:
            return f"gate {shown} {self.threshold:g}: {self.method} judged no row"
        return f"gate {shown} {self.threshold:g} failed: {self.method} measured {self.value:.3f}{self.apart}"


def check_gates(summaries: Iterable[MethodSummary], thresholds: Mapping[str, float | None]) -> list[GateResult]:
    """Each threshold given checked against the summary of each method of its kind; unknown names are refused."""
    unknown = sorted(set(thresholds) - set(GATES))
    if unknown:
        raise ValueError(f"unknown gate {', '.join(unknown)}; gates: {', '.join(GATES)}")
    results = []
    for summary in summaries:
        for name in gates_of(summary.kind):
            threshold = thresholds.get(name)
            if threshold is not None:
                spec = GATES[name]
                value, best = spec.measure(summary), spec.best(summary)
                results.append(GateResult(name, threshold, summary.method, value, _apart(summary), best))
    return results


def gate_failures(
    summaries: Iterable[MethodSummary],
    thresholds: Mapping[str, float | None],
    named: Callable[[str], str] = str,
) -> list[str]:
    """The gates that fail, each as a line naming the gate (as `named` writes it), the method and the value."""
    return [result.message(named(result.name)) for result in check_gates(summaries, thresholds) if not result.passed]


def option_name(gate: str) -> str:
    """The command line's option for a gate: min_consistent → --min-consistent."""
    return "--" + gate.replace("_", "-")


def _apart(summary: MethodSummary) -> str:
    """What the gate counted as not consistent without a verdict: uncertain and unscored answers, if any."""
    parts = [f"{n} {name}" for n, name in ((summary.uncertain, "uncertain"), (summary.unscored, "unscored")) if n]
    if summary.kind != "precision" or not parts:
        return ""
    return f" ({' and '.join(parts)} counted as not consistent)"
