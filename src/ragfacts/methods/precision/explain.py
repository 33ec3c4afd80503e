"""Why a flagged answer is flagged, by scoring alone; the paper's fact stage on top only where asked (best effort).

The probability strategies (holistic_score, trained_head, sentence_scores) decide a verdict in forward passes.
Their explanation (`explain`) is made the same way, with no text generated:

- the evidence checks' mismatches, in words ("the answer says May 27, 1947; the reference says May 27, 1937"),
  Chinese person and place names included where jieba is installed (the [local] extra has it);
- each sentence's score, the flagged answer's least supported sentence carrying the verdict;
- where no number, date or name differs, the clause of that sentence that its closest reference sentence lacks;
- an error type from what was found: a number, date or name the reference states otherwise is a knowledge error
  (KCont., Face4RAG §3.1), one it does not state at all a hallucination (Hallu.); where nothing was found the
  sentence is "untyped", said so, never an empty list that reads as "nothing found".

With `explain=generate` the fact stage then explains the least supported sentence. It is an explanation of a
decided verdict: its call is optional (`CallRecord.optional`), so its failure or timeout is reported but never
changes the verdict, never makes the result incomplete (no retry on resume, no --max-failed), and its reply is
capped at `EXPLAIN_TOKENS`. Where it finds nothing, the note says the generated check did not confirm the flag.
"""

from __future__ import annotations

import re
import unicodedata

from ragfacts.evidence import Mismatch, find_unsupported
from ragfacts.items import Item
from ragfacts.methods.precision.options import CheckOptions
from ragfacts.methods.precision.results import AnswerLabel, CheckResult, ScoreResult, SegmentResult
from ragfacts.methods.precision.stages import check_fact
from ragfacts.models import ChatModel
from ragfacts.text import FUNCTION_WORDS, clip, split_sentences
from ragfacts.typology import ErrorType

EXPLAIN_TOKENS = 384  # a fact check of one sentence: a few points, their quotes and a verdict
SHOWN = 160  # characters of a sentence quoted in a reason
MAX_CLAUSES = 3  # the runs of words a sentence's closest reference sentence lacks, named in its reason
_WORDS = {
    "en": {
        "clause": "the answer says “{clause}”, which its closest reference sentence does not: “{closest}”",
        "and": "” and “",
        "same_words": "its words are all in its closest reference sentence (“{closest}”): how they relate may differ",
        "least": "its least supported sentence ({n} of {m})",
        "sentence": "sentence {n}",
        "only": "its one sentence",
        "untyped": "error type: untyped (no number, date or name differs; the score flags it)",
        "unconfirmed": "flagged by its score; the generated fact check did not confirm it (the verdict is the score's)",
    },
    "zh": {
        "clause": "回答说“{clause}”，与之最接近的参考句没有这一内容：“{closest}”",
        "and": "”和“",
        "same_words": "它的词语都见于最接近的参考句（“{closest}”），但彼此的关系可能不同",
        "least": "支持度最低的句子（第{n}句，共{m}句）",
        "sentence": "第{n}句",
        "only": "唯一的句子",
        "untyped": "错误类型：未分类（数字、日期、名称均无出入；由分数判定）",
        "unconfirmed": "由分数判定；生成的事实核查未能证实（以分数为准）",
    },
}
_TOKEN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]|\d+(?:[.,]\d+)*|[^\W\d_]+")


def words(lang: str) -> dict[str, str]:
    return _WORDS["zh" if lang.startswith("zh") else "en"]


def error_type_of(mismatch: Mismatch) -> ErrorType:
    """A number, date or name the reference states otherwise: a knowledge error (contradiction); one it does not
    state at all: a hallucination."""
    return ErrorType.CONTRADICTION if mismatch.reference_candidates else ErrorType.HALLUCINATION


def differing_clause(sentence: str, reference: str, lang: str) -> str:
    """The runs of `sentence`'s content words (Chinese characters) that its closest reference sentence (the most
    words in common) lacks, the longest `MAX_CLAUSES` in the sentence's order; or, where it lacks none, that the
    relation of its words may differ."""
    said = words(lang)
    candidates = split_sentences(reference) or [reference]
    own = [(m.start(), m.end(), _fold(m.group())) for m in _TOKEN.finditer(sentence)]
    content = {token for _, _, token in own if token not in FUNCTION_WORDS}
    closest = max(candidates, key=lambda c: len(content & {_fold(t) for t in _TOKEN.findall(c)}))
    found = {_fold(t) for t in _TOKEN.findall(closest)}
    runs: list[list[int]] = []  # [content tokens missing, start, end] of each run
    current: list[int] | None = None
    for start, end, token in own:
        if token in found:
            current = None
        elif token in FUNCTION_WORDS:
            continue  # inside a run, a function word neither starts nor breaks it
        elif current is None:
            current = [1, start, end]
            runs.append(current)
        else:
            current[0], current[2] = current[0] + 1, end
    if not runs:
        return said["same_words"].format(closest=clip(closest, SHOWN))
    kept = sorted(sorted(runs, key=lambda r: (-r[0], -(r[2] - r[1]), r[1]))[:MAX_CLAUSES], key=lambda r: r[1])
    clauses = said["and"].join(sentence[start:end] for _, start, end in kept)
    return said["clause"].format(clause=clauses, closest=clip(closest, SHOWN))


async def explain_flagged(
    model: ChatModel,
    item: Item,
    options: CheckOptions,
    lang: str,
    result: CheckResult,
    sentences: list[str],
    scores: list[ScoreResult | None],
    whole: ScoreResult,
) -> None:
    """Mark a flagged answer's sentences and say why, into `result`: the sentences holding a mismatch, else the
    least supported one, carry the verdict, each with its error type and reason; the others keep their own score's
    verdict. `whole` is the whole answer's score (the one sentence's, for an answer of one sentence). The sentences'
    scores and any generated explanation are optional calls: they explain, the whole answer's pass decided."""
    for score in scores:  # the sentences' scores explain a verdict made: a failed one leaves nothing undecided
        if score is not None:
            score.call.optional = True
    reference = item.reference or ""
    # Chinese names too where jieba is installed: in the reasons only, the verdict's features stay as trained
    mismatches = find_unsupported(item.answer, reference, lang, chinese_names="auto")
    found = in_sentences(mismatches, item.answer, sentences)
    ranked = [(s.probability, n) for n, s in enumerate(scores) if s is not None and s.probability is not None]
    weakest = min(ranked)[1] if ranked else 0
    flagged = sorted(found) or [weakest]
    segments = []
    for index, sentence in enumerate(sentences):
        score = scores[index]
        if index not in flagged:
            label = AnswerLabel(score.verdict) if score is not None and score.verdict else AnswerLabel.UNSCORED
            segments.append(SegmentResult(index=index, text=sentence, score=score, label=label))
            continue
        # One sentence: the whole answer's score is its own, said once (in the reason's head), not again here
        carried = score or whole.model_copy(update={"call": whole.call.pointer(), "explanation": ""})
        carried = flagged_score(carried, sentence, reference, found.get(index, []), lang)
        segments.append(SegmentResult(index=index, text=sentence, score=carried, label=AnswerLabel.INCONSISTENT))
    result.segments = segments
    if options.explain == "generate":
        await generated(model, item, options, lang, segments[flagged[0]])
    result.reason = _reason(result, segments, flagged, not found, lang)


def flagged_score(score: ScoreResult, sentence: str, reference: str, found: list[Mismatch], lang: str) -> ScoreResult:
    """`score` as the verdict of a flagged sentence: inconsistent, with the error type and the reason scoring gives
    (the sentence's mismatches, else the clause its closest reference sentence lacks, untyped), and its score."""
    if found:
        why = "; ".join(m.explain(lang) for m in found)
        error_type: ErrorType | None = error_type_of(found[0])
    else:
        why = f"{differing_clause(sentence, reference, lang)}; {words(lang)['untyped']}"
        error_type = None
    if score.explanation:
        why = f"{why} ({score.explanation})"
    return score.model_copy(update={"verdict": "inconsistent", "error_type": error_type, "explanation": why})


def in_sentences(mismatches: list[Mismatch], answer: str, sentences: list[str]) -> dict[int, list[Mismatch]]:
    """The mismatches of each sentence (by where they lie in the answer)."""
    spans = _sentence_spans(answer, sentences)
    found: dict[int, list[Mismatch]] = {}
    for mismatch in mismatches:
        at = next((n for n, (start, end) in enumerate(spans) if start <= mismatch.start < end), None)
        if at is not None:
            found.setdefault(at, []).append(mismatch)
    return found


async def generated(model: ChatModel, item: Item, options: CheckOptions, lang: str, segment: SegmentResult) -> None:
    """The paper's fact stage on the sentence that carries the verdict: optional, capped, never a verdict."""
    fact = await check_fact(
        model,
        item.reference or "",
        segment.text,
        question=item.question,
        lang=lang,
        chain_of_thought=options.chain_of_thought,
        max_tokens=EXPLAIN_TOKENS,
    )
    fact.call.optional = True
    segment.fact = fact
    if fact.verdict == "consistent":
        segment.note = words(lang)["unconfirmed"]


def _reason(result: CheckResult, segments: list[SegmentResult], flagged: list[int], by_score: bool, lang: str) -> str:
    """One line: how the whole answer was judged, then each sentence that carries the verdict and why."""
    said = words(lang)
    judged = result.holistic.explanation if result.holistic is not None else ""
    parts = [f"judged inconsistent as a whole ({judged})" if judged else "judged inconsistent"]
    for index in flagged:
        segment = segments[index]
        if len(segments) == 1:
            where = said["only"]
        elif by_score:
            where = said["least"].format(n=index + 1, m=len(segments))
        else:
            where = said["sentence"].format(n=index + 1)
        why = segment.score.explanation if segment.score is not None else ""
        parts.append(f"{where}: “{clip(segment.text, SHOWN)}” — {why}")
    return "; ".join(parts)


def _sentence_spans(answer: str, sentences: list[str]) -> list[tuple[int, int]]:
    """Where each sentence lies in the answer (in order; a sentence not found takes the rest)."""
    spans, at = [], 0
    for sentence in sentences:
        start = answer.find(sentence, at)
        if start < 0:
            spans.append((at, len(answer)))
            continue
        spans.append((start, start + len(sentence)))
        at = start + len(sentence)
    return spans


def _fold(token: str) -> str:
    return unicodedata.normalize("NFKC", token).casefold()
