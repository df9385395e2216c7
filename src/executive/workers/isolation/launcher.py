"""The first program in every sandbox: the run's ports, the worker's confinement, then the worker.

A sandboxed worker has a network namespace of its own, with nothing in it but a loopback.
Bubblewrap runs this program there, and it:

1. listens on each port it is given (the egress proxy's, and the API endpoint the daemon
   carries in) and forks a child, the forwarder, that leads each connection to its Unix
   socket (bound in from the host). The forwarder is one thread with one ``epoll`` loop and
   never starts a thread or a process afterwards: a worker that uses up its process budget
   (``pids.max``, which counts the forwarder too) cannot take its own network down. It makes
   itself non-dumpable, so the worker (same uid, no capability) can neither trace it nor
   write its memory to make it connect elsewhere;
2. confines itself: ``no_new_privs`` and a seccomp filter, inherited by all it starts, under
   which ``socket(AF_UNIX, …)``, ``io_uring_setup`` and a ``socketpair`` of any type but
   ``SOCK_STREAM`` and ``SOCK_SEQPACKET`` fail with EPERM (and, for 32-bit programs, every
   socket call). A filter cannot read the address behind ``connect``'s or ``sendto``'s
   pointer, so it keeps the worker from ever holding a Unix socket that could take one: a
   connected stream pair refuses any address (EISCONN), a seqpacket pair drops it and
   delivers to its own peer, and only a datagram socket could be aimed at a path the
   read-only ``/`` shows (``/dev/log``, the journal's, ``/run/systemd/notify``). The worker
   starts with no socket of ours (the forwarder's are its own, and it is not traceable);
3. becomes the worker (exec). The listeners exist before it starts; the forwarder dies with
   the sandbox (its pid namespace ends with the worker).

It runs as ``python -I -S <this file> <spec> <argv...>`` with the interpreter the
daemon runs on (the read-only ``/`` shows it), so it imports the standard library only:
never ``executive``, never the worker's ``PYTHON*`` variables (``-I``).
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import selectors
import signal
import socket
import struct
import sys

CHUNK = 65536  # the most one direction of a connection holds in the forwarder
RETRY_SECONDS = 0.05  # a connection its Unix socket could not take yet is tried again
# The kernel's names (linux/prctl.h, linux/seccomp.h, linux/filter.h, linux/audit.h).
PR_SET_DUMPABLE, PR_SET_SECCOMP, PR_SET_NO_NEW_PRIVS = 4, 22, 38
SECCOMP_MODE_FILTER = 2
RET_ALLOW, RET_EPERM = 0x7FFF0000, 0x00050000 | 1
LD, AND, JEQ, RET = 0x20, 0x54, 0x15, 0x06  # BPF_LD|W|ABS, ALU|AND|K, JMP|JEQ|K, RET|K
ARCH, NR, ARG0, ARG1 = 4, 0, 16, 24  # offsets in seccomp_data (an argument's low half)
X32 = 0x40000000  # x86-64's x32 calls carry this bit
SOCK_TYPE_MASK = 0xF  # socketpair's type, without SOCK_NONBLOCK and SOCK_CLOEXEC
IO_URING_SETUP = 425  # every architecture: io_uring can make sockets without socket(2)
# machine: (audit arch, socket(2), socketpair(2)), and its 32-bit arch with the calls denied
# there outright (i386: socketcall, socket, socketpair; arm: socket, socketpair).
CONFINABLE = {
    "x86_64": ((0xC000003E, 41, 53), (0x40000003, (102, 359, 360, IO_URING_SETUP))),
    "aarch64": ((0xC00000B7, 198, 199), (0x40000028, (281, 288, IO_URING_SETUP))),
}


def seccomp_filter(machine: str) -> bytes:
    """The BPF program, as ``struct sock_filter`` entries; KeyError for a machine we lack."""
    (native, sock, pair), (compat, denied) = CONFINABLE[machine]
    code: list[str | tuple[int, int | str, int | str, int]] = [
        (LD, 0, 0, ARCH),
        (JEQ, 0, "compat", native),
        (LD, 0, 0, NR),
        (AND, 0, 0, 0xFFFFFFFF ^ X32),
        (JEQ, "deny", 0, IO_URING_SETUP),
        (JEQ, "socketpair", 0, pair),
        (JEQ, 0, "allow", sock),
        (LD, 0, 0, ARG0),
        (JEQ, "deny", "allow", socket.AF_UNIX),
        "socketpair",
        (LD, 0, 0, ARG1),
        (AND, 0, 0, SOCK_TYPE_MASK),
        (JEQ, "allow", 0, socket.SOCK_STREAM),
        (JEQ, "allow", "deny", socket.SOCK_SEQPACKET),
        "compat",
        (JEQ, 0, "allow", compat),
        (LD, 0, 0, NR),
        *((JEQ, "deny", 0, number) for number in denied),
        "allow",
        (RET, 0, 0, RET_ALLOW),
        "deny",
        (RET, 0, 0, RET_EPERM),
    ]
    return _assemble(code)


def _assemble(code: list[str | tuple[int, int | str, int | str, int]]) -> bytes:
    """Labels (the strings) resolved into the jumps' offsets; 0 goes on to the next one."""
    labels: dict[str, int] = {}
    program = []
    for item in code:
        if isinstance(item, str):
            labels[item] = len(program)
        else:
            program.append(item)
    out = b""
    for here, (op, jt, jf, k) in enumerate(program):
        jumps = [labels[j] - here - 1 if isinstance(j, str) else j for j in (jt, jf)]
        out += struct.pack("=HBBI", op, *jumps, k)
    return out


def prctl(option: int, arg: int, pointer: int = 0) -> None:
    """prctl(2) with full-width arguments; OSError when the kernel refuses."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int] + [ctypes.c_ulong] * 4
    if libc.prctl(option, arg, pointer, 0, 0) != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"prctl({option}): {os.strerror(code)}")


def confine(machine: str) -> None:
    """No new privileges, then the filter (inherited by every process the worker starts)."""
    program = seccomp_filter(machine)
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = struct.pack("=HxxxxxxQ", len(program) // 8, ctypes.addressof(buffer))
    fprog_buffer = ctypes.create_string_buffer(fprog, len(fprog))
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog_buffer))


def listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(64)
    sock.setblocking(False)
    return sock


class Link:
    """One forwarded connection: the worker's end and the Unix socket's. ``held[i]`` is what
    ``ends[i]`` sent that the other end has not taken yet (one chunk at most: nothing more is
    read from ``ends[i]`` until it is gone)."""

    def __init__(self, client: socket.socket, upstream: socket.socket) -> None:
        self.ends = (client, upstream)
        self.held = [b"", b""]
        self.ended = [False, False]  # ends[i] sent its end of file
        self.shut = [False, False]  # ... and it was passed on (the other end's writing shut)
        self.closed = False

    def read(self, i: int) -> None:
        try:
            data = self.ends[i].recv(CHUNK)
        except BlockingIOError:
            return  # woken for nothing
        self.held[i] = data
        self.ended[i] = not data
        self.write(i)  # most writes need no waiting

    def write(self, i: int) -> None:
        """Pass on what ``ends[i]`` sent, and its end of file once all of it is through."""
        other = self.ends[1 - i]
        if self.held[i]:
            try:
                sent = other.send(self.held[i])
            except BlockingIOError:
                sent = 0
            self.held[i] = self.held[i][sent:]
        if self.ended[i] and not self.held[i] and not self.shut[i]:
            other.shutdown(socket.SHUT_WR)
            self.shut[i] = True

    def wants(self, i: int) -> int:
        """The events ``ends[i]`` waits for: room to read into, something to write."""
        events = 0 if self.ended[i] or self.held[i] else selectors.EVENT_READ
        return events | (selectors.EVENT_WRITE if self.held[1 - i] else 0)


class Forwarder:
    """Every connection of the run in one thread: one ``epoll`` loop, no thread or process
    started after this one, each connection holding two chunks at most. A connection that
    fails is closed alone; running out of descriptors pauses the listeners, never the loop."""

    def __init__(self, listeners: list[tuple[socket.socket, str]]) -> None:
        self.selector = selectors.DefaultSelector()
        self.listeners = listeners
        self.waiting: list[tuple[socket.socket, str]] = []  # the Unix socket's backlog is full
        self.paused = False
        self.resume()

    def run(self) -> None:
        while True:
            busy = self.waiting or self.paused
            for key, mask in self.selector.select(RETRY_SECONDS if busy else None):
                link = key.data
                if not isinstance(link, Link):
                    self.accept(key.fileobj, link)
                elif not link.closed:  # both ends may be ready, and the first closed the link
                    self.pump(link, link.ends.index(key.fileobj), mask)
            if self.paused:
                self.resume()
            waiting, self.waiting = self.waiting, []
            for client, path in waiting:
                self.connect(client, path)

    def accept(self, listener: socket.socket, path: str) -> None:
        while not self.paused:
            try:
                client, _ = listener.accept()
            except BlockingIOError:
                return
            except OSError as exc:
                if exc.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                    self.pause()  # the connection stays queued until a descriptor is free
                continue  # one that was reset before we took it, say
            client.setblocking(False)
            self.connect(client, path)

    def connect(self, client: socket.socket, path: str) -> None:
        try:
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        except OSError:
            self.pause()
            self.waiting.append((client, path))
            return
        upstream.setblocking(False)
        try:
            upstream.connect(path)
        except BlockingIOError:  # its backlog is full: again on the next round
            upstream.close()
            self.waiting.append((client, path))
            return
        except OSError:  # the daemon's end is gone: the worker sees its connection end
            upstream.close()
            client.close()
            return
        self.watch(Link(client, upstream))

    def pump(self, link: Link, i: int, mask: int) -> None:
        try:
            if mask & selectors.EVENT_READ:
                link.read(i)
            if mask & selectors.EVENT_WRITE:
                link.write(1 - i)
        except OSError:  # a reset on one side ends the other; no one to tell in here
            link.shut = [True, True]
        if all(link.shut):
            for end in link.ends:
                if end in self.selector.get_map():
                    self.selector.unregister(end)
                end.close()
            link.closed = True
        else:
            self.watch(link)

    def watch(self, link: Link) -> None:
        """Each end registered for the events it waits for, and only while it waits for one."""
        for i, end in enumerate(link.ends):
            wanted, key = link.wants(i), self.selector.get_map().get(end)
            if key is None and wanted:
                self.selector.register(end, wanted, link)
            elif key is not None and not wanted:
                self.selector.unregister(end)
            elif key is not None and key.events != wanted:
                self.selector.modify(end, wanted, link)

    def pause(self) -> None:
        if not self.paused:
            for sock, _ in self.listeners:
                self.selector.unregister(sock)
            self.paused = True

    def resume(self) -> None:
        for sock, path in self.listeners:
            self.selector.register(sock, selectors.EVENT_READ, path)
        self.paused = False


def serve(listeners: list[tuple[socket.socket, str]]) -> None:
    # Not traceable by the worker (same uid): it cannot make this process connect elsewhere.
    # (Fails closed: an OSError here ends the child, and the worker has no way out.)
    prctl(PR_SET_DUMPABLE, 0)
    # Nothing of ours may mix into the worker's output, or hold its streams open.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    Forwarder(listeners).run()


def main(args: list[str]) -> int:
    spec, argv = json.loads(args[0]), args[1:]
    listeners = []
    for host, port, path, required in spec["forwards"]:
        try:
            listeners.append((listen(host, port), path))
        except OSError as exc:
            if required:
                print(f"sandbox launcher: cannot listen on {host}:{port}: {exc}", file=sys.stderr)
                return 126
    try:
        forwarder = os.fork() if listeners else -1
    except OSError as exc:
        print(f"sandbox launcher: cannot start the forwarder: {exc}", file=sys.stderr)
        return 126
    if forwarder == 0:
        try:
            serve(listeners)
        finally:
            os._exit(0)
    for sock, _ in listeners:
        sock.close()
    if spec["confine"]:
        try:
            confine(os.uname().machine)
        except (OSError, KeyError) as exc:
            print(f"sandbox launcher: cannot confine the worker: {exc!r}", file=sys.stderr)
            return 126
    # Python starts with SIGPIPE and SIGXFSZ ignored, and an ignored signal stays ignored
    # across exec: the worker gets them as a shell would (a full file ends the writer).
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
    try:
        os.execvp(argv[0], argv)
    except OSError as exc:
        print(f"cannot start {argv[0]}: {exc}", file=sys.stderr)
        return 127
    return 0  # never reached: exec replaced this process


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
