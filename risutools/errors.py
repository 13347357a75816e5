"""One exception family for everything risutools refuses.

Every error carries a stable ``code`` (part of the public interface: tests and
users match on it), a ``where`` (byte offset, JSON pointer, line, member name)
and a ``why``.  ``one_line()`` renders the single line the CLI prints; the CLI
maps any :class:`RisuError` to exit code 2 and never shows a traceback.

:data:`CODES` is the one catalog of codes: one code per situation in every command (a
missing path is ``not-found`` whatever it was meant to hold).  ``docs/errors.md``'s table
is generated from it (``python -m risutools.checks.docs``), and a test fails when a code
raised anywhere in ``risutools/`` is not in it.
"""

from __future__ import annotations

#: code -> meaning; each situation has one code, whichever command meets it
CODES: dict[str, str] = {
    # paths (every command)
    "not-found": "no such file or folder (or a symbolic link to nothing)",
    "not-a-file": "a folder, device, FIFO or socket (or a link to one) where a regular file "
    "was expected",
    "not-a-directory": "something other than a folder where a folder was expected",
    "unreadable": "the operating system refused to open or read the file",
    "too-large": "past a documented bound (file size, JSON containers/values, msgpack values, "
    "asset frames)",
    "empty-file": "zero bytes (for `pack`: a module JSON or manifest with nothing but blanks)",
    "unwritable": "a target cannot be written (permissions, a file where a folder must go, a "
    "folder where a file must go)",
    "write-conflict": "a file changed since it was read (compare-and-swap), or another writer "
    "holds it",
    "locked": "another risutools process holds the folder's lock",
    "torn-line": "an append-only log ends in a line without its newline (an interrupted write)",
    "target-exists": "`unpack`/`pack` would overwrite existing files (use `--force`)",
    "outside-target": "a path would resolve outside the output folder (symlinks included)",
    # containers and exports
    "unknown-format": "not a supported Risu file (by content, and the extension gives no hint)",
    "bad-magic": "`.risum` first byte is not 0x6F; `.risupreset` without gzip/zlib header",
    "bad-version": "`.risum` version byte is not 0; preset `presetVersion` not 0/2",
    "truncated": "the file ends inside a header or frame",
    "length-beyond-eof": "a declared length (main block, asset frame) is larger than what is "
    "left",
    "not-utf8": "main block / JSON text is not UTF-8 (offset of the bad byte given)",
    "not-json": "not valid JSON (line/column given); NaN/Infinity are refused",
    "json-too-deep": "nesting deeper than the reader's bound",
    "not-an-object": "the JSON top level is not an object",
    "wrong-type": "main block `type` is not `risuModule`; preset envelope `type` is not `preset`",
    "module-not-object": "main block has no `module` object",
    "bad-frame-marker": "a frame marker is neither 1 (asset) nor 0 (end)",
    "unsupported-export": "a JSON object that is none of the four export shapes",
    "bad-field": "an export's `data` / `entries` has the wrong type",
    "zip-invalid": "unreadable ZIP or member (no valid end record, directory past its bounds or "
    "damaged, CRC, size other than declared, encrypted)",
    "zip-unsupported-method": "a member compressed with a method other than stored/deflate",
    "zip-no-card": "ZIP without `card.json`",
    "zip-duplicate-member": "`card.json` or `module.risum` appears more than once",
    "zip-member-too-large": "a member declares or inflates past its bound",
    "zip-bomb": "a member inflates more than its ratio bound",
    "risup-decompress-failed": "the preset's compressed stream is corrupt or truncated",
    "risup-not-msgpack": "envelope or decrypted preset is not msgpack",
    "risup-bad-structure": "envelope/preset is not a map or lacks the sealed preset bytes",
    "risup-decrypt-failed": "AES-GCM authentication failed (corrupted, or another key)",
    "pack-invalid-input": "`pack` input is not a module, a manifest, a preset or a folder with "
    "one",
    "pack-assets-missing": "the module lists assets but the input has no asset files",
    "pack-asset-missing": "an asset in the middle has no file (frames would be out of step)",
    # documents and catalogs
    "bad-document": "a catalog document cannot be parsed (syntax, duplicate keys, bounds)",
    "unreadable-document": "a catalog document could not be read (the loader's MC000/MC001 "
    "finding says why)",
    "unsupported-document": "a document of a kind this command does not take",
    "invalid-document": "the component is not a valid matrix-component-v1 document (MC100); "
    "nothing runs",
    "no-documents": "a folder with no documents in it",
    "no-catalog": "no catalog at or above the folder given",
    "unknown-component": "no document in the catalog has that component id",
    "ambiguous-component": "several documents match the component named",
    "no-source-store": "the `--sources` folder does not exist",
    "cache-unreadable": "the ingest cache is damaged or past its bounds: a notice, not an "
    "error (the run goes on without it and rebuilds it)",
    # configuration, notes, fixtures, arguments
    "config-bad-value": "a configuration value of the wrong type or out of range",
    "config-invalid": "a configuration file that cannot be parsed",
    "config-not-mapping": "a configuration (or one of its sections) that is not a mapping",
    "config-toml": "`pyproject.toml` that is not valid TOML",
    "config-unknown-key": "a configuration section or key nothing reads (a typo)",
    "config-sources-outside": "a configuration `sources:` outside the repository (see "
    "`--allow-config-sources-outside`)",
    "unknown-rule": "a rule id or prefix that names no check (`--select`, `--ignore`, "
    "`rules:`, `risutools rule`)",
    "notes-invalid": "a curator notes file that is invalid",
    "notes-ambiguous": "two notes files for one component",
    "bad-fixture": "a replay fixture that is invalid",
    "bad-argument": "a command-line value out of range, or not UTF-8 text where a record "
    "needs text (`--reviewer`, `--note`, `--actor`, `--by` ...)",
    "bad-option": "an option that does not apply, or a combination that does not work",
    "bad-output": "an output path that cannot be used",
    "bad-lang": "a `--lang` other than those supported",
    "bad-post-id": "a post id that is not a number",
    "bad-lane": "a review packet lane that does not exist",
    "bad-target": "a target status or runtime state that does not exist",
    "bad-action": "an approval action that does not exist",
    "bad-reviewer": "a reviewer name that cannot be used in a record",
    "action-not-next": "an approval for a step that is not the component's next one",
    "usage": "a command called with arguments that do not fit together",
    # ingest on a Dask cluster (`ingest --scheduler`)
    "dask-missing": "`--scheduler` needs the `distributed` package (`risutools[dask]`)",
    "scheduler-unreachable": "the Dask scheduler named cannot be reached",
    "no-workers": "the Dask scheduler has no workers",
    "worker-mismatch": "a Dask worker cannot run this version of risutools",
    # replay
    "duplicate-id": "two messages with one id in a replay",
    "unknown-id": "a fixture operation names a message id that does not exist",
    # signatures
    "no-key": "`--sign` names a key that does not exist",
    "no-ssh-keygen": "signing or verifying needs `ssh-keygen`, which is not installed",
    "sign-failed": "`ssh-keygen -Y sign` failed",
}


class RisuError(Exception):
    """Base class: something risutools could not read, parse or do."""

    def __init__(self, code: str, why: str, *, where: str = "", path: str | None = None) -> None:
        super().__init__(why)
        self.code = code
        self.why = why
        self.where = where
        self.path = path

    def with_path(self, path: str) -> RisuError:
        """Attach the file the error belongs to (if not already set) and return self."""
        if self.path is None:
            self.path = path
        return self

    def one_line(self) -> str:
        """``path: where: code: why`` with empty parts left out."""
        parts = [p for p in (self.path, self.where) if p]
        head = ": ".join(parts)
        body = f"{self.code}: {self.why}"
        return f"{head}: {body}" if head else body

    def __str__(self) -> str:
        return self.one_line()


class FormatError(RisuError):
    """A container (.risum, .charx, .risup, JSON export) is malformed."""


class DocumentError(RisuError):
    """A catalog document (JSON/YAML/NDJSON) cannot be loaded."""


class ConfigError(RisuError):
    """A configuration, notes or fixture file is invalid."""


class ReplayError(RisuError):
    """A replay cannot run (bad fixture operation, bad configuration)."""


class WriteConflict(RisuError):
    """A compare-and-swap write found a file that changed since it was read."""
