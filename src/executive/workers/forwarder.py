"""Inside a sandbox: ports on the sandbox's own loopback that lead to the daemon's Unix sockets.

A sandboxed worker has a network namespace of its own, with nothing in it but a loopback. This
program is the first thing bubblewrap runs there: it listens on each port it is given (the
egress proxy's, and the API endpoint the daemon carries in), forks a child that forwards each
connection to its Unix socket (bound in from the host), and then becomes the worker (exec).
The listeners exist before the worker starts, so there is no moment it could find them
missing. The child dies with the sandbox (its pid namespace ends with the worker).

It runs as ``python -I -S -c <this file's text> <spec> <argv...>`` with the interpreter the
daemon runs on (the read-only ``/`` shows it), so it imports the standard library only:
never ``executive``, never the worker's ``PYTHON*`` variables (``-I``).
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading

CHUNK = 65536


def listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(64)
    return sock


def pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(CHUNK):
            dst.sendall(data)
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        # A reset on one side ends the other; there is no one to tell inside the sandbox.
        for sock in (src, dst):
            sock.close()


def forward(client: socket.socket, path: str) -> None:
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(path)
    except OSError:
        client.close()
        upstream.close()
        return
    back = threading.Thread(target=pump, args=(upstream, client), daemon=True)
    back.start()
    pump(client, upstream)
    back.join()
    client.close()
    upstream.close()


def accept(listener: socket.socket, path: str) -> None:
    while True:
        client, _ = listener.accept()
        threading.Thread(target=forward, args=(client, path), daemon=True).start()


def serve(listeners: list[tuple[socket.socket, str]]) -> None:
    # Nothing of ours may mix into the worker's output, or hold its streams open.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    threads = [
        threading.Thread(target=accept, args=(sock, path), daemon=True) for sock, path in listeners
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def main(args: list[str]) -> int:
    spec, argv = json.loads(args[0]), args[1:]
    listeners = []
    for host, port, path, required in spec:
        try:
            listeners.append((listen(host, port), path))
        except OSError as exc:
            if required:
                print(f"egress forwarder: cannot listen on {host}:{port}: {exc}", file=sys.stderr)
                return 126
    if listeners and os.fork() == 0:
        try:
            serve(listeners)
        finally:
            os._exit(0)
    for sock, _ in listeners:
        sock.close()
    try:
        os.execvp(argv[0], argv)
    except OSError as exc:
        print(f"cannot start {argv[0]}: {exc}", file=sys.stderr)
        return 127
    return 0  # never reached: exec replaced this process


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
