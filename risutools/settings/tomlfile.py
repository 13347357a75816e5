"""The ``[tool.risutools]`` table of a TOML file (``pyproject.toml``, or a ``.toml`` named
with ``--config``), read as TOML defines it, in any of its spellings: ``[tool.risutools]``,
``[ tool . "risutools" ]``, dotted keys (``tool.risutools.rules = {...}``) or an inline
table under ``[tool]``.  A file that holds none is no configuration (the defaults); a
``tool`` that is no table, or a key of the configuration at the file's top (where nothing
reads it), is refused with the file's name, never passed over in silence."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from risutools.errors import Code, ConfigError
from risutools.pathnames import show_name
from risutools.settings.schema import KEYS


def _tomllib() -> Any | None:
    """Python's ``tomllib`` (3.11+), else ``tomli`` when installed, else None."""
    try:
        return importlib.import_module("tomllib")
    except ModuleNotFoundError:  # Python 3.10
        try:
            return importlib.import_module("tomli")
        except ModuleNotFoundError:
            return None


def toml_document(data: bytes, p: Path) -> dict[str, Any]:
    """The TOML document of the file ``p`` (its bytes ``data``), or ConfigError."""
    tomllib = _tomllib()
    if tomllib is None:  # Python 3.10 without tomli
        raise ConfigError(Code.CONFIG_TOML, "reading pyproject.toml needs Python 3.11+ or "
                          "the tomli package; or use .risutools.yaml", path=show_name(str(p)))
    try:
        doc: dict[str, Any] = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(Code.CONFIG_INVALID, f"not valid TOML: {exc}",
                          path=show_name(str(p))) from None
    except RecursionError:  # (tomllib reads nested arrays and tables by recursion)
        raise ConfigError(Code.CONFIG_INVALID, "not valid TOML here: nested deeper than "
                          "Python's parser reads; flatten it", path=show_name(str(p))) from None
    return doc


def tool_section(doc: dict[str, Any], p: Path) -> Any:
    """``tool.risutools`` of the TOML document ``doc`` (None: the file holds none)."""
    tool = doc.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(Code.CONFIG_NOT_MAPPING, "tool must be a table (the configuration "
                          "is its [tool.risutools] table)", where="tool",
                          path=show_name(str(p)))
    if "risutools" not in tool:
        stray = [k for k in KEYS if k in doc]
        if stray:
            raise ConfigError(Code.CONFIG_UNKNOWN_KEY, f"{', '.join(stray)} at the top of a "
                              "TOML file is read by nothing: a TOML configuration is the "
                              "[tool.risutools] table; put the keys under it",
                              path=show_name(str(p)))
    return tool.get("risutools")


def names_section(data: bytes) -> bool:
    """Whether the TOML text ``data`` (a ``pyproject.toml`` met by the search) holds a
    ``[tool.risutools]`` table in any spelling; text that cannot be read as TOML holds one
    when it says ``[tool.risutools`` (the file is then read, and refused, as before)."""
    if b"[tool.risutools" in data:
        return True
    if b"risutools" not in data:
        return False
    tomllib = _tomllib()
    if tomllib is None:
        return False
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        return False
    tool = doc.get("tool")
    return isinstance(tool, dict) and "risutools" in tool
