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

A backend's module is imported when a spec names it, so `ragfacts --help` loads no SDK.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from ragfacts.models._errors import ConfigurationError

if TYPE_CHECKING:
    from ragfacts.models.base import ChatModel

ENTRY_POINT_GROUP = "ragfacts.backends"
# The built-in backends: their name and the module that registers them, imported when a spec names them.
BUILT_IN = {"openai": "ragfacts.models.openai_compat", "local": "ragfacts.models.llamacpp"}

M = TypeVar("M", bound="type[ChatModel]")
_BACKENDS: dict[str, type[ChatModel]] = {}
_lock = threading.RLock()
_plugins_loaded = False


def backend(name: str) -> Callable[[M], M]:
    """Register a ChatModel subclass as the backend `name` (the prefix of its model specs)."""

    def register(cls: M) -> M:
        with _lock:
            known = _BACKENDS.get(name)
            if known is not None and known is not cls:
                raise ValueError(f"two backends are registered as {name!r}: {known.__name__} and {cls.__name__}")
            _BACKENDS[name] = cls
        cls.backend = name
        return cls

    return register


def backend_class(name: str) -> type[ChatModel]:
    """The backend registered as `name`; raises ConfigurationError naming the spec forms there are."""
    with _lock:
        if name in BUILT_IN and name not in _BACKENDS:
            importlib.import_module(BUILT_IN[name])
        if name not in _BACKENDS:
            _load_plugins()
        if name in _BACKENDS:
            return _BACKENDS[name]
    raise ConfigurationError(f"unknown model backend {name!r}: use {spec_forms()}")


def registered_backends() -> dict[str, type[ChatModel]]:
    """Every backend: the built-in ones and the plugins'."""
    with _lock:
        for module in BUILT_IN.values():
            importlib.import_module(module)
        _load_plugins()
        return dict(_BACKENDS)


def spec_forms() -> str:
    """How model specs are written, e.g. for an error: every backend's forms, built-in ones first."""
    forms = [cls.spec_forms for cls in registered_backends().values()]
    return ", ".join(forms[:-1]) + (f" or {forms[-1]}" if len(forms) > 1 else "".join(forms))


def _load_plugins() -> None:
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    for entry_point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        entry_point.load()
