"""The synthesiser: from one row, flawed answers with exactly one error of each type asked for, and paraphrases.

Per row (Face4RAG §3.2 and Appendix A, with a model check in place of the paper's human annotators):
1. the faithful answer is the row's own, or the model writes one from the reference (and a check must find it
   supported, else the row yields nothing);
2. per error type, one call with that type's prompt names a span of the answer and its replacement; code
   applies the edit (`apply_edit`), so the recorded span is exactly what changed;
3. per positive, one call rewords the answer (told the earlier rewordings, to differ from them);
4. unless `verify` is off, a second call checks every candidate: for an edit, which error type it introduced
   (the verifier is not told the intended one) and whether it is the only error; for a rewording, whether it
   means the same and is supported. Only what passes is kept; the rest is recorded with the reason.

The runner drives it like a method (resume, concurrency, ledger), but it is not registered as one: it judges
nothing, so `--methods` cannot name it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from ragfacts.items import Item
from ragfacts.methods.base import Task
from ragfacts.methods.precision.results import CallRecord
from ragfacts.methods.prompting import ask, estimate
from ragfacts.models import ChatModel
from ragfacts.synth.edits import EditError, Span, apply_edit, rewording_differs
from ragfacts.synth.options import INJECTABLE, SynthOptions, type_slug
from ragfacts.synth.results import Candidate, SynthResult
from ragfacts.synth.schemas import AnswerCheck, EditCheck, Injection, Paraphrase, ParaphraseCheck, WrittenAnswer
from ragfacts.text import approx_tokens, detect_lang, normalise, split_sentences
from ragfacts.typology import ErrorType
from ragfacts.usage import Usage

WRITE = "synth_answer"
CHECK_ANSWER = "synth_check_answer"
PARAPHRASE = "synth_paraphrase"
CHECK_PARAPHRASE = "synth_check_paraphrase"
CHECK_EDIT = "synth_check_edit"
_INJECTION_REPLY = 80  # tokens: reasoning, span and replacement
_CHECK_REPLY = 50


def inject_prompt(error_type: ErrorType) -> str:
    """The prompt that injects `error_type`, e.g. "synth_inject_contradiction"."""
    return f"synth_inject_{type_slug(error_type)}"


class Synthesiser(Task):
    """Makes labelled answers from faithful ones: one flawed answer per error type, and paraphrases."""

    name = "synth"
    kind = "synth"
    Options = SynthOptions
    description = "flawed answers with one error of each type, and paraphrases, each checked by a second call"
    prompts = (WRITE, CHECK_ANSWER, PARAPHRASE, CHECK_PARAPHRASE, CHECK_EDIT, *map(inject_prompt, INJECTABLE))
    version = "2"  # 2: spans found with any quote, full-width punctuation
    result_type = SynthResult
    options: SynthOptions

    @property
    def spec(self) -> str:
        """ "synth", or with the options that differ from the defaults: "synth:positives=2,types=Hallu.+KCont."."""
        changed = self.options.model_dump(mode="json", exclude_defaults=True)
        parts = [f"{key}={_spec_value(value)}" for key, value in sorted(changed.items())]
        return self.name + (":" + ",".join(parts) if parts else "")

    def accepts(self, item: Item) -> str | None:
        return None if item.reference and item.reference.strip() else "it has no reference to make answers from"

    def language(self, item: Item) -> str:
        """The prompt language: the `lang` option, else detected from the answer (or question and reference)."""
        if self.options.lang != "auto":
            return self.options.lang
        return detect_lang(item.answer if item.answer.strip() else f"{item.question or ''} {item.reference or ''}")

    async def evaluate(self, item: Item, model: ChatModel) -> SynthResult:
        lang = self.language(item)
        result = SynthResult(id=item.id, lang=lang, model=model.model_id, options=self.options)
        base = item.answer.strip()
        if base:
            result.candidates.append(Candidate(kind="original", status="kept", reason="the row's answer", answer=base))
        else:
            written = await self._write(model, item, lang)
            result.candidates.append(written)
            if written.status != "kept" or written.answer is None:
                return result.counted()
            base = written.answer
        injections = asyncio.gather(*(self._inject(model, item, base, t, lang) for t in self.options.types))
        paraphrases, injected = await asyncio.gather(self._paraphrases(model, item, base, lang), injections)
        result.candidates += [*paraphrases, *injected]
        return result.counted()

    async def _write(self, model: ChatModel, item: Item, lang: str) -> Candidate:
        reply, call = await _ask(model, WRITE, WrittenAnswer, lang, item)
        candidate = Candidate(kind="written", status="failed", reason=_failure(call), made_by=call)
        if reply is None:
            return candidate
        if not reply.answer.strip():
            return candidate.model_copy(update={"status": "not_applied", "reason": "the model wrote an empty answer"})
        candidate.answer = reply.answer.strip()
        if not self.options.verify:
            return candidate.model_copy(update={"status": "kept", "reason": "not verified"})
        check, call = await _ask(model, CHECK_ANSWER, AnswerCheck, lang, item, answer=candidate.answer)
        return _judged(candidate, check, call, _answer_verdict)

    async def _inject(self, model: ChatModel, item: Item, base: str, error_type: ErrorType, lang: str) -> Candidate:
        reply, call = await _ask(model, inject_prompt(error_type), Injection, lang, item, answer=base)
        candidate = Candidate(
            kind="injection", error_type=error_type, status="failed", reason=_failure(call), made_by=call
        )
        if reply is None:
            return candidate
        try:
            candidate.answer, candidate.span = apply_edit(base, reply.original, reply.replacement)
        except EditError as error:
            return candidate.model_copy(update={"status": "not_applied", "reason": str(error)})
        if not self.options.verify:
            return candidate.model_copy(update={"status": "kept", "reason": "not verified"})
        edit = {"reference_answer": base, "answer": candidate.answer, "segment": candidate.span.replacement}
        check, call = await _ask(model, CHECK_EDIT, EditCheck, lang, item, **edit)
        return _judged(candidate, check, call, lambda reply: _edit_verdict(reply, error_type))

    async def _paraphrases(self, model: ChatModel, item: Item, base: str, lang: str) -> list[Candidate]:
        made: list[Candidate] = []
        earlier: list[str] = []  # shown to the model, so the next rewording differs from them
        for index in range(1, self.options.positives + 1):
            shown = {"answer": base, "statements": "\n\n".join(earlier)}
            reply, call = await _ask(model, PARAPHRASE, Paraphrase, lang, item, **shown)
            candidate = Candidate(kind="paraphrase", index=index, status="failed", reason=_failure(call), made_by=call)
            made.append(candidate)
            if reply is None:
                continue
            text = reply.paraphrase.strip()
            if not rewording_differs(base, text) or any(normalise(text) == normalise(e) for e in earlier):
                made[-1] = candidate.model_copy(
                    update={"status": "not_applied", "answer": text, "reason": "the rewording repeats the answer"}
                )
                continue
            earlier.append(text)
            candidate.answer, candidate.span = text, Span(original=base, replacement=text, start=0)
            if not self.options.verify:
                made[-1] = candidate.model_copy(update={"status": "kept", "reason": "not verified"})
                continue
            pair = {"reference_answer": base, "answer": text}
            check, call = await _ask(model, CHECK_PARAPHRASE, ParaphraseCheck, lang, item, **pair)
            made[-1] = _judged(candidate, check, call, _paraphrase_verdict)
        return made

    def estimate(self, item: Item, model: ChatModel) -> Usage:
        """Calls and tokens from the call pattern; edits and rewordings assumed as long as the answer."""
        lang = self.language(item)
        given = item.answer.strip()
        base = given or " ".join(split_sentences(item.reference or "")[:3])
        span = (split_sentences(base) or [base])[0]
        texts: dict[str, Any] = {"question": item.question, "reference": item.reference or ""}
        verify = self.options.verify
        usages: list[Usage] = []
        if not given:
            usages.append(estimate(model, WRITE, WrittenAnswer, lang, approx_tokens(base) + 10, **texts))
            if verify:
                usages.append(estimate(model, CHECK_ANSWER, AnswerCheck, lang, _CHECK_REPLY, answer=base, **texts))
        for error_type in self.options.types:
            inject = inject_prompt(error_type)
            usages.append(estimate(model, inject, Injection, lang, _INJECTION_REPLY, answer=base, **texts))
            if verify:
                edit = {"reference_answer": base, "answer": base, "segment": span}
                usages.append(estimate(model, CHECK_EDIT, EditCheck, lang, _CHECK_REPLY, **edit, **texts))
        for index in range(self.options.positives):
            shown = {"answer": base, "statements": "\n\n".join([base] * index)}
            reply = approx_tokens(base) + 10
            usages.append(estimate(model, PARAPHRASE, Paraphrase, lang, reply, **shown, **texts))
            if verify:
                pair = {"reference_answer": base, "answer": base}
                usages.append(estimate(model, CHECK_PARAPHRASE, ParaphraseCheck, lang, _CHECK_REPLY, **pair, **texts))
        return Usage.sum(usages)


async def _ask(
    model: ChatModel, prompt: str, schema: type[BaseModel], lang: str, item: Item, **texts: str
) -> tuple[Any, CallRecord]:
    """The parsed reply (None if the call failed) and the call's record; the reference and question come first."""
    completion = await ask(model, prompt, schema, lang, question=item.question, reference=item.reference or "", **texts)
    return (completion.parsed if completion.ok else None), CallRecord.of(completion)


def _judged(candidate: Candidate, check: Any, call: CallRecord, verdict: Callable[[Any], str | None]) -> Candidate:
    """The candidate after its check: kept, rejected with the verifier's reason, or failed if the check failed."""
    update: dict[str, Any] = {"checked_by": call}
    if check is None:
        update.update(status="failed", reason=_failure(call))
    else:
        rejected = verdict(check)
        update.update(
            check=check.model_dump(mode="json"),
            status="rejected" if rejected else "kept",
            reason=rejected or "verified",
        )
    return candidate.model_copy(update=update)


def _edit_verdict(check: EditCheck, intended: ErrorType) -> str | None:
    """Why the verifier's reply rejects an edit meant to carry `intended`; None if it carries it and only it."""
    if check.error_type is None:
        return "the verifier found the edited answer still faithful"
    if check.error_type is not intended:
        return f"the verifier called the error {check.error_type.value}, not {intended.value}"
    if not check.only_error:
        return "the verifier found more than this one error"
    return None


def _paraphrase_verdict(check: ParaphraseCheck) -> str | None:
    if not check.same_meaning:
        return "the verifier found the rewording changes the meaning"
    if not check.supported:
        return "the verifier found claims the reference does not support"
    return None


def _answer_verdict(check: AnswerCheck) -> str | None:
    return None if check.supported else "the verifier found claims the reference does not support"


def _failure(call: CallRecord) -> str:
    return f"{call.failure.kind.value}: {call.failure.message}" if call.failure is not None else ""


def _spec_value(value: Any) -> str:
    if isinstance(value, list):
        return "+".join(map(str, value))
    return str(value).lower() if isinstance(value, bool) else str(value)
