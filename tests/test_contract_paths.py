"""Catalog and source-store paths: regular files only, bounded reads, configuration that cannot
point reads outside the repository, one-line refusals, file names that are not UTF-8.

Everything that could hang or eat memory on a regression (devices, FIFOs, symbolic links to
them) runs the real command line in a child process under a memory cap (RLIMIT_AS) and a
timeout, so a regression fails the test instead of hanging the suite.
"""

from __future__ import annotations

import errno
import json
import os
import resource
import stat
import subprocess
import sys
import unicodedata
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from harness import ROOT, SEED, SOURCES
from hypothesis import given
from hypothesis import strategies as st

from risutools.contract.validate import validate_paths
from risutools.errors import ConfigError
from risutools.pathnames import name_bytes, name_uri, safe_line, show_name
from risutools.safeio import FileRefused, open_regular, read_regular, sha256_regular
from risutools.settings.config import Settings, config_root, load_settings_file

STORE_FILE = ROOT / "fixtures" / "contract" / "store" / "300.risum"
STORE_SHA = "sha256:a2b77045e473618af148a0388f1bc499d24b562e5dc3df21d97c01cad42a7dce"
CP949 = b"\xc7\xd1\xb1\xdb"  # "한글" in CP949: not UTF-8
MEMORY_CAP = 1024 * 1024 * 1024  # the child's address space: 1 GiB
TIMEOUT = 60


def _cap() -> None:  # runs in the child before exec
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def run(*args: str | bytes, cwd: Path = ROOT, prelude: str = "",
        stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """The CLI in a child process with a memory cap and a timeout (a hang fails the test)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("RISUTOOLS_DEBUG", None)
    env.pop("NO_COLOR", None)
    code = prelude + "\nfrom risutools.cli import main\nmain()\n"
    argv: list[str | bytes] = [sys.executable, "-c", code, *args]
    p = subprocess.run(argv, capture_output=True, cwd=cwd, env=env, timeout=TIMEOUT,
                       preexec_fn=_cap, input=stdin)
    assert b"Traceback" not in p.stdout + p.stderr, p.stderr.decode(errors="replace")
    assert b"internal error" not in p.stderr, p.stderr.decode(errors="replace")
    return p


def one_line(p: subprocess.CompletedProcess[bytes]) -> str:
    text = p.stderr.decode("utf-8")  # strict: every error line is valid UTF-8
    lines = text.splitlines()
    assert len(lines) == 1, text
    assert lines[0].startswith("risutools: ")
    return lines[0]


def seed_doc() -> dict[str, object]:
    doc: dict[str, object] = json.loads(SEED.read_text(encoding="utf-8"))
    return doc


needs_dev_zero = pytest.mark.skipif(
    not (os.path.exists("/dev/zero") and stat.S_ISCHR(os.stat("/dev/zero").st_mode)),
    reason="no /dev/zero character device")
needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")


# ============================================================ risutools.safeio


def test_read_regular_reads_files_and_links_to_files(tmp_path: Path) -> None:
    f = tmp_path / "a.json"
    f.write_bytes(b"12345")
    link = tmp_path / "link.json"
    link.symlink_to(f)
    assert read_regular(f, 5) == b"12345"  # exactly at the bound
    assert read_regular(link, 100) == b"12345"  # a link to a regular file is fine
    assert sha256_regular(link, 5) == sha256_regular(f, 5)
    with open_regular(f) as fh:
        assert fh.read() == b"12345"


def test_read_regular_refusals(tmp_path: Path) -> None:
    f = tmp_path / "a.json"
    f.write_bytes(b"123456")
    (tmp_path / "dir.json").mkdir()
    (tmp_path / "dangling.json").symlink_to(tmp_path / "gone")
    (tmp_path / "loop.json").symlink_to(tmp_path / "loop.json")
    cases = {
        "a.json": ("too-large", "6 bytes, more than the 5-byte bound"),
        "dir.json": ("not-a-file", "is a folder"),
        "missing.json": ("not-found", "no such file"),
        "dangling.json": ("not-found", "symbolic link to a missing file"),
        "loop.json": ("unreadable", "loop"),
    }
    for name, (code, needle) in cases.items():
        with pytest.raises(FileRefused) as ei:
            read_regular(tmp_path / name, 5)
        assert ei.value.code == code, (name, ei.value)
        assert needle in ei.value.why, (name, ei.value.why)
    with pytest.raises(FileRefused) as ei:
        sha256_regular(f, 5)
    assert ei.value.code == "too-large"


def test_read_regular_permission_denied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "locked.json"
    f.write_bytes(b"{}")

    def denied(*_a: object, **_k: object) -> int:
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(os, "open", denied)  # as a user would meet it, even under root
    with pytest.raises(FileRefused) as ei:
        read_regular(f, 10)
    assert ei.value.code == "unreadable" and "Permission denied" in ei.value.why


_SAFEIO_CHILD = """
import sys
from risutools.safeio import FileRefused, read_regular, sha256_regular
for p in sys.argv[1:]:
    for fn in (read_regular, sha256_regular):
        try:
            fn(p, 1 << 20)
            print("read", p)
        except FileRefused as e:
            print(e.code, e.why)
"""


@needs_dev_zero
@needs_fifo
def test_devices_fifos_and_links_to_them_are_never_read(tmp_path: Path) -> None:
    (tmp_path / "zero.json").symlink_to("/dev/zero")
    (tmp_path / "zero.yaml").symlink_to(tmp_path / "zero.json")  # a link to a link
    os.mkfifo(tmp_path / "fifo.json")  # open() without O_NONBLOCK would wait for a writer
    paths = [str(tmp_path / n) for n in ("zero.json", "zero.yaml", "fifo.json")] + ["/dev/zero"]
    p = subprocess.run([sys.executable, "-c", _SAFEIO_CHILD, *paths], capture_output=True,
                       timeout=TIMEOUT, preexec_fn=_cap, env={**os.environ,
                                                               "PYTHONPATH": str(ROOT)})
    out = p.stdout.decode().splitlines()
    assert p.returncode == 0, p.stderr.decode()
    assert len(out) == 8 and all(x.startswith("not-a-file ") for x in out), out
    assert "a character device (a symbolic link to /dev/zero)" in out[0]
    assert "a FIFO (named pipe)" in out[4]


# ============================================================ risutools.pathnames


def test_show_name_escapes_and_round_trips() -> None:
    raw = CP949 + b".json"
    shown = show_name(raw)
    assert shown == "\\xc7\\xd1\\xb1\\xdb.json"  # every byte, though d1 b1 is UTF-8
    shown.encode("utf-8")  # printable UTF-8
    assert name_bytes(shown) == raw
    assert show_name(os.fsdecode(raw)) == shown
    assert name_uri(shown) == "%C7%D1%B1%DB.json"
    assert show_name("a\\b\nc\u202e.json") == "a\\\\b\\x0ac\\u202e.json"
    assert name_bytes(show_name("a\\b\nc\u202e.json")) == "a\\b\nc\u202e.json".encode()
    assert show_name("카탈로그/문서 1.json") == "카탈로그/문서 1.json"  # kept as is
    assert safe_line("risutools: " + os.fsdecode(raw) + ": x\n") == \
        "risutools: \\xc7ѱ\\xdb.json: x\\x0a"


@given(st.binary(max_size=40).filter(lambda b: b"\x00" not in b))
def test_show_name_is_reversible_for_any_bytes(raw: bytes) -> None:
    shown = show_name(raw)
    shown.encode("utf-8")
    assert not any(unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp") for c in shown)
    assert name_bytes(shown) == raw


# ============================================================ configuration sources


def _repo(tmp_path: Path, config: str) -> Path:
    """A repository whose one document names ``risu:300 module.risum`` (STORE_FILE)."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "catalog").mkdir()
    doc = seed_doc()
    prov = doc["provenance"]
    assert isinstance(prov, dict)
    prov["source_refs"] = [{"source_id": "risu:300", "source_version": "module.risum",
                            "sha256": STORE_SHA}]
    (repo / "catalog" / "doc.json").write_text(json.dumps(doc), encoding="utf-8")
    (repo / "store").mkdir()
    (repo / ".risutools.yaml").write_text(config, encoding="utf-8")
    return repo


def test_config_sources_must_stay_in_the_repository(tmp_path: Path) -> None:
    repo = _repo(tmp_path, "sources: store\n")
    (repo / "catalog" / ".risutools.yaml").write_text("sources: ../store\n")
    (repo / "devlink").symlink_to("/")
    for cfg_file in (repo / ".risutools.yaml", repo / "catalog" / ".risutools.yaml"):
        cfg = load_settings_file(cfg_file)
        assert cfg.root == repo.resolve()  # the folder holding .git
        assert cfg.source_store() == (repo / "store").resolve()
    for outside in ("/dev", "../elsewhere", "devlink", "devlink/tmp", "store/../../x"):
        (repo / ".risutools.yaml").write_text(f"sources: {outside}\n")
        cfg = load_settings_file(repo / ".risutools.yaml")
        with pytest.raises(ConfigError) as ei:
            cfg.source_store()
        assert ei.value.code == "config-sources-outside", outside
        assert "--allow-config-sources-outside" in ei.value.why
        assert cfg.source_store(allow_outside=True) == cfg.sources
    # no repository: the configuration file's own folder is the root
    lone = tmp_path / "lone"
    lone.mkdir()
    (lone / ".risutools.yaml").write_text("sources: ../x\n")
    assert config_root(lone / ".risutools.yaml") == lone.resolve()
    with pytest.raises(ConfigError):
        load_settings_file(lone / ".risutools.yaml").source_store()
    assert Settings().source_store() is None


@needs_dev_zero
def test_verify_refuses_config_sources_dev_and_the_flag_allows_it(tmp_path: Path) -> None:
    repo = _repo(tmp_path, "sources: /dev\n")
    p = run("verify", "catalog", cwd=repo)
    assert p.returncode == 2
    line = one_line(p)
    assert "config-sources-outside" in line and "`sources: /dev` resolves to /dev" in line
    assert p.stdout == b""
    # the user's word on the command line: walking /dev never opens a device
    p = run("verify", "catalog", "--allow-config-sources-outside", cwd=repo)
    assert p.returncode == 0, p.stderr.decode()
    assert b"not at hand" in p.stdout
    p = run("verify", "catalog", "--sources", "/dev", cwd=repo)
    assert p.returncode == 0, p.stderr.decode()


def test_verify_config_sources_inside_the_repository(tmp_path: Path) -> None:
    repo = _repo(tmp_path, "sources: store\n")
    (repo / "store" / "300.risum").write_bytes(STORE_FILE.read_bytes())
    p = run("verify", "catalog", cwd=repo)
    assert p.returncode == 0, (p.stdout + p.stderr).decode()
    assert b"1 verified" in p.stdout


@needs_dev_zero
@needs_fifo
def test_verify_store_with_devices_fifos_and_link_cycles(tmp_path: Path) -> None:
    repo = _repo(tmp_path, "sources: store\n")
    store = repo / "store"
    (store / "300.risum").symlink_to("/dev/zero")  # named like the source
    (store / "x.charx").symlink_to("/dev/zero")
    os.mkfifo(store / "300_fifo.risum")
    (store / "loop").symlink_to(store)  # a cycle: never entered
    (store / "up").symlink_to("..")
    (store / "devdir").symlink_to("/dev")
    p = run("verify", "catalog", cwd=repo)
    assert p.returncode == 0, (p.stdout + p.stderr).decode()
    assert b"0 verified, 0 mismatched, 1 not at hand" in p.stdout
    (store / "elsewhere.risum").symlink_to(STORE_FILE)  # a link leading out: passed over
    p = run("verify", "catalog", cwd=repo)
    assert p.returncode == 0 and b"0 verified" in p.stdout, p.stdout.decode()
    p = run("verify", "catalog", "--sources", store, cwd=repo)  # (the user's store too)
    assert p.returncode == 0 and b"0 verified" in p.stdout, p.stdout.decode()
    (store / "elsewhere.risum").unlink()
    (store / "kept").mkdir()
    (store / "kept" / "300.risum").write_bytes(STORE_FILE.read_bytes())
    (store / "real.risum").symlink_to(store / "kept" / "300.risum")  # staying: read
    p = run("verify", "catalog", cwd=repo)
    assert p.returncode == 0 and b"1 verified" in p.stdout, p.stdout.decode()


# ============================================================ catalog files that are devices


@needs_dev_zero
@pytest.mark.parametrize("name", ["z.json", "z.yaml", "z.ndjson", "z.jsonl"])
def test_validate_catalog_file_linked_to_dev_zero(tmp_path: Path, name: str) -> None:
    (tmp_path / "ok.json").write_bytes(SEED.read_bytes())
    (tmp_path / name).symlink_to("/dev/zero")
    p = run("validate", ".", cwd=tmp_path)
    assert p.returncode == 2
    line = one_line(p)
    # a folder's file that is a link out of the folder is not even looked at
    assert line == (f"risutools: {name}: outside-catalog: leads outside the folder (a symbolic "
                    "link to /dev/zero); risutools reads and writes only inside the folder")
    assert b"1 document" in p.stdout  # the batch went on with the good file
    p = run("validate", name, cwd=tmp_path)  # named explicitly: one line, no block
    assert p.returncode == 2 and p.stdout == b""
    assert "not-a-file" in one_line(p)
    p = run("validate", "-f", "json", name, cwd=tmp_path)  # machine formats still report
    finding = json.loads(p.stdout)["findings"][0]
    assert p.returncode == 2 and (finding["rule"], finding["code"]) == ("MC001", "not-a-file")


@needs_fifo
def test_validate_fifo_is_refused_not_waited_on(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.json")
    p = run("validate", "pipe.json", cwd=tmp_path)
    assert p.returncode == 2 and "a FIFO (named pipe)" in one_line(p)


@needs_dev_zero
def test_validate_stdin_from_dev_zero_is_bounded(tmp_path: Path) -> None:
    env_cmd = "import os,sys; os.dup2(os.open('/dev/zero', os.O_RDONLY), 0)"
    p = run("validate", "-", cwd=tmp_path, prelude=env_cmd)
    assert p.returncode == 1  # read up to the bound, then refused as one finding
    assert b"standard input is more than" in p.stdout


@needs_dev_zero
def test_config_and_notes_linked_to_dev_zero(tmp_path: Path) -> None:
    repo = _repo(tmp_path, "")
    (repo / ".risutools.yaml").unlink()
    (repo / ".risutools.yaml").symlink_to("/dev/zero")
    p = run("validate", "catalog", cwd=repo)
    assert p.returncode == 2  # (found in the repository, it leads out of it: not read)
    assert "outside-catalog: the configuration file found here leads outside" in one_line(p)
    p = run("validate", "--config", ".risutools.yaml", "catalog", cwd=repo)
    assert p.returncode == 2  # (named on the command line: read as a regular file or not)
    assert "not-a-file: is a character device" in one_line(p)
    (repo / ".risutools.yaml").unlink()
    (repo / "pyproject.toml").symlink_to("/dev/zero")  # not a regular file: not a config
    p = run("validate", "--ignore", "MC102", "catalog", cwd=repo)
    assert p.returncode == 0, p.stderr.decode()
    (repo / "notes").mkdir()
    (repo / "notes" / "x.yaml").symlink_to("/dev/zero")
    src = str(SOURCES / "174678332_context-cutter.risum")
    p = run("project", src, "--notes", "notes/x.yaml", cwd=repo)
    assert p.returncode == 2
    assert one_line(p) == ("risutools: notes/x.yaml: not-a-file: cannot read the notes "
                           "file: is a character device (a symbolic link to /dev/zero), not a "
                           "regular file; risutools reads regular files only")


@needs_dev_zero
def test_verify_notes_linked_to_dev_zero(tmp_path: Path) -> None:
    doc = seed_doc()
    cid = doc["component_id"]
    prov = doc["provenance"]
    assert isinstance(prov, dict)
    prov["source_refs"] = [*prov["source_refs"], {
        "source_id": "risu:174678332", "source_version": "notes.yaml",
        "sha256": STORE_SHA}]
    cat = tmp_path / "cat"
    (cat / "notes").mkdir(parents=True)
    (cat / "doc.json").write_text(json.dumps(doc), encoding="utf-8")
    (cat / "notes" / f"{cid}.yaml").symlink_to("/dev/zero")
    p = run("verify", "cat", cwd=tmp_path)
    assert p.returncode == 2
    assert one_line(p) == (f"risutools: cat/notes/{cid}.yaml: outside-catalog: leads outside the "
                           "catalog (a symbolic link to /dev/zero); risutools reads and writes "
                           "only inside the catalog")
    (cat / "notes" / f"{cid}.yaml").unlink()  # (through a link inside: resolved the same)
    (cat / "notes" / "zero").symlink_to("/dev/zero")
    (cat / "notes" / f"{cid}.yaml").symlink_to(cat / "notes" / "zero")
    p = run("verify", "cat", cwd=tmp_path)
    assert p.returncode == 2 and "outside-catalog" in one_line(p)


# ============================================================ one line, exit 2


def test_missing_document_is_one_line_and_no_block(tmp_path: Path) -> None:
    p = run("validate", "nope.json", cwd=tmp_path)
    assert p.returncode == 2 and p.stdout == b""
    assert one_line(p) == "risutools: nope.json: not-found: no such file or folder"
    p = run("verify", "nope.json", cwd=tmp_path)
    assert p.returncode == 2 and p.stdout == b""
    assert one_line(p) == "risutools: nope.json: not-found: no such file or folder"


def test_folders_where_files_are_expected(tmp_path: Path) -> None:
    (tmp_path / "dir.json").mkdir()
    p = run("validate", "dir.json", cwd=tmp_path)  # a folder is walked; it holds nothing
    assert p.returncode == 2 and "no-documents" in one_line(p)
    (tmp_path / "notes" / "x.yaml").mkdir(parents=True)
    src = str(SOURCES / "174678332_context-cutter.risum")
    p = run("project", src, "--notes", "notes/x.yaml", cwd=tmp_path)
    assert p.returncode == 2
    assert one_line(p) == ("risutools: notes/x.yaml: not-a-file: cannot read the notes "
                           "file: is a folder, not a file")
    p = run("validate", "--config", "notes", str(SEED), cwd=tmp_path)
    assert p.returncode == 2 and "not-a-file: is a folder" in one_line(p)


_DENY = """
import os
_real = os.open
def _open(path, *a, **k):
    if os.fsdecode(path).endswith("locked.json"):
        raise PermissionError(13, "Permission denied")
    return _real(path, *a, **k)
os.open = _open
"""


def test_unreadable_document_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "locked.json").write_bytes(SEED.read_bytes())
    (tmp_path / "ok.json").write_bytes(SEED.read_bytes().replace(b"seed", b"seeds"))
    p = run("validate", "locked.json", cwd=tmp_path, prelude=_DENY)
    assert p.returncode == 2 and p.stdout == b""
    assert one_line(p) == "risutools: locked.json: unreadable: cannot read: Permission denied"
    p = run("validate", ".", cwd=tmp_path, prelude=_DENY)  # batch: reported, and on it goes
    assert p.returncode == 2 and "locked.json: unreadable" in one_line(p)
    assert b"1 document, 1 file; could not read 1 file" in p.stdout


# ============================================================ --strict


def test_strict_failure_says_failed_and_why(tmp_path: Path) -> None:
    doc = seed_doc()
    payload = doc["payload"]
    assert isinstance(payload, dict)
    payload["invariants"] = []  # MC600: a warning
    (tmp_path / "w.json").write_text(json.dumps(doc), encoding="utf-8")
    p = run("validate", "w.json", cwd=tmp_path)
    assert p.returncode == 0
    assert p.stdout.decode().splitlines()[-1].startswith("ok: 0 errors, 1 warning")
    p = run("validate", "--strict", "w.json", cwd=tmp_path)
    assert p.returncode == 1
    last = p.stdout.decode().splitlines()[-1]
    assert last == ("failed: 0 errors, 1 warning, 1 document, 1 file; --strict: warnings "
                    "fail the run")
    p = run("validate", "--strict", "-f", "github", "w.json", cwd=tmp_path)
    assert p.returncode == 1 and p.stdout.decode().splitlines()[-1].endswith(
        "; --strict: warnings fail the run")
    r = validate_paths([tmp_path / "w.json"])
    assert r.verdict() == ("ok", "")
    r.strict = True
    assert r.verdict() == ("failed", "; --strict: warnings fail the run")
    assert r.exit_code() == 1 and r.exit_code(strict=False) == 0


# ============================================================ names that are not UTF-8


def _bad_names(tmp_path: Path) -> bytes:
    """A catalog with a CP949-named document (one MC100 error) and a newline in a name."""
    doc = seed_doc()
    doc["x"] = 1  # MC100: unknown property, so the file appears in the findings
    data = json.dumps(doc).encode()
    raw = CP949 + b".json"
    with open(os.path.join(os.fsencode(tmp_path), raw), "wb") as f:
        f.write(data)
    doc["component_version"] = "1.0.1"
    (tmp_path / "new\nline.json").write_bytes(json.dumps(doc).encode())
    return raw


@pytest.mark.parametrize("fmt", ["text", "json", "github", "sarif", "junit"])
@pytest.mark.parametrize("command", ["validate", "verify"])
def test_non_utf8_names_in_every_format(tmp_path: Path, fmt: str, command: str) -> None:
    raw = _bad_names(tmp_path)
    (tmp_path / "store").mkdir()  # verify: a store without the sources, a warning per document
    extra = ("--sources", "store") if command == "verify" else ()
    for target in (b".", raw):
        p = run(command, "-f", fmt, *extra, target, cwd=tmp_path)
        # validate: MC100 errors; verify: sources not at hand (warnings)
        assert p.returncode == (1 if command == "validate" else 0), p.stderr.decode("utf-8")
        assert p.stderr == b""
        out = p.stdout.decode("utf-8")  # strict: valid UTF-8
        if fmt not in ("json", "sarif"):  # (JSON doubles the backslash)
            assert "\\xc7\\xd1\\xb1\\xdb.json" in out
            if target == b".":
                assert "new\\x0aline.json" in out
        if fmt == "json":
            d = json.loads(out)
            files = {f["file"] for f in d["findings"]}
            assert "\\xc7\\xd1\\xb1\\xdb.json" in files
        elif fmt == "sarif":
            d = json.loads(out)
            uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                    for r in d["runs"][0]["results"] if "locations" in r}
            assert "%C7%D1%B1%DB.json" in uris  # the name's own bytes, percent-encoded
            if target == b".":
                assert "new%0Aline.json" in uris
        elif fmt == "junit":
            ET.fromstring(p.stdout)
        elif fmt == "github":
            for line in out.splitlines():  # a name never starts a new workflow command
                assert line.startswith("::") or line[0].isdigit(), line


def test_non_utf8_name_in_error_lines(tmp_path: Path) -> None:
    raw = CP949 + b".json"
    os.symlink(b"/nonexistent/" + CP949, os.path.join(os.fsencode(tmp_path), raw))
    p = run("validate", raw, cwd=tmp_path)
    assert p.returncode == 2
    assert one_line(p) == ("risutools: \\xc7\\xd1\\xb1\\xdb.json: not-found: is a symbolic link "
                           "to a missing file (a symbolic link to "
                           "/nonexistent/\\xc7\\xd1\\xb1\\xdb)")
    p = run("hash", raw, cwd=tmp_path)
    assert p.returncode == 2 and "\\xc7\\xd1\\xb1\\xdb.json" in one_line(p)
    p = run("project", str(SOURCES / "174678332_context-cutter.risum"), "--notes", raw,
            cwd=tmp_path)
    assert p.returncode == 2 and "\\xc7\\xd1\\xb1\\xdb.json: not-found" in one_line(p)


def test_a_folder_that_cannot_be_listed_is_reported(tmp_path: Path) -> None:
    from unittest import mock

    (tmp_path / "ok.json").write_bytes(SEED.read_bytes())
    (tmp_path / "sub").mkdir()
    real = os.scandir

    def scandir(path: str) -> object:  # os.walk lists each folder with os.scandir
        if path.endswith("sub"):
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return real(path)

    with mock.patch("os.scandir", scandir):
        r = validate_paths([tmp_path])
    assert r.exit_code() == 2 and len(r.documents) == 1
    (bad,) = r.unreadable()
    assert bad.file is not None and bad.file.endswith("sub")
    assert bad.message == "cannot list the folder: Permission denied"


def test_report_into_a_device_writes_into_it_never_replaces_it(tmp_path: Path) -> None:
    """``-o /dev/stdout`` (or /dev/null, a pipe) is written into; an atomic rename would
    put a regular file in place of the device."""
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    fifo = tmp_path / "report.pipe"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    try:
        p = run("validate", "-f", "json", "-o", str(fifo), str(SEED))
        out, _ = reader.communicate(timeout=TIMEOUT)
    finally:
        reader.kill()
        reader.wait()
    assert p.returncode == 0, p.stderr.decode()
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)  # still the FIFO
    assert json.loads(out)["summary"]["documents"] == 1
