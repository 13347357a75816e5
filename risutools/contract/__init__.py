"""risutools.contract: the matrix-component-v1 contract.

Schema (``schemas/matrix-component-v1.schema.json``), the rules MC000-MC600
(:data:`RULES`), loaders for JSON / YAML / NDJSON, the canonical hash, and the
``validate`` / ``verify`` entry points the CLI and the other parts call.
Nothing here imports jsonschema or PyYAML until it is needed.
"""

from risutools.contract.canonical import canonical, doc_sha256
from risutools.contract.config import ContractConfig, load_config, load_config_file
from risutools.contract.loaders import (
    MAX_DEPTH,
    MAX_DOCUMENT_BYTES,
    LoadedDocument,
    LoadOutcome,
    load_documents,
)
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
