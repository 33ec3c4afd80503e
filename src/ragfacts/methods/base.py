"""Methods behind one interface: a registry of judges, each with its options declared once.

A method is a class with a `name`, a `kind` (precision or recall), an `Options` pydantic model (unknown
options fail loudly) and `async evaluate(item, model)`, registered with `@method("name")`:

    @method("my-judge")
    class MyJudge(Method[MyOptions]):
        kind = "precision"
        Options = MyOptions
        async def evaluate(self, item, model): ...

Every surface reaches methods through this registry: `create_method("faaf", mode="tf")` or the spec
string `"faaf:mode=tf"`, the CLI's flags and `-O key=value`, `ragfacts methods`, the runner and the
benchmarks. The built-in methods are listed in `BUILT_IN` (each imported when it is first asked for); other
packages register theirs under the entry-point group `ragfacts.methods` (`ragfacts.registry`).
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar, Generic, Literal, Protocol, TypeVar, cast

from pydantic import BaseModel, ConfigDict, ValidationError

from ragfacts.hashing import digest
from ragfacts.items import Item
from ragfacts.methods.bilingual import schemas_digest
from ragfacts.models import ChatModel
from ragfacts.prompts import LANGS, load_prompt
from ragfacts.registry import Registry
from ragfacts.text import detect_lang
from ragfacts.usage import Usage

Kind = Literal["precision", "recall"]
TaskKind = Literal["precision", "recall", "synth"]
Label = Literal["consistent", "inconsistent", "unscored", "uncertain"]
ENTRY_POINT_GROUP = "ragfacts.methods"


class MethodError(ValueError):
    """An unknown method or an option it does not take; the message names what it does take."""


class Outcome(BaseModel):
    """What any method's result says in common terms: what the runner stores, summarises and gates on.

    `score` is the share of units (segments, facts) judged supported or present, with failed units counted
    as not: a failure never raises a score. `score_upper` counts them as supported instead, so the two
    bracket what the failures hide.
    """

    model_config = ConfigDict(frozen=True)

    # precision or recall; synth's outcomes say "precision" (what its rows are made for). Not widened: this model's
    # schema enters every method's configuration, and a new kind here would make every stored result stale.
    kind: Kind
    label: Label | None = None  # precision methods: the answer's label
    score: float | None = None  # faithfulness (precision) or recall; None when nothing could be judged
    score_upper: float | None = None
    units: int = 0  # segments or facts judged
    failures: int = 0  # failed model calls
    complete: bool = True  # False when failures left the result undecided: a rerun retries it
    usage: Usage = Usage()


class MethodResult(Protocol):
    """What `Method.evaluate` returns: a pydantic model with its own fields, and the common outcome."""

    def outcome(self) -> Outcome: ...

    def model_dump(self, *, mode: str = ...) -> dict[str, Any]: ...


OptionsT = TypeVar("OptionsT", bound=BaseModel)
T = TypeVar("T", bound="Task[Any]")


class Task(ABC, Generic[OptionsT]):
    """What the runner runs on each item of a dataset, with its options, and stores one result of: a judge
    (`Method`) or the synthesiser. Subclasses set the class attributes and implement `evaluate`.

    Generic over its options type `OptionsT`, so `self.options` is the task's own options model; `Options` is that
    model's class (a class variable cannot hold a type variable, so the two are kept in step by convention).
    """

    name: ClassVar[str] = ""  # set by @method
    kind: ClassVar[TaskKind]
    Options: ClassVar[type[BaseModel]]  # the class of `OptionsT`
    description: ClassVar[str] = ""
    version: ClassVar[str] = "1"  # bump when a change of code alters results: earlier results are not reused
    prompts: ClassVar[tuple[str, ...]] = ()  # prompt files it uses; their versions enter the configuration
    result_type: ClassVar[type[BaseModel] | None] = None  # what `evaluate` returns, to read stored results back

    def __init__(self, options: OptionsT | None = None, *, spec: str | None = None) -> None:
        # `Options` is the class of `OptionsT` (see the class docstring): its default instance is one
        self.options: OptionsT = options if options is not None else cast(OptionsT, self.Options())
        self._spec = spec

    @abstractmethod
    async def evaluate(self, item: Item, model: ChatModel) -> MethodResult:
        """Run on one item; model and transport failures are part of the result, never raised."""

    @abstractmethod
    def estimate(self, item: Item, model: ChatModel) -> Usage:
        """The calls and tokens `item` should cost, from the call pattern and the texts (`--dry-run`)."""

    def accepts(self, item: Item) -> str | None:
        """Why this task cannot run on `item` (e.g. it has no reference), or None if it can."""
        return None

    def resolved(self: T, model: ChatModel) -> T:
        """This method with options that depend on the model (e.g. `strategy="auto"`) decided for `model`.

        The resolved method keeps the spec it was asked for, so results are filed under the user's name
        for it; the resolved options enter the configuration hash.
        """
        return self

    def uses_label_scores(self, model: ChatModel) -> bool:
        """Whether this method would read `model`'s first-token log-probabilities (probed for them first)."""
        return False

    @property
    def spec(self) -> str:
        """The method and its non-default options as asked for, e.g. "lface4rag:chain_of_thought=false"."""
        if self._spec is not None:
            return self._spec
        changed = self.options.model_dump(mode="json", exclude_defaults=True)
        if not changed:
            return self.name
        return self.name + ":" + ",".join(f"{key}={_spec_value(value)}" for key, value in sorted(changed.items()))

    def configuration(self, model: ChatModel) -> dict[str, Any]:
        """Everything that decides this method's results on `model`: a result is reused only if it matches."""
        return {
            "method": self.name,
            "version": self.version,
            "options": self.options.model_dump(mode="json"),
            "prompts": sorted(load_prompt(name, lang).id for name in self.prompts for lang in LANGS),
            "schema_texts": _schema_texts(),  # field descriptions are instructions to the model too
            "model": model.fingerprint(),
        }

    def configuration_hash(self, model: ChatModel) -> str:
        return digest(self.configuration(model))


class Method(Task[OptionsT]):
    """A judge of one item: of its answer's precision against the reference, or of its recall of the ground truth."""

    kind: ClassVar[Kind]


class PrecisionMethod(Method[OptionsT]):
    """A method that judges an answer against its reference; its options may set the prompt language."""

    kind = "precision"

    def accepts(self, item: Item) -> str | None:
        return None if item.reference and item.reference.strip() else "it has no reference to check the answer against"

    def language(self, item: Item) -> str:
        """The prompt language: the `lang` option if it names one, else the answer's language."""
        chosen = getattr(self.options, "lang", "auto")
        return detect_lang(item.answer) if chosen == "auto" else chosen


M = TypeVar("M", bound=type[Method[Any]])
# Each built-in method and the module that registers it (tests/methods/test_base.py checks it against the modules).
BUILT_IN = {
    "faaf": "ragfacts.methods.faaf",
    "fact-scores": "ragfacts.methods.fact_scores",
    "factscore": "ragfacts.methods.factscore",
    "felm": "ragfacts.methods.felm",
    "holistic": "ragfacts.methods.holistic",
    "lface4rag": "ragfacts.methods.lface4rag",
    "prompt-tf": "ragfacts.methods.prompt_tf",
    "ragas": "ragfacts.methods.ragas",
    "refchecker": "ragfacts.methods.refchecker",
}
METHODS: Registry[type[Method[Any]]] = Registry(
    "method", entry_points=ENTRY_POINT_GROUP, built_in=BUILT_IN, error=MethodError, hint=" (see `ragfacts methods`)"
)


def method(name: str) -> Callable[[M], M]:
    """Register a Method subclass under `name`; raises MethodError if another method holds the name."""

    def register(cls: M) -> M:
        METHODS.add(name, cls)
        cls.name = name
        return cls

    return register


def registered_methods() -> dict[str, type[Method[Any]]]:
    """Every registered method by name: the built-in ones and those of installed plugins."""
    return dict(sorted(METHODS.entries().items()))


def method_class(name: str) -> type[Method[Any]]:
    """The method registered as `name`; raises MethodError naming the registered ones."""
    return METHODS.get(name)


def create_method(spec: str, **options: Any) -> Method[Any]:
    """Build a method from its name or spec ("faaf" or "faaf:mode=tf,citations=true") and options.

    Options given as keywords override those in the spec; a value given as text ("false", "0.8", "none")
    is converted to the option's type. Raises MethodError for an unknown method or option.
    """
    name, spec_options = parse_method_spec(spec)
    cls = method_class(name)
    values = {**_by_field_name(cls, spec_options), **_by_field_name(cls, options)}
    try:
        return cls(cls.Options(**values))
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or name}: {e['msg']}" for e in error.errors())
        raise MethodError(f"{name}: {problems}. Options of {name}: {', '.join(option_names(cls))}") from error


def method_of_kind(kind: Kind, spec: str, options: dict[str, Any] | None = None) -> Method[Any]:
    """`create_method(spec, **options)`, refused with a MethodError unless it is a `kind` method (where a surface
    takes one kind: `check`, `/recall`, `ragfacts.check()`)."""
    judge = create_method(spec, **(options or {}))
    if judge.kind != kind:
        raise MethodError(f"{judge.name} is a {judge.kind} method; a {kind} method is asked for (`ragfacts methods`)")
    return judge


def parse_method_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """Split "name:key=value,key=value" into the name and its options (values as text, "none" as None)."""
    name, _, rest = spec.strip().partition(":")
    if not name:
        raise MethodError(f"a method spec starts with the method's name: {spec!r}")
    # A comma starts a new option only before "key=": a value may hold commas (uncertain=0.3,0.7).
    return name, parse_option_pairs(re.split(r",(?=\s*[A-Za-z_][\w-]*\s*=)", rest) if rest.strip() else [])


def parse_option_pairs(pairs: list[str]) -> dict[str, Any]:
    """Parse ["key=value", ...] as given on a command line; "none" and "null" mean None."""
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise MethodError(f"an option is written key=value, not {pair!r}")
        text = value.strip()
        options[key.strip().replace("-", "_")] = None if text.lower() in ("none", "null") else text
    return options


def option_names(cls: type[Method[Any]]) -> list[str]:
    """The option names of a method, aliases included."""
    names = []
    for field_name, field in cls.Options.model_fields.items():
        names.append(field_name)
        aliases = getattr(field.validation_alias, "choices", None) or []
        names += [alias for alias in aliases if isinstance(alias, str) and alias != field_name]
    return names


def file_options(cls: type[Method[Any]]) -> frozenset[str]:
    """The options of a method that name a file on this machine (e.g. lface4rag's `head`), aliases included.

    An options model declares them in its class variable `file_options`; a surface that takes options from another
    machine (the HTTP service) refuses these, so that no client makes the server read a path it names.
    """
    declared: frozenset[str] = getattr(cls.Options, "file_options", frozenset())
    names = set(declared)
    for field_name in declared:
        field = cls.Options.model_fields[field_name]
        aliases = getattr(field.validation_alias, "choices", None) or []
        names.update(alias for alias in aliases if isinstance(alias, str))
    return frozenset(names)


def _by_field_name(cls: type[Method[Any]], options: dict[str, Any]) -> dict[str, Any]:
    """The options with aliases replaced by field names ("cot" -> "chain_of_thought"), so a later value wins."""
    names: dict[str, str] = {}
    for field_name, field in cls.Options.model_fields.items():
        for alias in getattr(field.validation_alias, "choices", None) or []:
            if isinstance(alias, str):
                names[alias] = field_name
    return {names.get(key, key): value for key, value in options.items()}


def _spec_value(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (list, tuple)):
        return ",".join(_spec_value(v) for v in value)
    return "none" if value is None else str(value)


def _schema_texts() -> str:
    """The digest of every schema the methods may send, in both languages (`bilingual.schemas_digest`)."""
    return schemas_digest("ragfacts.methods")
