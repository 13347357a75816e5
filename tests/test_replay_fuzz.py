"""A replay fixture is untrusted input: seeded, structure-aware mutations of every bundled
fixture (values of other JSON types, unknown ids, missing and extra keys, configuration out
of range), written as YAML and as NDJSON, through `replay run` and `replay monitor`.

Each must run (exit 0 or 1: the verdict) or be refused in one line naming where (exit 2),
never an internal error; a refused run writes no report."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from harness import FIXTURES, SEED, assert_answered, json_places, run_cli, value_at

REPLAY = FIXTURES / "replay"
BASES = sorted(p for p in REPLAY.iterdir() if p.suffix in (".yaml", ".json"))
EVIL: list[Any] = [
    None, True, False, 0, -1, 1.5, 10**30, "", "x" * 2000, [], {}, [None], {"id": None},
    "m1", "s0", "missing-id", "user", "tool", "system", "\u202e", "<b>", -(10**30), 1e308,
]
ROUNDS = 60


def _mutate(value: Any, rng: random.Random, hostile: bool) -> Any:
    """1-3 changes at random places; ``hostile``: values of other types and keys deleted
    or added (mostly refused), else values of the same type and elements repeated or
    dropped (mostly run)."""
    for _ in range(rng.randint(1, 3)):
        places = json_places(value)
        if not places:
            break
        at = rng.choice(places)
        holder = value_at(value, at[:-1])
        how = rng.choice(["set", "set", "delete", "add", "repeat"] if hostile else
                         ["same", "same", "same", "repeat", "drop"])
        if how == "drop" and isinstance(holder, list):
            del holder[at[-1]]
        elif how == "same" or how == "drop":
            holder[at[-1]] = _plausible(holder[at[-1]], rng)
        elif how == "delete":
            del holder[at[-1]]
        elif how == "add" and isinstance(holder, dict):
            holder[rng.choice(["id", "role", "content", "toggle", "edit", "delete", "extra",
                               "metrics", "max_context", "trim_percent"])] = rng.choice(EVIL)
        elif how == "repeat" and isinstance(holder, list):
            holder.append(json.loads(json.dumps(holder[at[-1]])))
        else:
            holder[at[-1]] = rng.choice(EVIL)
    return value


def _plausible(old: Any, rng: random.Random) -> Any:
    """A value of ``old``'s own type that a fixture may well hold (a run, not a refusal,
    is then the likely answer): another role, text, id or number in range."""
    if isinstance(old, bool):
        return not old
    if isinstance(old, int):
        return rng.randint(0, 300)
    if isinstance(old, str):
        return rng.choice(["user", "assistant", "system", "tool", "m1", "m2", "s0",
                           "some text " * rng.randint(0, 30), "안녕하세요 " * rng.randint(1, 9)])
    return old


def _as_ndjson(value: Any) -> str | None:
    """The fixture as NDJSON (its head, then a line a turn), when it has that shape."""
    if not isinstance(value, dict) or not isinstance(value.get("turns"), list):
        return None
    head = {k: v for k, v in value.items() if k != "turns"}
    return "\n".join(json.dumps(x) for x in [head, *value["turns"]]) + "\n"


def _answered(done: Any, report: Path, what: str) -> None:
    assert_answered(done, what)
    if done.returncode == 2:
        assert not report.exists(), (what, "a refused run wrote its report")


@pytest.mark.parametrize("seed", range(ROUNDS))
def test_a_mutated_fixture_is_replayed_or_refused(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    base = BASES[seed % len(BASES)]
    text = base.read_text("utf-8")
    value = _mutate(json.loads(text) if base.suffix == ".json" else yaml.safe_load(text), rng,
                    hostile=seed % 2 == 1)
    forms = {"yaml": yaml.safe_dump(value, allow_unicode=True)}
    ndjson = _as_ndjson(value)
    if ndjson is not None:
        forms["ndjson"] = ndjson
    for ext, body in forms.items():
        fixture = tmp_path / f"fx.{ext}"
        fixture.write_text(body, "utf-8")
        for sim in ("run", "monitor"):
            report = tmp_path / f"{sim}-{ext}.json"
            args: tuple[Any, ...] = (("replay", "run", SEED, "-x", fixture, "-o", report)
                                     if sim == "run" else
                                     ("replay", "monitor", "-x", fixture, "-o", report))
            _answered(run_cli(*args, cwd=tmp_path), report, f"{sim} {ext} seed {seed}")
