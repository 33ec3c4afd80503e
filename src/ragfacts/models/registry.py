"""Backends behind one interface: a registry of model classes, each naming, checking and building its own models.

A backend is a `ChatModel` subclass registered with `@backend("name")`: it reads the part of a model spec after
`name:` (`spec_from`), says what is missing before any work (`check_credentials`) and builds the model
(`build`). `parse_spec` and `build_model` reach backends only through this registry; the built-in ones are the
modules below, others register theirs under the entry-point group `ragfacts.backends`:

    @backend("mine")
    class MyModel(ChatModel):
        spec_forms = "mine:MODEL"
        @classmethod
        def build(cls, spec, options, **shared): return cls(spec.name, options, **shared)
        async def _send(self, request): ...

A backend's module is imported when a spec names it, so `ragfacts --help` loads no SDK; plugins load as the method
registry's do (`ragfacts.registry`: when a spec names no built-in backend, or every backend is listed).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from ragfacts.models._errors import ConfigurationError
from ragfacts.registry import Registry

if TYPE_CHECKING:
    from ragfacts.models.base import ChatModel

ENTRY_POINT_GROUP = "ragfacts.backends"
# The built-in backends: their name and the module that registers them, imported when a spec names them.
BUILT_IN = {"openai": "ragfacts.models.http.openai_compat", "local": "ragfacts.models.local.llamacpp"}
BACKENDS: Registry[type[ChatModel]] = Registry(
    "backend", entry_points=ENTRY_POINT_GROUP, built_in=BUILT_IN, error=ConfigurationError
)

M = TypeVar("M", bound="type[ChatModel]")


def backend(name: str) -> Callable[[M], M]:
    """Register a ChatModel subclass as the backend `name` (the prefix of its model specs); raises
    ConfigurationError if another backend holds the name."""

    def register(cls: M) -> M:
        BACKENDS.add(name, cls)
        cls.backend = name
        return cls

    return register


def backend_class(name: str) -> type[ChatModel]:
    """The backend registered as `name`; raises ConfigurationError naming the spec forms there are."""
    found = BACKENDS.find(name)
    if found is None:
        raise ConfigurationError(f"unknown model backend {name!r}: use {spec_forms()}")
    return found


def registered_backends() -> dict[str, type[ChatModel]]:
    """Every backend: the built-in ones and the plugins'."""
    return BACKENDS.entries()


def spec_forms() -> str:
    """How model specs are written, e.g. for an error: every backend's forms, built-in ones first."""
    forms = [cls.spec_forms for cls in registered_backends().values()]
    return ", ".join(forms[:-1]) + (f" or {forms[-1]}" if len(forms) > 1 else "".join(forms))
