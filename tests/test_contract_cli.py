"""The contract commands, in-process (tests/harness.py): exit codes, formats, never a traceback."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from harness import FIXTURES, ROOT, SEED, run_cli

FX = FIXTURES / "contract"


def run(*args: str, stdin: bytes | None = None, cwd: Path = ROOT,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    e = {**os.environ, **(env or {})}
    e.pop("RISUTOOLS_DEBUG", None)
    p = run_cli(*args, stdin=stdin, cwd=cwd, env=e, binary=True)
    assert b"Traceback" not in p.stderr + p.stdout, p.stderr.decode()
    return p


def test_seed_validates_exit_0() -> None:
    p = run("validate", str(SEED))
    assert p.returncode == 0, p.stdout.decode()
    assert b"ok: 0 errors, 0 warnings, 1 document" in p.stdout
    assert b"\x1b[" not in p.stdout  # not a terminal: no colours


@pytest.mark.parametrize("name", sorted(x.name for x in (FX / "bad").iterdir()))
def test_every_bad_fixture_exit_1_no_traceback(name: str) -> None:
    p = run("validate", str(FX / "bad" / name))
    assert p.returncode == 1, (p.stdout + p.stderr).decode()


def test_exit_2_for_missing_file_bad_format_bad_rule_empty_dir(tmp_path: Path) -> None:
    assert run("validate", str(tmp_path / "missing.json")).returncode == 2
    p = run("validate", "--format", "xml", str(SEED))
    assert p.returncode == 2
    p = run("validate", "--select", "ZZ9", str(SEED))
    assert p.returncode == 2 and b"ZZ9" in p.stderr
    p = run("validate", str(tmp_path))
    assert p.returncode == 2 and b"no-documents" in p.stderr
    bad = tmp_path / "c.yaml"
    bad.write_text("unknown_key: 1\n")
    p = run("validate", "--config", str(bad), str(SEED))
    assert p.returncode == 2 and b"config-unknown-key" in p.stderr
    assert len(p.stderr.decode().strip().splitlines()) == 1


def test_strict_and_ignore() -> None:
    warn = FX / "bad" / "rules.json"
    p = run("validate", "--select", "MC401", str(warn))
    assert p.returncode == 0
    p = run("validate", "--select", "MC401", "--strict", str(warn))
    assert p.returncode == 1


def test_stdin() -> None:
    p = run("validate", "-", stdin=SEED.read_bytes())
    assert p.returncode == 0
    p = run("validate", "-", "--format", "json", stdin=b"\xff\xfe{")
    assert p.returncode == 1
    d = json.loads(p.stdout)
    assert d["findings"][0]["file"] == "-"


@pytest.mark.parametrize("fmt", ["json", "github", "sarif", "junit", "text"])
def test_formats_are_deterministic(fmt: str) -> None:
    args = ("validate", "-f", fmt, str(FX / "bad"), str(FX / "good"))
    a, b = run(*args), run(*args)
    assert a.returncode == b.returncode == 1
    assert a.stdout == b.stdout and a.stdout
    assert str(ROOT).encode() not in a.stdout  # relative paths only


def test_github_annotations_point_at_line() -> None:
    p = run("validate", "-f", "github", str(FX / "bad" / "broken-line.ndjson"))
    assert p.stdout.decode().splitlines()[0].startswith(
        "::error file=fixtures/contract/bad/broken-line.ndjson,line=2,title=MC000::")


def test_output_file(tmp_path: Path) -> None:
    out = tmp_path / "r.sarif"
    p = run("validate", "-f", "sarif", "-o", str(out), str(SEED))
    assert p.returncode == 0 and p.stdout == b""
    assert json.loads(out.read_text())["version"] == "2.1.0"


def test_hash_single_and_ndjson() -> None:
    p = run("hash", str(SEED))
    doc = json.loads(SEED.read_text(encoding="utf-8"))
    del doc["provenance"]["runtime_status"]  # the base hash: no runtime fields
    want = hashlib.sha256(json.dumps(doc, ensure_ascii=False, sort_keys=True,
                                     separators=(",", ":")).encode()).hexdigest()
    # like sha256sum: "<hash>  <file>"; -q: the hash alone
    assert p.returncode == 0 and p.stdout.decode() == f"sha256:{want}  {SEED}\n"
    p = run("hash", "-q", str(FX / "good" / "context-cutter.yaml"))
    assert p.stdout.decode() == f"sha256:{want}\n"
    p = run("hash", str(FX / "good" / "components.ndjson"))
    rows = [ln.split("  ") for ln in p.stdout.decode().splitlines()]
    assert [r[1].rsplit(":", 1)[1] for r in rows] == ["1", "2", "3"]
    assert rows[0][2] == "module.risu.100.cutter-0" and rows[0][0].startswith("sha256:")
    p = run("hash", "--quiet", str(FX / "good" / "components.ndjson"), str(SEED))
    assert p.returncode == 0 and len(p.stdout.decode().splitlines()) == 4
    assert all(ln.startswith("sha256:") and " " not in ln for ln in p.stdout.decode().split())
    p = run("hash", str(FX / "bad" / "broken-line.ndjson"))
    assert p.returncode == 2 and len(p.stdout.decode().splitlines()) == 3
    assert b":2: bad-document: not valid JSON" in p.stderr


def test_verify_cli() -> None:
    p = run("verify", str(FX / "verify"), "--sources", str(FX / "store"))
    assert p.returncode == 1
    assert b"not verified (source not at hand)" in p.stdout
    p = run("verify", str(FX / "verify" / "absent.json"), "--sources", str(FX / "store"))
    assert p.returncode == 0
    p = run("verify", str(FX / "verify" / "absent.json"), "--sources", str(FX / "store"),
            "--require-sources")
    assert p.returncode == 1
    p = run("verify", str(SEED), "--sources", str(FX / "nope"))
    assert p.returncode == 2


def test_config_found_from_catalog_folder() -> None:
    # the catalog's .risutools.yaml turns MC401 into an error
    p = run("validate", "-f", "json", str(FX / "catalog" / "components"))
    d = json.loads(p.stdout)
    assert [f["rule"] for f in d["findings"]] == ["MC305"]


def test_cli_import_stays_lazy() -> None:
    code = ("import sys, risutools.cli; "
            "print(sorted(m for m in ('jsonschema', 'yaml', 'risutools.contract.validate', "
            "'risutools.contract.rules', 'risutools.contract.loaders') if m in sys.modules))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    assert p.stdout.decode().strip() == "[]"


def test_report_file_never_gets_colours(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    bad = str(FX / "bad" / "rules.json")
    shown = run_cli("validate", "--color", "always", bad, env=env)
    assert "\x1b[" in shown.stdout
    report = tmp_path / "r.txt"
    written = run_cli("validate", "--color", "always", "-o", str(report), bad, env=env)
    assert written.stdout == "" and "\x1b[" not in report.read_text(encoding="utf-8")
    assert report.read_text(encoding="utf-8") == shown.stdout.replace("\x1b[31m", "").replace(
        "\x1b[33m", "").replace("\x1b[36m", "").replace("\x1b[1m", "").replace(
        "\x1b[2m", "").replace("\x1b[0m", "").replace("\x1b[32m", "")


def test_skip_non_documents_for_hooks(tmp_path: Path) -> None:
    (tmp_path / "mkdocs.yml").write_text("site_name: catalog\n")
    (tmp_path / "package.json").write_text('{"name": "x"}')
    p = run("validate", str(tmp_path / "mkdocs.yml"), str(tmp_path / "package.json"))
    assert p.returncode == 1  # named files are validated by default
    p = run("validate", "--skip-non-documents", str(tmp_path / "mkdocs.yml"),
            str(tmp_path / "package.json"))
    assert p.returncode == 0 and b"2 non-document file(s) skipped" in p.stdout
    p = run("validate", "--skip-non-documents", str(tmp_path / "mkdocs.yml"),
            str(FX / "bad" / "rules.json"))
    assert p.returncode == 1


def test_pre_commit_hooks_pass_ndjson_and_skip_other_files() -> None:
    import re

    import yaml

    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    ids = {h["id"]: h for h in hooks}
    assert set(ids) == {"risutools-validate", "risutools-verify", "risutools-validate-catalog"}
    whole = ids["risutools-validate-catalog"]  # the catalog as a whole: log, approvals
    assert whole["pass_filenames"] is False and whole["entry"] == "risutools validate ."
    assert all(re.search(whole["files"], n) for n in ("approvals/x.yaml", "transitions.ndjson",
                                                      "a.json", ".allowed_signers"))
    for h in hooks[:2]:
        # pre-commit ANDs `types`/`types_or` with `files`: a json/yaml type filter would
        # drop .ndjson catalogs, which `identify` does not tag as json
        assert "types" not in h and "types_or" not in h
        assert h["entry"].startswith("risutools ") and "--skip-non-documents" in h["entry"]

        rx = re.compile(h["files"])
        assert all(rx.search(n) for n in ("a.json", "b.yaml", "c.yml", "components.ndjson"))
        ex = re.compile(h["exclude"])
        assert ex.search("transitions.ndjson") and ex.search("cat/transitions.ndjson")
        assert ex.search(".risutools.yaml") and not ex.search("components/a.json")
        # (a catalog's own folders are risutools' to judge, below the catalog's root:
        # `facts/` may be a catalog's own name; --skip-non-documents skips its facts/)
        assert not ex.search("facts/doc.json") and not ex.search("approvals/0001.yaml")


def test_stdin_larger_than_one_document() -> None:
    line = json.dumps(json.loads(SEED.read_text(encoding="utf-8")), ensure_ascii=False)
    from risutools.values import MAX_DOCUMENT_BYTES

    n = MAX_DOCUMENT_BYTES // len(line.encode()) + 2
    p = run("validate", "-f", "json", "-", stdin=(line + "\n").encode() * n)
    d = json.loads(p.stdout)
    assert d["summary"]["documents"] == n  # streamed as NDJSON, MC104 for the copies
    assert d["summary"]["errors"] == n - 1
    p = run("validate", "-", stdin=b"a: " + b"x" * (MAX_DOCUMENT_BYTES + 10))
    assert p.returncode == 1 and b"bound" in p.stdout
