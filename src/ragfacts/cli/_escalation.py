"""The cascade's options, declared once for the commands that judge precision: uncertain answers re-judged by a
second model (`--escalate-to MODEL`, `--escalate-method SPEC`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import typer

from ragfacts.cli._common import fail, method_for
from ragfacts.methods.base import Method
from ragfacts.models import ConfigurationError
from ragfacts.runtime import Runtime

# The cascade's two options, declared once for the commands that judge precision.
EscalateTo = Annotated[
    str | None,
    typer.Option(
        "--escalate-to",
        help="re-judge the answers left uncertain (--uncertain) with this model, e.g. openai:gpt-4o or "
        "local:/models/qwen2.5-7b.gguf; its verdict decides, both are kept, its cost is its own ledger rows",
        show_default=False,
    ),
]
EscalateMethod = Annotated[
    str, typer.Option("--escalate-method", help="the precision method the --escalate-to model runs, with options")
]
DEFAULT_ESCALATE_METHOD = "lface4rag:strategy=paper"


@dataclass(frozen=True)
class Escalation:
    """Where uncertain answers go: a model spec and the method it runs."""

    model: str
    method: str = DEFAULT_ESCALATE_METHOD


def escalation_for(judges: list[Method], model: str | None, method: str) -> Escalation | None:
    """The cascade asked for, checked: the precision judge must have an abstain band to escalate from."""
    if model is None:
        if method != DEFAULT_ESCALATE_METHOD:
            fail("--escalate-method is for --escalate-to MODEL")
        return None
    for judge in judges:
        if judge.kind == "precision" and getattr(judge.options, "uncertain", None) is None:
            fail(
                f"--escalate-to re-judges the answers {judge.spec} leaves uncertain: give it a band with --uncertain "
                "LOW,HIGH (or auto, the band chosen with the model's calibration)"
            )
    method_for("precision", method, {})  # a bad method spec exits 2 before anything runs
    return Escalation(model, method)


def with_escalation(methods: list[Method], runtime: Runtime, escalation: Escalation | None) -> list[Method]:
    """The precision methods as cascades onto the second model, when one was asked for."""
    if escalation is None:
        return methods
    from ragfacts.methods.cascade import Cascade

    try:
        second_model = runtime.second_model(escalation.model)
    except ConfigurationError as error:
        fail(f"--escalate-to {escalation.model}: {error}")
    second = method_for("precision", escalation.method, {})
    return [Cascade(m, second, second_model) if m.kind == "precision" else m for m in methods]
