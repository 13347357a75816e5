"""One exception family for everything risutools refuses.

Every error carries a stable ``code`` (part of the public interface: tests and
users match on it), a ``where`` (byte offset, JSON pointer, line, member name)
and a ``why``.  ``one_line()`` renders the single line the CLI prints; the CLI
maps any :class:`RisuError` to exit code 2 and never shows a traceback.

:data:`CODES` is the one catalog of codes: one code per situation in every command (a
missing path is ``not-found`` whatever it was meant to hold).  ``docs/errors.md``'s table
is generated from it (``python -m risutools.commands.docs``), and a test fails when a code
raised anywhere in ``risutools/`` is not in it.
"""

from __future__ import annotations

from typing import Any

#: code -> meaning: one situation, one code, whichever command meets it (filled by
#: :class:`Code`, the codes as symbols the code raises)
CODES: dict[str, str] = {}


def _code(code: str, meaning: str) -> str:
    CODES[code] = meaning
    return code


class Code:
    """Every error code, as the symbol the code raises it by (``Code.NOT_FOUND`` is
    ``"not-found"``); the text is the public, stable code, the meaning what
    ``docs/errors.md`` lists."""

    # paths (every command)
    NOT_FOUND = _code("not-found", "no such file or folder (or a symbolic link to nothing)")
    NOT_A_FILE = _code("not-a-file",
        "a folder, device, FIFO or socket (or a link to one) where a regular file was expected "
        "(a folder where an output file must go too)")
    NOT_A_DIRECTORY = _code("not-a-directory",
        "a path that exists but is not a folder where a folder was expected (an input or "
        "output folder, or a file above an output path: `-o notes.txt/out.json`), or a "
        "catalog's own folder a command writes into (facts/, approvals/, notes/, replays/, "
        ".risutools-cache/) that is a symbolic link, even to a folder inside")
    UNREADABLE = _code("unreadable", "the operating system refused to open or read the file")
    SYSTEM_LIMIT = _code("system-limit",
        "the operating system refused the command a resource it needed (open files, memory, "
        "processes): a limit of the machine or the session (`ulimit`), not of the input")
    TOO_LARGE = _code("too-large",
        "past a documented bound (file size, JSON containers/values, msgpack values, asset "
        "frames)")
    EMPTY_FILE = _code("empty-file",
        "zero bytes (for `pack`: a module JSON or manifest with nothing but blanks)")
    UNWRITABLE = _code("unwritable",
        "the system refused to write a target (permissions, a read-only file system, a full "
        "disk)")
    WRITE_CONFLICT = _code("write-conflict",
        "a file changed since it was read (compare-and-swap), or another writer holds it")
    LOCKED = _code("locked", "another risutools process holds the folder's lock")
    UNRECORDED_CHANGE = _code("unrecorded-change",
        "a document past candidate changed after its last recorded line (MC305): no evidence "
        "is recorded on top of it")
    TORN_LINE = _code("torn-line",
        "an append-only log ends in a line without its newline (an interrupted write)")
    TARGET_EXISTS = _code("target-exists",
        "`unpack`/`pack` would overwrite existing files (use `--force`); `notes init` for a "
        "component that has a notes file")
    OUTSIDE_TARGET = _code("outside-target",
        "a path would resolve outside the output folder (symlinks included)")
    OUTSIDE_CATALOG = _code("outside-catalog",
        "a catalog path (document, approval, log, notes, lock) that is outside the catalog or "
        "a symbolic link leading out of it; nothing is read or written there")
    # containers and exports
    UNKNOWN_FORMAT = _code("unknown-format",
        "not a supported Risu file (by content, and the extension gives no hint)")
    BAD_MAGIC = _code("bad-magic",
        "`.risum` first byte is not 0x6F; `.risupreset` without gzip/zlib header")
    BAD_VERSION = _code("bad-version",
        "`.risum` version byte is not 0; preset `presetVersion` not 0/2")
    TRUNCATED = _code("truncated", "the file ends inside a header or frame")
    LENGTH_BEYOND_EOF = _code("length-beyond-eof",
        "a declared length (main block, asset frame) is larger than what is left")
    NOT_UTF8 = _code("not-utf8",
        "main block / JSON text is not UTF-8 (the bad byte and its offset in the file or "
        "the member, a leading byte order mark counted)")
    NOT_JSON = _code("not-json", "not valid JSON (line/column given); NaN/Infinity are refused")
    JSON_TOO_DEEP = _code("json-too-deep", "nesting deeper than the reader's bound")
    NOT_AN_OBJECT = _code("not-an-object", "the JSON top level is not an object")
    WRONG_TYPE = _code("wrong-type",
        "main block `type` is not `risuModule`; preset envelope `type` is not `preset`")
    MODULE_NOT_OBJECT = _code("module-not-object", "main block has no `module` object")
    BAD_FRAME_MARKER = _code("bad-frame-marker", "a frame marker is neither 1 (asset) nor 0 (end)")
    UNSUPPORTED_EXPORT = _code("unsupported-export",
        "a JSON object that is none of the four export shapes")
    BAD_FIELD = _code("bad-field", "an export's `data` / `entries` has the wrong type")
    ZIP_INVALID = _code("zip-invalid",
        "unreadable ZIP or member (no valid end record, directory past its bounds or damaged, "
        "encrypted; a size other than declared or a CRC-32 mismatch only where no warning can "
        "be given: the readers warn `zip-size-mismatch` and `zip-crc-mismatch` on `card.json` "
        "and `module.risum`, as RisuAI's reader checks neither)")
    ZIP_UNSUPPORTED_METHOD = _code("zip-unsupported-method",
        "a member compressed with a method other than stored/deflate")
    ZIP_NO_CARD = _code("zip-no-card", "ZIP without a `card.json` RisuAI reads (none, or "
                        "one whose local header declares 0 bytes inflated)")
    ZIP_DUPLICATE_MEMBER = _code("zip-duplicate-member",
        "`card.json` or `module.risum` appears more than once")
    ZIP_MEMBER_TOO_LARGE = _code("zip-member-too-large",
        "a member declares or inflates past its bound (`card.json`: inflates past 50 MiB, "
        "as RisuAI skips it; a `module.risum` so is the warning `module-too-large`)")
    ZIP_BOMB = _code("zip-bomb", "a member inflates more than its ratio bound")
    ZIP_HIDDEN_MEMBER = _code("zip-hidden-member",
        "a local header RisuAI's streaming reader would load that the central directory does "
        "not list the same way (another name, size or method, outside every listed member: in "
        "front, in a gap, inside another member's data, in the directory or its comment), a "
        "listed `card.json`/`module.risum` that reader would never reach or would end "
        "elsewhere (a data descriptor it finds early), or a walk that depends on how the file "
        "is fed to it")
    PNG_INVALID = _code("png-invalid",
        "a PNG card that cannot be read as RisuAI reads it: a chunk length past the file or "
        "its bound, too many chunks, a card text chunk twice, its text not base64")
    PNG_NO_CARD = _code("png-no-card",
        "a PNG without a `ccv3`/`chara` text chunk: not a character card")
    PNG_ENCRYPTED = _code("png-encrypted",
        "a PNG card whose text is an encrypted `rcc||` card: its content cannot be read")
    RISUP_DECOMPRESS_FAILED = _code("risup-decompress-failed",
        "the preset's compressed stream is corrupt or truncated")
    RISUP_NOT_MSGPACK = _code("risup-not-msgpack", "envelope or decrypted preset is not msgpack")
    RISUP_BAD_STRUCTURE = _code("risup-bad-structure",
        "envelope/preset is not a map or lacks the sealed preset bytes")
    RISUP_EXTENSION = _code("risup-extension",
        "the preset holds a msgpack extension other than `undefined` (type 0): RisuAI's reader "
        "(msgpackr) reads it as a value of its own (a record, a Set, a Date...) or refuses it")
    RISUP_DECRYPT_FAILED = _code("risup-decrypt-failed",
        "AES-GCM authentication failed (corrupted, or another key)")
    PACK_INVALID_INPUT = _code("pack-invalid-input",
        "`pack` input is not a module, a manifest, a preset or a folder with one")
    PACK_ASSETS_MISSING = _code("pack-assets-missing",
        "the module lists assets but the input has no asset files")
    PACK_ASSET_MISSING = _code("pack-asset-missing",
        "an asset in the middle has no file (frames would be out of step)")
    # documents and catalogs
    BAD_DOCUMENT = _code("bad-document",
        "a catalog document cannot be parsed (syntax, duplicate keys, bounds)")
    UNREADABLE_DOCUMENT = _code("unreadable-document",
        "a catalog document could not be read (the loader's MC000/MC001 finding says why); "
        "also where a component id is sought, no document read has it and some cannot be "
        "read (one of them may be it: the one named for it, else the first, with its line)")
    UNSUPPORTED_DOCUMENT = _code("unsupported-document",
        "a document of a kind this command does not take")
    INVALID_DOCUMENT = _code("invalid-document",
        "the component is not a valid matrix-component-v1 document (MC100); nothing runs")
    NO_DOCUMENTS = _code("no-documents", "a folder with no documents in it")
    NO_CATALOG = _code("no-catalog", "no catalog at or above the folder given")
    UNKNOWN_COMPONENT = _code("unknown-component",
        "no document in the catalog has that component id, and every one of them was read")
    AMBIGUOUS_COMPONENT = _code("ambiguous-component",
        "several documents match the component named")
    CACHE_UNREADABLE = _code("cache-unreadable",
        "the ingest cache is damaged or past its bounds: a notice, not an error (the run goes on "
        "without it and rebuilds it)")
    # configuration, notes, fixtures, arguments
    CONFIG_BAD_VALUE = _code("config-bad-value",
        "a configuration value of the wrong type or out of range")
    CONFIG_INVALID = _code("config-invalid", "a configuration file that cannot be parsed")
    CONFIG_NOT_MAPPING = _code("config-not-mapping",
        "a configuration (or one of its sections) that is not a mapping")
    CONFIG_TOML = _code("config-toml", "`pyproject.toml` that is not valid TOML")
    CONFIG_UNKNOWN_KEY = _code("config-unknown-key",
        "a configuration section or key nothing reads (a typo)")
    CONFIG_SOURCES_OUTSIDE = _code("config-sources-outside",
        "a configuration `sources:` outside the repository (see "
        "`--allow-config-sources-outside`)")
    CONFIG_SIGNERS_OUTSIDE = _code("config-signers-outside",
        "a configuration `catalog.allowed_signers` outside the repository (see "
        "`--allow-config-signers-outside`, or pin it with `--allowed-signers FILE`)")
    UNKNOWN_RULE = _code("unknown-rule",
        "a rule id or prefix that names no check (`--select`, `--ignore`, `rules:`, `risutools "
        "rule`)")
    NOTES_INVALID = _code("notes-invalid", "a curator notes file that is invalid")
    NOTES_AMBIGUOUS = _code("notes-ambiguous", "two notes files for one component")
    BAD_FIXTURE = _code("bad-fixture", "a replay fixture that is invalid")
    BAD_COMPONENT_ID = _code("bad-component-id",
        "a component_id that is not a plain name (a path separator, `..`, a control "
        "character) where it would name a file")
    BASE_MOVED = _code("base-moved",
        "an approval bound to a packet or base hash the document no longer has (exit 1)")
    BAD_PACKET = _code("bad-packet", "a file given as a review packet that is not one")
    RECORD_USED = _code("record-used",
        "an approval that would be the very record a transition line already used (the same "
        "fields, the same second): it could approve nothing (exit 1)")
    ACTION_NOT_NEXT = _code("action-not-next",
        "an approval for a step that is not the component's next one")
    USAGE = _code("usage",
        "a command-line value outside its choices, range or form (`--lang fr`, `--jobs 0`, "
        "`--to bogus`, an empty `--reviewer`, text that is not UTF-8 where a record needs "
        "text), or options that do not fit together")
    # ingest on a Dask cluster (`ingest --scheduler`)
    DASK_MISSING = _code("dask-missing",
        "`--scheduler` needs the `distributed` package (`risutools[dask]`)")
    SCHEDULER_UNREACHABLE = _code("scheduler-unreachable",
        "the Dask scheduler named cannot be reached")
    NO_WORKERS = _code("no-workers", "the Dask scheduler has no workers")
    WORKER_MISMATCH = _code("worker-mismatch", "a Dask worker cannot run this version of risutools")
    # replay
    DUPLICATE_ID = _code("duplicate-id", "two messages with one id in a replay")
    UNKNOWN_ID = _code("unknown-id", "a fixture operation names a message id that does not exist")
    # signatures
    NO_SSH_KEYGEN = _code("no-ssh-keygen",
        "signing or verifying needs `ssh-keygen`, which is not installed")
    SIGN_FAILED = _code("sign-failed", "`ssh-keygen -Y sign` failed")


#: the characters of an error's reason (or place) shown on its one line: past them, the
#: first 700 and the last 200 (where the advice is), and how many were left out between
MAX_WHY = 1_000


def bounded(text: str) -> str:
    """``text`` as an error line shows it: whole up to :data:`MAX_WHY` characters, else its
    head and tail with the count of those left out."""
    if len(text) <= MAX_WHY:
        return text
    return f"{text[:700]} ... ({len(text) - 900:,} characters not shown) ... {text[-200:]}"


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
        """``path: where: code: why`` with empty parts left out; a ``why`` or ``where``
        longer than :data:`MAX_WHY` characters (one that quotes what it was given: a
        5,000-character ``--select`` id) is shown by its head and its tail."""
        parts = [p for p in (self.path, bounded(self.where)) if p]
        head = ": ".join(parts)
        body = f"{self.code}: {bounded(self.why)}"
        return f"{head}: {body}" if head else body

    def __str__(self) -> str:
        return self.one_line()

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its class and fields (an error a worker process raises reaches the
        collecting process whole, whatever the subclass's ``__init__`` asks: unpickling
        through ``__init__`` would fail there and break the whole pool)."""
        return _rebuilt, (type(self), self.why, dict(self.__dict__))


def _rebuilt(cls: type[RisuError], why: str, fields: dict[str, Any]) -> RisuError:
    err = cls.__new__(cls)
    Exception.__init__(err, why)
    err.__dict__.update(fields)
    return err


class FormatError(RisuError):
    """A container (.risum, .charx, .risup, JSON export) is malformed."""


class DocumentError(RisuError):
    """A catalog document (JSON/YAML/NDJSON) cannot be loaded."""


class ConfigError(RisuError):
    """A configuration, notes or fixture file is invalid."""


class ReplayError(RisuError):
    """A replay cannot run (bad fixture operation, bad configuration)."""


class UsageError(RisuError):
    """A value outside its choices, range or form, or options that do not fit together
    (``usage``): found by a command's options object, or by the library function it names
    (``option`` is the command-line option it comes from, "" for a combination).  The
    command line shows it as a usage error of that option (exit 2)."""

    def __init__(self, option: str, why: str) -> None:
        super().__init__(Code.USAGE, why, where=option)


def check_choice(value: str, choices: tuple[str, ...], option: str) -> None:
    """A UsageError naming ``option`` and its choices unless ``value`` is one of them."""
    if value not in choices:
        raise UsageError(option, f"{value!r} is not one of {', '.join(choices)}")


class WriteConflict(RisuError):
    """A compare-and-swap write found a file that changed since it was read."""
