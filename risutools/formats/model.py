"""The typed objects every reader returns.

A :class:`Module` keeps the module object exactly as read (``data``: unknown
fields are kept, never dropped) and offers tolerant accessors: a field of the
wrong type reads as empty and is recorded as an :class:`Anomaly` by the reader
or the analyser, never as a crash.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from risutools.jsontypes import js_truthy

ComponentType = Literal["module", "preset", "character", "lorebook"]
#: the key, in a card's module-shaped view, listing the card's parts the module.risum it
#: carries replaces on import (``formats.card``)
REPLACED_BY_MODULE = "replacedByModule"


@dataclass(frozen=True)
class Anomaly:
    """A recoverable oddity found while reading (reported as a warning)."""

    code: str
    where: str
    message: str


@dataclass
class AssetInfo:
    """One asset of a module: ``module.assets[index]`` and its frame, if any."""

    index: int
    name: str
    path: str
    ext: str
    offset: int | None = None  # where its (encoded) bytes start in the container
    size: int | None = None  # its length in bytes, when a frame/member exists
    sha256: str | None = None  # hex digest of the decoded bytes, when hashed
    head: bytes = b""  # first bytes of the decoded asset (type sniffing)
    data: bytes | None = None  # the decoded bytes, only when asked for


@dataclass(frozen=True)
class SourceInfo:
    """Where a module came from."""

    path: str  # as given by the caller
    format: str  # risum | charx | charx-jpeg | risup | risupreset | json-module | ...
    size: int  # bytes of the whole file
    sha256: str  # hex SHA-256 of the whole file (streamed)
    member: str | None = None  # e.g. "module.risum" inside a .charx


@dataclass
class Module:
    """A module (or preset / lorebook / regex set) read from any container."""

    data: dict[str, Any]
    component_type: ComponentType = "module"
    source: SourceInfo | None = None
    assets: list[AssetInfo] = field(default_factory=list)
    anomalies: list[Anomaly] = field(default_factory=list)
    card: dict[str, Any] | None = None  # card.json facts for a .charx (name, spec)

    # -- tolerant accessors -------------------------------------------------
    def _str(self, key: str) -> str:
        value = self.data.get(key)
        return value if isinstance(value, str) else ""

    def _list(self, key: str) -> list[Any]:
        value = self.data.get(key)
        return value if isinstance(value, list) else []

    @property
    def name(self) -> str:
        return self._str("name")

    @property
    def id(self) -> str:
        return self._str("id")

    @property
    def description(self) -> str:
        return self._str("description")

    @property
    def namespace(self) -> str:
        return self._str("namespace")

    @property
    def lorebook(self) -> list[Any]:
        return self._list("lorebook")

    @property
    def regex(self) -> list[Any]:
        return self._list("regex")

    @property
    def trigger(self) -> list[Any]:
        return self._list("trigger")

    @property
    def cjs(self) -> str:
        return self._str("cjs")

    @property
    def low_level_access(self) -> bool:
        """As RisuAI tests it (``if(lowLevelAccess)``): any truthy value grants it."""
        return js_truthy(self.data.get("lowLevelAccess"))

    @property
    def background_embedding(self) -> str:
        return self._str("backgroundEmbedding")

    @property
    def custom_module_toggle(self) -> str:
        return self._str("customModuleToggle")

    @property
    def mcp_url(self) -> str:
        mcp = self.data.get("mcp")
        if isinstance(mcp, dict):
            url = mcp.get("url")
            if isinstance(url, str):
                return url
        return ""

    @property
    def replaced_by_module(self) -> list[str]:
        """A card's parts (trigger, regex, lorebook) the module.risum it carries replaces on
        import ([] for anything else)."""
        value = self.data.get(REPLACED_BY_MODULE)
        return [str(x) for x in value] if isinstance(value, list) else []
