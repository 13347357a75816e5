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
import importlib.util
import struct
import time
import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from risutools import __version__
from risutools.errors import Code, ConfigError, UsageError
from risutools.printable import quoted

if TYPE_CHECKING:  # (socket, logging and concurrent.futures: imported where used, as few
    # runs use a cluster; a review's start-up does without them)
    import socket
    from concurrent.futures import Executor

CONNECT_TIMEOUT = "10s"
INSTALL_HINT = "pip install 'risutools[dask]'"


def worker_version() -> str:
    """The risutools version of the process this runs in (called on every worker)."""
    return __version__


def _dask_missing() -> ConfigError:
    return ConfigError(
        Code.DASK_MISSING,
        f"running on a Dask cluster needs the distributed package: {INSTALL_HINT}",
        where="--scheduler",
    )


def _load_distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise _dask_missing() from None
    return distributed


#: the schemes of Dask's address (``scheme://host:port``; no scheme is ``tcp``)
SCHEMES = ("tcp", "tls", "ws", "wss", "inproc", "ucx")
_SOCKET_SCHEMES = ("tcp", "tls", "ws", "wss")
#: the largest first message a Dask scheduler sends (its handshake: a few hundred bytes)
MAX_HANDSHAKE_BYTES = 1 << 16


def _unreachable(address: str, why: str) -> ConfigError:
    return ConfigError(Code.SCHEDULER_UNREACHABLE,
                       f"cannot reach the Dask scheduler {quoted(address)}: {why}",
                       where="--scheduler")


def parse_address(address: str) -> tuple[str, str, int]:
    """(scheme, host, port) of a scheduler address, or a ``usage`` error (one line, nothing
    tried): no scheme is ``tcp``; ``inproc`` and ``ucx`` addresses are left
    to Dask (port 0)."""
    scheme, sep, rest = address.partition("://")
    if not sep:
        scheme, rest = "tcp", address
    if scheme not in SCHEMES:
        raise UsageError("--scheduler", f"{quoted(address)} is not a Dask scheduler address: "
                         f"the scheme must be one of {', '.join(SCHEMES)}")
    if scheme not in _SOCKET_SCHEMES:
        return scheme, rest, 0
    host, _, port = rest.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError("--scheduler", f"{quoted(address)} is not a Dask scheduler address: "
                         "write scheme://host:port (e.g. tcp://10.0.0.5:8786)")
    return scheme, host, int(port)


def probe(address: str, seconds: float) -> None:
    """Before Dask is asked: the scheduler's port accepts a connection within ``seconds``,
    and (``tcp``) sends the first message a Dask server sends, its handshake, in Dask's
    framing (an 8-byte length, then that many bytes of frames); else ConfigError
    ``scheduler-unreachable``.  Dask's own connect waits for that handshake without a
    limit, and reads a length another protocol sends as the size of a buffer."""
    scheme, host, port = parse_address(address)
    if scheme not in _SOCKET_SCHEMES:
        return
    import socket

    deadline = time.monotonic() + seconds
    try:
        sock = socket.create_connection((host, port), timeout=seconds)
    except OSError as exc:
        raise _unreachable(address, " ".join(str(exc).split()) or type(exc).__name__) \
            from None
    with sock:
        if scheme == "tcp":
            _handshake(sock, address, seconds, deadline)


def _read(sock: socket.socket, n: int, deadline: float) -> tuple[bytes, str]:
    """``n`` bytes, or fewer and why: the peer ``closed`` the connection (or reset it), or
    the deadline passed (``""``)."""
    got = bytearray()
    while len(got) < n:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        sock.settimeout(left)
        try:
            chunk = sock.recv(n - len(got))
        except TimeoutError:
            break
        except OSError:  # a reset
            return bytes(got), "closed"
        if not chunk:
            return bytes(got), "closed"
        got += chunk
    return bytes(got), ""


def _handshake(sock: socket.socket, address: str, seconds: float, deadline: float) -> None:
    head, closed = _read(sock, 8, deadline)
    if not head:
        raise _unreachable(address, "it accepts connections, then closes them without a "
                           "word (not a Dask scheduler)" if closed else
                           f"it accepts connections but sent nothing within {seconds:g} s "
                           "(not a Dask scheduler, or a hung one)")
    size = struct.unpack("<Q", head)[0] if len(head) == 8 else 0
    if not 16 <= size <= MAX_HANDSHAKE_BYTES:
        raise _unreachable(address, "it answers, but not as a Dask scheduler (its first "
                           "message is not a Dask handshake)")
    body, closed = _read(sock, size, deadline)
    count = struct.unpack("<Q", body[:8])[0] if len(body) >= 8 else 0
    if len(body) < size:
        raise _unreachable(address, "it closed the connection inside its handshake" if closed
                           else f"its handshake did not arrive within {seconds:g} s")
    if not 0 < count <= 64 or 8 * (count + 1) > size:
        raise _unreachable(address, "it answers, but not as a Dask scheduler (its first "
                           "message is not a Dask handshake)")


def _connect(distributed: Any, address: str, timeout: str) -> Any:
    """``distributed.Client`` connected to ``address``; any failure is one line.  A client
    that failed half-way is marked closed, so its clean-up (at garbage collection, or at
    exit) neither waits 20 s for a scheduler that is not there nor prints a traceback."""
    import logging

    client = distributed.Client.__new__(distributed.Client)
    log = logging.getLogger("distributed")
    level = log.level
    log.setLevel(logging.CRITICAL + 1)  # Dask logs what it could not read, with a traceback
    try:
        client.__init__(address, timeout=timeout, set_as_default=False)
    except Exception as exc:  # Dask raises what its transport raised (OSError, MemoryError...)
        why = " ".join(str(exc).split())[:200]
        with contextlib.suppress(Exception):
            client.status = "closed"
        raise _unreachable(address, f"the connection failed: {type(exc).__name__}"
                           + (f": {why}" if why else "")) from None
    finally:
        log.setLevel(level)
    return client


@contextlib.contextmanager
def cluster_executor(address: str, *, timeout: str = CONNECT_TIMEOUT) -> Iterator[Executor]:
    """Connect to the Dask scheduler at ``address`` and yield an executor on its workers.

    Raises :class:`ConfigError` (one line, exit 2) when ``distributed`` is not installed,
    the address is not a scheduler address, the scheduler cannot be reached or does not
    answer as one within ``timeout`` (:func:`probe`), it has no workers, or a worker runs
    another risutools version (or none).
    """
    if importlib.util.find_spec("distributed") is None:
        raise _dask_missing()
    probe(address, _seconds(timeout))  # before the import of Dask, which takes seconds
    client = _connect(_load_distributed(), address, timeout)
    try:
        _check_workers(client, address)
        with warnings.catch_warnings():  # (Dask's own, about its graphs: never the user's;
            warnings.simplefilter("ignore")  # each line on standard error is one of ours)
            yield client.get_executor()
    finally:
        client.close()


def _seconds(timeout: str) -> float:
    return float(timeout[:-1]) if timeout.endswith("s") else float(timeout)


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


__all__ = ["INSTALL_HINT", "cluster_executor", "parse_address", "probe", "worker_version"]
