"""Structured replies: the schema shown where the model must see it, the reply validated, and a reply that fails
validation asked again with what was wrong, up to the model's `reasks`.

What a re-ask says is the caller's choice (`ReaskWording`): the methods word it in their prompt's language from
the prompt files (`methods.prompting.reask_wording`); the model layer knows no prompt language.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from ragfacts.models._types import Completion, Failure, FailureKind, Message, RawReply, Request
from ragfacts.models.structured import ReplySchema, describe_error, parse_reply
from ragfacts.usage import Usage

# Sends one request: its reply, the transport retries it used, and the failure where it got no reply.
Sender = Callable[[Request, Usage], Awaitable[tuple[RawReply | None, int, Failure | None]]]


@dataclass(frozen=True)
class ReaskWording:
    """What a re-ask says to the model, in the language of the prompt it follows."""

    again: Callable[[str], str]  # the message asking for a corrected reply, given the problems (one per line)
    truncated: str  # the problem of a reply cut off at the token limit


# Without a wording from the caller a re-ask carries the problems alone: no sentence in any language is chosen here.
PROBLEMS_ONLY = ReaskWording(again=lambda problems: problems, truncated="- finish_reason: length")


def with_schema_text(messages: list[Message], schema_text: str) -> list[Message]:
    """Append the rendered schema to the last user message."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "user":
            updated = Message(role="user", content=f"{messages[index].content}\n\n{schema_text}")
            return [*messages[:index], updated, *messages[index + 1 :]]
    return [*messages, Message(role="user", content=schema_text)]


async def reasked(
    send: Sender,
    request: Request,
    schema: ReplySchema | None,
    *,
    reasks: int,
    wording: ReaskWording = PROBLEMS_ONLY,
    base: Completion,
) -> Completion:
    """The completion of `request`: its reply parsed into `schema` (none: the text as it is), asked again at most
    `reasks` times while the reply does not validate; the last problem is the failure when none does."""
    usage = Usage()
    retries = 0
    last: RawReply | None = None
    for attempt in range(1, reasks + 2):
        reply, used, failure = await send(request, usage)
        retries += used
        if reply is None:
            failure = (failure or Failure(kind=FailureKind.BACKEND, message="no reply")).model_copy(
                update={"last_text": last.text if last else None}
            )
            return base.model_copy(update={"usage": usage, "attempts": attempt, "retries": retries, "failure": failure})
        last = reply
        done = base.model_copy(
            update={
                "text": reply.text,
                "usage": usage,
                "attempts": attempt,
                "retries": retries,
                "finish_reason": reply.finish_reason,
                "logprobs": reply.logprobs,
            }
        )
        if schema is None:
            return done
        problems: list[str] = []
        if reply.finish_reason == "length":
            problems.append(wording.truncated)
        try:
            done.parsed = parse_reply(reply.text, schema)
            return done
        except ValueError as error:
            problems.append(describe_error(error))
        kind = FailureKind.TRUNCATED if reply.finish_reason == "length" else FailureKind.INVALID_OUTPUT
        failure = Failure(kind=kind, message="\n".join(problems), last_text=reply.text)
        request = request.with_messages(
            [
                *request.messages,
                Message(role="assistant", content=reply.text),
                Message(role="user", content=wording.again("\n".join(problems))),
            ]
        )
    return done.model_copy(update={"failure": failure, "parsed": None})
