"""One registry type for methods and backends: names taken once, built-in modules and plugins loaded on demand."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragfacts.registry import NO_PLUGINS, Registry, plugins_enabled

GROUP = "ragfacts.tests.things"
BUILT_IN = {"plain": "rf_things_plain"}
# What a module registers when imported: the registry is the test's (`THINGS`, made afresh for each test).
REGISTERS = "from tests import test_registry\ntest_registry.THINGS.add({name!r}, {value!r})\n"
THINGS: Registry[str] = Registry("thing", entry_points=GROUP, built_in=BUILT_IN)


class ThingError(ValueError):
    pass


@pytest.fixture
def things() -> Iterator[Registry[str]]:
    """A fresh registry of things, its built-in module and plugins not imported yet."""
    global THINGS
    THINGS = Registry("thing", entry_points=GROUP, built_in=BUILT_IN, error=ThingError, hint=" (see `things`)")
    yield THINGS
    for module in [name for name in sys.modules if name.startswith("rf_things_")]:
        del sys.modules[module]


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A built-in module, and an installed package whose entry points add 'echo' and 'loud'; plugins allowed."""
    (tmp_path / "rf_things_plain.py").write_text(REGISTERS.format(name="plain", value="built in"))
    (tmp_path / "rf_things_echo.py").write_text(REGISTERS.format(name="echo", value="from a plugin"))
    (tmp_path / "rf_things_loud.py").write_text(REGISTERS.format(name="loud", value="from another plugin"))
    info = tmp_path / "rf_things-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: rf-things\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{GROUP}]\necho = rf_things_echo\nloud = rf_things_loud\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv(NO_PLUGINS, raising=False)
    return tmp_path


def test_a_name_registered_twice_is_refused_naming_both(things):
    things.add("plain", "one")
    things.add("plain", "one")  # the same thing again (a module imported twice) is no conflict
    with pytest.raises(ThingError, match=r"two things are registered as 'plain': 'one' and 'two'"):
        things.add("plain", "two")
    assert things.get("plain") == "one"


def test_the_decorator_registers_what_it_decorates(things):
    @things.register("shout")
    def shout() -> str:
        return "!"

    assert things.get("shout") is shout


def test_an_unknown_name_is_refused_listing_the_names_there_are(things, installed):
    with pytest.raises(ThingError) as error:
        things.get("nope")
    assert str(error.value) == "unknown thing 'nope'; things: plain, echo, loud (see `things`)"
    assert things.find("nope") is None


def test_a_built_in_module_is_imported_when_its_name_is_first_asked_for(things, installed):
    assert "rf_things_plain" not in sys.modules
    assert things.get("plain") == "built in"
    assert "rf_things_plain" in sys.modules and "rf_things_echo" not in sys.modules  # no plugin needed


def test_a_plugin_is_loaded_only_when_its_name_is_asked_for(things, installed):
    assert things.get("echo") == "from a plugin"
    assert "rf_things_echo" in sys.modules and "rf_things_loud" not in sys.modules  # its own entry point only
    assert things.names() == ["plain", "echo", "loud"]  # listing every name loads every plugin
    assert "rf_things_loud" in sys.modules


def test_no_plugin_is_loaded_with_the_switch(things, installed, monkeypatch):
    monkeypatch.setenv(NO_PLUGINS, "1")
    assert not plugins_enabled()
    assert things.find("echo") is None and things.names() == ["plain"]
    assert "rf_things_echo" not in sys.modules and "rf_things_loud" not in sys.modules


def test_the_switch_is_off_when_unset_or_zero(monkeypatch):
    monkeypatch.delenv(NO_PLUGINS, raising=False)
    assert plugins_enabled()
    monkeypatch.setenv(NO_PLUGINS, "0")
    assert plugins_enabled()


def test_a_plugin_that_fails_to_load_is_named_with_the_way_around_it(things, installed):
    (installed / "rf_things_loud.py").write_text("raise ImportError('needs torch')\n")
    with pytest.raises(ThingError, match=r"plugin 'loud' \(rf_things_loud.*needs torch.*RAGFACTS_NO_PLUGINS=1"):
        things.names()
    with pytest.raises(ThingError, match="needs torch"):  # asked again, it fails again
        things.names()


def test_registrations_made_inside_restored_are_undone(things):
    things.add("kept", "k")
    with things.restored():
        things.add("throwaway", "t")
        assert things.find("throwaway") == "t"
    assert things.find("throwaway") is None and things.find("kept") == "k"
