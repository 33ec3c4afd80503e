"""The report's charts, drawn with matplotlib and inlined as SVG (the `report` extra).

Why matplotlib to SVG rather than Vega-Lite: the report is one file read offline; static SVG needs no
JavaScript library inside it (Vega-Lite's would add ~1 MB to every report), renders the same in every
browser and on a phone, and stays small (a few tens of kB a chart). The charts are small multiples a
person reads at a glance; the interactive part of the report is the per-answer view.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from typing import Any

from ragfacts.bench.metrics import ClassificationMetrics


def available() -> bool:
    """Whether matplotlib is installed (pip install 'ragfacts[report]')."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def method_colours(methods: Sequence[str]) -> dict[str, str]:
    """One colour per method, in the run's order, the same in every chart of a report."""
    palette = [f"C{n}" for n in range(10)]
    return {method: palette[n % len(palette)] for n, method in enumerate(methods)}


def accuracy_by_error_type(
    metrics: Sequence[ClassificationMetrics], colours: dict[str, str] | None = None
) -> str | None:
    """Grouped bars: per error type (and the consistent answers), each method's accuracy."""
    types = sorted({t for m in metrics for t in m.by_error_type})
    if not metrics or not types:
        return None
    groups = ["consistent answers", *types]
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(7, min(1.2 + 0.12 * len(groups) * len(metrics) + 0.2 * len(groups), 12)))
    height = 0.8 / len(metrics)
    for index, m in enumerate(metrics):
        rates = [m.positive_accuracy, *(m.by_error_type.get(t) for t in types)]
        values = [100 * r.value if r is not None and r.value is not None else 0 for r in rates]
        positions = [g + index * height for g in range(len(groups))]
        axes.barh(positions, values, height=height, label=m.method, color=(colours or {}).get(m.method))
    axes.set_yticks([g + 0.4 - height / 2 for g in range(len(groups))], [_n_label(g, metrics, types) for g in groups])
    axes.invert_yaxis()
    axes.set_xlim(0, 100)
    axes.set_xlabel("accuracy %")
    axes.legend(fontsize=7, loc="lower right")
    return _svg(figure)


def cost_against_accuracy(
    metrics: Sequence[ClassificationMetrics], colours: dict[str, str] | None = None
) -> str | None:
    """Each method as a point: tokens per answer against balanced accuracy."""
    points = [
        (m, m.balanced_accuracy.value, m.usage.tokens / max(m.answers, 1))
        for m in metrics
        if m.balanced_accuracy.value is not None
    ]
    if not points:
        return None
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(6, 4))
    for m, value, tokens in points:
        ba = m.balanced_accuracy
        low, high = ba.low if ba.low is not None else value, ba.high if ba.high is not None else value
        axes.errorbar(
            [tokens],
            [100 * value],
            yerr=[[100 * (value - low)], [100 * (high - value)]],
            fmt="o",
            capsize=3,
            color=(colours or {}).get(m.method),
            label=m.method,
        )
    axes.legend(fontsize=7, loc="lower right")  # a legend, not labels by the points: methods of equal cost overlap
    axes.set_xlabel("tokens per answer (prompt + completion, as spent)")
    axes.set_ylabel("balanced accuracy % (95% interval)")
    axes.set_ylim(0, 100)
    return _svg(figure)


def score_distribution(scores: dict[str, list[float]], colours: dict[str, str] | None = None) -> str | None:
    """Histograms of faithfulness or recall per method."""
    scores = {method: values for method, values in scores.items() if values}
    if not scores:
        return None
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(6, 3.5))
    axes.hist(
        list(scores.values()),
        bins=10,
        range=(0, 1),
        label=list(scores),
        histtype="bar",
        color=[(colours or {}).get(method, f"C{n % 10}") for n, method in enumerate(scores)],
    )
    axes.set_xlabel("faithfulness / recall of an answer")
    axes.set_ylabel("answers")
    axes.legend(fontsize=7)
    return _svg(figure)


def reliability_diagram(metrics: Sequence[ClassificationMetrics], colours: dict[str, str] | None = None) -> str | None:
    """Per method with a probability: the share of faithful answers against the mean probability, per bin."""
    shown = [m for m in metrics if m.reliability]
    if not shown:
        return None
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(4.5, 4.5))
    axes.plot([0, 1], [0, 1], color="grey", linestyle=":", linewidth=1, label="perfectly calibrated")
    for m in shown:
        bins = [b for b in m.reliability if b["n"]]
        ece = m.calibration_error.value
        axes.plot(
            [b["mean_probability"] for b in bins],
            [b["share_faithful"] for b in bins],
            marker="o",
            color=(colours or {}).get(m.method),
            label=f"{m.method} (ECE {ece:.3f})" if ece is not None else m.method,
        )
    axes.set_xlim(0, 1)
    axes.set_ylim(0, 1)
    axes.set_xlabel("P(faithful), mean of the bin")
    axes.set_ylabel("share of faithful answers in the bin")
    axes.legend(fontsize=7, loc="upper left")
    return _svg(figure)


def cascade_tradeoff(tradeoffs: Sequence[Any]) -> str | None:
    """Per cascade: balanced accuracy against cost per answer, one point per way of judging (bands, either alone)."""
    if not tradeoffs:
        return None
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(6, 4))
    for n, tradeoff in enumerate(tradeoffs):
        rows = [r for r in tradeoff.rows if r.balanced_accuracy.value is not None]
        x = [r.tokens_per_answer for r in rows]
        y = [100 * r.balanced_accuracy.value for r in rows]
        axes.plot(x, y, marker="o", color=f"C{n % 10}", label=tradeoff.method)
        for r, xi, yi in zip(rows, x, y, strict=True):
            axes.annotate(f"{r.escalated:.0%}", (xi, yi), fontsize=6, xytext=(3, 3), textcoords="offset points")
    axes.set_xlabel("tokens per answer (both judges)")
    axes.set_ylabel("balanced accuracy %")
    axes.legend(fontsize=7, loc="lower right")
    return _svg(figure)


def _n_label(group: str, metrics: Sequence[ClassificationMetrics], types: list[str]) -> str:
    if group == "consistent answers":
        return f"{group} (n={max(m.positive_accuracy.n for m in metrics)})"
    return f"{group} (n={max((m.by_error_type[group].n for m in metrics if group in m.by_error_type), default=0)})"


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    # Labels come from data: "$5 vs $6" is text, not maths (a stray "$" would otherwise fail the report).
    matplotlib.rcParams.update(
        {"svg.fonttype": "none", "svg.hashsalt": "ragfacts", "font.size": 8, "text.parse_math": False}
    )
    import matplotlib.pyplot as plt

    return plt


def _svg(figure: Any) -> str:
    import matplotlib.pyplot as plt

    figure.tight_layout()
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None})
    plt.close(figure)
    text = re.sub(r"^.*?(?=<svg)", "", buffer.getvalue(), flags=re.DOTALL)  # no XML declaration, no DOCTYPE
    return re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.DOTALL)
