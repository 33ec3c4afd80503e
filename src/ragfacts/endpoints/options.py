"""A RAG service as the user describes it (URL, request body, reply paths, headers), declared once.

The body is a JSON template: `{question}` inside a string value becomes the question (so quotes in a
question can never break the JSON), `${VAR}` anywhere in the URL, a header or the body is read from the
environment when the run starts, and `{{`/`}}` are literal braces. What identifies the configuration (and
decides whether stored answers are reused) is the URL, the body and the paths as written, and the header
*names*: values from the environment and header values are never stored, hashed or printed. A credential
written into the URL itself (`?key=...`, `user:password@`) is kept out of what is stored and printed too
(`public_url`), but put it in `${VAR}`: then it never reaches a shell history either.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field

from ragfacts import redaction
from ragfacts.endpoints.paths import PathError, ReplyPath, parse_path
from ragfacts.hashing import digest

CONFIG_VERSION = 1
QUESTION = "question"
DEFAULT_BODY = '{"question": "{question}"}'
_TOKEN = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\{\{|\}\}|\{([^{}]*)\}")
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")


class EndpointError(ValueError):
    """Endpoint settings that cannot work; the message names the option and the fix."""


class EndpointOptions(BaseModel):
    """How to ask a RAG service one question and read its reply. `flag`: the CLI flag of the option (others are
    set with `--endpoint-option key=value`)."""

    model_config = ConfigDict(extra="forbid")

    url: str = Field(
        description="the RAG service's URL: each question is POSTed to it as JSON; ${VAR} is read from the environment",
        json_schema_extra={"flag": "--endpoint"},
    )
    body: str = Field(
        DEFAULT_BODY,
        description="the JSON request body (or @file): {question} in a string value becomes the question, "
        "${VAR} an environment variable",
        json_schema_extra={"flag": "--endpoint-body"},
    )
    answer_path: str = Field(
        "answer",
        description="where the answer is in the JSON reply: keys with dots, [N] for list elements, e.g. "
        "data.answer or choices[0].message.content",
        json_schema_extra={"flag": "--answer-path"},
    )
    contexts_path: str = Field(
        "contexts",
        description="where the retrieved contexts are in the reply, [*] for every element, e.g. "
        "sources[*].text; none if the service returns none (then only recall is judged)",
        json_schema_extra={"flag": "--contexts-path"},
    )
    headers: list[str] = Field(
        default_factory=list,
        description="a request header 'Name: value' (repeatable); write secrets as ${VAR}, e.g. "
        "'Authorization: Bearer ${RAG_TOKEN}': header values are never stored or printed",
        json_schema_extra={"flag": "--endpoint-header"},
    )
    timeout_s: float = Field(60.0, gt=0, description="seconds before one request to the service times out")
    max_retries: int = Field(4, ge=0, description="retries of a question after 408/429/5xx or a timeout")
    retry_base_s: float = Field(1.0, ge=0, description="first backoff in seconds, doubled per retry, jittered")
    retry_max_s: float = Field(60.0, ge=0, description="the longest wait between retries (Retry-After included)")
    concurrency: int = Field(4, ge=1, description="questions in flight at once")

    def configuration(self) -> dict[str, Any]:
        """What decides the service's answers, without any secret: stored with every answer as its hash."""
        try:
            body = json.loads(self.body)
        except json.JSONDecodeError:
            body = self.body
        return {
            "v": CONFIG_VERSION,
            "method": "POST",
            "url": public_url(self.url.strip()),
            "url_digest": digest(self.url.strip()),  # another query value is another configuration
            "body": body,
            "answer_path": self.answer_path.strip(),
            "contexts_path": None if _is_none(self.contexts_path) else self.contexts_path.strip(),
            "headers": sorted({_header_name(h).lower() for h in self.headers}),
        }

    def configuration_hash(self) -> str:
        return digest(self.configuration())


@dataclass(frozen=True)
class EndpointRequest:
    """The options checked and resolved against the environment: ready to ask one question."""

    url: str
    headers: dict[str, str]
    answer_path: ReplyPath
    contexts_path: ReplyPath | None
    template: Any  # the parsed body
    environ: dict[str, str]  # the ${VAR} values it uses

    def body(self, question: str) -> Any:
        """The request body for `question`."""
        return _fill(self.template, {QUESTION: question}, self.environ)

    def redact(self, text: str) -> str:
        """`text` with every value read from the environment, every header value and every other secret of the
        process replaced by [redacted] (`resolve` registered them with the one redaction step)."""
        return redaction.redact(text)


def resolve(options: EndpointOptions, environ: Mapping[str, str] | None = None) -> EndpointRequest:
    """Check the options and read the ${VAR}s they use; raises EndpointError naming the option and the fix."""
    environ = os.environ if environ is None else environ
    used: dict[str, str] = {}

    def expand(text: str, option: str) -> str:
        return _fill(text, {}, _lookup(text, option, environ, used, placeholders=False))

    url = expand(options.url.strip(), "--endpoint")
    if not re.match(r"^https?://[^/\s]+", url):
        raise EndpointError(f"--endpoint {options.url!r}: give an http:// or https:// URL")
    headers: dict[str, str] = {}
    header_values: list[str] = []
    for header in options.headers:
        name = _header_name(header)
        value = expand(header.partition(":")[2].strip(), f"--endpoint-header {name}")
        headers[name] = value
        header_values.append(value)
    template = _parse_body(options.body)
    found = _check_template(template, environ, used)
    if QUESTION not in found:
        raise EndpointError(
            '--endpoint-body has no {question}: put it where the question goes, e.g. \'{"query": "{question}"}\''
        )
    answer = _parsed(options.answer_path, "--answer-path")
    contexts = None if _is_none(options.contexts_path) else _parsed(options.contexts_path, "--contexts-path")
    if answer.has_wildcard:
        raise EndpointError(f"--answer-path {options.answer_path}: the answer is one value; [*] is for the contexts")
    in_url = _url_credentials(url)
    redaction.register(*used.values(), *header_values, *in_url)  # every surface redacts them from now on
    return EndpointRequest(url, headers, answer, contexts, template, dict(used))


def _parse_body(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        hint = ' (put the placeholder in quotes: "{question}")' if re.search(r"[:\[,]\s*\{question\}", text) else ""
        raise EndpointError(
            f"--endpoint-body is not JSON: {error.msg} at line {error.lineno} column {error.colno}{hint}; "
            'e.g. \'{"query": "{question}"}\''
        ) from error


def _check_template(value: Any, environ: Mapping[str, str], used: dict[str, str]) -> set[str]:
    """The placeholders in the template's strings; unknown ones and unset variables raise EndpointError."""
    if isinstance(value, str):
        _lookup(value, "--endpoint-body", environ, used, placeholders=True)
        return {match.group(2) for match in _TOKEN.finditer(value) if match.group(2) is not None}
    if isinstance(value, dict):
        return set().union(*(_check_template(v, environ, used) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(_check_template(v, environ, used) for v in value))
    return set()


def _lookup(
    text: str, option: str, environ: Mapping[str, str], used: dict[str, str], *, placeholders: bool
) -> dict[str, str]:
    """The environment values `text` uses (recorded in `used`); raises EndpointError for an unset one or an
    unknown placeholder."""
    for match in _TOKEN.finditer(text):
        variable, placeholder = match.group(1), match.group(2)
        if variable is not None:
            if variable not in environ:
                raise EndpointError(f"{option}: the environment variable {variable} is not set; export it first")
            used[variable] = environ[variable]
        elif placeholder is not None and (not placeholders or placeholder != QUESTION):
            where = "only {question} is filled in" if placeholders else "placeholders are for --endpoint-body"
            raise EndpointError(f"{option}: unknown placeholder {{{placeholder}}} ({where}; write {{{{ for a brace)")
    return used


def _fill(value: Any, placeholders: Mapping[str, str], environ: Mapping[str, str]) -> Any:
    """`value` with placeholders and ${VAR}s filled in its strings, in one pass (a filled value is not read again)."""
    if isinstance(value, str):

        def replace(match: re.Match[str]) -> str:
            if match.group(1) is not None:
                return environ[match.group(1)]
            if match.group(2) is not None:
                return placeholders.get(match.group(2), match.group(0))
            return match.group(0)[0]

        return _TOKEN.sub(replace, value)
    if isinstance(value, dict):
        return {key: _fill(item, placeholders, environ) for key, item in value.items()}
    if isinstance(value, list):
        return [_fill(item, placeholders, environ) for item in value]
    return value


def _header_name(header: str) -> str:
    name, colon, _ = header.partition(":")
    if not colon or not _HEADER_NAME.match(name.strip()):
        raise EndpointError(
            "an --endpoint-header is not 'Name: value' (its text is not shown: it may hold a secret); "
            "e.g. 'Authorization: Bearer ${RAG_TOKEN}'"
        )
    return name.strip()


def _parsed(path: str, option: str) -> ReplyPath:
    try:
        return parse_path(path)
    except PathError as error:
        raise EndpointError(f"{option}: {error}") from error


def _is_none(path: str) -> bool:
    return path.strip().lower() in ("", "none")


def public_url(url: str) -> str:
    """`url` without what may be a credential: user info dropped, query values written as `...`."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    netloc = parts.netloc.rpartition("@")[2]
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    query = "&".join(f"{key}=..." for key, _ in pairs) if pairs else parts.query
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _url_credentials(url: str) -> list[str]:
    """The values of `url` that `public_url` hides: its query values and user info, redacted from messages."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found = [value for _, value in parse_qsl(parts.query, keep_blank_values=True)]
    if "@" in parts.netloc:
        found += [part for part in parts.netloc.rpartition("@")[0].split(":") if part]
    return found
