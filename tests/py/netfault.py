"""A TCP proxy in front of a catalog server that can lose a commit's answer or stop the server.

Tests point a catalog at ``proxy.port`` instead of the server's. ``cut_at(pattern)`` arms it: the
next client message matching ``pattern`` (e.g. a SQL ``COMMIT``) is passed to the server, the
server's answer is awaited and thrown away, and every connection is closed, so the server has
done what the client cannot know. With ``stay_down`` the proxy then refuses connections (the
server is gone) until ``up()``; ``down()`` stops it at once.
"""

from __future__ import annotations

import contextlib
import re
import select
import socket
import threading
from collections.abc import Iterator

from servers import free_port


class CuttingProxy:
    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.port = free_port()
        self._lock = threading.Lock()
        self._pattern: re.Pattern[bytes] | None = None
        self._after: re.Pattern[bytes] | None = None
        self._stay_down = False
        self._conns: list[socket.socket] = []
        self._listener: socket.socket | None = None
        self._stop = threading.Event()
        #: Set once an armed cut has happened (the server answered and the answer was dropped).
        self.cut = threading.Event()
        self.up()

    # -- control ---------------------------------------------------------------------------

    def up(self) -> None:
        """Accept connections again (on the same port)."""
        with self._lock:
            if self._listener is not None:
                return
            ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            ls.bind(("127.0.0.1", self.port))
            ls.listen(64)
            self._listener = ls
        threading.Thread(target=self._accept, args=(ls,), daemon=True).start()

    def down(self) -> None:
        """Refuse new connections and close every open one (the server stopped)."""
        with self._lock:
            ls, self._listener = self._listener, None
            conns, self._conns = self._conns, []
        if ls is not None:
            # Closing alone leaves a listener that a thread is blocked accepting on still bound
            # (and accepting) on Linux; shutting it down wakes that thread.
            _close(ls)
        for c in conns:
            _close(c)

    def cut_at(self, pattern: bytes, after: bytes | None = None, stay_down: bool = False) -> None:
        """Arm a cut at the next client message matching ``pattern`` (a regular expression) that
        follows one matching ``after`` (if given)."""
        with self._lock:
            self._pattern = re.compile(pattern)
            self._after = re.compile(after) if after is not None else None
            self._stay_down = stay_down

    def close(self) -> None:
        self._stop.set()
        self.down()

    # -- forwarding ------------------------------------------------------------------------

    def _accept(self, ls: socket.socket) -> None:
        while not self._stop.is_set():
            try:
                client, _ = ls.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.target, timeout=10)
            except OSError:
                _close(client)
                continue
            with self._lock:
                if self._listener is not ls:  # went down meanwhile
                    _close(client)
                    _close(server)
                    return
                self._conns += [client, server]
            threading.Thread(target=self._pump, args=(client, server), daemon=True).start()

    def _pump(self, client: socket.socket, server: socket.socket) -> None:
        try:
            while True:
                ready, _, _ = select.select([client, server], [], [], 0.5)
                if self._stop.is_set():
                    return
                for s in ready:
                    data = s.recv(65536)
                    if not data:
                        return
                    if s is client:
                        server.sendall(data)
                        with self._lock:
                            armed = self._after is None
                            if self._after is not None and self._after.search(data) is not None:
                                self._after = None
                            hit = armed and self._pattern is not None and self._pattern.search(data) is not None
                            if hit:
                                self._pattern = None
                        if hit:
                            server.settimeout(30)
                            server.recv(65536)  # the server has answered: it did the work
                            self.cut.set()
                            if self._stay_down:
                                self.down()
                            return
                    else:
                        client.sendall(data)
        except OSError:
            return
        finally:
            _close(client)
            _close(server)


def _close(s: socket.socket) -> None:
    with contextlib.suppress(OSError):
        s.shutdown(socket.SHUT_RDWR)
    s.close()


def proxied(host: str, port: int) -> Iterator[CuttingProxy]:
    """A proxy for a fixture: yields it, closes it after."""
    p = CuttingProxy(host, port)
    try:
        yield p
    finally:
        p.close()
