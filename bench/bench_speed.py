"""Speed at the floor: ``read_path`` on a large module, and the YAML loader.

Every figure is a ratio measured in one run against its floor, the two timed in turn
(best of ``--repeat``), so a loaded machine slows both sides alike:

1. ``read_path`` on a ``.risum`` whose module is ~10 MB of JSON (a lorebook of Korean and
   English entries), against the Python floor: read the file + sha256 + RPack translate +
   UTF-8 decode + ``json.loads``.  Goal: within 1.2x of the floor.
2. Peak memory (VmHWM, a child process each) of ``loads_object`` on hostile main blocks
   at the size limit: a 64 MiB string, and blocks of ``[]``/``{}``/short strings/numbers
   up to the value bound.  Goal: < 300 MB for any accepted input.
3. YAML: an 8 MiB catalog document through ``load_yaml_documents`` with libyaml's C
   parser against the pure-Python path (goal >= 10x), and a 6 MB flow sequence (time,
   peak memory; goal < 300 MB).

Usage: ``python bench/bench_speed.py [--mib 10] [--repeat 7] [--skip-memory] [--yaml-mib 8]``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from risutools.formats import read_path, rpack  # noqa: E402
from risutools.formats.risum import write_risum  # noqa: E402

MIB = 1024 * 1024

_PEAK = (
    "def peak_mb():\n"
    "    for line in open('/proc/self/status'):\n"
    "        if line.startswith('VmHWM:'):\n"
    "            return int(line.split()[1]) / 1024\n"
    "    return -1.0\n"
)


def big_module(target: int) -> dict[str, object]:
    """A module of about ``target`` bytes of JSON: the lorebook fixture, repeated."""
    src = ROOT / "fixtures" / "modules" / "180211045_lorebook-world.json"
    mod = json.loads(src.read_text(encoding="utf-8"))
    base = mod["lorebook"][1:]
    book = [mod["lorebook"][0]]
    text = "세계관의 역사는 오래되었다. The kingdom of Arden lies north of the river; " * 20
    size = i = 0
    while size < target:
        e = dict(base[i % len(base)])
        e.update(id=f"lb-{i}", key=f"key{i}, 키워드{i}", content=f"{text}{i}")
        book.append(e)
        size += len(json.dumps(e, ensure_ascii=False).encode())
        i += 1
    mod["lorebook"] = book
    return dict(mod)


def interleaved(a: Callable[[], object], b: Callable[[], object], repeat: int
                ) -> tuple[float, float]:
    """Best time of ``a`` and of ``b``, run in turn ``repeat`` times."""
    ta = tb = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        a()
        ta = min(ta, time.perf_counter() - t)
        t = time.perf_counter()
        b()
        tb = min(tb, time.perf_counter() - t)
    return ta, tb


def floor_read(path: Path) -> object:
    """The floor: what any reader of the file must do, in plain Python."""
    data = path.read_bytes()
    hashlib.sha256(data).hexdigest()
    n = int.from_bytes(data[2:6], "little")
    text = rpack.decode(data[6 : 6 + n]).decode("utf-8")
    return json.loads(text)


def bench_read(mib: float, repeat: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.risum"
        path.write_bytes(write_risum(big_module(int(mib * 1e6)), []))
        size = path.stat().st_size
        (m,) = read_path(path)
        assert m.data == floor_read(path)["module"]  # type: ignore[index]
        tf, tr = interleaved(lambda: floor_read(path), lambda: read_path(path), repeat)
        print(f"module of {size / 1e6:.1f} MB: floor (read + sha256 + translate + decode + "
              f"json.loads) {tf * 1000:.1f} ms; read_path {tr * 1000:.1f} ms "
              f"= {tr / tf:.2f}x the floor (goal <= 1.2x)")


def _hostile(limit: int, item: int, byte: int) -> dict[str, bytes]:
    """Main blocks at the size limit or just within the value bound."""

    def fit(b: int, k: int, extra: int = 0) -> int:
        # the most units of ``b`` bytes holding ``k`` of , [ { each within the bound
        return (limit - byte * (extra + 4096)) // (byte * b + item * k)

    def wrap(body: str) -> bytes:
        return ('{"a":' + body + "}").encode()

    n_keys = fit(22, 1)
    return {
        "64 MiB ASCII string": wrap('"' + "a" * (64 * MIB - 16) + '"'),
        "64 MiB emoji string": wrap('"' + "\U0001F600" * (16 * MIB - 4) + '"'),
        "[] up to the bound": wrap("[" + ",".join(["[]"] * fit(3, 2)) + "]"),
        "{} up to the bound": wrap("[" + ",".join(["{}"] * fit(3, 2)) + "]"),
        "[[]] up to the bound": wrap("[" + ",".join(["[[]]"] * fit(5, 3)) + "]"),
        "distinct keys up to the bound": wrap(
            "{" + ",".join(f'"k{i:07d}":{i}.5' for i in range(n_keys)) + "}"),
        "short strings up to the bound": wrap("[" + ",".join(['"ab"'] * fit(5, 1)) + "]"),
        "big ints up to the bound": wrap(
            "[" + ",".join(str(10**6 + i) for i in range(fit(8, 1))) + "]"),
        "[] + a 40 MiB string": wrap(
            "[" + ",".join(["[]"] * fit(3, 2, 40 * MIB)) + ',"' + "a" * (40 * MIB) + '"]'),
    }


def bench_memory() -> None:
    from risutools.formats.jsonsafe import BYTE_COST, ITEM_COST, MAX_PARSE_COST

    print(f"bound: estimated cost = {BYTE_COST} x bytes + {ITEM_COST} x (count of , [ {{) "
          f"<= {MAX_PARSE_COST >> 20} MiB")
    code = (
        _PEAK + f"import sys\nsys.path.insert(0, {str(ROOT)!r})\n"
        "from risutools.errors import FormatError\n"
        "from risutools.formats.jsonsafe import loads_object, parse_cost\n"
        "raw = open(sys.argv[1], 'rb').read()\n"
        "base = peak_mb()\n"
        "try:\n"
        "    v = loads_object(raw, where='', what='block'); verdict = 'accepted'\n"
        "except FormatError as e:\n"
        "    verdict = 'refused:' + e.code\n"
        "print(len(raw), parse_cost(raw) >> 20, verdict, base, peak_mb())\n"
    )
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "block.json"
        for name, raw in _hostile(MAX_PARSE_COST, ITEM_COST, BYTE_COST).items():
            f.write_bytes(raw)
            del raw
            out = subprocess.run([sys.executable, "-c", code, str(f)], capture_output=True,
                                 text=True, check=False)
            if out.returncode:
                print(f"{name:30}: failed: {out.stderr.strip()[-300:]}")
                continue
            size, cost, verdict, base, peak = out.stdout.split()
            worst = max(worst, float(peak))
            print(f"{name:30}: {int(size) / MIB:5.1f} MiB, estimated {cost:>3} MiB, "
                  f"{verdict:17} peak RSS {float(peak):4.0f} MB "
                  f"(after reading the file: {float(base):3.0f} MB)")
    print(f"worst peak RSS: {worst:.0f} MB (goal < 300 MB)")


def yaml_document(target: int) -> str:
    """A catalog document of about ``target`` bytes of block YAML (the seed document with a
    long list of triggers and of small notes)."""
    import yaml

    seed = json.loads((ROOT / "fixtures" / "documents" / "seed-000-context-cutter.json")
                      .read_text(encoding="utf-8"))
    one = len(yaml.safe_dump({"t": ["요청마다 0번째 규칙을 확인한다. Rule 0 is checked.",
                                     {"id": 0, "ok": True, "weight": 0.5, "tags": ["a", "b"]}]},
                             allow_unicode=True).encode())
    n = target // one
    for _ in range(2):  # once to measure, once scaled to the target
        seed["payload"]["triggers"] = [f"요청마다 {i}번째 규칙을 확인한다. Rule {i} is checked."
                                       for i in range(n)]
        seed["payload"]["x-notes"] = [{"id": i, "ok": True, "weight": 0.5, "tags": ["a", "b"]}
                                      for i in range(n)]
        text = str(yaml.safe_dump(seed, allow_unicode=True, sort_keys=False))
        n = n * target // len(text.encode())
    return text


def _child_yaml(text_file: Path, libyaml: bool) -> tuple[float, float, str]:
    code = (
        _PEAK + f"import sys, time\nsys.path.insert(0, {str(ROOT)!r})\n"
        "from risutools.yamlsafe import YamlRefused, load_yaml_documents\n"
        "text = open(sys.argv[1], encoding='utf-8').read()\n"
        "t = time.perf_counter()\n"
        "try:\n"
        f"    docs = list(load_yaml_documents(text, max_depth=64, use_libyaml={libyaml}))\n"
        "    verdict = f'{len(docs)}-document(s)'\n"
        "except YamlRefused as e:\n"
        "    verdict = 'refused:' + e.why.split(':')[0].replace(' ', '-')\n"
        "print(time.perf_counter() - t, peak_mb(), verdict)\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(text_file)], capture_output=True,
                         text=True, check=True)
    dt, peak, verdict = out.stdout.split()
    return float(dt), float(peak), verdict


def bench_yaml(mib: float, repeat: int) -> None:
    from risutools.yamlsafe import HAVE_LIBYAML

    if not HAVE_LIBYAML:
        print("PyYAML has no libyaml here: only the pure-Python path exists")
        return
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "doc.yaml"
        f.write_text(yaml_document(int(mib * MIB)), encoding="utf-8")
        size = f.stat().st_size / MIB
        tc = min(_child_yaml(f, True)[0] for _ in range(repeat))
        tp, peak_p, _ = _child_yaml(f, False)  # slow: once
        _, peak_c, verdict = _child_yaml(f, True)
        print(f"{size:.1f} MiB catalog document ({verdict}): libyaml {tc:.2f} s "
              f"(peak {peak_c:.0f} MB); pure-Python parser {tp:.2f} s (peak {peak_p:.0f} MB) "
              f"= {tp / tc:.1f}x faster (goal >= 10x)")
        shapes = {
            "6 MB flow sequence [x, x, ...]": "a: [" + ", ".join(["x"] * 2_000_000) + "]\n",
            "6 MB flow sequence of distinct strings": (
                "a: [" + ", ".join(f"s{i:06d}" for i in range(700_000)) + "]\n"),
            "8 MB block sequence, one item a line": (
                "a:\n" + "".join(f"- {i}\n" for i in range(900_000))),
            "8 MB of [[...]] 60 deep (accepted depth)": (
                "a: [" + ("[" * 60 + "]" * 60 + ",") * 66_000 + "1]\n"),
            "8 MB of [[...]] 990 deep": "a: [" + ("[" * 990 + "]" * 990 + ",") * 4000 + "1]\n",
        }
        for name, text in shapes.items():
            f.write_text(text, encoding="utf-8")
            dt, peak, verdict = _child_yaml(f, True)
            print(f"{name:42}: {len(text) / 1e6:4.1f} MB, {dt:6.2f} s, peak RSS {peak:4.0f} MB, "
                  f"{verdict}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=float, default=10)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--skip-memory", action="store_true")
    ap.add_argument("--yaml-mib", type=float, default=8)
    args = ap.parse_args()
    print("# read_path on a large module")
    bench_read(args.mib, args.repeat)
    if not args.skip_memory:
        print("\n# peak memory of loads_object on hostile blocks")
        bench_memory()
    print("\n# YAML")
    bench_yaml(args.yaml_mib, 3)


if __name__ == "__main__":
    main()
