"""Running catalog work on a Dask distributed cluster (``--scheduler ADDRESS``).

The batch functions of this package take any :class:`concurrent.futures.Executor`;
:func:`cluster_executor` connects to a Dask scheduler and yields the executor of its
client (``Client.get_executor()``).  Workers only read sources and compute: they
return results to this process, and every write to the catalog happens here,
through the one write path (:mod:`risutools.fsio`).

What a worker needs: risutools of the same version (checked when connecting) and
the source files at the same path (the same machine, or a shared file system).  A
worker that cannot read a file reports that file as failed; the run goes on.

``distributed`` is an optional extra (``pip install 'risutools[dask]'``), imported
only here and only when a scheduler is named.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from concurrent.futures import Executor
from typing import Any

from risutools import __version__
from risutools.errors import Code, ConfigError

CONNECT_TIMEOUT = "10s"
INSTALL_HINT = "pip install 'risutools[dask]'"


def worker_version() -> str:
    """The risutools version of the process this runs in (called on every worker)."""
    return __version__


def _load_distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise ConfigError(
            Code.DASK_MISSING,
            f"running on a Dask cluster needs the distributed package: {INSTALL_HINT}",
            where="--scheduler",
        ) from None
    return distributed


@contextlib.contextmanager
def cluster_executor(address: str, *, timeout: str = CONNECT_TIMEOUT) -> Iterator[Executor]:
    """Connect to the Dask scheduler at ``address`` and yield an executor on its workers.

    Raises :class:`ConfigError` (one line, exit 2) when ``distributed`` is not installed,
    the scheduler cannot be reached, it has no workers, or a worker runs another
    risutools version (or none).
    """
    distributed = _load_distributed()
    try:
        client = distributed.Client(address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        why = " ".join(str(exc).split()) or type(exc).__name__
        raise ConfigError(
            Code.SCHEDULER_UNREACHABLE, f"cannot reach the Dask scheduler {address}: {why}",
            where="--scheduler",
        ) from None
    try:
        _check_workers(client, address)
        yield client.get_executor()
    finally:
        client.close()


def _check_workers(client: Any, address: str) -> None:
    try:
        versions = client.run(worker_version)
    except Exception as exc:  # a worker without risutools cannot even unpickle the call
        why = " ".join(str(exc).split())[:200] or type(exc).__name__
        raise ConfigError(
            Code.WORKER_MISMATCH,
            f"a worker of {address} cannot run risutools {__version__} "
            f"(install the same version there): {why}",
            where="--scheduler",
        ) from None
    if not versions:
        raise ConfigError(Code.NO_WORKERS, f"the Dask scheduler {address} has no workers; "
                          "start some with 'dask worker " + address + "'",
                          where="--scheduler")
    other = sorted(f"{w} has {v}" for w, v in versions.items() if v != __version__)
    if other:
        raise ConfigError(
            Code.WORKER_MISMATCH,
            f"workers must run risutools {__version__}: {', '.join(other)}",
            where="--scheduler",
        )


__all__ = ["INSTALL_HINT", "cluster_executor", "worker_version"]
