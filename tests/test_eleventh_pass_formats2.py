"""The eleventh pass over the readers, second round (fix 65, helper 8): cards read as
RisuAI's ``CharXReader`` (fflate's streaming ``Unzip``) and ``importCharX`` read them.

- ``card.json`` is decoded with ``new TextDecoder().decode`` (U+FFFD for a sequence that is
  not UTF-8) and the card loads: risutools refused it (``not-utf8``).
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from harness import run_cli

from risutools.formats import read_path
from risutools.formats.risum import write_risum

MODULE = {"name": "Two Module", "id": "two-1", "lorebook": [], "regex": [], "trigger": []}


def _zip(members: list[tuple[str, bytes]], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as z:
        for name, data in members:
            z.writestr(name, data)
    return buf.getvalue()


# -- card.json that is not UTF-8: TextDecoder replaces, RisuAI loads the card --------------

def _card_text(description: bytes) -> bytes:
    return (b'{"spec": "chara_card_v3", "spec_version": "3.0", "data": {"name": "Bytes", '
            b'"description": "' + description + b' {{getvar::mood}}", "first_mes": "hi", '
            b'"extensions": {}}}')


def test_a_card_json_that_is_not_utf8_is_read_as_textdecoder_reads_it(tmp_path: Path) -> None:
    raw = _card_text(b"caf\xe9 \xe3\x81 ok \xed\xa0\x80")  # latin-1, a cut sequence, a surrogate
    p = tmp_path / "latin.charx"
    p.write_bytes(_zip([("card.json", raw), ("module.risum", write_risum(MODULE, []))]))
    card, module = read_path(p)
    # one U+FFFD for each maximal bad part (the WHATWG decoder's rule): \xe9, \xe3\x81, and
    # each of the surrogate's three bytes
    fields = card.data["cardFields"]
    assert fields["description"] == "caf\ufffd \ufffd ok \ufffd\ufffd\ufffd {{getvar::mood}}"
    assert module.data["name"] == "Two Module"
    notes = [(a.code, a.where) for a in module.anomalies]
    assert notes == [("card-not-utf8", "card.json")]
    first = raw.index(b"\xe9")
    assert f"byte 0xe9 at byte {first}" in module.anomalies[0].message
    r = run_cli("inspect", str(p))
    assert r.returncode == 0, r.stderr
    assert "card-not-utf8" in r.stdout + r.stderr


def test_a_card_alone_that_is_not_utf8_carries_the_warning(tmp_path: Path) -> None:
    p = tmp_path / "alone.charx"
    p.write_bytes(_zip([("card.json", b"\xef\xbb\xbf" + _card_text(b"\xff"))]))  # BOM kept out
    (card,) = read_path(p)
    assert card.data["cardFields"]["description"].startswith("\ufffd {{getvar")
    (note,) = card.anomalies
    assert note.code == "card-not-utf8" and "byte 0xff at byte " in note.message


def test_a_utf8_card_has_no_warning(tmp_path: Path) -> None:
    p = tmp_path / "ok.charx"
    p.write_bytes(_zip([("card.json", _card_text("카드".encode()))]))
    (card,) = read_path(p)
    assert card.data["cardFields"]["description"].startswith("카드") and card.anomalies == []
