"""``.risup`` / ``.risupreset`` presets.

``.risup`` = RPack(compress(msgpack({"presetVersion": 0|2, "type": "preset",
"preset": AES-GCM(msgpack(preset))}))); ``.risupreset`` is the same without RPack.
RisuAI writes gzip (fflate ``compressSync``) and reads with fflate
``decompressSync``, which takes gzip, zlib, or raw deflate when neither header is
there, and compares no checksum; the same rules are used here (:mod:`.flate`), with an
output bound.
AES-256-GCM: key = SHA-256(b"risupreset"), IV = 12 zero bytes, 16-byte tag at the end.
Older files name the field ``pres``.

Both msgpack values (the envelope and the decrypted preset) are walked by
:func:`msgpack_shape` before msgpack builds them: at most ``MAX_MSGPACK_ITEMS``
values, ``MAX_DEPTH`` levels, and no declared length past the bytes left, so the
objects built stay within a known memory bound (an array of 60 M empty maps in a
58 KB file is refused after a million values, not decoded into 4 GB).
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from risutools.errors import Code, FormatError
from risutools.findings import MAX_POINTER_SHOWN
from risutools.formats import flate, rpack
from risutools.formats.model import Anomaly
from risutools.jsonplaces import Place, pointer_at
from risutools.jsontypes import js_key, json_type_name

KEY = hashlib.sha256(b"risupreset").digest()
IV = bytes(12)
#: bound on the inflated outer msgpack and on the decrypted preset
MAX_INFLATED_BYTES = 64 * 1024 * 1024
MAX_FILE_BYTES = 64 * 1024 * 1024
#: deepest nesting of a preset (as JSON's bound)
MAX_DEPTH = 200
#: 'gzip', 'zlib' or None (raw deflate), as RisuAI's reader tells a compressed stream
compression_of = flate.compression_of


def inflate(data: bytes, limit: int = MAX_INFLATED_BYTES,
            notes: list[Anomaly] | None = None) -> bytes:
    """Inflate gzip/zlib/raw deflate as RisuAI's reader does, with an output bound
    (:func:`risutools.formats.flate.inflate`)."""
    return flate.inflate(data, limit, notes)


def peek(data: bytes) -> bool | None:
    """Whether ``data`` (the start of a plain .risupreset) looks like a preset envelope:
    True when its first 96 inflated bytes are a msgpack map naming ``pres``, False when
    they are no msgpack map, None when they are a map that names no such key (yet: its
    keys may come in any order, :func:`is_envelope` tells from the whole file)."""
    stream = flate.head_stream(data)
    if not stream:  # (a gzip header longer than the head: the whole file tells)
        return None
    try:
        out = zlib.decompressobj(-15).decompress(stream, 96)
    except zlib.error:
        return False
    if not out or not (0x80 <= out[0] <= 0x8F or out[0] in (0xDE, 0xDF)):
        return False
    return True if b"pres" in out or b"presetVersion" in out else None


def is_envelope(blob: bytes, *, rpacked: bool) -> bool:
    """Whether the bytes of a whole file inflate (within the bounds) to a msgpack map with a
    ``presetVersion``, ``preset`` or ``pres`` key: a preset envelope whatever the order of
    its keys (RisuAI decodes the map, so a key in front cannot hide one)."""
    try:
        envelope = _unpack(inflate(rpack.decode(blob) if rpacked else blob), "preset envelope")
    except FormatError:
        return False
    return isinstance(envelope, dict) and any(
        k in envelope for k in ("presetVersion", "preset", "pres"))


#: most msgpack values (containers, keys and scalars) in one envelope or preset
MAX_MSGPACK_ITEMS = 1_000_000

# type byte -> bytes that follow it (nil, bools, numbers, fixext)
_FIXED = {
    0xC0: 0, 0xC2: 0, 0xC3: 0, 0xCA: 4, 0xCB: 8, 0xCC: 1, 0xCD: 2, 0xCE: 4, 0xCF: 8,
    0xD0: 1, 0xD1: 2, 0xD2: 4, 0xD3: 8, 0xD4: 2, 0xD5: 3, 0xD6: 5, 0xD7: 9, 0xD8: 17,
}  # fmt: skip
# type byte -> bytes of its length field (bin, str, ext)
_LENGTH = {0xC4: 1, 0xC5: 2, 0xC6: 4, 0xD9: 1, 0xDA: 2, 0xDB: 4, 0xC7: 1, 0xC8: 2, 0xC9: 4}
_EXT_LEN = (0xC7, 0xC8, 0xC9)
_ARRAY = {0xDC: 2, 0xDD: 4}
_MAP = {0xDE: 2, 0xDF: 4}
# type byte 0xc0-0xdf -> (bytes that follow it, bytes of its length field, bytes after the
# payload (the ext type), values per unit of length: 0 a payload of bytes, 1 array, 2 map);
# 0xc1 is no type
_TYPED = {
    **{b: (k, 0, 0, 0) for b, k in _FIXED.items()},
    **{b: (0, k, 1 if b in _EXT_LEN else 0, 0) for b, k in _LENGTH.items()},
    **{b: (0, k, 0, 1) for b, k in _ARRAY.items()},
    **{b: (0, k, 0, 2) for b, k in _MAP.items()},
}
# type byte -> values a fixmap (0x80-0x8f: keys and values) or fixarray (0x90-0x9f) holds
_FIX_COUNT = bytes(2 * (b & 0x0F) if 0x80 <= b <= 0x8F else b & 0x0F if 0x90 <= b <= 0x9F
                   else 0 for b in range(256))  # fmt: skip


def _not_msgpack(what: str, why: str) -> FormatError:
    return FormatError(Code.RISUP_NOT_MSGPACK, f"{what} {why}")


#: the msgpack extension tags (fixext 1-16, ext 8/16/32): their type byte follows the tag
#: and the length field
_EXT_TAGS = frozenset((0xD4, 0xD5, 0xD6, 0xD7, 0xD8, 0xC7, 0xC8, 0xC9))
#: msgpack extension type -> what RisuAI's reader (msgpackr 1.10.1 ``decode``) makes of it;
#: type 0 is ``undefined`` (msgpackr writes every undefined value so), read here as JSON
#: writes it; any other type is not read (msgpackr refuses a type it does not know)
MSGPACKR_EXTENSIONS = {
    0x42: "a BigInt", 0x62: "bundled strings (the bytes after it read otherwise)",
    0x65: "an Error built from the value after it", 0x69: "a structured-clone object",
    0x70: "a structured-clone reference", 0x72: "a record definition (the values after it, "
    "and later small integers, read as records)", 0x73: "a Set built from the value after it",
    0x74: "a typed array", 0x78: "a RegExp built from the value after it", 0xFF: "a Date",
}  # fmt: skip


def _extension(data: bytes, at: int, what: str) -> None:
    """Refuse the extension whose type byte is at ``at`` unless it is ``undefined`` (0):
    msgpack-python would give its bytes where RisuAI's reader reads a value of its own,
    or other bytes altogether (a record, a Set...), or refuses it."""
    if at >= len(data) or data[at] == 0:
        return  # (a type byte past the end: the walk's truncation refusal names it)
    kind = data[at]
    seen = MSGPACKR_EXTENSIONS.get(kind)
    reads = f"reads it as {seen}" if seen else "refuses it (a type it does not know)"
    raise FormatError(Code.RISUP_EXTENSION,
                      f"{what} holds msgpack extension type {kind} (0x{kind:02x}) at byte "
                      f"{at}: RisuAI's reader (msgpackr) {reads}; refused")


def _head(b: int, p: int, k: int) -> int:
    """Where the container whose type byte ``b`` was read lies, ``p`` its values' start
    (a fixmap/fixarray: one byte before; a map/array 16/32: its type byte and ``k``-byte
    count before)."""
    return p - 1 if b <= 0x9F else p - 1 - k


def msgpack_shape(data: bytes, what: str, max_items: int = MAX_MSGPACK_ITEMS) -> None:
    """Walk one msgpack value without building it: bounded count, depth and lengths.

    Linear in the values walked, stops at ``max_items``; every declared length is checked
    against the bytes left (no container asks for more slots than the data could fill).
    Raises ``too-large``, ``json-too-deep``, ``risup-not-msgpack``, ``risup-extension``."""
    n = len(data)
    p = items = k = 0  # k: the last length field's width (_head reads it for a typed one)
    stack: list[int] = []  # values still expected by each open container
    expected = 1
    fix_count, typed_of = _FIX_COUNT, _TYPED.get  # locals: not looked up per value
    while expected:
        if p >= n:
            raise _not_msgpack(what, f"is truncated (at byte {p})")
        items += 1
        if items > max_items:
            raise FormatError(Code.TOO_LARGE, f"{what} holds more than {max_items} msgpack "
                                              f"values (the next at byte {p})")
        b = data[p]
        p += 1
        expected -= 1
        count = -1
        if b <= 0x7F or b >= 0xE0:  # fixint
            pass
        elif b <= 0x9F:  # fixmap, fixarray
            count = fix_count[b]
        elif b <= 0xBF:  # fixstr
            p += b & 0x1F
        else:
            typed = typed_of(b)
            if typed is None:
                raise _not_msgpack(what, f"is not valid msgpack (byte 0x{b:02x} at {p - 1})")
            skip, k, after, per = typed
            if b in _EXT_TAGS:  # (its type byte follows the length field, if any)
                _extension(data, p + k, what)
            if k:  # a length field, then the payload or the container's values
                size = int.from_bytes(data[p : p + k], "big")
                p += k
                if per:
                    count = size * per
                else:
                    p += size + after
            else:
                p += skip
        if p > n:
            raise _not_msgpack(what, f"is truncated (a length at {p})")
        if count > 0:
            if count > n - p:
                raise _not_msgpack(what, f"declares a container of {count} values at byte "
                                         f"{_head(b, p, k)} with {n - p} bytes left")
            stack.append(expected)
            if len(stack) > MAX_DEPTH:
                raise FormatError(Code.JSON_TOO_DEEP, f"{what} nests deeper than {MAX_DEPTH} "
                                                      f"levels (at byte {_head(b, p, k)})")
            expected = count
        while not expected and stack:
            expected = stack.pop()
    if p != n:
        raise _not_msgpack(what, f"is not valid msgpack: {n - p} extra bytes at {p}")


def _unpack(data: bytes, what: str) -> Any:
    """Decode msgpack after :func:`msgpack_shape` bounded it (msgpack's own limits too)."""
    import msgpack  # here, not at import: a preset is rare (start-up of every command)

    msgpack_shape(data, what)
    n = len(data)
    try:
        return msgpack.unpackb(
            data,
            raw=False,
            strict_map_key=False,
            max_str_len=n,
            max_bin_len=n,
            max_array_len=min(n, MAX_MSGPACK_ITEMS),
            max_map_len=min(n, MAX_MSGPACK_ITEMS),
            max_ext_len=n,
            object_pairs_hook=_js_object,
            ext_hook=_ext_hook,
        )
    except TypeError:  # (the one TypeError: a map or an array as a map's key)
        raise FormatError(Code.RISUP_NOT_MSGPACK, f"{what} has a map whose key is a map or an "
                          f"array (at byte {_container_key_at(data)}; a key is text, a "
                          "number, a boolean or nil)") from None
    except Exception as exc:  # msgpack raises many types (ExtraData, FormatError, ValueError)
        raise FormatError(Code.RISUP_NOT_MSGPACK, f"{what} is not valid msgpack: {exc}") from None


def _is_container(b: int) -> bool:
    return 0x80 <= b <= 0x9F or 0xDC <= b <= 0xDF


def _container_key_at(data: bytes) -> int:
    """The byte of the first map key that is a map or an array (-1: none), found by
    walking the value :func:`msgpack_shape` already bounded (an error path only)."""
    import msgpack

    un = msgpack.Unpacker(raw=False, strict_map_key=False, max_buffer_size=len(data) or 1)
    un.feed(data)
    todo = [1]  # values left in each open container; a map's count doubled, keys first
    keys = [False]  # whether each open container is a map
    while todo:
        if not todo[-1]:
            todo.pop()
            keys.pop()
            continue
        at: int = un.tell()
        b = data[at]
        is_key = keys[-1] and todo[-1] % 2 == 0
        todo[-1] -= 1
        if is_key and _is_container(b):
            return at
        if 0x80 <= b <= 0x8F or b in (0xDE, 0xDF):
            todo.append(2 * un.read_map_header())
            keys.append(True)
        elif _is_container(b):
            todo.append(un.read_array_header())
            keys.append(False)
        else:
            un.skip()
    return -1


class _Undefined:
    """JavaScript's ``undefined``: msgpack extension type 0, as msgpackr reads (and writes)
    it."""

    __slots__ = ()

    def __repr__(self) -> str:  # (String(undefined), the name of a key that is undefined)
        return "undefined"


UNDEFINED = _Undefined()


def _ext_hook(code: int, data: bytes) -> Any:
    """msgpack extension type 0 is ``undefined`` (:func:`msgpack_shape` refused the rest)."""
    if code != 0:
        raise ValueError(f"msgpack extension type {code}")
    return UNDEFINED


def _type_name(value: Any) -> str:
    return "undefined" if value is UNDEFINED else json_type_name(value, "a map")


def _js_object(pairs: list[tuple[Any, Any]]) -> dict[str, Any]:
    """A decoded map as RisuAI's object holds it: each key as JavaScript names a property
    (:func:`~risutools.jsontypes.js_key`; ``__proto__`` is ``__proto_``, as msgpackr names
    it), the last of two keys of one name kept (in a Python dict ``True`` and ``1.0`` would
    be one key before they were named), and a key whose value is ``undefined`` left out, as
    ``JSON.stringify`` leaves it out (``preset ?? pres`` passes over it, too)."""
    if any(isinstance(k, (list, tuple, dict)) for k, _ in pairs):
        raise TypeError("a map or an array as a key")  # (refused: :func:`_unpack`)
    out = {}
    for k, v in pairs:
        name = js_key(k)
        out["__proto_" if name == "__proto__" else name] = v
    if any(v is UNDEFINED for v in out.values()):
        return {k: v for k, v in out.items() if v is not UNDEFINED}
    return out


def decode_preset(blob: bytes, *, rpacked: bool) -> dict[str, Any]:
    """Return the decrypted preset object from the bytes of a .risup(preset) file."""
    return decode_preset_owned([blob], rpacked=rpacked)


def decode_preset_owned(box: list[bytes], *, rpacked: bool) -> dict[str, Any]:
    """:func:`decode_preset` taking the bytes out of ``box``: the caller keeps no reference,
    so every stage's input is freed as soon as the next stage exists (peak: about 3x
    the inflated size instead of 5x)."""
    return read_preset(box, rpacked=rpacked)[0]


def read_preset(box: list[bytes], *, rpacked: bool) -> tuple[dict[str, Any], list[Anomaly]]:
    """:func:`decode_preset_owned`, and the warnings of the reading: a number that is no
    JSON value (NaN, an infinity: msgpack has them, JSON and every output have not) is
    read as ``null``, as ``JSON.stringify`` writes it (``non-finite-number``).  Every
    refusal names where: the compressed stream, the envelope (``envelope /type``, ...) or
    the decrypted ``preset``."""
    blob = box.pop()
    if len(blob) > MAX_FILE_BYTES:
        raise FormatError(Code.TOO_LARGE, f"preset file over {MAX_FILE_BYTES} bytes")
    if rpacked:
        blob = rpack.decode(blob)
    notes: list[Anomaly] = []  # (a checksum RisuAI's reader does not compare)
    with _at("offset 0 (compressed stream)"):
        inflated = inflate(blob, notes=notes)
    del blob  # each stage's input is dropped as soon as the next exists (memory bound)
    with _at("envelope"):
        envelope = _unpack(inflated, "preset envelope")
    del inflated
    field, sealed = _sealed(envelope)
    del envelope
    # cryptography is loaded for a .risup only, not at every start-up (~10 ms)
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    try:
        plain = AESGCM(KEY).decrypt(IV, bytes(sealed), None)
        del sealed
    except InvalidTag:
        raise FormatError(
            Code.RISUP_DECRYPT_FAILED,
            "AES-GCM authentication failed (corrupted, or encrypted with another key)",
            where=f"envelope /{field}",
        ) from None
    with _at("preset"):
        preset = _unpack(plain, "decrypted preset")
        del plain
        if not isinstance(preset, dict):
            raise FormatError(Code.RISUP_BAD_STRUCTURE,
                              f"decrypted preset is {_type_name(preset)}, not a map")
        nonfinite: list[int] = []
        out = _jsonable(preset, 0, nonfinite)
    assert isinstance(out, dict)
    return out, notes + _nonfinite_notes(preset, len(nonfinite))


@contextmanager
def _at(where: str) -> Iterator[None]:
    """Name ``where`` on a refusal raised inside that names no place itself."""
    try:
        yield
    except FormatError as exc:
        exc.where = exc.where or where
        raise


def _shown(value: Any) -> str:
    """A value of a preset envelope in a message: a scalar as JSON writes it (cut at 60
    characters), anything else by its type."""
    if value is None or isinstance(value, (str, int, float)):
        try:
            return json.dumps(value, ensure_ascii=False, allow_nan=False)[:60]
        except ValueError:  # (NaN, an infinity)
            return str(value)
    if isinstance(value, (bytes, bytearray)):
        return f"a binary of {len(value)} bytes"
    return _type_name(value)


def _sealed(envelope: Any) -> tuple[str, bytes]:
    """The envelope's field holding the encrypted preset and its bytes, once the envelope
    is checked as RisuAI checks it (``presetVersion === 0 || === 2``, ``type ===
    'preset'``, ``preset ?? pres``)."""
    if not isinstance(envelope, dict):
        raise FormatError(Code.RISUP_BAD_STRUCTURE,
                          f"preset envelope is {_type_name(envelope)}, not a map",
                          where="envelope")
    if envelope.get("type") != "preset":
        raise FormatError(
            Code.WRONG_TYPE,
            f'preset envelope "type" is {_shown(envelope.get("type"))}, expected "preset"',
            where="envelope /type")
    version = envelope.get("presetVersion")
    if isinstance(version, bool) or version not in (0, 2):  # as RisuAI: === 0 || === 2
        raise FormatError(
            Code.BAD_VERSION,
            f"unsupported presetVersion {_shown(version)} (0 and 2 are known)",
            where="envelope /presetVersion")
    field = "preset" if envelope.get("preset") is not None else "pres"
    sealed = envelope.get(field)  # RisuAI: decoded.preset ?? decoded.pres
    if not isinstance(sealed, (bytes, bytearray)):
        raise FormatError(
            Code.RISUP_BAD_STRUCTURE,
            f'preset envelope has no binary "preset" (or "pres") field (found {_shown(sealed)})',
            where=f"envelope /{field}")
    if len(sealed) < 16:
        raise FormatError(Code.RISUP_DECRYPT_FAILED, "encrypted preset is shorter than its tag",
                          where=f"envelope /{field}")
    return field, bytes(sealed)


def _nonfinite_notes(preset: dict[Any, Any], count: int) -> list[Anomaly]:
    if not count:
        return []
    where = _nonfinite_pointers(preset)
    return [Anomaly("non-finite-number", where[0] if where else "",
                    f"{count} number(s) that JSON cannot hold (NaN, an infinity) read as "
                    f"null, as JSON.stringify writes them (at {', '.join(where)})")]


#: pointers a ``non-finite-number`` warning names at most
_NONFINITE_SHOWN = 3


def _jsonable(value: Any, depth: int, nonfinite: list[int]) -> Any:
    """Make a msgpack value a JSON value: str keys, bytes as base64 objects, bounded depth,
    NaN and the infinities as None (counted in ``nonfinite``)."""
    if depth > MAX_DEPTH:
        raise FormatError(Code.JSON_TOO_DEEP, f"preset nests deeper than {MAX_DEPTH} levels")
    if isinstance(value, dict):
        # (each key as RisuAI's object names it: ``1.0`` and ``"1"`` are one key, the last
        # kept; ``True`` is ``"true"``: jsontypes.js_key)
        return {js_key(k): _jsonable(v, depth + 1, nonfinite) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v, depth + 1, nonfinite) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return {"$base64": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        nonfinite.append(1)
        return None
    if value is None or isinstance(value, (str, int, bool)):
        return value
    if value is UNDEFINED:  # (an array's element: JSON.stringify writes null)
        return None
    raise FormatError(Code.RISUP_EXTENSION,  # (msgpack_shape refuses every extension first)
                      f"preset holds a {type(value).__name__}, which JSON has no value for")


def _nonfinite_pointers(raw: Any) -> list[str]:
    """JSON pointers of the first non-finite floats of ``raw`` (the preset as msgpack gave
    it; :func:`_jsonable` made them None): a second walk, only for a preset that has one,
    depth first in document order, one open iterator a level (no list of every child)."""
    found: list[str] = []
    # (each container's place: a pointer is written for a float found, not a container)
    stack: list[tuple[Place, Any]] = [(None, iter([("", raw)]))]
    while stack and len(found) < _NONFINITE_SHOWN:
        children = stack[-1][1]
        step = next(children, None)
        if step is None:
            stack.pop()
            continue
        key, value = step
        if isinstance(value, float):
            if not math.isfinite(value):
                found.append(pointer_at(_child(stack, key), MAX_POINTER_SHOWN) or "/")
        elif isinstance(value, dict):
            stack.append((_child(stack, key), iter(value.items())))
        elif isinstance(value, (list, tuple)):
            stack.append((_child(stack, key), enumerate(value)))
    return found


def _child(stack: list[tuple[Place, Any]], key: Any) -> Place:
    """The place of ``key`` in the container open at the top of ``stack`` (the root's
    pseudo-container: none)."""
    return (stack[-1][0], str(key)) if len(stack) > 1 else None


def gzip_member(data: bytes, level: int = 9) -> bytes:
    """``data`` as one gzip member with a fixed header: no modification time, and the
    operating system "unknown" (255), so that every Python writes the same bytes (3.11 and
    3.12 write 3, Unix, where 3.10 and 3.13 write 255; the deflate stream is zlib's)."""
    import gzip

    blob = gzip.compress(data, compresslevel=level, mtime=0)
    return blob[:9] + b"\xff" + blob[10:]


def encode_preset(preset: dict[str, Any], *, rpacked: bool = True, version: int = 2) -> bytes:
    """Build a .risup (``rpacked``) or .risupreset file; gzip with a fixed header
    (:func:`gzip_member`: the same bytes under every Python)."""
    import msgpack
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    sealed = AESGCM(KEY).encrypt(IV, msgpack.packb(preset, use_bin_type=True), None)
    envelope = msgpack.packb(
        {"presetVersion": version, "type": "preset", "preset": sealed}, use_bin_type=True
    )
    blob = gzip_member(envelope)
    return rpack.encode(blob) if rpacked else blob
