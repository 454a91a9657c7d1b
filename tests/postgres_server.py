"""A real PostgreSQL server for the tests, started from the machine's own binaries, and a TCP relay that can
cut every connection to it (a server that goes away, as a network or a restart does).

``PAGEINDEX_TEST_POSTGRES_DSN`` names a server to use instead of starting one.
``PAGEINDEX_REQUIRE_POSTGRES=1`` (set by ``.ci/run``) turns "no server can be started here" from a skip
into a failure.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import select
import shutil
import socket
import subprocess
import tempfile
import threading
from pathlib import Path

__all__ = ["PostgresServer", "Relay", "find_binaries"]


def find_binaries() -> Path | None:
    """The folder of ``initdb`` and ``pg_ctl``: on PATH, else the newest of Debian's versioned folders."""
    found = shutil.which("pg_ctl")
    if found and shutil.which("initdb"):
        return Path(found).resolve().parent
    candidates = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda path: int(Path(path).parts[-3])
    )
    return Path(candidates[-1]).parent if candidates else None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PostgresServer:
    """A throwaway PostgreSQL cluster on 127.0.0.1 (trust login, no fsync), in a temporary folder.

    PostgreSQL refuses to run as root, so under root the cluster belongs to the ``postgres`` user.
    """

    def __init__(self, binaries: Path) -> None:
        self.binaries = binaries
        self.root = Path(tempfile.mkdtemp(prefix="pageindex-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        self._user: str | None = None
        if os.geteuid() == 0:
            self._user = "postgres"
            entry = pwd.getpwnam(self._user)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)

    @property
    def dsn(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *args: str) -> None:
        command = [str(self.binaries / args[0]), *args[1:]]
        if self._user is not None:
            command = ["runuser", "-u", self._user, "--", *command]
        subprocess.run(command, check=True, capture_output=True, timeout=120, cwd=self.root)

    def start(self) -> PostgresServer:
        if not self.data.exists():
            self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8")
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.root} -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.root / "log"), "-w", "start")
        return self

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def replicate(self, primary_dsn: str) -> PostgresServer:
        """Make this (not yet started) cluster a hot standby of ``primary_dsn``: a base backup of the
        primary, streaming its WAL from then on (``start()`` then serves read-only queries)."""
        self._run(
            "pg_basebackup", "-d", primary_dsn, "-D", str(self.data), "-R", "-X", "stream", "-c", "fast"
        )
        return self

    def remove(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError):
            self.stop()
        shutil.rmtree(self.root, ignore_errors=True)


class Relay:
    """A TCP relay on 127.0.0.1 to a server: clients connect to :attr:`port`; :meth:`cut` closes every
    connection through it and refuses new ones until :meth:`restore`."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(64)
        self.port = int(self._listener.getsockname()[1])
        self._open = threading.Event()
        self._open.set()
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def dsn(self, dbname: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{dbname}"

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if not self._open.is_set():
                client.close()
                continue
            try:
                server = socket.create_connection(("127.0.0.1", self.target_port))
            except OSError:
                client.close()
                continue
            with self._lock:
                self._pairs.append((client, server))
            threading.Thread(target=self._pump, args=(client, server), daemon=True).start()

    def _pump(self, client: socket.socket, server: socket.socket) -> None:
        sockets = [client, server]
        try:
            while True:
                readable, _, _ = select.select(sockets, [], [], 0.5)
                for sock in readable:
                    data = sock.recv(65536)
                    if not data:
                        return
                    (server if sock is client else client).sendall(data)
        except OSError:
            return
        finally:
            for sock in sockets:
                with contextlib.suppress(OSError):
                    sock.close()

    def cut(self, *, refuse: bool = True) -> None:
        """Close every connection through the relay; with ``refuse``, new ones too until :meth:`restore`."""
        if refuse:
            self._open.clear()
        with self._lock:
            pairs, self._pairs = self._pairs, []
        for pair in pairs:
            for sock in pair:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

    def restore(self) -> None:
        self._open.set()

    def close(self) -> None:
        self.cut()
        self._listener.close()
