"""Every command's output on the bundled fixtures and ``../shared/corpus/real``, in one folder.

For refactors that must not change behaviour: run it on the old tree and on the new one and
``diff -r`` the two folders.  Each step writes ``NNN-<name>.out`` (exit code, stdout and
stderr) and, where the step writes files (catalogs, reports, packets, unpacked modules),
those files under ``NNN-<name>.files/``.  Paths are written as placeholders (``<ROOT>``, the
checkout; ``<WORK>``, the scratch folder; ``<CORPUS>``, the real corpus) so that two checkouts
compare equal.

    python bench/snapshot.py OUT [--work /tmp/risutools-snapshot-work] [--python PY]

It runs ``PY -m risutools`` from the checkout this file is in, one process a step, with
``SOURCE_DATE_EPOCH`` fixed and one ed25519 key (deterministic signatures) made once and kept
in the scratch folder's parent, so that two runs sign alike.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = (ROOT.parent / "shared" / "corpus" / "real").resolve()
CUTTER = "module.risu.174678332.context-cutter"
FORMATS = ("text", "concise", "json", "github", "sarif", "junit")


class Snap:
    def __init__(self, out: Path, work: Path, python: str, key: Path) -> None:
        self.out, self.work, self.python, self.key = out, work, python, key
        self.n = 0
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(work),
                    "SOURCE_DATE_EPOCH": "1767225600", "USER": "snapshot", "LANG": "C.UTF-8",
                    "PYTHONPATH": str(ROOT), "NO_COLOR": "1", "COLUMNS": "100",
                    "TERM": "dumb", "PYTHONHASHSEED": "0"}

    def clean(self, data: bytes) -> bytes:
        text = data.decode("utf-8", "backslashreplace")
        for path, name in ((str(self.work), "<WORK>"), (str(CORPUS), "<CORPUS>"),
                           (str(ROOT), "<ROOT>"), (str(self.key), "<KEY>")):
            text = text.replace(path, name)
        # run times and elapsed seconds are not behaviour
        text = re.sub(r"\b\d+(\.\d+)?\s?(ms|s)\b(?= |\)|,|$)", "<T>", text, flags=re.M)
        text = re.sub(r"\b[0-9.]+ ?[kMG]?B/s\b", "<RATE>", text)
        text = re.sub(r'"(elapsed|seconds|duration_s|cpu_s)": [0-9.e-]+', r'"\1": <T>', text)
        return text.encode("utf-8")

    def run(self, name: str, *args: str, cwd: Path | None = None, stdin: bytes = b"",
            keep: Path | None = None) -> int:
        self.n += 1
        tag = f"{self.n:03d}-{re.sub(r'[^A-Za-z0-9_.-]+', '_', name)[:80]}"
        proc = subprocess.run([self.python, "-m", "risutools", *args], cwd=cwd or ROOT,
                              env=self.env, input=stdin, capture_output=True, timeout=600)
        body = (b"$ risutools " + " ".join(args).encode() + b"\nexit " +
                str(proc.returncode).encode() + b"\n--- stdout\n" + proc.stdout +
                b"\n--- stderr\n" + proc.stderr)
        (self.out / f"{tag}.out").write_bytes(self.clean(body))
        if keep is not None and keep.exists():
            self.copy(keep, self.out / f"{tag}.files")
        return proc.returncode

    def copy(self, src: Path, dst: Path) -> None:
        if src.is_file():
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(self.clean(src.read_bytes()))
            return
        for p in sorted(src.rglob("*")):
            if p.is_symlink() or not p.is_file() or ".risutools-cache" in p.parts:
                continue
            if ".risutools-tmp-" in p.name or p.name == ".risutools.lock":
                continue
            t = dst / p.relative_to(src)
            t.parent.mkdir(parents=True, exist_ok=True)
            t.write_bytes(self.clean(p.read_bytes()))

    def scratch(self, name: str) -> Path:
        p = self.work / name
        if p.exists():
            shutil.rmtree(p)
        return p


def inputs() -> list[str]:
    files = [f"fixtures/{d}/{p.name}" for d in ("sources", "broken", "modules", "projection")
             for p in sorted((ROOT / "fixtures" / d).iterdir()) if p.is_file()]
    files += [f"fixtures/analysis/{p.name}" for p in sorted((ROOT / "fixtures/analysis").glob(
        "*.json"))]
    if CORPUS.is_dir():
        files += [str(p) for p in sorted(CORPUS.rglob("*")) if p.is_file() and p.suffix != ".md"]
    return files


def formats_steps(s: Snap) -> None:
    files = inputs()
    for f in files:
        base = Path(f).name
        s.run(f"inspect {base}", "inspect", f)
        s.run(f"inspect-json {base}", "inspect", "--json", f)
        s.run(f"analyze {base}", "analyze", f)
        s.run(f"analyze-json {base}", "analyze", "-f", "json", f)
        for lang in ("en", "ko"):
            s.run(f"project-{lang} {base}", "project", "--lang", lang, f)
        out = s.scratch("unpack")
        s.run(f"unpack {base}", "unpack", f, "-o", str(out), keep=out)
    for fmt in FORMATS[1:]:
        s.run(f"analyze-{fmt} sources", "analyze", "-f", fmt, *sorted(
            f"fixtures/sources/{p.name}" for p in (ROOT / "fixtures/sources").iterdir()))
    s.run("analyze statistics", "analyze", "--statistics", "fixtures/sources/"
          "182004771_net-summarizer.risum")
    s.run("analyze select", "analyze", "--select", "RA1", "fixtures/sources/"
          "182004771_net-summarizer.risum")
    s.run("analyze fail-on", "analyze", "--fail-on", "never", "fixtures/broken/random.bin",
          "fixtures/sources/182004771_net-summarizer.risum")
    s.run("inspect many", "inspect", *files[:12])
    # pack round trip
    out = s.scratch("packdir")
    s.run("unpack cutter", "unpack", "fixtures/sources/174678332_context-cutter.risum", "-o",
          str(out))
    s.run("pack cutter", "pack", str(out), "-o", str(s.work / "packed.risum"),
          keep=s.work / "packed.risum")
    s.run("pack again refused", "pack", str(out), "-o", str(s.work / "packed.risum"))
    s.run("project notes", "project", "fixtures/sources/174678332_context-cutter.risum",
          "--lang", "ko", "--notes", f"fixtures/notes/{CUTTER}.yaml")
    out = s.scratch("projected")
    s.run("project -o", "project", "fixtures/sources/184500112_heroine-card.charx", "-o",
          str(out), keep=out)


def contract_steps(s: Snap) -> None:
    c = "fixtures/contract"
    targets = [f"{c}/good", f"{c}/bad", f"{c}/catalog", f"{c}/verify", "fixtures/documents"]
    targets += [f"{c}/bad/{p.name}" for p in sorted((ROOT / c / "bad").iterdir())]
    for t in targets:
        for fmt in FORMATS:
            s.run(f"validate-{fmt} {t}", "validate", "-f", fmt, t)
        s.run(f"validate-stats {t}", "validate", "--statistics", t)
        s.run(f"verify {t}", "verify", t, "--sources", f"{c}/store")
        s.run(f"hash {t}", "hash", t)
    s.run("verify-sarif", "verify", "-f", "sarif", f"{c}/verify", "--sources", f"{c}/store")
    s.run("verify no store", "verify", f"{c}/verify")
    s.run("validate stdin", "validate", "-", stdin=(ROOT / "fixtures/documents/"
                                                    "seed-000-context-cutter.json").read_bytes())
    s.run("validate select", "validate", "--select", "MC2,MC3", f"{c}/bad")
    s.run("validate ignore", "validate", "--ignore", "MC600", f"{c}/good")
    s.run("validate promotion", "validate", "--promotion", "fixtures/documents")
    s.run("validate strict", "validate", "--strict", f"{c}/good")
    s.run("validate unknown rule", "validate", "--select", "ZZ9", f"{c}/good")
    s.run("validate bad format", "validate", "-f", "nope", f"{c}/good")
    fixdir = s.scratch("fix")
    shutil.copytree(ROOT / c / "bad", fixdir)
    s.run("validate --fix", "validate", "--fix", str(fixdir), keep=fixdir)
    s.run("hash -q", "hash", "-q", "fixtures/documents/seed-000-context-cutter.json")
    listing = subprocess.run([s.python, "-m", "risutools", "rule"], cwd=ROOT, env=s.env,
                             capture_output=True, text=True).stdout
    s.run("rule", "rule")
    ids = re.findall(r"^\s*([A-Z]{1,3}[0-9]{1,3})\b", listing, flags=re.M)
    for rid in [*ids, "MC2", "digests", "XX1"]:
        s.run(f"rule {rid}", "rule", rid)


def replay_steps(s: Snap) -> None:
    doc = "fixtures/documents/seed-000-context-cutter.json"
    for fx in sorted((ROOT / "fixtures/replay").iterdir()):
        out = s.scratch("replay")
        out.mkdir()
        s.run(f"replay run {fx.name}", "replay", "run", doc, "-x", f"fixtures/replay/{fx.name}",
              "-o", str(out / "r.json"), keep=out)
        s.run(f"replay monitor {fx.name}", "replay", "monitor", "-x",
              f"fixtures/replay/{fx.name}")
    out = s.scratch("synth")
    out.mkdir()
    for lang in ("ko", "en", "mixed"):
        s.run(f"synth {lang}", "replay", "synth", "--seed", "7", "--messages", "60", "--lang",
              lang, "-o", str(out / f"{lang}.ndjson"), keep=out / f"{lang}.ndjson")
    s.run("synth yaml", "replay", "synth", "--seed", "3", "--messages", "20", "-o",
          str(out / "s.yaml"), keep=out / "s.yaml")
    out = s.scratch("replaymon")
    out.mkdir()
    s.run("replay monitor -o", "replay", "monitor", "-x", "fixtures/replay/monitor.yaml", "-o",
          str(out / "m.json"), keep=out)


def catalog_steps(s: Snap) -> None:
    cat = s.scratch("demo")
    cat.mkdir()
    shutil.copytree(ROOT / "fixtures/notes", cat / "notes")
    s.run("ingest", "ingest", "fixtures/sources", "-o", str(cat), "--lang", "ko", "-q",
          "-j", "1", keep=cat)
    s.run("ingest again json", "ingest", "fixtures/sources", "-o", str(cat), "--lang", "ko",
          "--json", "-j", "1")
    s.run("ingest again text", "ingest", "fixtures/sources", "-o", str(cat), "--lang", "ko",
          "-j", "1")
    s.run("replay update", "replay", "run", f"{cat}/{CUTTER}.json", "--fixture",
          "fixtures/replay/anchor-edit.yaml", "--update", keep=cat)
    s.run("validate demo", "validate", str(cat))
    s.run("verify demo", "verify", str(cat), "--sources", "fixtures/sources")
    (cat / ".risutools.yaml").write_text(
        "sources: ../../fixtures/sources\ncatalog:\n  allowed_signers: .allowed_signers\n"
        "  require_signatures: true\n")
    # the configuration's sources are relative to the catalog: give them by option instead
    (cat / ".risutools.yaml").write_text(
        "catalog:\n  allowed_signers: .allowed_signers\n  require_signatures: true\n")
    pub = Path(str(s.key) + ".pub").read_text().split()
    (cat / ".allowed_signers").write_text(f"demo {pub[0]} {pub[1]}\n")
    for fmt in ("text", "json", "markdown", "html", *FORMATS[1:]):
        s.run(f"review-{fmt}", "review", str(cat), "-q", "-j", "1", "-f", fmt, "--sources",
              "fixtures/sources")
    cat_opt = ("--catalog", str(cat))
    s.run("promote refused", "promote", CUTTER, *cat_opt, "--to", "pending_human_review",
          "--sources", "fixtures/sources")
    s.run("promote dry json", "promote", CUTTER, *cat_opt, "--to", "pending_human_review",
          "--dry-run", "--json", "--sources", "fixtures/sources")
    s.run("approve request", "approve", CUTTER, *cat_opt, "--action", "request_review",
          "--reviewer", "demo", "--sign", str(s.key))
    s.run("promote pending", "promote", CUTTER, *cat_opt, "--to", "pending_human_review",
          "--sources", "fixtures/sources")
    pk = s.scratch("packets")
    s.run("packet light", "packet", CUTTER, *cat_opt, "--lane", "light", "-o", str(pk), keep=pk)
    pk = s.scratch("packets")
    s.run("packet full", "packet", CUTTER, *cat_opt, "--lane", "full", "-o", str(pk), keep=pk)
    pk = s.scratch("packets")
    s.run("packet queue", "packet", *cat_opt, "--lane", "light", "--queue", str(pk), "--status",
          "candidate", keep=pk)
    s.run("approve bad action", "approve", CUTTER, *cat_opt, "--action", "bogus", "--reviewer",
          "demo")
    s.run("approve approve", "approve", CUTTER, *cat_opt, "--action", "approve", "--reviewer",
          "demo", "--sign", str(s.key))
    s.run("promote approved", "promote", CUTTER, *cat_opt, "--to", "approved", "--sources",
          "fixtures/sources")
    s.run("activate dry", "activate", CUTTER, *cat_opt, "--dry-run")
    s.run("activate", "activate", CUTTER, *cat_opt, "--by", "demo")
    s.run("activate again", "activate", CUTTER, *cat_opt, "--json")
    s.run("deactivate", "deactivate", CUTTER, *cat_opt, "--by", "demo")
    s.run("promote bogus", "promote", CUTTER, *cat_opt, "--to", "bogus")
    s.run("promote unknown", "promote", "module.nope", *cat_opt, "--to", "approved")
    s.run("validate demo 2", "validate", str(cat))
    for fmt in ("text", "json", "markdown", "html"):
        s.run(f"review2-{fmt}", "review", str(cat), "-q", "-j", "1", "-f", fmt, "--sources",
              "fixtures/sources")
    s.run("review from inside", "review", "-q", "-j", "1", cwd=cat)
    s.copy(cat, s.out / f"{s.n:03d}-demo-catalog-final.files")
    c = "fixtures/contract/catalog"
    s.run("review contract catalog", "review", c, "-q", "-j", "1")
    s.run("review contract catalog json", "review", c, "-q", "-j", "1", "-f", "json")
    if CORPUS.is_dir():
        real = s.scratch("real")
        s.run("ingest real", "ingest", str(CORPUS), "-o", str(real), "-q", "-j", "1",
              "--lang", "ko", keep=real)
        for fmt in ("text", "json", "html", "markdown", "sarif"):
            s.run(f"review real {fmt}", "review", str(real), "-q", "-j", "1", "-f", fmt)
        s.run("validate real", "validate", str(real))
        pk = s.scratch("packets")
        s.run("packet real queue", "packet", "--catalog", str(real), "--lane", "light",
              "--queue", str(pk), "--status", "candidate", keep=pk)
    broken = s.scratch("brokencat")
    s.run("ingest broken", "ingest", "fixtures/broken", "-o", str(broken), "-q", "-j", "1",
          keep=broken)


def error_steps(s: Snap) -> None:
    missing = "nope/missing.json"
    for cmd in (["inspect"], ["analyze"], ["project"], ["validate"], ["verify"], ["hash"],
                ["unpack", "-o", str(s.work / "u")], ["pack", "-o", str(s.work / "p.risum")],
                ["ingest", "-o", str(s.work / "c")], ["review"],
                ["replay", "run", "-x", "fixtures/replay/small.json"],
                ["replay", "monitor", "-x"], ["promote", "--to", "approved", "--catalog"],
                ["approve", "--action", "approve", "--reviewer", "x", "--catalog"],
                ["packet", "--lane", "light", "--catalog"]):
        s.run(f"missing {cmd[0]} {len(cmd)}", *cmd[:1], *cmd[1:], missing)
    s.run("no args", )
    s.run("version", "--version")
    for cmd in ("inspect", "unpack", "pack", "analyze", "project", "ingest", "validate",
                "verify", "rule", "hash", "review", "approve", "promote", "activate",
                "deactivate", "packet", "replay"):
        s.run(f"help {cmd}", cmd, "-h")
    for sub in ("run", "monitor", "synth"):
        s.run(f"help replay {sub}", "replay", sub, "-h")
    s.run("help", "-h")
    s.run("bad option", "validate", "--nope", "x")
    s.run("bad lang", "project", "--lang", "xx", "fixtures/sources/174678332_context-cutter.risum")
    s.run("bad fail-on", "analyze", "--fail-on", "xx", "fixtures/sources/"
          "174678332_context-cutter.risum")
    s.run("bad jobs", "review", "fixtures/contract/catalog", "-j", "0")
    s.run("bad color", "validate", "--color", "xx", "fixtures/documents")
    s.run("unpack to file", "unpack", "fixtures/sources/174678332_context-cutter.risum", "-o",
          "README.md/sub")
    s.run("project to file", "project", "fixtures/sources/174678332_context-cutter.risum", "-o",
          "README.md/x.json")
    s.run("ingest scheduler+j", "ingest", "fixtures/sources", "-o", str(s.work / "c"),
          "--scheduler", "tcp://127.0.0.1:1", "-j", "1")
    s.run("synth bad", "replay", "synth", "--seed", "1", "--messages", "0", "-o",
          str(s.work / "x.ndjson"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--work", default="/tmp/risutools-snapshot-work")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--only", default="formats,contract,replay,catalog,errors")
    a = ap.parse_args()
    out, work = Path(a.out).resolve(), Path(a.work).resolve()
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    key = work.parent / "risutools-snapshot-key"
    if not key.exists():
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "demo", "-f",
                        str(key)], check=True)
    s = Snap(out, work, a.python, key)
    steps = {"formats": formats_steps, "contract": contract_steps, "replay": replay_steps,
             "catalog": catalog_steps, "errors": error_steps}
    for name in a.only.split(","):
        s.n = (list(steps).index(name) + 1) * 10000
        steps[name](s)
    print(f"{out}: {len(list(out.iterdir()))} entries")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
