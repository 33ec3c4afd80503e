"""Answer decomposition: the paper's logic-preserving split (§4.1), or conventional atomic statements (A.D.)."""

from __future__ import annotations

from ragfacts.methods.precision.options import DecompositionMethod
from ragfacts.methods.precision.results import CallRecord
from ragfacts.methods.precision.schemas import AtomicStatements, Decomposition
from ragfacts.methods.prompting import ask
from ragfacts.models import ChatModel

_PROMPTS: dict[DecompositionMethod, tuple[str, type[Decomposition | AtomicStatements]]] = {
    "logic_preserving": ("decompose", Decomposition),
    "conventional": ("decompose_conventional", AtomicStatements),
}


async def decompose_answer(
    model: ChatModel, answer: str, *, question: str | None, lang: str, method: DecompositionMethod
) -> tuple[list[str], CallRecord]:
    """Return the answer's segments (empty if the call failed) and the call's record.

    logic_preserving keeps logically connected sentences together, substitutes pronouns and keeps the
    wording; conventional breaks every sentence into one-fact statements, as RAGAS does.
    """
    prompt, schema = _PROMPTS[method]
    completion = await ask(model, prompt, schema, lang, question=question, answer=answer)
    if not completion.ok:
        return [], CallRecord.of(completion)
    reply: Decomposition | AtomicStatements = completion.parsed
    segments = reply.statements if isinstance(reply, AtomicStatements) else reply.segments
    return segments, CallRecord.of(completion)
