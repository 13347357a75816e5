"""The eleventh pass: PNG character cards (fix 65, helper 10).

RisuAI imports a character card from a PNG (``pngChunk.ts`` ``readGenerator``,
``characterCards.ts`` ``importCharacterProcess``): the ``tEXt`` chunk keyed ``ccv3`` (else
``chara``) holds the card JSON in base64, with its triggers, regex scripts and
``lowLevelAccess``.  risutools said "not a supported Risu file" and ingest passed such a card
over as "not a Risu file": a card RisuAI loads was never reviewed.  Every PNG here is built
by hand (chunks written with zlib.crc32).
"""

from __future__ import annotations

import base64
import json
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest
from harness import run_cli

from risutools.errors import FormatError
from risutools.formats import detect, png, read_path

SIG = b"\x89PNG\r\n\x1a\n"


def _chunk(ctype: bytes, data: bytes, crc: int | None = None) -> bytes:
    c = zlib.crc32(ctype + data) if crc is None else crc
    return struct.pack(">I", len(data)) + ctype + data + struct.pack(">I", c)


def _png(*extra: bytes, after_end: bytes = b"") -> bytes:
    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
    return (SIG + _chunk(b"IHDR", ihdr) + b"".join(extra)
            + _chunk(b"IDAT", zlib.compress(b"\x00\x00")) + _chunk(b"IEND", b"") + after_end)


def _text(key: bytes, value: bytes) -> bytes:
    return _chunk(b"tEXt", key + b"\x00" + value)


def _b64(obj: Any) -> bytes:
    return base64.b64encode(json.dumps(obj).encode())


TRIGGER = {"comment": "greet", "type": "start", "conditions": [],
           "effect": [{"type": "setvar", "var": "met", "value": "1", "operator": "="}]}


def _card(name: str, spec: str = "chara_card_v3", **risu: Any) -> dict[str, Any]:
    return {"spec": spec, "spec_version": "3.0" if spec.endswith("v3") else "2.0",
            "data": {"name": name, "first_mes": "hello",
                     "extensions": {"risuai": {"triggerscript": [TRIGGER], **risu}}}}


def _write(tmp_path: Path, name: str, blob: bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(blob)
    return p


def _refused(p: Path) -> FormatError:
    with pytest.raises(FormatError) as got:
        read_path(p)
    return got.value


def test_ccv3_card_is_read_and_analyzed(tmp_path: Path) -> None:
    p = _write(tmp_path, "card.png", _png(_text(b"ccv3", _b64(_card("Vee", lowLevelAccess=True)))))
    assert detect(p) == "png-card"
    [m] = read_path(p)
    assert m.component_type == "character"
    assert m.source.format == "png-card" and m.source.member == "ccv3"
    assert m.data["name"] == "Vee" and m.data["trigger"] == [TRIGGER]
    assert m.card is not None and m.card["low_level_access"] is True
    assert m.anomalies == []
    r = run_cli("analyze", p, "-f", "json")
    assert r.returncode in (0, 1) and not r.stderr  # (1: a warning finding)
    [mod] = json.loads(r.stdout)["modules"]
    assert mod["analysis"]["component_type"] == "character"
    assert mod["analysis"]["counts"]["triggers"] == 1
    assert mod["analysis"]["low_level_access"] is True
    r = run_cli("inspect", p)
    assert r.returncode == 0 and "format: png-card" in r.stdout


def test_v2_chara_card(tmp_path: Path) -> None:
    p = _write(tmp_path, "v2.png", _png(_text(b"chara", _b64(_card("Two", "chara_card_v2")))))
    [m] = read_path(p)
    assert m.source.member == "chara" and m.data["name"] == "Two"
    assert m.anomalies == []  # (RisuAI reads V2 and V3 PNG cards alike: no card-spec)


def test_ccv3_wins_over_chara_and_empty_ccv3_falls_back(tmp_path: Path) -> None:
    both = _png(_text(b"chara", _b64(_card("Old", "chara_card_v2"))),
                _text(b"ccv3", _b64(_card("New"))))
    [m] = read_path(_write(tmp_path, "both.png", both))
    assert m.data["name"] == "New" and m.source.member == "ccv3"
    empty = _png(_text(b"ccv3", b""), _text(b"chara", _b64(_card("Old", "chara_card_v2"))))
    [m] = read_path(_write(tmp_path, "empty.png", empty))
    assert m.data["name"] == "Old"


def test_key_with_a_bom_is_the_key_risuai_reads(tmp_path: Path) -> None:
    # TextDecoder drops a leading BOM: RisuAI reads this chunk as "ccv3"
    p = _write(tmp_path, "bom.png", _png(_text(b"\xef\xbb\xbfccv3", _b64(_card("Bom")))))
    assert detect(p) == "png-card"
    assert read_path(p)[0].data["name"] == "Bom"


def test_card_after_iend_is_not_read(tmp_path: Path) -> None:
    p = _write(tmp_path, "late.png", _png(after_end=_text(b"ccv3", _b64(_card("Late")))))
    assert detect(p) is None  # (RisuAI's walk stops at IEND)
    assert _refused(p).code == "png-no-card"


def test_plain_png_is_not_a_card(tmp_path: Path) -> None:
    p = _write(tmp_path, "photo.png", _png(_text(b"Comment", b"just a photo")))
    assert detect(p) is None
    err = _refused(p)
    assert err.code == "png-no-card" and "not a card: no ccv3/chara text chunk" in err.one_line()
    r = run_cli("inspect", p)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "png-no-card" in r.stderr


def test_ingest_reads_cards_and_passes_plain_images_over(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    _write(src, "photo.png", _png())
    _write(src, "card.png", _png(_text(b"ccv3", _b64(_card("Ingested")))))
    r = run_cli("ingest", src, "-o", tmp_path / "cat")
    assert r.returncode == 0, r.stderr
    docs = sorted(p.name for p in (tmp_path / "cat").glob("*.json"))
    assert len(docs) == 1 and docs[0].startswith("character.") and "ingested" in docs[0]
    doc = json.loads((tmp_path / "cat" / docs[0]).read_text())
    assert doc["provenance"]["source_refs"][0]["source_version"] == "card.png!ccv3"
    assert doc["payload"]["controller"] == "character"
    r = run_cli("validate", tmp_path / "cat")
    assert r.returncode == 0, r.stdout + r.stderr


def test_analyze_batch_reports_the_bad_file_and_goes_on(tmp_path: Path) -> None:
    bad = _write(tmp_path, "bad.png", _png(_text(b"ccv3", b"not*base64")))
    good = _write(tmp_path, "good.png", _png(_text(b"ccv3", _b64(_card("Good")))))
    r = run_cli("analyze", bad, good, "-f", "json")
    assert r.returncode != 0
    assert [e["file"] for e in json.loads(r.stdout)] == [str(good)]
    assert "bad.png" in r.stderr and "png-invalid" in r.stderr and "Traceback" not in r.stderr


def test_truncated_at_every_offset_is_one_line(tmp_path: Path) -> None:
    blob = _png(_text(b"ccv3", _b64(_card("Cut"))))
    text_at = blob.index(b"tEXt") - 4
    text_end = blob.index(b"IDAT") - 4
    # RisuAI's walk ends where fewer than 8 bytes are left: a file cut at a chunk's end
    # (before IDAT, or inside IEND) reads, as it does in RisuAI
    whole = set(range(text_end, text_end + 8)) | set(range(len(blob) - 12, len(blob)))
    for cut in range(9, len(blob)):
        p = _write(tmp_path, "cut.png", blob[:cut])
        try:
            mods = read_path(p)
        except FormatError as exc:
            assert "\n" not in exc.one_line() and exc.code in ("png-invalid", "png-no-card")
            assert cut not in whole
            if cut >= text_at + 13:  # the card key met, a chunk cut: never passed over
                assert detect(p) == "png-card" and exc.code == "png-invalid"
            continue
        assert cut in whole and mods[0].data["name"] == "Cut"


def test_lying_chunk_length(tmp_path: Path) -> None:
    value = _b64(_card("Liar"))
    lying = struct.pack(">I", 0xFFFFFFF0) + b"tEXt" + b"ccv3\x00" + value
    p = _write(tmp_path, "liar.png", SIG + lying)
    assert detect(p) == "png-card"
    err = _refused(p)
    assert err.code == "png-invalid" and "runs past the end of the file" in err.why
    assert err.where == "offset 8"


def test_huge_base64_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(png, "MAX_CARD_TEXT", 64)
    p = _write(tmp_path, "huge.png", _png(_text(b"ccv3", _b64(_card("Big")))))
    err = _refused(p)
    assert err.code == "too-large" and "64 byte bound" in err.why


def test_bad_base64_names_its_offset(tmp_path: Path) -> None:
    value = bytearray(_b64(_card("Junk")))
    value[10] = ord("!")
    blob = _png(_text(b"ccv3", bytes(value)))
    err = _refused(_write(tmp_path, "junk.png", blob))
    at = blob.index(b"ccv3\x00") + 5 + 10
    assert err.code == "png-invalid" and f"offset {at}" in err.why and "b'!'" in err.why
    for bad in (b"eyJ=eyJ9", b"eyJhI", b"a===", b" eyJ9"):
        err = _refused(_write(tmp_path, "junk.png", _png(_text(b"ccv3", bad))))
        assert err.code == "png-invalid" and "not base64" in err.why


def test_unpadded_base64_is_read(tmp_path: Path) -> None:
    value = _b64(_card("Nopad")).rstrip(b"=") + b"  "[:0]
    [m] = read_path(_write(tmp_path, "nopad.png", _png(_text(b"ccv3", value))))
    assert m.data["name"] == "Nopad"


def test_duplicate_card_chunk_is_refused(tmp_path: Path) -> None:
    blob = _png(_text(b"ccv3", _b64(_card("One"))), _text(b"ccv3", _b64(_card("Two"))))
    err = _refused(_write(tmp_path, "dup.png", blob))
    assert err.code == "png-invalid" and "keyed 'ccv3'" in err.why


def test_crc_mismatch_is_a_warning(tmp_path: Path) -> None:
    value = _b64(_card("Crc"))
    blob = _png(_chunk(b"tEXt", b"ccv3\x00" + value, crc=0x12345678))
    [m] = read_path(_write(tmp_path, "crc.png", blob))
    assert [a.code for a in m.anomalies] == ["png-crc-mismatch"]


def test_too_many_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(png, "MAX_CHUNKS", 4)
    filler = b"".join(_chunk(b"tIME", b"\x00" * 7) for _ in range(5))
    p = _write(tmp_path, "many.png", _png(filler, _text(b"ccv3", _b64(_card("Hidden")))))
    assert detect(p) == "png-card"  # (never passed over: a card may lie past the bound)
    err = _refused(p)
    assert err.code == "png-invalid" and "more than 4 chunks" in err.why


def test_assets_counted_by_name_and_size(tmp_path: Path) -> None:
    card = _card("Assets")
    card["data"]["assets"] = [{"type": "icon", "uri": "__asset:0", "name": "main", "ext": "png"}]
    blob = _png(_text(b"chara-ext-asset_:0", b"QUJD"), _text(b"ccv3", _b64(card)))
    [m] = read_path(_write(tmp_path, "assets.png", blob))
    assert m.card is not None and m.card["members"] == 1
    assert m.card["assets"] == [{"type": "icon", "name": "main", "ext": "png", "member": "0",
                                 "size": 4}]


def test_encrypted_card_is_one_line(tmp_path: Path) -> None:
    err = _refused(_write(tmp_path, "rcc.png", _png(_text(b"ccv3", b"rcc||rccv1||x||y||z"))))
    assert err.code == "png-encrypted"


def test_not_a_png_named_png(tmp_path: Path) -> None:
    err = _refused(_write(tmp_path, "fake.png", b"GIF89a" + b"\x00" * 20))
    assert err.code == "png-invalid" and "no PNG signature" in err.why


def test_card_named_png_without_signature_is_read(tmp_path: Path) -> None:
    # RisuAI reads a file named *.png as a PNG card (f.name.endsWith('png')) and skips its
    # first 8 bytes unread: a card behind another signature loads, so it must be reviewed
    blob = b"GIF89a\x00\x00" + _png(_text(b"ccv3", _b64(_card("Masked"))))[8:]
    named = _write(tmp_path, "masked.png", blob)
    assert detect(named) == "png-card"
    [m] = read_path(named)
    assert m.data["name"] == "Masked" and [a.code for a in m.anomalies] == ["png-signature"]
    assert detect(_write(tmp_path, "masked.gif", blob)) is None  # (RisuAI: not a card)
    src = tmp_path / "src"
    src.mkdir()
    _write(src, "masked.png", blob)
    r = run_cli("ingest", src, "-o", tmp_path / "cat")
    assert r.returncode == 0, r.stderr
    assert len(list((tmp_path / "cat").glob("character.*.json"))) == 1


def test_cached_not_risu_verdict_of_an_older_sniff_is_not_trusted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a catalog's cache recorded the card as "not a Risu file" when the sniff knew no PNG
    # cards (its stat record's digest was ""): after the upgrade the card must be read, not
    # skipped until its stat happens to move
    from risutools.catalog import cache as cache_mod
    from risutools.catalog import walk

    monkeypatch.setattr(cache_mod, "RACY_NS", 0)  # (the source was just written)
    src, out = tmp_path / "src", tmp_path / "cat"
    src.mkdir()
    _write(src, "card.png", _png(_text(b"ccv3", _b64(_card("Upgraded")))))
    with monkeypatch.context() as old:  # the older sniff: no PNG, and its verdict ""
        old.setattr(walk, "detect", lambda path: None)
        old.setattr(cache_mod, "NOT_RISU", "")
        r = run_cli("ingest", src, "-o", out, "-j", "1")
        assert r.returncode == 0, r.stderr
    assert not list(out.glob("character.*.json"))
    r = run_cli("ingest", src, "-o", out, "-j", "1")
    assert r.returncode == 0, r.stderr
    assert len(list(out.glob("character.*.json"))) == 1
    _write(src, "photo.png", _png())
    r = run_cli("ingest", src, "-o", out, "-j", "1")  # (the photo: sniffed, recorded)
    assert r.returncode == 0, r.stderr
    sniffed: list[str] = []
    real = walk.detect
    monkeypatch.setattr(walk, "detect", lambda path: sniffed.append(Path(path).name)
                        or real(path))
    r = run_cli("ingest", src, "-o", out, "-j", "1")
    assert r.returncode == 0 and sniffed == []  # (this sniff's verdict is trusted)


def test_old_tavern_card_reads_its_top_level_fields(tmp_path: Path) -> None:
    # RisuAI's convertOffSpecCards: no spec -> fields at the top level, no scripts
    old = {"name": "Elder", "first_mes": "hi {{user}}", "char_persona": "calm",
           "extensions": {"risuai": {"triggerscript": [TRIGGER]}}}
    [m] = read_path(_write(tmp_path, "old.png", _png(_text(b"chara", _b64(old)))))
    assert m.data["name"] == "Elder" and m.card is not None and m.card["name"] == "Elder"
    assert "trigger" not in m.data and m.data["cardFields"]["first_mes"] == "hi {{user}}"
    assert [a.code for a in m.anomalies] == ["card-spec"]
