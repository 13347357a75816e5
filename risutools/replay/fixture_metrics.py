"""A ``conversation-v1`` fixture turn's ``metrics``: what the monitor is told at that turn
(:class:`Metrics`), read and checked (:func:`parse_metrics`; split from ``fixture``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from risutools.errors import Code, ConfigError
from risutools.jsontypes import is_number

_METRIC_KEYS = ("age_s", "used_pct", "remaining_pct", "available",
                # the monitor's own bridge-file record (the status line writes it, the hook
                # reads it): session_id, remaining_percentage, used_pct, timestamp
                "session_id", "remaining_percentage", "timestamp")


@dataclass(frozen=True, slots=True)
class Metrics:
    """What the monitor is told at one turn (``None`` fields = not given)."""

    available: bool = True
    age_s: float | None = None
    used_pct: float | None = None
    session_id: str | None = None  # a bridge record's session
    timestamp: float | None = None  # a bridge record's time (seconds since the epoch)
    note: str = ""  # one line: the record's two percentages disagree (which was taken)



def _err(where: str, why: str) -> ConfigError:
    return ConfigError(Code.BAD_FIXTURE, why, where=where)


def _number(v: Any, where: str, lo: float, hi: float) -> float:
    if not is_number(v):
        raise _err(where, f"must be a number between {lo} and {hi}, got {v!r}")
    if not lo <= v <= hi:
        raise _err(where, f"must be a number between {lo} and {hi}, got {v!r}")
    return float(v)


def parse_metrics(raw: Any, where: str) -> Metrics:
    """A turn's ``metrics`` (a mapping, or null: no metrics this turn), checked."""
    if raw is None:
        return Metrics(available=False)
    if not isinstance(raw, dict):
        raise _err(where, "must be a mapping or null")
    for key in sorted(raw):
        if key not in _METRIC_KEYS:
            raise _err(where, f"unknown key {key!r} (accepted: {', '.join(_METRIC_KEYS)})")
    available = raw.get("available", True)
    if not isinstance(available, bool):
        raise _err(f"{where}.available", f"must be true or false, got {available!r}")
    age = raw.get("age_s")
    age_f = None if age is None else _number(age, f"{where}.age_s", 0, 10**9)
    if "used_pct" in raw and "remaining_pct" in raw:
        raise _err(where, "give used_pct or remaining_pct, not both")
    used: float | None = None
    if raw.get("used_pct") is not None:
        used = _number(raw["used_pct"], f"{where}.used_pct", 0, 1000)
    elif raw.get("remaining_pct") is not None:
        used = 100.0 - _number(raw["remaining_pct"], f"{where}.remaining_pct", -900, 100)
    used, note = _bridge(raw, where, used)
    session = raw.get("session_id")
    if session is not None and (not isinstance(session, str) or not 0 < len(session) <= 200):
        raise _err(f"{where}.session_id", "must be text of 1-200 characters")
    stamp = raw.get("timestamp")
    stamp_f = None if stamp is None else _number(stamp, f"{where}.timestamp", 0, 10**11)
    return Metrics(available=available, age_s=age_f, used_pct=used, session_id=session,
                   timestamp=stamp_f, note=note)


def _bridge(raw: dict[str, Any], where: str, used: float | None) -> tuple[float | None, str]:
    """A bridge record's ``remaining_percentage`` beside ``used_pct``: both taken when they
    agree (to 0.01), else the remaining share (what the monitor compares with its
    thresholds) and one line naming the conflict."""
    if raw.get("remaining_percentage") is None:
        return used, ""
    if "remaining_pct" in raw:
        raise _err(where, "give remaining_pct or remaining_percentage, not both")
    rem = _number(raw["remaining_percentage"], f"{where}.remaining_percentage", -900, 100)
    if used is None or abs(used + rem - 100.0) <= 0.01:
        return 100.0 - rem, ""
    return 100.0 - rem, (f"{where}: the bridge record says used_pct {used:g} and "
                         f"remaining_percentage {rem:g}, which do not add up to 100; the "
                         "monitor takes remaining_percentage (what its thresholds compare)")
