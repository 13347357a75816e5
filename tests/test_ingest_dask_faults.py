"""Dask faults (issue 21): every bad scheduler address, and every scheduler that does not
answer as one, is one line and exit 2 within the connect timeout; nothing is created, no
traceback, no clean-up noise.

Before: ``--scheduler garbage://x`` or ``''`` printed a traceback of the client's clean-up
after 21 s; a port that accepts connections and never answers hung ``ingest`` for more than
300 s (Dask waits for a server's handshake without a limit); a port answering another
protocol was ``internal error: OverflowError`` (Dask read its bytes as a buffer size).

The servers are local sockets run by the test (a thread each): one that never answers, one
that closes at once, one that answers garbage, one that starts a handshake and stalls, and
one that sends a well-framed handshake Dask cannot read.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from harness import SOURCES, run_cli
from hostile_catalog import in_child, one_line

pytest.importorskip("distributed", reason="distributed is not installed")

#: what each server sends once it accepted a connection (None: nothing, ever)
REPLIES: dict[str, bytes | None] = {
    "silent": None,
    "closes": b"",
    "garbage": b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n" + b"\xff" * 64,
    "huge-length": struct.pack("<Q", 1 << 62),
    "stalls": struct.pack("<Q", 64) + b"\x01",  # says 64 bytes follow, sends one
    "unreadable": struct.pack("<QQQ", 24, 1, 8) + b"\xc1" * 8,  # Dask's framing, no msgpack
}


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[str]:
    """``tcp://127.0.0.1:PORT`` of a local server that behaves as ``REPLIES[param]``."""
    reply = REPLIES[request.param]
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def serve() -> None:
        lsock.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = lsock.accept()
            except OSError:
                continue
            if reply is None:
                held.append(conn)  # open, silent
                continue
            with contextlib.suppress(OSError):
                conn.sendall(reply)
            if reply:
                held.append(conn)  # said its piece, stays open
            else:
                conn.close()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    try:
        yield f"tcp://127.0.0.1:{lsock.getsockname()[1]}"
    finally:
        stop.set()
        t.join(5)
        for c in held:
            c.close()
        lsock.close()


def _ingest(tmp: Path, address: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    """``risutools ingest --scheduler ADDRESS`` in a child process; a child still running
    after ``timeout`` seconds fails the test (it hung)."""
    try:
        return subprocess.run(
            [sys.executable, "-m", "risutools", "ingest", str(SOURCES), "-o", str(tmp / "c"),
             "--scheduler", address], capture_output=True, text=True, timeout=timeout,
            cwd=tmp)
    except subprocess.TimeoutExpired:
        pytest.fail(f"ingest --scheduler {address!r} hung")


BAD = ["garbage://x", "", "   ", "tcp://", "tcp://127.0.0.1", "tcp://127.0.0.1:",
       "tcp://127.0.0.1:0", "tcp://127.0.0.1:65536", "tcp://127.0.0.1:http", "127.0.0.1",
       "tcp://:8786", "tcp://[::1]", "file:///etc/passwd", "tcp://a:1\n::error::x"]


@pytest.mark.parametrize("address", BAD)
def test_a_bad_address_is_one_line_and_nothing_is_tried(tmp_path: Path, address: str) -> None:
    r = run_cli("ingest", str(SOURCES), "-o", str(tmp_path / "c"), "--scheduler", address)
    assert r.returncode == 2, (r.stdout, r.stderr)
    line = one_line(r.stderr)
    assert "usage: Invalid value for --scheduler: " in line, line
    assert "\x1b" not in line and "Traceback" not in r.stderr
    assert not (tmp_path / "c").exists()


@pytest.mark.parametrize("address", ["garbage://x", ""])
def test_a_bad_address_from_the_command_line(tmp_path: Path, address: str) -> None:
    """The whole process: one line, and nothing more at its exit (no client clean-up)."""
    r = _ingest(tmp_path, address)
    assert r.returncode == 2 and "usage: Invalid value for --scheduler" in one_line(r.stderr), \
        r.stderr


def _executor_fails(address: str, timeout: str) -> Any:
    from risutools.catalog.cluster import cluster_executor

    with cluster_executor(address, timeout=timeout):
        return "connected"


@pytest.mark.parametrize(("server", "why"), [
    ("silent", "sent nothing within 1 s"),
    ("closes", "closes them without a word"),  # (it said "within 1 s" at once)
    ("garbage", "not as a Dask scheduler"),
    ("huge-length", "not as a Dask scheduler"),
    ("stalls", "did not arrive within 1 s"),
], indirect=["server"])
def test_a_scheduler_that_does_not_answer_as_one_is_one_error(server: str, why: str) -> None:
    """In a child process (the test fails when it hangs), with a 1 s connect timeout."""
    got = in_child(_executor_fails, server, "1s", timeout=60)
    assert got[0] == "raised" and got[1] == "ConfigError", got
    assert got[2] == "scheduler-unreachable" and why in got[3], got


@pytest.mark.parametrize("server", ["silent", "garbage", "unreadable"], indirect=True)
def test_ingest_with_such_a_scheduler_is_one_line_exit_2(tmp_path: Path, server: str) -> None:
    """Through the command line: one line, exit 2, no traceback of Dask's client clean-up
    (``unreadable`` passes the framing check and fails inside Dask)."""
    r = _ingest(tmp_path, server)
    assert r.returncode == 2, (r.stdout, r.stderr)
    line = one_line(r.stderr)
    assert "scheduler-unreachable" in line and "internal error" not in line, line
    assert "Traceback" not in r.stderr and "Exception ignored" not in r.stderr
    assert not (tmp_path / "c").exists()
