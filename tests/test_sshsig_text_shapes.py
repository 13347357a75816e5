"""The fast path reads the armor and the allowed_signers file as ssh-keygen reads them:
lines end at ``\\n`` only, fields part at spaces and tabs only.

It read both with Python's ``str.splitlines`` and ``str.split``, which also end a line at
U+2028, U+2029, U+0085, \\x0b, \\x0c, \\x1c-\\x1e and a lone \\r, and part fields at those
and at \\x1f, U+00A0, U+3000 ...  So it said "verified" where ssh-keygen says no:

- an allowed_signers line ``lee <key> <U+2028>kim <key>`` (one line for ssh-keygen, and
  for most viewers of a diff) allowed ``kim`` for the fast path alone: a signer hidden in
  another's line;
- ``kim<U+00A0>ssh-ed25519 <key>`` and ``kim ssh-ed25519<U+3000><key>`` were read as three
  fields;
- an armor with such a character around its lines, or a space before it, or CRLF lines.

Each shape is built from every such character; the fast path must decline each (ask
ssh-keygen), and where ssh-keygen is installed it is asked too: what the fast path accepts,
it accepts (CI requires it: ``RISUTOOLS_REQUIRE_SSH``)."""

from __future__ import annotations

import pytest
from test_sshsig import HAVE_SSH, KIM, LEE, MESSAGE, NS, _line, _sign, _ssh_verify

from risutools.catalog.approvals import verify_with
from risutools.catalog.sshsig import fast_verified
from risutools.contract.records import signed_bytes
from risutools.settings.catalog import CatalogSettings

#: every character Python takes for a line end or a space that ssh-keygen does not
ODD = ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\xa0", "\u1680", "\u2000",
       "\u2007", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\r"]
GOOD = _sign(KIM)
BODY = GOOD.splitlines()[1:-1]
BEGIN, END = GOOD.splitlines()[0], GOOD.splitlines()[-1]


def _name(c: str) -> str:
    return f"U+{ord(c):04X}"


def _armors(c: str) -> list[tuple[str, str]]:
    return [
        ("inside the base64", f"{BEGIN}\n{BODY[0][:10]}{c}{BODY[0][10:]}\n"
         + "\n".join(BODY[1:]) + f"\n{END}\n"),
        ("for the newlines", BEGIN + c + c.join(BODY) + c + END + c),
        ("before the armor", c + GOOD),
        ("after the first line", f"{BEGIN}{c}\n" + "\n".join(BODY) + f"\n{END}\n"),
        ("before the last line", f"{BEGIN}\n" + "\n".join(BODY) + f"\n{c}{END}\n"),
    ]


def _signers(c: str) -> list[tuple[str, str]]:
    kim, lee = _line("kim", KIM), _line("lee", LEE)
    return [
        ("a signer hidden in another's line", lee + c + kim),
        ("between the principal and the key", kim.replace(" ", c, 1)),
        ("between the key type and its base64", kim.replace(" ssh-ed25519 ",
                                                            f" ssh-ed25519{c}")),
    ]


CASES = [(f"armor {where}, {_name(c)}", armored, _line("kim", KIM))
         for c in ODD for where, armored in _armors(c)]
CASES += [(f"allowed_signers {where}, {_name(c)}", GOOD, signers)
          for c in ODD for where, signers in _signers(c)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0])
def test_the_fast_path_declines_what_ssh_keygen_reads_otherwise(case: tuple[str, str, str],
                                                                 tmp_path) -> None:
    _, armored, signers = case
    assert not fast_verified(armored, signers, "kim", NS, MESSAGE)
    if HAVE_SSH and "hidden" in case[0]:  # (ssh-keygen: one line, lee's; kim not allowed)
        assert not _ssh_verify(tmp_path, armored, signers, "kim")


@pytest.mark.parametrize("signers", [
    _line("kim", KIM),
    _line("kim", KIM).replace(" ", "\t"),  # (tabs part fields for ssh-keygen too)
    "  " + _line("kim", KIM) + "  ",
    _line("kim", KIM) + "\r",  # (a CRLF file: ssh-keygen drops the \r)
    "# 서명자 목록\n\n" + _line("lee", LEE) + " 이영희\n" + _line("kim", KIM) + " 김민수",
    _line("kim", KIM, 'namespaces="git,' + NS + '"'),
], ids=["plain", "tabs", "blanks around", "crlf", "korean comments", "namespaces"])
def test_files_ssh_keygen_reads_the_same_stay_fast(signers: str, tmp_path) -> None:
    """What ssh-keygen reads as the fast path does is still answered in process
    (comments in any language among them: a catalog written in Korean keeps its speed)."""
    assert fast_verified(GOOD, signers, "kim", NS, MESSAGE)
    if HAVE_SSH:
        assert _ssh_verify(tmp_path, GOOD, signers, "kim")


@pytest.mark.parametrize("armored", [GOOD, GOOD.rstrip("\n"),
                                     f"{BEGIN}\n{''.join(BODY)}\n{END}\n"],
                         ids=["as signed", "no final newline", "one line of base64"])
def test_armors_ssh_keygen_reads_the_same_stay_fast(armored: str, tmp_path) -> None:
    assert fast_verified(armored, _line("kim", KIM), "kim", NS, MESSAGE)
    if HAVE_SSH:
        assert _ssh_verify(tmp_path, armored, _line("kim", KIM), "kim")


def test_base64_written_otherwise_is_left_to_ssh_keygen() -> None:
    """Base64 that decodes to the blob but is not the blob's own spelling (padding inside,
    bits past the end set): declined, whatever ssh-keygen makes of it."""
    text = "".join(BODY)
    assert text.endswith("=")
    padded_inside = f"{BEGIN}\n{text[:8]}====\n{text[8:]}\n{END}\n"
    extra = f"{BEGIN}\n{text}AAAA\n{END}\n"
    for armored in (padded_inside, extra):
        assert not fast_verified(armored, _line("kim", KIM), "kim", NS, MESSAGE)


@pytest.mark.parametrize("c", ["\u2028", "\x1c", "\x85", "\r"], ids=_name)
def test_a_hidden_signer_does_not_approve(tmp_path, c: str) -> None:
    """Through the approval gates' own check (``verify_with``): a record kim signed, and an
    allowed_signers file whose one line (for ssh-keygen) is lee's, kim's hidden in it.  It
    was ``verified`` in process; ssh-keygen, now asked, does not allow kim."""
    record = {"action": "approve", "component_id": "module.risu.1.x", "reviewer": "kim",
              "base_sha256": "sha256:" + "0" * 64}
    record["signature"] = _sign(KIM, message=signed_bytes(record))
    signers = tmp_path / "allowed_signers"
    signers.write_text(_line("lee", LEE) + c + _line("kim", KIM) + "\n", "utf-8")
    got = verify_with(CatalogSettings(allowed_signers=signers), record)
    assert got.status != "verified"
    if HAVE_SSH:
        assert got.status == "not_allowed", got
    signers.write_text(_line("lee", LEE) + "\n" + _line("kim", KIM) + "\n", "utf-8")
    assert verify_with(CatalogSettings(allowed_signers=signers), record).status == "verified"
