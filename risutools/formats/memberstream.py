"""A forward-only file over a ZIP member's inflated pieces (:class:`MemberReader`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

STEP = 1024 * 1024  # most bytes one forward seek asks for at a time


class MemberReader:
    """A forward-only file over a member's inflated bytes (``read``, ``readinto``, ``seek``).

    Lets the ``.risum`` reader parse ``module.risum`` straight from the inflating
    stream: the member is never held whole in memory.  ``finish`` inflates what
    is left, so the CRC-32 and size checks of :func:`iter_member` always run.
    """

    def __init__(self, pieces: Iterator[bytes]) -> None:
        self._it = pieces
        self._buf = b""
        self._off = 0
        self.total = 0  # bytes the member has given so far (all of them once finished)

    def read(self, n: int = -1) -> bytes:
        parts: list[bytes] = []
        need = n if n >= 0 else 1 << 62
        while need > 0:
            if self._off >= len(self._buf):
                nxt = next(self._it, None)
                if nxt is None:
                    break
                self._buf, self._off = nxt, 0
                self.total += len(nxt)
            take = self._buf[self._off : self._off + need]
            self._off += len(take)
            need -= len(take)
            parts.append(take)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def readinto(self, buf: Any) -> int:
        data = self.read(len(buf))
        buf[: len(data)] = data
        return len(data)

    def seek(self, offset: int, whence: int = 1) -> int:
        if whence != 1 or offset < 0:
            raise OSError("a ZIP member stream only seeks forward")
        while offset > 0:
            got = len(self.read(min(offset, STEP)))
            if not got:
                break
            offset -= got
        return 0

    def finish(self) -> None:
        for piece in self._it:
            self.total += len(piece)
