"""A catalog is untrusted input: seeded, structure-aware mutations of a real-shaped catalog
(documents, curator notes, facts) through every command that reads one, in every format.

Each round puts hostile values (other JSON types, markup, control and bidi characters,
paths, huge numbers, status words) at random places of one to three documents, deletes or
adds keys, and sometimes does the same to a notes or facts file.  Every command must answer
with a finding or a refusal (exit 0, 1 or 2 with a one-line error), never an internal error,
and the HTML review must never carry a value unescaped."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from harness import FIXTURES, SOURCES, assert_answered, json_places, run_cli, value_at

MARK = "<script>alert(7)</script>"
EVIL: list[Any] = [
    MARK, "a|b\n|c", "\x1b[31mred", "\u202eevil", "../../etc/passwd", "", " ", "x" * 3000,
    None, True, 0, -1, 1.5, 10**30, [], {}, [1, "a", None], {"a": {"b": []}},
    "sha256:" + "0" * 64, "approved", "promoted", "active", "candidate", "한국어 <b>굵게</b>",
    "`code`", "[link](javascript:x)", "{{getvar::x}}",
]
FORMATS = ["text", "json", "markdown", "html", "concise", "github", "sarif", "junit"]
ROUNDS = 32


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cat = tmp_path_factory.mktemp("fuzz") / "catalog"
    shutil.copytree(FIXTURES / "notes", cat / "notes")
    for src in (SOURCES, FIXTURES / "interactions"):
        done = run_cli("ingest", src, "-o", cat, "--lang", "ko", "-q")
        assert done.returncode == 0, done.stderr
    assert len(list(cat.glob("*.json"))) >= 10
    return cat


def _mutate(value: Any, rng: random.Random) -> Any:
    for _ in range(rng.randint(1, 3)):
        places = json_places(value)
        if not places:
            break
        at = rng.choice(places)
        holder = value_at(value, at[:-1])
        how = rng.choice(["set", "set", "set", "delete", "add"])
        if how == "delete":
            del holder[at[-1]]
        elif how == "add" and isinstance(holder, dict):
            holder[rng.choice(["extra", "runtime_status", "review_status", "<x>"])] = \
                rng.choice(EVIL)
        else:
            holder[at[-1]] = rng.choice(EVIL)
    return value


def _marked(value: Any, rng: random.Random) -> Any:
    """``value`` with one of its strings (a title, a name, a message) made the markup
    :data:`MARK`: a string where a string belongs, so that the page shows it."""
    strings = [at for at in json_places(value) if isinstance(value_at(value, at), str)]
    if strings:
        at = rng.choice(strings)
        value_at(value, at[:-1])[at[-1]] = MARK
    return value


def _catalog(base: Path, tmp: Path, rng: random.Random) -> Path:
    cat = tmp / "catalog"
    shutil.copytree(base, cat)
    docs = sorted(cat.glob("*.json"))
    marked = rng.choice(docs + sorted((cat / "facts").glob("*.json")))
    marked.write_text(json.dumps(_marked(json.loads(marked.read_text("utf-8")), rng)), "utf-8")
    for d in rng.sample(docs, rng.randint(1, 3)):
        d.write_text(json.dumps(_mutate(json.loads(d.read_text("utf-8")), rng),
                                ensure_ascii=rng.random() < 0.5), "utf-8")
    notes = sorted((cat / "notes").glob("*.yaml"))
    if notes and rng.random() < 0.5:
        n = rng.choice(notes)
        value = yaml.safe_load(n.read_text("utf-8"))
        if isinstance(value, (dict, list)):
            n.write_text(yaml.safe_dump(_mutate(value, rng), allow_unicode=True), "utf-8")
    facts = sorted((cat / "facts").glob("*.json"))
    if facts and rng.random() < 0.3:
        f = rng.choice(facts)
        f.write_text(json.dumps(_mutate(json.loads(f.read_text("utf-8")), rng)), "utf-8")
    return cat


@pytest.mark.parametrize("seed", range(ROUNDS))
def test_a_mutated_catalog_is_answered_never_crashed(base: Path, tmp_path: Path,
                                                      seed: int) -> None:
    rng = random.Random(seed)
    cat = _catalog(base, tmp_path, rng)
    fmt = FORMATS[seed % len(FORMATS)]
    page = tmp_path / "review.out"
    runs = [
        ("review", cat, "-f", fmt, "-q", "-j", "1", "-o", page),
        ("review", cat, "-f", "html", "-q", "-j", "1", "--live-only", "-o", tmp_path / "r.html"),
        ("validate", cat, "-f", FORMATS[(seed + 3) % len(FORMATS)]
         if FORMATS[(seed + 3) % len(FORMATS)] not in ("markdown", "html") else "json"),
    ]
    doc = rng.choice(sorted(cat.glob("*.json")))
    runs += [
        ("promote", doc.stem, "--catalog", cat, "--to",
         rng.choice(["pending_human_review", "approved", "promoted", "rejected"]),
         "--dry-run", "--json"),
        ("packet", doc.stem, "--catalog", cat, "--lane", rng.choice(["light", "full"]),
         "-o", tmp_path / "packets"),
        ("verify", cat, "--sources", SOURCES),
    ]
    for args in runs:
        assert_answered(run_cli(*args, cwd=tmp_path), " ".join(map(str, args[:2])))
    html = tmp_path / "r.html"
    if html.exists():
        assert MARK not in html.read_text("utf-8", errors="replace")
    if fmt == "html" and page.exists():
        assert MARK not in page.read_text("utf-8", errors="replace")
