"""risutools.contract: the matrix-component-v1 contract.

Schema (``schemas/matrix-component-v1.schema.json``), the rules MC000-MC600
(:data:`RULES`), loaders for JSON / YAML / NDJSON, the canonical hash, and the
``validate`` / ``verify`` entry points the CLI and the other parts call.
Nothing here imports jsonschema or PyYAML until it is needed, and the package
imports none of its modules until one of the names below is used (PEP 562): a
command that needs only ``contract.config`` or ``contract.canonical`` (``ingest``)
does not load the validator, the schema compiler and the rules at start-up.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from risutools.canonical import canonical, doc_sha256
    from risutools.contract.config import ContractConfig, load_config, load_config_file
    from risutools.contract.loaders import LoadedDocument, LoadOutcome, load_documents
    from risutools.contract.rules import RULES, RuleInfo
    from risutools.contract.validate import (
        DocumentInfo,
        Result,
        RuleFilter,
        Verification,
        validate_document,
        validate_paths,
    )
    from risutools.contract.verify import verify_paths
    from risutools.values import MAX_DEPTH, MAX_DOCUMENT_BYTES

#: public name -> the module that defines it (imported on first use)
_WHERE = {
    "canonical": "risutools.canonical", "doc_sha256": "risutools.canonical",
    "ContractConfig": "config", "load_config": "config", "load_config_file": "config",
    "MAX_DEPTH": "risutools.values", "MAX_DOCUMENT_BYTES": "risutools.values",
    "LoadedDocument": "loaders",
    "LoadOutcome": "loaders", "load_documents": "loaders",
    "RULES": "rules", "RuleInfo": "rules",
    "DocumentInfo": "validate", "Result": "validate", "RuleFilter": "validate",
    "Verification": "validate", "validate_document": "validate", "validate_paths": "validate",
    "verify_paths": "verify",
}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = where if "." in where else f"{__name__}.{where}"
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))


__all__ = [
    "MAX_DEPTH",
    "MAX_DOCUMENT_BYTES",
    "RULES",
    "ContractConfig",
    "DocumentInfo",
    "LoadOutcome",
    "LoadedDocument",
    "Result",
    "RuleFilter",
    "RuleInfo",
    "Verification",
    "canonical",
    "doc_sha256",
    "load_config",
    "load_config_file",
    "load_documents",
    "validate_document",
    "validate_paths",
    "verify_paths",
]
