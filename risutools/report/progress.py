"""Progress by bytes: what a bar shows while ``ingest`` works, as numbers a test can hold
with a fake clock.

The bar moves by the bytes of the files done (cache hits at once, the others as each file is
finished); the rate and the time left come from the bytes done, measured from the first
report of progress on (so bytes known from the cache, done at once, do not make the rate
look faster than the work is): ``left = (total - done) / rate``.  Before any byte is done
there is no estimate (``-:--:--``); once every byte is done the run is writing the catalog,
which the bar says instead of a time.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class ByteProgress:
    """Files and bytes done of a run, against a clock (``time.monotonic`` by default)."""

    clock: Callable[[], float] = time.monotonic
    files: int = 0  # in the run (0 until known: still finding the files)
    total: int = 0  # their bytes
    files_done: int = 0
    done: int = 0
    started: float | None = None  # when the totals were known
    _first: tuple[float, int] | None = field(default=None, repr=False)  # (when, bytes)
    _last: tuple[float, int] | None = field(default=None, repr=False)

    def start(self, files: int, total: int) -> None:
        self.files, self.total, self.started = files, total, self.clock()

    def update(self, files_done: int, done: int) -> None:
        now = self.clock()
        self.files_done, self.done = files_done, done
        if self._first is None:
            self._first = (now, done)
        self._last = (now, done)

    @property
    def finding(self) -> bool:
        """Still looking for the files (no total yet)."""
        return self.started is None

    @property
    def finishing(self) -> bool:
        """Every byte done: the run writes the catalog."""
        return self.started is not None and self.done >= self.total and \
            self.files_done >= self.files

    def rate(self) -> float | None:
        """Bytes a second: of the bytes done since the first report, over the time since it
        (until a second report: every byte done over the time since the start)."""
        if self._first is None or self.started is None:
            return None
        now = self.clock()
        t1, b1 = self._first
        if self.done > b1 and now > t1:
            return (self.done - b1) / (now - t1)
        if self.done > 0 and now > self.started:
            return self.done / (now - self.started)
        return None

    def left(self) -> float | None:
        """Seconds left, from the bytes done; None while there is no estimate."""
        if self.finishing:
            return 0.0
        rate = self.rate()
        if rate is None or rate <= 0:
            return None
        return max(0, self.total - self.done) / rate


def clock_text(seconds: float | None) -> str:
    """``H:MM:SS`` (rounded up: 0.2 s left is 0:00:01), ``-:--:--`` with no estimate."""
    if seconds is None:
        return "-:--:--"
    whole = int(-(-seconds // 1))
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


def size_text(n: float) -> str:
    """Bytes for people: 16,707 B -> "16.7 kB", never "0.0 MB" for a small run."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:,.1f} {unit}"
    return f"{n:,.0f} B"


def status_text(p: ByteProgress) -> str:
    """What the bar says beside it: the files and bytes done, the rate and the time left
    (``finding files``; ``writing the catalog`` once every byte is done)."""
    if p.finding:
        return "finding files"
    head = f"{p.files_done}/{p.files} files  {size_text(p.done)}/{size_text(p.total)}"
    if p.finishing:
        return f"{head}  writing the catalog"
    rate = p.rate()
    speed = f"{size_text(rate)}/s" if rate is not None else "- B/s"
    return f"{head}  {speed}  ETA {clock_text(p.left())}"
