"""Registries of named things (methods, model backends): one type, so every kind of plugin behaves the same.

A registry knows its built-in names and the module that registers each, and imports that module when the name is
first asked for: a surface pays for what it uses. Another package adds its own under an entry-point group:

    [project.entry-points."ragfacts.methods"]
    my-judge = "my_package.judges"

Entry points are loaded when they are needed, not at start-up: on the first lookup of a name that no built-in
holds (the entry point of that name first), or when every name is listed. `RAGFACTS_NO_PLUGINS=1` turns them off,
so that tests and bug reports see ragfacts alone. A name is registered once: a second, different thing under a
taken name is refused, whichever package brought it.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Generic, TypeVar

T = TypeVar("T")

NO_PLUGINS = "RAGFACTS_NO_PLUGINS"


def plugins_enabled() -> bool:
    """Whether installed packages' entry points are loaded: yes unless RAGFACTS_NO_PLUGINS is set (and not 0)."""
    return os.environ.get(NO_PLUGINS, "").strip().lower() in ("", "0", "false", "no")


class Registry(Generic[T]):
    """Things of one kind by name: the built-in ones imported on demand, plugins' loaded when needed.

    Args:
        kind: what a thing is, in messages ("method": "unknown method 'x'; methods: ...").
        entry_points: the entry-point group under which other packages register theirs.
        built_in: each built-in name and the module that registers it, in the order listings show them.
        error: the exception raised for a taken name, an unknown name or a plugin that fails to load.
        hint: added to the unknown-name message, e.g. where the names are described.
    """

    def __init__(
        self,
        kind: str,
        *,
        entry_points: str,
        built_in: Mapping[str, str],
        error: type[Exception] = LookupError,
        hint: str = "",
    ) -> None:
        self.kind = kind
        self.entry_points = entry_points
        self.built_in = dict(built_in)
        self.error = error
        self.hint = hint
        self._entries: dict[str, T] = {}
        # Two locks: registering never waits for a load, so a module imported in one thread can register while
        # another thread holds the load lock and waits for that module's import (no deadlock).
        self._entries_lock = threading.Lock()
        self._load_lock = threading.RLock()  # reentrant: a module being loaded may ask the registry
        self._built_in_loaded = False
        self._plugins_loaded: set[str] = set()  # entry points loaded (by name)
        self._all_plugins_loaded = False

    def add(self, name: str, value: T) -> None:
        """Register `value` as `name`; raises `error` if another value holds the name."""
        with self._entries_lock:
            known = self._entries.get(name)
            if known is not None and known is not value:
                raise self.error(
                    f"two {self.kind}s are registered as {name!r}: {_described(known)} and {_described(value)}"
                )
            self._entries[name] = value

    def register(self, name: str) -> Callable[[T], T]:
        """A decorator registering what it decorates as `name`."""

        def register(value: T) -> T:
            self.add(name, value)
            return value

        return register

    def get(self, name: str) -> T:
        """The thing registered as `name`, its module or plugin loaded if need be; raises `error` listing the
        names there are."""
        found = self.find(name)
        if found is None:
            raise self.error(f"unknown {self.kind} {name!r}; {self.kind}s: {', '.join(self.names())}{self.hint}")
        return found

    def find(self, name: str) -> T | None:
        """The thing registered as `name`, its module or plugin loaded if need be; None if there is none."""
        found = self._entries.get(name)
        if found is not None:
            return found
        with self._load_lock:
            if name in self.built_in:
                importlib.import_module(self.built_in[name])
            if name not in self._entries:
                self._load_plugins(name)  # the entry point of that name first: a plugin is usually named so
            if name not in self._entries:
                self._load_plugins()
            return self._entries.get(name)

    def entries(self) -> dict[str, T]:
        """Every thing by name, all loaded: the built-in ones in their order, then the others as registered."""
        with self._load_lock:
            if not self._built_in_loaded:
                for module in dict.fromkeys(self.built_in.values()):
                    importlib.import_module(module)
                self._built_in_loaded = True
            self._load_plugins()
        entries = dict(self._entries)
        return {name: entries[name] for name in [*self.built_in, *entries] if name in entries}

    def names(self) -> list[str]:
        """Every name, in the order of `entries`."""
        return list(self.entries())

    @contextlib.contextmanager
    def restored(self) -> Iterator[None]:
        """Undo, on leaving, what was registered inside (a test's throwaway method or backend)."""
        with self._entries_lock:
            saved = dict(self._entries)
        try:
            yield
        finally:
            with self._entries_lock:
                self._entries.clear()
                self._entries.update(saved)

    def _load_plugins(self, name: str | None = None) -> None:
        """Load the entry points of the group (only the one called `name`, if given) not loaded yet."""
        if self._all_plugins_loaded or not plugins_enabled():
            return
        for entry_point in importlib.metadata.entry_points(group=self.entry_points):
            if (name is not None and entry_point.name != name) or entry_point.name in self._plugins_loaded:
                continue
            self._plugins_loaded.add(entry_point.name)  # first: a plugin that asks the registry does not reload
            try:
                entry_point.load()
            except Exception as error:
                self._plugins_loaded.discard(entry_point.name)  # asked again, it fails again: never silently absent
                raise self.error(
                    f"the plugin {entry_point.name!r} ({entry_point.value}, entry point of {self.entry_points}) "
                    f"failed to load: {type(error).__name__}: {error}; uninstall it, or set {NO_PLUGINS}=1 "
                    "to run without plugins"
                ) from error
        if name is None:
            self._all_plugins_loaded = True


def _described(value: object) -> str:
    """A registered thing named for a message: its module and name."""
    module, name = getattr(value, "__module__", None), getattr(value, "__qualname__", None)
    return f"{module}.{name}" if module and name else repr(value)
