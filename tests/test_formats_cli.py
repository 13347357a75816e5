"""The formats commands through the real entry point: inspect, unpack, pack."""

from __future__ import annotations

import hashlib
import json
import subprocess
import zipfile
from pathlib import Path

import pytest
from harness import FIXTURES, ROOT, SOURCES, run_cli

from risutools.formats import read_path
from risutools.formats.risum import write_risum
from risutools.formats.unpack import sanitise

BROKEN = FIXTURES / "broken"


def run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    proc = run_cli(*args, cwd=cwd or ROOT)
    assert "Traceback" not in proc.stdout + proc.stderr
    return proc


def test_inspect_all_sources_text() -> None:
    files = sorted(SOURCES.iterdir())
    proc = run("inspect", *files)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "컨텍스트 커터 (Context Cutter)" in out
    assert "lua 2142 B" in out  # size of the cutter's Lua, not its text
    assert "listenEdit" not in out and "setChatVar" not in out  # never a line of code
    assert "regex: 4 (editdisplay=3, editoutput=1)" in out
    assert "theme(select) '테마 (Theme)'" in out
    assert "lowLevelAccess: module yes" in out
    assert "format: charx-jpeg" in out and "format: risup" in out


def test_inspect_json_is_deterministic_and_complete() -> None:
    files = [SOURCES / "182004771_net-summarizer.risum", SOURCES / "183120336_asset-pack.risum"]
    a = run("inspect", "--json", *files)
    b = run("inspect", "--json", *files)
    assert a.returncode == 0 and a.stdout == b.stdout
    data = json.loads(a.stdout)
    net = data[0]["modules"][0]
    assert net["sha256"] == hashlib.sha256(files[0].read_bytes()).hexdigest()
    assert net["low_level_access"] is True and net["mcp"] is True
    assert net["triggers"]["by_type"] == {"output": 1, "request": 1}
    label = "응답마다 자동 요약 (Summarize after each reply)"
    assert net["toggles"] == [{"key": "autosum", "kind": "checkbox", "label": label, "line": 1}]
    assets = data[1]["modules"][0]["assets"]
    assert assets["frames"] == 2 and assets["total_bytes"] > 0
    assert "request(" not in a.stdout


def test_inspect_bad_file_one_line_and_goes_on(tmp_path: Path) -> None:
    proc = run(
        "inspect",
        BROKEN / "wrong-version.risum",
        tmp_path,
        SOURCES / "180211045_lorebook-world.risum",
        BROKEN / "missing-end-marker.risum",
    )
    assert proc.returncode == 2
    err = proc.stderr.strip().splitlines()
    assert len(err) == 2
    assert "bad-version" in err[0] and "offset 1" in err[0]
    assert "not-a-file" in err[1]
    assert "은하 변경 세계관" in proc.stdout
    assert "warning: missing-end-marker" in proc.stdout


def test_inspect_json_reports_errors(tmp_path: Path) -> None:
    proc = run("inspect", "--json", BROKEN / "zip-bomb.charx")
    assert proc.returncode == 2
    (entry,) = json.loads(proc.stdout)
    assert entry["ok"] is False and entry["error"]["code"] == "zip-bomb"


def test_unpack_pack_round_trip(tmp_path: Path) -> None:
    src = SOURCES / "183120336_asset-pack.risum"
    out = tmp_path / "u"
    proc = run("unpack", src, "-o", out)
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert [a["file"] for a in manifest["assets"]] == ["assets/smile.png", "assets/tear.webp"]
    for a in manifest["assets"]:
        assert hashlib.sha256((out / a["file"]).read_bytes()).hexdigest() == a["sha256"]
    assert (out / "assets" / "smile.png").read_bytes().startswith(b"\x89PNG")
    packed = tmp_path / "again.risum"
    proc = run("pack", out, "-o", packed)
    assert proc.returncode == 0, proc.stderr
    (orig,) = read_path(src, with_assets=True)
    (back,) = read_path(packed, with_assets=True)
    assert back.data == orig.data
    assert [a.data for a in back.assets] == [a.data for a in orig.assets]
    # the writer is deterministic and matches the original encoder
    assert packed.read_bytes() == src.read_bytes()
    # pack via the manifest path too, and refuse to overwrite without --force
    assert run("pack", out / "manifest.json", "-o", packed).returncode == 2
    assert run("pack", out / "manifest.json", "-o", packed, "--force").returncode == 0


def test_unpack_refuses_overwrite_then_force(tmp_path: Path) -> None:
    src = SOURCES / "174678332_context-cutter.risum"
    out = tmp_path / "u"
    assert run("unpack", src, "-o", out).returncode == 0
    (out / "module.json").write_text("{}")
    proc = run("unpack", src, "-o", out)
    assert proc.returncode == 2 and "target-exists" in proc.stderr
    assert (out / "module.json").read_text() == "{}"
    assert run("unpack", src, "-o", out, "--force").returncode == 0
    assert (
        json.loads((out / "module.json").read_text(encoding="utf-8"))["namespace"]
        == "context-cutter"
    )


def test_unpack_never_writes_outside(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    out = work / "out"
    evil_module = {
        "name": "evil",
        "id": "1",
        "assets": [["../../escape", "", "png"], ["/etc/passwd", "", "txt"], ["..", "", ""],
                   ["CON", "", "png"], ["same", "", "png"], ["SAME", "", "png"]],
    }  # fmt: skip
    src = work / "evil.risum"
    src.write_bytes(write_risum(evil_module, [b"1", b"2", b"3", b"4", b"5", b"6"]))
    assert run("unpack", src, "-o", out).returncode == 0
    written = sorted(p.relative_to(work).as_posix() for p in work.rglob("*") if p.is_file())
    assert written == sorted(
        [
            "evil.risum",
            "out/manifest.json",
            "out/module.json",
            "out/assets/escape.png",
            "out/assets/passwd.txt",
            "out/assets/asset-2.bin",
            "out/assets/_CON.png",
            "out/assets/same.png",
            "out/assets/SAME-2.png",
        ]
    )
    # the ZIP case: ../ and absolute member names stay inside the folder
    out2 = work / "card"
    assert run("unpack", BROKEN / "unsafe-names.charx", "-o", out2).returncode == 0
    outside = [p for p in tmp_path.rglob("*") if p.is_file() and work not in p.parents]
    assert outside == []
    names = sorted(p.name for p in (out2 / "card-assets").iterdir())
    assert names == ["evil-2.txt", "evil.txt", "main.png", "up.png"]
    with zipfile.ZipFile(BROKEN / "unsafe-names.charx") as zf:
        assert "../evil.txt" in zf.namelist()


def test_unpack_refuses_symlinked_assets_dir(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (out / "assets").symlink_to(elsewhere, target_is_directory=True)
    proc = run("unpack", SOURCES / "183120336_asset-pack.risum", "-o", out)
    assert proc.returncode == 2 and "outside-target" in proc.stderr
    assert list(elsewhere.iterdir()) == []


def test_unpack_charx_and_pack_back(tmp_path: Path) -> None:
    out = tmp_path / "c"
    assert run("unpack", SOURCES / "184500113_heroine-card-jpeg.jpeg", "-o", out).returncode == 0
    assert json.loads((out / "card.json").read_text(encoding="utf-8"))["spec"] == "chara_card_v3"
    assert (out / "card-assets" / "main.png").is_file()
    assert run("pack", out, "-o", tmp_path / "m.risum").returncode == 0
    (m,) = read_path(tmp_path / "m.risum", with_assets=True)
    (orig,) = read_path(SOURCES / "184500112_heroine-card.charx", with_assets=True)
    assert m.data == orig.data and [a.data for a in m.assets] == [a.data for a in orig.assets]


def test_pack_from_json_and_errors(tmp_path: Path) -> None:
    proc = run("pack", SOURCES / "186123400_mood-tracker.json", "-o", tmp_path / "m.risum")
    assert proc.returncode == 0, proc.stderr
    (m,) = read_path(tmp_path / "m.risum")
    assert m.name == "기분 추적기 (Mood Tracker)"
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "x", "assets": [["a", "", "png"]]}')
    proc = run("pack", bad, "-o", tmp_path / "n.risum")
    assert proc.returncode == 2 and "pack-assets-missing" in proc.stderr
    proc = run("pack", BROKEN / "not-object.json", "-o", tmp_path / "n.risum")
    assert proc.returncode == 2 and "not-an-object" in proc.stderr
    proc = run("pack", tmp_path / "missing-dir", "-o", tmp_path / "n.risum")
    assert proc.returncode == 2 and "not-found" in proc.stderr
    assert not (tmp_path / "n.risum").exists()


def test_pack_refuses_manifest_paths_outside(tmp_path: Path) -> None:
    out = tmp_path / "u"
    assert run("unpack", SOURCES / "183120336_asset-pack.risum", "-o", out).returncode == 0
    (tmp_path / "secret.png").write_bytes(b"secret")
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    manifest["assets"][0]["file"] = "../secret.png"
    (out / "manifest.json").write_text(json.dumps(manifest))
    proc = run("pack", out, "-o", tmp_path / "x.risum")
    assert proc.returncode == 2 and "outside-target" in proc.stderr


def test_sanitise_rules() -> None:
    assert sanitise("../../a b.png") == "a_b.png"
    assert sanitise("C:\\win\\evil") == "evil"
    assert sanitise("..") == "asset"
    assert sanitise(".hidden") == "hidden"
    assert sanitise("한글 이름") == "한글_이름"
    assert sanitise("nul.txt") == "_nul.txt"
    assert len(sanitise("x" * 500)) == 80


def test_inspect_text_never_shows_code_smuggled_in_names(tmp_path: Path) -> None:
    code = "function onStart() request('http://evil.example') end"
    module = {
        "name": f"Nice\n{code}",
        "id": "\x1b[2J",
        "regex": [{"type": f"editdisplay\n{code}", "in": "a", "out": "b"}],
        "customModuleToggle": "k=Label\u2028" + code,
        "trigger": [{"type": "start", "effect": [{"type": "triggerlua", "code": code}]}],
    }
    p = tmp_path / "m.risum"
    p.write_bytes(write_risum(module, []))
    proc = run("inspect", p)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert not any(line.lstrip().startswith("function") for line in lines)
    assert "\x1b" not in proc.stdout and "\u2028" not in proc.stdout
    assert "module: Nice\\nfunction onStart() request(" in proc.stdout  # escaped, cut
    assert "id: \\x1b[2J" in proc.stdout
    assert f"lua {len(code)} B" in proc.stdout
    # --json escapes control characters by construction
    data = json.loads(run("inspect", "--json", p).stdout)
    assert data[0]["modules"][0]["name"] == module["name"]


def test_unpack_pack_round_trip_of_lorebook_export(tmp_path: Path) -> None:
    src = tmp_path / "lb.json"
    obj = {"type": "risu", "name": "세계", "ver": 1, "data": [{"key": "a", "content": "b"}]}
    src.write_text(json.dumps(obj, ensure_ascii=False), encoding="utf-8")
    out = tmp_path / "u"
    assert run("unpack", src, "-o", out).returncode == 0
    proc = run("pack", out, "-o", tmp_path / "lb.risum")
    assert proc.returncode == 0, proc.stderr
    (orig,) = read_path(src)
    (back,) = read_path(tmp_path / "lb.risum")
    assert back.data == orig.data == {"type": "risu", "name": "세계", "ver": 1,
                                      "lorebook": [{"key": "a", "content": "b"}]}  # fmt: skip


def test_unpack_symlink_member_is_a_plain_file(tmp_path: Path) -> None:
    import stat

    info = zipfile.ZipInfo("assets/link.png")
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    card = json.dumps({"spec": "chara_card_v3", "data": {"name": "L"}}).encode()
    p = tmp_path / "link.charx"
    with zipfile.ZipFile(p, "w") as zf:
        zf.writestr("card.json", card)
        zf.writestr(info, "/etc/passwd")
    out = tmp_path / "u"
    assert run("unpack", p, "-o", out).returncode == 0
    written = out / "card-assets" / "link.png"
    assert not written.is_symlink() and written.read_bytes() == b"/etc/passwd"


def test_unpack_and_pack_unwritable_targets_are_one_line(tmp_path: Path) -> None:
    out = tmp_path / "u"
    out.mkdir()
    (out / "assets").write_bytes(b"")  # a file where the assets folder must go
    proc = run("unpack", SOURCES / "183120336_asset-pack.risum", "-o", out)
    assert proc.returncode == 2 and "not-a-directory: " in proc.stderr
    assert f"{out / 'assets'} is a file, not a folder" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    (tmp_path / "dir.risum").mkdir()
    proc = run("pack", SOURCES / "186123400_mood-tracker.json", "-o", tmp_path / "dir.risum",
               "--force")  # fmt: skip
    assert proc.returncode == 2 and "dir.risum: not-a-file: is a folder" in proc.stderr


_MANIFEST_DAMAGE = [
    ("module", None, "/module"), ("module", 5, "/module"),
    ("manifest", "other-v1", "/manifest"), ("component_type", "character", "/component_type"),
    ("assets", 5, "/assets"), ("assets", [5], "/assets/0"),
    ("assets", [{"file": 3}], "/assets/0/file"),
    ("assets", [{"file": None}, {"file": "assets/tear.webp"}], "/assets/0/file"),
]


@pytest.mark.parametrize(("key", "value", "pointer"), _MANIFEST_DAMAGE)
def test_a_damaged_manifest_is_one_line_naming_it_and_the_field(
        tmp_path: Path, key: str, value: object, pointer: str) -> None:
    out = tmp_path / "u"
    assert run_cli("unpack", SOURCES / "183120336_asset-pack.risum", "-o", out).returncode == 0
    manifest = json.loads((out / "manifest.json").read_text("utf-8"))
    manifest[key] = value
    (out / "manifest.json").write_text(json.dumps(manifest), "utf-8")
    for src in (out, out / "manifest.json"):
        r = run_cli("pack", src, "-o", tmp_path / "x.risum")
        assert r.returncode == 2 and r.stdout == ""
        (line,) = r.stderr.splitlines()
        assert f"manifest.json: {pointer}: pack-" in line, line
    assert not (tmp_path / "x.risum").exists()
