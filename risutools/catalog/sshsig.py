"""An in-process fast path for ``ssh-keygen -Y verify`` (approval signatures): it answers
"verified" for the common case only, and ``None`` ("ask ssh-keygen") for everything else.

``ssh-keygen`` costs a process (5-10 ms) a record: a review of a mature catalog, a few
thousand signed records, spent most of its time starting it.  The fast path accepts a
signature when every one of these holds, a strict subset of what ``ssh-keygen -Y verify
-f ALLOWED -I REVIEWER -n NAMESPACE -s SIG`` accepts (OpenSSH's ``sshsig.c``):

* the armored text is one ``SSH SIGNATURE`` block written exactly as ``ssh-keygen -Y
  sign`` writes it (:data:`_ARMOR`: lines ended by ``\\n``, nothing before, no other
  character; the base64 the blob's own spelling), and its blob is
  ``"SSHSIG"``, version 1, a plain ``ssh-ed25519`` public key (no certificate), the
  namespace asked for, an empty reserved field, hash ``sha256`` or ``sha512`` and an
  ``ssh-ed25519`` signature of 64 bytes, with nothing after;
* the Ed25519 signature (``cryptography``) verifies over what OpenSSH signs: ``"SSHSIG"``,
  the namespace, an empty reserved string, the hash's name and the message's hash;
* a line of the allowed_signers file names the reviewer literally among its principals
  (no pattern, no negation in that field), has no option but ``namespaces="..."`` listing
  the namespace literally (no pattern there either), and holds that very key; and every
  line of the file is written that plainly (principals, at most that option, a key type,
  its base64, a comment), so no line ``ssh-keygen`` reads otherwise stands before it;
  its lines are ``ssh-keygen``'s (ended by ``\\n`` alone; a final ``\\r`` dropped) and their
  fields too (parted by spaces and tabs alone): Python's ``splitlines`` and ``split`` also
  break at U+2028, \\x1c, \\x85 ..., which hid a signer in another's line.

Anything else (another key type, a certificate, ``cert-authority``, ``valid-after``, a
pattern, a signature that does not verify) goes to ``ssh-keygen``, which gives its own
answer (``verified``, ``not_allowed`` or ``bad``): the fast path never says "bad" or "not
allowed", so it cannot turn away a record ``ssh-keygen`` accepts, and it accepts none that
``ssh-keygen`` would refuse.  Bounds: the armored text and the file are read whole (a record
is at most 1 MiB, the allowed_signers file is the caller's, bounded where it is read).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re

_MAGIC = b"SSHSIG"
_BEGIN = "-----BEGIN SSH SIGNATURE-----"
_END = "-----END SSH SIGNATURE-----"
_HASHES = {b"sha256": hashlib.sha256, b"sha512": hashlib.sha512}
_ED25519 = b"ssh-ed25519"
# a principal or namespace written literally: no pattern (* ?), negation (!), quote or comma
_LITERAL = re.compile(r"[^*?!\",\s]+")
_NAMESPACES = re.compile(r'namespaces="([^"\s]*)"')
# a key type's name as OpenSSH writes it (ssh-ed25519, ecdsa-sha2-nistp256, sk-...@openssh.com)
_KEY_TYPE = re.compile(r"(?:ssh|ecdsa|sk)-[A-Za-z0-9@.-]+")
#: the armor as ``ssh-keygen -Y sign`` writes it: the first line, lines of base64 each ended
#: by a newline, the last line, at most a newline after it; nothing before, no other
#: character (Python's ``splitlines`` and ``strip`` also take U+2028, \x1c, \x85, a lone \r
#: ... for line ends and spaces, which ssh-keygen refuses in an armor)
_ARMOR = re.compile(re.escape(_BEGIN) + r"\n((?:[A-Za-z0-9+/=]+\n)+)" + re.escape(_END) + r"\n?")
#: what separates the fields of an allowed_signers line for ssh-keygen: spaces and tabs
_FIELDS = re.compile(r"[ \t]+")


def _strings(blob: bytes, count: int) -> list[bytes] | None:
    """``count`` SSH strings (uint32 length + bytes) that make up all of ``blob``."""
    out: list[bytes] = []
    at = 0
    for _ in range(count):
        if at + 4 > len(blob):
            return None
        n = int.from_bytes(blob[at:at + 4], "big")
        at += 4
        if n > len(blob) - at:
            return None
        out.append(blob[at:at + n])
        at += n
    return out if at == len(blob) else None


def _string(value: bytes) -> bytes:
    return len(value).to_bytes(4, "big") + value


def _blob(armored: str) -> bytes | None:
    """The signature's blob when ``armored`` is written exactly as ``ssh-keygen -Y sign``
    writes it (:data:`_ARMOR`) and its base64 is the blob's own (encoded again, the same
    text: no padding inside, no bits left over); None otherwise (ask ssh-keygen)."""
    found = _ARMOR.fullmatch(armored)
    if found is None:
        return None
    text = found.group(1).replace("\n", "")
    try:
        blob = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
    return blob if base64.b64encode(blob) == text.encode("ascii") else None


def signing_key(armored: str, namespace: str, message: bytes) -> bytes | None:
    """The public key blob of a plain Ed25519 signature of ``message`` in ``namespace``
    that verifies (the first two conditions of the module docstring); None otherwise."""
    blob = _blob(armored)
    if blob is None or not blob.startswith(_MAGIC + b"\x00\x00\x00\x01"):
        return None
    parts = _strings(blob[len(_MAGIC) + 4:], 5)
    if parts is None:
        return None
    key, ns, reserved, hash_name, sig = parts
    key_parts, sig_parts = _strings(key, 2), _strings(sig, 2)
    hasher = _HASHES.get(hash_name)
    if (key_parts is None or sig_parts is None or hasher is None or reserved
            or ns != namespace.encode("utf-8") or key_parts[0] != _ED25519
            or len(key_parts[1]) != 32 or sig_parts[0] != _ED25519 or len(sig_parts[1]) != 64):
        return None
    signed = (_MAGIC + _string(ns) + _string(b"") + _string(hash_name)
              + _string(hasher(message).digest()))
    # (here, not at import: its bindings cost every command's start-up ~6 ms, and only a
    # signed record needs them)
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        Ed25519PublicKey.from_public_bytes(key_parts[1]).verify(sig_parts[1], signed)
    except (InvalidSignature, ValueError):
        return None
    return key


def _plain_line(fields: list[str]) -> tuple[list[str], list[str] | None, str, bytes] | None:
    """(principals, the namespaces option or None, key type, key blob) of a line written
    plainly: principals, at most a ``namespaces="..."`` option, a key type and its base64
    (then a comment); None for any other line."""
    if len(fields) < 3:
        return None
    names: list[str] | None = None
    rest = fields[1:]
    if not _KEY_TYPE.fullmatch(rest[0]):
        found = _NAMESPACES.fullmatch(rest[0])
        if found is None or len(rest) < 3:
            return None
        names, rest = found.group(1).split(","), rest[1:]
    if not _KEY_TYPE.fullmatch(rest[0]):
        return None
    try:
        key = base64.b64decode(rest[1], validate=True)
    except (binascii.Error, ValueError):
        return None
    return fields[0].split(","), names, rest[0], key


def allowed(signers: str, reviewer: str, namespace: str, key: bytes) -> bool:
    """Whether the allowed_signers text ``signers`` allows ``key`` (a public key blob) for
    ``reviewer`` in ``namespace`` by the third condition of the module docstring, every
    line of it written plainly (:func:`_plain_line`; a file with any other line is left to
    ssh-keygen, whose reading of it may differ).  False: ask ssh-keygen."""
    found = False
    for raw in signers.split("\n"):  # (ssh-keygen's lines: U+2028, \x1c ... end none)
        fields = _FIELDS.split(raw.removesuffix("\r").strip(" \t"))
        if fields == [""] or fields[0].startswith("#"):
            continue
        line = _plain_line(fields)
        if line is None:
            return False
        principals, names, key_type, blob = line
        found = found or (
            key_type == "ssh-ed25519" and blob == key and reviewer in principals
            and all(_LITERAL.fullmatch(p) for p in principals)
            and (names is None or (namespace in names
                                   and all(_LITERAL.fullmatch(n) for n in names))))
    return found


def fast_verified(armored: str, signers: str, reviewer: str, namespace: str,
                  message: bytes) -> bool:
    """True when the fast path can tell ``ssh-keygen -Y verify`` would answer "verified";
    False: ask it."""
    if not _LITERAL.fullmatch(reviewer):
        return False
    key = signing_key(armored, namespace, message)
    return key is not None and allowed(signers, reviewer, namespace, key)
