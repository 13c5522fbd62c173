"""Where a sweep's points run beyond this machine: a Dask distributed scheduler, checked before it is trusted.

``workbench sweep --executor tcp://host:8786`` hands the points to a Dask cluster
(https://distributed.dask.org). The address is checked first: ``tcp://`` only (``tls://``
needs certificates and ``ucx://`` a UCX build, neither of which the command takes). Then
the peer is probed on a plain socket, within ``timeout_s`` (10 s by default) for the
name lookup, the connection and the first bytes: a Dask scheduler speaks first, sending
its handshake as one length-prefixed message (``distributed.comm.tcp``: a uint64 byte
count, then a uint64 frame count and one uint64 length per frame). A closed port is
refused at once, a peer that sends nothing (an HTTP server waits for a request) when the
time is up, and one that sends anything else (a length of exabytes, as ``HTTP/1.0``
reads) without reading further. Only then does Dask's own client connect.
"""

from __future__ import annotations

import re
import socket
import struct
import threading
import time
from concurrent.futures import Executor

from workbench.errors import ConfigError

CONNECT_TIMEOUT_S = 10.0  # s: name lookup, connection and handshake, each sweep
MAX_HANDSHAKE_BYTES = 1 << 20  # bytes: a scheduler's handshake is a few hundred; more is not one
MAX_HANDSHAKE_FRAMES = 64
ADDRESS = re.compile(r"tcp://(?P<host>[A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\])(?::(?P<port>[0-9]{1,5}))?/?")
DEFAULT_PORT = 8786  # Dask's scheduler port
USAGE = ("expected local or a Dask scheduler address tcp://host:port such as tcp://host:8786 (tls://, ucx:// "
         "and other schemes need settings this command does not take)")


def scheduler_address(address: str) -> tuple[str, int]:
    """(host, port) of a ``tcp://host[:port]`` address; anything else is a :class:`ConfigError`."""
    m = ADDRESS.fullmatch(address)
    port = int(m["port"]) if m and m["port"] else DEFAULT_PORT
    if m is None or not 0 < port < 65536:
        raise ConfigError("--executor", address, USAGE)
    return m["host"].strip("[]"), port


def dask_executor(address: str, timeout_s: float = CONNECT_TIMEOUT_S) -> Executor:
    """A ``concurrent.futures`` executor on the Dask distributed scheduler at ``address``.

    Needs the optional ``cluster`` extra (``pip install 'accel-mapping-workbench[cluster]'``) here and
    ``workbench`` importable on the workers. Close it with ``shutdown()``, which also
    closes the client. Refuses, as a :class:`ConfigError`, an address other than
    ``tcp://host:port``, a missing Dask, and a peer that is not a Dask scheduler or does
    not answer within ``timeout_s`` (see the module docstring).
    """
    scheduler_address(address)
    try:
        from distributed import Client
    except ImportError:
        raise ConfigError("--executor", address, "needs Dask: pip install 'accel-mapping-workbench[cluster]'") from None
    deadline = time.monotonic() + timeout_s
    probe_scheduler(address, timeout_s)
    try:  # a peer may still misbehave after its handshake: whatever the client raises is one line
        client = Client(address, timeout=max(deadline - time.monotonic(), 0.5))
    except Exception as e:  # noqa: BLE001 - a foreign peer's failure, whatever its kind, ends the sweep cleanly
        raise ConfigError("--executor", address, f"no Dask scheduler answered ({e.__class__.__name__})") from None
    return _ClientPool(client)


def probe_scheduler(address: str, timeout_s: float = CONNECT_TIMEOUT_S) -> None:
    """Refuse (:class:`ConfigError`) unless the peer at ``address`` opens like a Dask scheduler within ``timeout_s``."""
    host, port = scheduler_address(address)
    deadline = time.monotonic() + timeout_s

    def refuse(why: str) -> ConfigError:
        return ConfigError("--executor", address, why)

    sock, error = None, OSError("no address")
    for family, kind, proto, _, where in _lookup(host, port, timeout_s, refuse):
        sock = socket.socket(family, kind, proto)
        sock.settimeout(max(deadline - time.monotonic(), 0.001))
        try:
            sock.connect(where)
            break
        except TimeoutError:
            sock.close()
            raise refuse(f"no Dask scheduler answered within {timeout_s:g} s (the connection hung)") from None
        except OSError as e:
            sock.close()
            sock, error = None, e
    if sock is None:
        raise refuse(f"no Dask scheduler answered ({error.strerror or error.__class__.__name__})")
    with sock:
        head = _receive(sock, 8, deadline)
        if head is None:
            raise refuse(f"did not answer as a Dask scheduler within {timeout_s:g} s (it sent nothing; a scheduler "
                         "sends its handshake at once)")
        (total,) = struct.unpack("=Q", head)  # bytes of the message: a frame count and lengths, then the frames
        counted = _receive(sock, 8, deadline) if 16 <= total <= MAX_HANDSHAKE_BYTES else None
        count = struct.unpack("=Q", counted)[0] if counted else 0
        if not (1 <= count <= MAX_HANDSHAKE_FRAMES and 8 * (1 + count) <= total):
            raise refuse(f"is not a Dask scheduler: its first bytes {head!r} are not a handshake")


def _lookup(host: str, port: int, timeout_s: float, refuse) -> list[tuple]:
    """``getaddrinfo`` within ``timeout_s`` (a lookup that hangs is not waited for)."""
    found: list = []

    def resolve() -> None:
        try:
            found.append(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))
        except OSError as e:
            found.append(e)

    worker = threading.Thread(target=resolve, daemon=True)
    worker.start()
    worker.join(timeout_s)
    if not found:
        raise refuse(f"the host name was not resolved within {timeout_s:g} s")
    if isinstance(found[0], OSError):
        raise refuse(f"the host name cannot be resolved ({found[0].strerror or found[0]})")
    return found[0]


def _receive(sock: socket.socket, n: int, deadline: float) -> bytes | None:
    """Exactly ``n`` bytes, or None if the peer closes or the deadline passes first."""
    data = b""
    while len(data) < n:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        sock.settimeout(left)
        try:
            chunk = sock.recv(n - len(data))
        except OSError:  # a timeout among them
            return None
        if not chunk:
            return None
        data += chunk
    return data


class _ClientPool(Executor):
    """A Dask client as an executor whose shutdown closes the client too."""

    def __init__(self, client) -> None:
        self.client = client
        self._pool = client.get_executor(pure=False)  # every point runs, even two alike

    def submit(self, fn, /, *args, **kwargs):
        return self._pool.submit(fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        try:
            self._pool.shutdown(wait=wait and not cancel_futures)
        finally:
            self.client.close()
