"""A run directory's manifest, typed: which ragfacts made the run, from which data, with which model and methods,
and each invocation that added to it. `manifest.json` keeps the keys it always had; fields a reader does not know
are kept as they are (`extra="allow"`), so an older or newer ragfacts reads and writes it without loss.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ragfacts.usage import Usage


class _Entry(BaseModel):
    model_config = ConfigDict(extra="allow")


class DatasetEntry(_Entry):
    """The data a run judged: its path (or name), its SHA-256 and how it was read."""

    path: str | None = None
    sha256: str | None = None
    rows: int = 0
    items: int = 0
    layout: str | None = None
    selection: dict[str, Any] | None = None  # how a subset was chosen (bench --sample)
    columns: dict[str, str] = Field(default_factory=dict)  # field -> column


class ModelEntry(_Entry):
    """The judge model: its spec and what decides its replies."""

    spec: str = ""
    fingerprint: dict[str, Any] | None = None


class MethodEntry(_Entry):
    """One method of the run, with the configuration hash its results carry."""

    key: str
    name: str
    kind: str
    options: dict[str, Any] = Field(default_factory=dict)
    config_hash: str


class Invocation(_Entry):
    """One command that ran into the directory: running until it ends, then finished, stopped or interrupted."""

    id: str
    status: str = "running"
    started: str | None = None
    finished: str | None = None
    seconds: float | None = None
    ran: int | None = None
    reused: int | None = None
    incomplete: int | None = None
    not_run: int | None = None
    stopped: str | None = None
    usage: Usage | None = None


class Manifest(_Entry):
    """What made a run directory's results."""

    ragfacts: str
    commit: str | None = None
    python: str | None = None
    created: str | None = None
    updated: str | None = None
    dataset: DatasetEntry = Field(default_factory=DatasetEntry)
    model: ModelEntry = Field(default_factory=ModelEntry)
    methods: list[MethodEntry]
    invocations: list[Invocation] = Field(default_factory=list)
    synth: dict[str, Any] | None = None  # `ragfacts synth`: what the rows written are, by error type

    def configs(self) -> dict[str, str]:
        """Each method's configuration hash, by method key."""
        return {m.key: m.config_hash for m in self.methods}

    def to_json(self) -> dict[str, Any]:
        """The manifest as written: the keys it was given or read with, and no others."""
        return self.model_dump(mode="json", exclude_unset=True)
