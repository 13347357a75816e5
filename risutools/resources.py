"""Locate data files shipped with the package (schemas, vocabulary).

The repository keeps schemas in the top-level ``schemas/`` folder; the wheel
carries the same files as ``risutools/schemas``.  Both the code and the docs
read these files: they are never duplicated.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

_PKG = Path(__file__).resolve().parent


def schemas_dir() -> Path:
    installed = _PKG / "schemas"
    if installed.is_dir():
        return installed
    return _PKG.parent / "schemas"


def data_dir() -> Path:
    return _PKG / "data"


@cache
def load_schema(name: str) -> dict[str, Any]:
    """Load ``schemas/<name>`` (e.g. ``matrix-component-v1.schema.json``)."""
    with open(schemas_dir() / name, encoding="utf-8") as f:
        result: dict[str, Any] = json.load(f)
    return result


@cache
def load_data_yaml(name: str) -> Any:
    """Load ``risutools/data/<name>`` (YAML)."""
    import yaml  # only when a data file is read: not at every command's start-up

    # the package's own data (trusted, not user input: that goes through
    # contract.yamlsafe): libyaml's parser when present, ~8x quicker than the pure-Python
    # one for the same objects (the constructor is the same), ~25 ms of every start-up
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with open(data_dir() / name, encoding="utf-8") as f:
        return yaml.load(f, Loader=loader)
