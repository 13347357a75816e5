"""``replay run`` on fixtures built to be expensive: the time bound of docs/replay.md
("Bounds") measured on the shapes that once made it quadratic (issue 8's bounds; stop 54).

Shapes, each of ``N`` messages (``--messages N``, default 200,000; 600,000 is the 64 MiB
bound's scale), written once under ``$RISUTOOLS_BENCH_DIR`` (default
``/tmp/risutools-bench``) as NDJSON, appended 10,000 messages a turn:

* ``oldest-first``: messages of distinct texts, then each deleted in its own turn, the
  oldest first (each delete took the message out of the front of sorted lists);
* ``oldest-first-one-text``: the same, every message of one text (the lists of a text's
  messages as long as the history);
* ``results-newest-first``: one assistant message and ``N`` tool results after it, then the
  results deleted one a turn from the last (the call's list of results was scanned);
* ``edits-into-one-text``: messages of distinct texts, then each edited into one text in
  its own turn, the last first (each put at the front of that text's list);
* ``random-deletes-few-texts``: messages of four texts, deleted one a turn in a random order;
* ``random-edits-few-texts``: messages of four texts, then ``N`` turns each editing a
  random message into one of five texts.

Each is one whole process, ``risutools replay run fixtures/documents/seed-000-context-cutter.json
-x FIXTURE -o OUT``: its CPU (user + system) and peak RSS.  ``BENCH_BEFORE=<another
checkout>`` runs that checkout's command on the same fixture in turn and compares the two
reports byte for byte.

Usage: ``PYTHONPATH=. python bench/bench_replay_hostile.py [--messages N] [SHAPE ...]``.
"""

from __future__ import annotations

import filecmp
import json
import os
import random
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from workload import BASE, load_line, spawned  # noqa: E402

DOC = Path("fixtures") / "documents" / "seed-000-context-cutter.json"
BEFORE = os.environ.get("BENCH_BEFORE")
FEW = ["네.", "ok", "계속할게요.", "yes"]
Lines = Iterator[dict[str, Any]]


def _appended(n: int, text: Callable[[int], str], role: Callable[[int], str]) -> Lines:
    for a in range(0, n, 10_000):
        yield {"append": [{"id": f"m{i}", "role": role(i), "content": text(i)}
                          for i in range(a, min(n, a + 10_000))]}


def _user(i: int) -> str:
    return "user" if i % 2 else "assistant"


def _deleted(ids: list[str]) -> Lines:
    for mid in ids:
        yield {"delete": [{"id": mid}]}


def _oldest_first(n: int) -> Lines:
    yield from _appended(n, lambda i: f"message {i}", _user)
    yield from _deleted([f"m{i}" for i in range(n)])


def _oldest_first_one_text(n: int) -> Lines:
    yield from _appended(n, lambda i: "ok", _user)
    yield from _deleted([f"m{i}" for i in range(n)])


def _results_newest_first(n: int) -> Lines:
    yield {"append": [{"id": "call", "role": "assistant", "content": "calling the tool"}]}
    yield from _appended(n, lambda i: f"result {i}", lambda i: "tool")
    yield from _deleted([f"m{i}" for i in reversed(range(n))])


def _edits_into_one_text(n: int) -> Lines:
    yield from _appended(n, lambda i: f"message {i}", _user)
    for i in reversed(range(n)):
        yield {"edit": [{"id": f"m{i}", "content": "ok"}]}


def _random_deletes_few_texts(n: int) -> Lines:
    rng = random.Random(54)
    yield from _appended(n, lambda i: FEW[i % 4], _user)
    ids = [f"m{i}" for i in range(n)]
    rng.shuffle(ids)
    yield from _deleted(ids)


def _random_edits_few_texts(n: int) -> Lines:
    rng = random.Random(54)
    yield from _appended(n, lambda i: FEW[i % 4], _user)
    for _ in range(n):
        yield {"edit": [{"id": f"m{rng.randrange(n)}", "content": rng.choice([*FEW, "no"])}]}


SHAPES: dict[str, Callable[[int], Lines]] = {
    "oldest-first": _oldest_first,
    "oldest-first-one-text": _oldest_first_one_text,
    "results-newest-first": _results_newest_first,
    "edits-into-one-text": _edits_into_one_text,
    "random-deletes-few-texts": _random_deletes_few_texts,
    "random-edits-few-texts": _random_edits_few_texts,
}


def fixture(shape: str, n: int) -> Path:
    """The shape's NDJSON fixture of ``n`` messages (written once)."""
    path = BASE / "replay-hostile" / f"{shape}-{n}.ndjson"
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        head = {"fixture": "conversation-v1", "name": f"{shape}-{n}",
                "messages": [{"id": "s", "role": "system", "content": "stay in character"}]}
        f.write(json.dumps(head, ensure_ascii=False) + "\n")
        for line in SHAPES[shape](n):
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
    tmp.replace(path)
    return path


def replayed(tree: Path, fx: Path, out: Path) -> tuple[float, float, int]:
    """(CPU seconds, peak RSS MiB, exit code) of ``replay run`` of ``tree`` on ``fx``."""
    cpu, _wall, peak, code = spawned([sys.executable, "-m", "risutools", "replay", "run",
                                      str(DOC), "-x", str(fx), "-o", str(out)], tree,
                                     dict(os.environ, PYTHONPATH=str(tree)))
    return cpu, peak, code


def _verdict(code: int) -> str:
    """What the exit code says beyond passed (1: an invariant failed, as the report says:
    the reference cutter's twins can bring back what it dropped; 2: refused)."""
    return {0: "", 1: " (verdict failed)"}.get(code, f" (exit {code})")


def main(argv: list[str]) -> int:
    n = 200_000
    if argv[:1] == ["--messages"] and len(argv) > 1 and argv[1].isdigit():
        n, argv = int(argv[1]), argv[2:]
    shapes = argv or list(SHAPES)
    unknown = [s for s in shapes if s not in SHAPES]
    if unknown or n < 1:
        print(__doc__.split("\n\n")[0], f"\nshapes: {', '.join(SHAPES)}", file=sys.stderr)
        return 2
    print(f"replay run on hostile fixtures of {n:,} messages ({load_line()})")
    head = "  shape | requests | MB | CPU s | peak MiB"
    print(head + (" | before: CPU s | peak MiB | CPU ratio | same report" if BEFORE else ""))
    with tempfile.TemporaryDirectory() as tmp:
        for shape in shapes:
            fx = fixture(shape, n)
            with fx.open("rb") as f:
                requests = sum(1 for _ in f) - 1
            cpu, peak, code = replayed(ROOT, fx, Path(tmp) / "a.json")
            row = (f"  {shape} | {requests:,} | {fx.stat().st_size / 1e6:.1f} | {cpu:.2f} | "
                   f"{peak:.0f}" + _verdict(code))
            if BEFORE:
                b_cpu, b_peak, b_code = replayed(Path(BEFORE), fx, Path(tmp) / "b.json")
                same = code == b_code and code in (0, 1) and filecmp.cmp(  # (a report)
                    Path(tmp) / "a.json", Path(tmp) / "b.json", shallow=False)
                row += f" | {b_cpu:.2f} | {b_peak:.0f} | {cpu / b_cpu:.2f}x | {same}"
            print(row, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
