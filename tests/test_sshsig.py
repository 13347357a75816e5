"""The in-process fast path of approval signatures (``catalog/sshsig.py``): it says
"verified" only where ``ssh-keygen -Y verify`` says so too, and leaves every other case to
ssh-keygen.  Signatures are made here with ``cryptography`` (every field of the SSHSIG blob
under the test's control) and, where ssh-keygen is installed, each answer is checked
against its own (CI requires it: ``RISUTOOLS_REQUIRE_SSH``)."""

from __future__ import annotations

import base64
import hashlib
import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from risutools.catalog.sshsig import allowed, fast_verified, signing_key

NS = "risutools-approval"
MESSAGE = b'{"action":"approve","reviewer":"kim"}'
HAVE_SSH = shutil.which("ssh-keygen") is not None
needs_ssh = pytest.mark.skipif(
    not HAVE_SSH and not os.environ.get("RISUTOOLS_REQUIRE_SSH"),
    reason="ssh-keygen (openssh-client) is not installed")


def _s(value: bytes) -> bytes:
    return len(value).to_bytes(4, "big") + value


def _pub_blob(key: ed25519.Ed25519PrivateKey) -> bytes:
    raw = key.public_key().public_bytes(serialization.Encoding.Raw,
                                        serialization.PublicFormat.Raw)
    return _s(b"ssh-ed25519") + _s(raw)


def _line(principals: str, key: ed25519.Ed25519PrivateKey, options: str = "") -> str:
    b64 = base64.b64encode(_pub_blob(key)).decode()
    return f"{principals} {options + ' ' if options else ''}ssh-ed25519 {b64} a comment"


def _armor(blob: bytes) -> str:
    text = base64.b64encode(blob).decode()
    body = "\n".join(text[i:i + 70] for i in range(0, len(text), 70))
    return f"-----BEGIN SSH SIGNATURE-----\n{body}\n-----END SSH SIGNATURE-----\n"


def _sign(key: ed25519.Ed25519PrivateKey, message: bytes = MESSAGE, ns: str = NS,
          hash_name: bytes = b"sha512", reserved: bytes = b"", signed_ns: str | None = None,
          sig_type: bytes = b"ssh-ed25519", version: int = 1, tail: bytes = b"") -> str:
    h = hashlib.new(hash_name.decode(), message).digest()
    signed = (b"SSHSIG" + _s((signed_ns or ns).encode()) + _s(b"") + _s(hash_name) + _s(h))
    sig = key.sign(signed)
    blob = (b"SSHSIG" + version.to_bytes(4, "big") + _s(_pub_blob(key)) + _s(ns.encode())
            + _s(reserved) + _s(hash_name) + _s(_s(sig_type) + _s(sig)) + tail)
    return _armor(blob)


def _ssh_verify(tmp: Path, armored: str, signers: str, reviewer: str,
                message: bytes = MESSAGE, ns: str = NS) -> bool:
    (tmp / "allowed").write_text(signers + "\n", "utf-8")
    (tmp / "m.sig").write_text(armored, "ascii")
    proc = subprocess.run(["ssh-keygen", "-Y", "verify", "-f", str(tmp / "allowed"), "-I",
                           reviewer, "-n", ns, "-s", str(tmp / "m.sig")], input=message,
                          capture_output=True, check=False, timeout=30)
    return proc.returncode == 0


KIM = ed25519.Ed25519PrivateKey.generate()
LEE = ed25519.Ed25519PrivateKey.generate()


def _cases() -> list[tuple[str, str, str, str, bytes, bool]]:
    """(id, armored signature, allowed_signers text, reviewer, message, fast answer)."""
    good = _sign(KIM)
    plain = _line("kim", KIM)
    return [
        ("plain", good, plain, "kim", MESSAGE, True),
        ("sha256", _sign(KIM, hash_name=b"sha256"), plain, "kim", MESSAGE, True),
        ("several principals", good, _line("lee,kim", KIM), "kim", MESSAGE, True),
        ("namespaces option", good, _line("kim", KIM, f'namespaces="git,{NS}"'), "kim",
         MESSAGE, True),
        ("among other lines", good, "# team\n\n" + _line("lee", LEE) + "\n" + plain, "kim",
         MESSAGE, True),
        ("other message", good, plain, "kim", MESSAGE + b" ", False),
        ("other namespace asked", _sign(KIM, ns="git"), plain, "kim", MESSAGE, False),
        ("signed for another namespace", _sign(KIM, signed_ns="git"), plain, "kim", MESSAGE,
         False),
        ("other reviewer", good, plain, "lee", MESSAGE, False),
        ("other key", _sign(LEE), plain, "kim", MESSAGE, False),
        ("namespace not listed", good, _line("kim", KIM, 'namespaces="git"'), "kim", MESSAGE,
         False),
        ("reserved field", _sign(KIM, reserved=b"x"), plain, "kim", MESSAGE, False),
        ("version 2", _sign(KIM, version=2), plain, "kim", MESSAGE, False),
        ("trailing bytes", _sign(KIM, tail=b"\0"), plain, "kim", MESSAGE, False),
        ("unknown hash", _sign(KIM, hash_name=b"sha384"), plain, "kim", MESSAGE, False),
        # what ssh-keygen may accept, left to it
        ("pattern principal", good, _line("k*", KIM), "kim", MESSAGE, False),
        ("negated principal", good, _line("!lee,kim", KIM), "kim", MESSAGE, False),
        ("namespace pattern", good, _line("kim", KIM, 'namespaces="risutools-*"'), "kim",
         MESSAGE, False),
        ("valid-before", good, _line("kim", KIM, 'valid-before="29991231"'), "kim", MESSAGE,
         False),
        ("cert-authority elsewhere", good,
         _line("lee", LEE, "cert-authority") + "\n" + plain, "kim", MESSAGE, False),
        ("a line not read plainly before", good, "kim ssh-ed25519 !!!\n" + plain, "kim",
         MESSAGE, False),
    ]


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c[0])
def test_the_fast_path_says_verified_only_where_it_is_sure(case: tuple, tmp_path: Path
                                                           ) -> None:
    _, armored, signers, reviewer, message, want = case
    assert fast_verified(armored, signers, reviewer, NS, message) is want
    if want and HAVE_SSH:  # (what it accepts, ssh-keygen accepts)
        assert _ssh_verify(tmp_path, armored, signers, reviewer, message)


@needs_ssh
def test_ssh_keygen_agrees_on_every_case(tmp_path: Path) -> None:
    """The cases ssh-keygen refuses, the fast path refuses; those it leaves to ssh-keygen
    and ssh-keygen accepts are the patterns, options and lines it does not read."""
    for name, armored, signers, reviewer, message, want in _cases():
        ssh = _ssh_verify(tmp_path, armored, signers, reviewer, message)
        assert ssh or not want, name
        if name in ("pattern principal", "namespace pattern", "valid-before",
                    "cert-authority elsewhere", "several principals", "sha256"):
            assert ssh, name  # (a case the fast path leaves to it, or takes, ssh accepts)


def test_other_key_types_are_left_to_ssh_keygen() -> None:
    ec_key = ec.generate_private_key(ec.SECP256R1())
    pub = ec_key.public_key().public_bytes(serialization.Encoding.OpenSSH,
                                           serialization.PublicFormat.OpenSSH).decode()
    signers = f"kim {pub}"
    assert not allowed(signers, "kim", NS, _pub_blob(KIM))
    assert not fast_verified(_sign(KIM), signers, "kim", NS, MESSAGE)


@pytest.mark.parametrize("armored", [
    "", "not armored", "-----BEGIN SSH SIGNATURE-----\n-----END SSH SIGNATURE-----",
    "-----BEGIN SSH SIGNATURE-----\n!!!!\n-----END SSH SIGNATURE-----",
    "-----BEGIN SSH SIGNATURE-----\nU1NIU0lH\n-----END SSH SIGNATURE-----",
    _sign(KIM)[:-40] + "\n-----END SSH SIGNATURE-----",
])
def test_broken_armor_is_left_to_ssh_keygen(armored: str) -> None:
    assert signing_key(armored, NS, MESSAGE) is None
    assert not fast_verified(armored, _line("kim", KIM), "kim", NS, MESSAGE)


def test_no_flipped_byte_is_verified() -> None:
    """Any one byte of the blob changed: never verified by the fast path."""
    good = _sign(KIM)
    body = "".join(good.strip().splitlines()[1:-1])
    blob = bytearray(base64.b64decode(body))
    rng = random.Random(23)
    for _ in range(300):
        bad = bytearray(blob)
        i = rng.randrange(len(bad))
        bad[i] ^= 1 << rng.randrange(8)
        assert not fast_verified(_armor(bytes(bad)), _line("kim", KIM), "kim", NS, MESSAGE), i
