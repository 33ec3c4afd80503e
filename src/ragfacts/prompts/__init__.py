"""Prompt templates kept as data files (`prompts/<lang>/<name>.md`), each with a version."""

from __future__ import annotations

import string
import sys
from dataclasses import dataclass
from functools import cache
from importlib import resources

if sys.version_info >= (3, 11):
    import tomllib
else:  # tomllib is in the standard library from Python 3.11
    import tomli as tomllib

LANGS = ("en", "zh")


@dataclass(frozen=True)
class PromptTemplate:
    """A prompt file: `version: N` on its first line, then the text with $placeholders."""

    name: str
    lang: str
    version: str
    text: str

    @property
    def id(self) -> str:
        """Identifier recorded with results, e.g. "fact_check/zh@2"."""
        return f"{self.name}/{self.lang}@{self.version}"

    def render(self, **values: str) -> str:
        """Fill the placeholders; a missing value is an error, not an empty string."""
        return string.Template(self.text).substitute(values)


@cache
def schema_texts(lang: str) -> tuple[str, dict[str, str]]:
    """The texts response schemas carry to the model in `lang` (`prompts/<lang>/schemas.toml`): its id, e.g.
    "schemas/zh@1", and the texts by key."""
    if lang not in LANGS:
        raise ValueError(f"unsupported prompt language {lang!r}; choose one of {', '.join(LANGS)}")
    data = tomllib.loads(
        resources.files(__package__).joinpath(lang).joinpath("schemas.toml").read_text(encoding="utf-8")
    )
    return f"schemas/{lang}@{data['version']}", dict(data["texts"])


@cache
def load_prompt(name: str, lang: str) -> PromptTemplate:
    """Load `prompts/<lang>/<name>.md`; raises FileNotFoundError for an unknown prompt."""
    if lang not in LANGS:
        raise ValueError(f"unsupported prompt language {lang!r}; choose one of {', '.join(LANGS)}")
    raw = resources.files(__package__).joinpath(lang).joinpath(f"{name}.md").read_text(encoding="utf-8")
    first, _, body = raw.partition("\n")
    if not first.startswith("version:"):
        raise ValueError(f"prompt {lang}/{name}.md must start with a 'version: N' line")
    return PromptTemplate(name=name, lang=lang, version=first.split(":", 1)[1].strip(), text=body.lstrip("\n"))
