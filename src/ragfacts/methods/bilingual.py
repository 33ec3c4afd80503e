"""Schemas whose descriptions reach the model in the prompt's language.

Field descriptions are instructions to the model, so a Chinese prompt must not be followed by English rules:
descriptions are written in English with their Chinese text registered beside them (`bilingual`, and
`chinese_doc` for class docstrings), and `in_language(schema, "zh")` gives a same-named variant whose JSON
schema carries the Chinese texts.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import inspect
import json
import pkgutil
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, TypeVar, cast

import pydantic
import pydantic_core
from pydantic import BaseModel

from ragfacts.files import replace_text
from ragfacts.hashing import digest
from ragfacts.models.spec import ragfacts_home
from ragfacts.prompts import schema_texts

_ZH: dict[str, str] = {}
_DIGESTS: dict[int, str] = {}  # schemas_digest, per state of the Chinese texts
_STORE = Path("cache") / "schemas_digest.json"  # under RAGFACTS_HOME
M = TypeVar("M", bound=type[BaseModel])
C = TypeVar("C", bound=type)  # any class with a docstring sent as a description: a schema, an enum


def schema_text(key: str, then: Callable[[str], str] | None = None) -> str:
    """The English text of `key` in prompts/en/schemas.toml, its Chinese text (prompts/zh/) registered beside it;
    `then(lang)` is appended to each (e.g. the error typology, itself read from the same files)."""
    more = then or (lambda lang: "")
    return bilingual(schema_texts("en")[1][key] + more("en"), schema_texts("zh")[1][key] + more("zh"))


def schema_doc(key: str) -> str:
    """A schema's description (`__doc__ = schema_doc(key)` in its class body: pydantic reads it when the class is
    made) from prompts/en/schemas.toml, its Chinese text registered beside it."""
    return schema_text(key)


def chinese_doc_of(key: str) -> Callable[[C], C]:
    """`chinese_doc` with the Chinese text of a class description read from prompts/zh/schemas.toml."""
    return chinese_doc(schema_texts("zh")[1][key])


def bilingual(en: str, zh: str) -> str:
    """Register the Chinese text of an English description and return the English one."""
    _ZH[en] = zh
    return en


def chinese_doc(zh: str) -> Callable[[C], C]:
    """Register the Chinese text of a class docstring (pydantic sends docstrings as descriptions)."""

    def register(cls: C) -> C:
        _ZH[inspect.cleandoc(cls.__doc__ or "")] = zh
        return cls

    return register


def schemas_digest(package: str) -> str:
    """A hash of the JSON schema, in English and in Chinese, of every pydantic model defined in `package` and its
    subpackages (all imported first, so the digest depends on the code, not on what a process imported): the
    field names, types and descriptions a model is sent. It enters every method's configuration: editing a
    description, English or Chinese, makes earlier results stale, as editing a prompt file does.

    Writing every schema takes a process about 0.15 s, so the digest is also stored in RAGFACTS_HOME, under a key
    made of what the schemas are made from (`sources_key`): a later process whose sources are the same reads it."""
    _import_all(package)
    key = hash(frozenset(_ZH.items()))
    if key not in _DIGESTS:
        texts = [schema_texts(lang) for lang in ("en", "zh")]
        where = ragfacts_home() / _STORE
        sources = sources_key(Path(__file__).parents[1], package, texts)
        known = _read_store(where)
        if known.get(sources) is None:
            known = {sources: _compute_digest(package, texts)}
            with contextlib.suppress(OSError):  # a read-only home: computed again next time
                where.parent.mkdir(parents=True, exist_ok=True)
                replace_text(where, json.dumps(known))
        _DIGESTS[key] = known[sources]
    return _DIGESTS[key]


def sources_key(root: Path, package: str, texts: object) -> str:
    """What the schemas are made from: every source file under `root` (a model's fields refer to types defined
    across the package), the Chinese texts, the schema texts, and the versions of Python and pydantic."""
    hashed = hashlib.sha256(f"{package}|{sys.version}|{pydantic.VERSION}|{pydantic_core.__version__}".encode())
    for path in sorted(root.rglob("*.py")):
        hashed.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    hashed.update(json.dumps([sorted(_ZH.items()), texts], ensure_ascii=False).encode())
    return hashed.hexdigest()


def _read_store(path: Path) -> dict[str, str]:
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _compute_digest(package: str, texts: list[tuple[str, dict[str, str]]]) -> str:
    schemas = {}
    for name, module in sorted(sys.modules.items()):
        if not name.startswith(package + ".") and name != package:
            continue
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, BaseModel) and value.__module__ == name:
                english = value.model_json_schema()
                schemas[f"{name}.{value.__qualname__}"] = [english, translate_descriptions(english)]
    # with the text files themselves: schemas built at run time (FELM's, one per answer length) read them too
    return digest({"schemas": schemas, "texts": texts})


@cache
def _import_all(package: str) -> None:
    """Import every module of `package` (once: walking the package reads the file system)."""
    root = importlib.import_module(package)
    for info in pkgutil.walk_packages(root.__path__, package + "."):
        importlib.import_module(info.name)


def in_language(schema: M, lang: str) -> M:
    """Return `schema`, or for "zh" a same-named subclass whose JSON schema has Chinese descriptions."""
    return schema if lang != "zh" else _chinese(schema)


@cache
def _chinese(schema: M) -> M:
    def model_json_schema(cls: type[BaseModel], *args: Any, **kwargs: Any) -> dict[str, Any]:
        return translate_descriptions(super(variant, cls).model_json_schema(*args, **kwargs))

    # A class made at run time is known to mypy only as some class (`type[Any]`, which `super` accepts); it
    # subclasses `schema`, so it is an M.
    variant: type[Any] = type(schema.__name__, (schema,), {"model_json_schema": classmethod(model_json_schema)})
    variant.__doc__ = schema.__doc__
    return cast(M, variant)


def translate_descriptions(node: Any) -> Any:
    """Replace every registered English description in a JSON schema by its Chinese text."""
    if isinstance(node, dict):
        return {key: _translated(key, value) for key, value in node.items()}
    if isinstance(node, list):
        return [translate_descriptions(item) for item in node]
    return node


def _translated(key: str, value: Any) -> Any:
    if key == "description" and isinstance(value, str):
        return _ZH.get(value, value)
    return translate_descriptions(value)
