"""The start and the stop of the worker processes of risutools' own pools (ingest's and
review's).

A pool's worker is forked or spawned by the process that made the pool, and waits on the
pool's task queue.  When that process is killed (``kill -9``, a CI job's timeout), nothing
tells the worker: it holds both ends of the queue's pipes (a forked child inherits them), so
it waits for ever, or blocks for ever writing a result no one reads.  :func:`die_with_parent`,
each pool's ``initializer``, asks Linux to kill the worker when its parent ends
(``prctl(PR_SET_PDEATHSIG, SIGKILL)``), and ends at once a worker whose parent is already
gone; elsewhere there is no such signal, and only the second check is made.  A worker
ignores SIGINT: on a Ctrl-C (which reaches the whole process group) the parent stops its
pool at once (:func:`stop_pool`), whatever the workers are doing.
"""

from __future__ import annotations

import gc
import os
import sys
from contextlib import suppress
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from concurrent.futures import Executor

#: Linux's ``PR_SET_PDEATHSIG`` (``<sys/prctl.h>``)
PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int, direct: bool = True, collector: bool | None = None) -> None:
    """A pool worker's initializer: it ends when ``parent``, the process that started it,
    ends (Linux), and it ignores SIGINT (the parent decides, and stops its pool).

    ``direct``: ``parent`` starts its workers itself (``fork``, ``spawn``; not a fork
    server's workers), so a worker whose parent is another process was orphaned before the
    signal was asked for, and ends at once.  ``collector``: whether the worker's cycle
    collector runs, as the parent's did when it made the pool (a ``spawn`` worker loads
    the program's main module, which turns it off while the modules load); None: as it
    came (a forked worker: as the parent's)."""
    import signal

    if collector is not None:
        (gc.enable if collector else gc.disable)()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        import ctypes

        with suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL),
                                                    0, 0, 0)
    if direct and os.getppid() != parent:  # the parent died before the line above ran
        os._exit(1)


def stop_pool(pool: Executor) -> None:
    """Stop a pool of :func:`die_with_parent` workers at once (a Ctrl-C, an exit): nothing
    more is started, and its workers are terminated and waited for (at most 2 s each)."""
    # (the workers first: shutdown forgets them)
    workers = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for w in workers:
        with suppress(Exception):
            w.terminate()
    for w in workers:
        with suppress(Exception):
            w.join(2)
