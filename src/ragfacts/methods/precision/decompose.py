"""Answer decomposition: the paper's logic-preserving split (§4.1), or conventional atomic statements (A.D.).

The segments are the model's text, not the answer's: an instruction hidden in the answer can make the model
write segments the answer does not contain (text that agrees with the reference, say), and the answer would
look faithful. So every segment is checked against the answer it came from (`mark_segments_not_in_answer`):
the share of its content (words, or character pairs in Chinese) found in the answer or the question, whose
words a substituted pronoun may bring in. Below `FROM_ANSWER_MIN_SHARE` it is kept, marked and never counted
as consistent, and an answer with such a segment is never consistent.
"""

from __future__ import annotations

from ragfacts.methods.precision.options import DecompositionMethod
from ragfacts.methods.precision.results import AnswerLabel, CallRecord, SegmentResult
from ragfacts.methods.precision.schemas import AtomicStatements, Decomposition
from ragfacts.methods.prompting import ask
from ragfacts.models import ChatModel
from ragfacts.text import share_found_in

# Normal decompositions keep 0.75 or more of their content in the answer (pronouns substituted, headings repeated,
# atomic statements reworded: the prompts' examples, in both languages); text from elsewhere keeps 0.35 or less,
# even on the answer's topic. A reworded fact (a changed name or number) keeps more and is not caught.
FROM_ANSWER_MIN_SHARE = 0.5

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


def mark_segments_not_in_answer(segments: list[SegmentResult], answer: str, question: str | None) -> None:
    """Record each segment's share of content found in the answer; mark those below FROM_ANSWER_MIN_SHARE.

    A marked segment keeps its verdicts, but is never consistent: "consistent" becomes "unscored".
    """
    source = f"{question or ''}\n{answer}"
    for segment in segments:
        segment.answer_share = share = round(share_found_in(segment.text, source), 3)
        if share >= FROM_ANSWER_MIN_SHARE:
            continue
        segment.from_answer = False
        if segment.label is AnswerLabel.CONSISTENT:
            segment.label = AnswerLabel.UNSCORED
        said = f"not in the answer: {share:.0%} of its words are; the decomposition wrote it, so it is not counted"
        segment.note = f"{segment.note}; {said}" if segment.note else said


def label_with_segments_not_in_answer(
    label: AnswerLabel, reason: str | None, segments: list[SegmentResult]
) -> tuple[AnswerLabel, str | None]:
    """The answer's label and reason once segments not in the answer are known: never consistent with one."""
    foreign = sum(not segment.from_answer for segment in segments)
    if not foreign:
        return label, reason
    said = f"{foreign} of {len(segments)} segment(s) are not in the answer (written by the decomposition)"
    if label is AnswerLabel.CONSISTENT:
        return AnswerLabel.UNSCORED, said
    return label, f"{reason}; {said}" if reason else said
