"""The first program in every sandbox: the run's ports, the worker's confinement, then the worker.

A sandboxed worker has a network namespace of its own, with nothing in it but a loopback.
Bubblewrap runs this program there, and it:

1. listens on each port it is given (the egress proxy's, and the API endpoint the daemon
   carries in) and forks a child that forwards each connection to its Unix socket (bound in
   from the host); the child makes itself non-dumpable, so the worker (same uid, no
   capability) can neither trace it nor write its memory to make it connect elsewhere;
2. confines itself: ``no_new_privs`` and a seccomp filter, inherited by all it starts, under
   which ``socket(AF_UNIX, …)``, ``io_uring_setup`` and a ``socketpair`` of any type but
   ``SOCK_STREAM`` and ``SOCK_SEQPACKET`` fail with EPERM (and, for 32-bit programs, every
   socket call). A filter cannot read the address behind ``connect``'s or ``sendto``'s
   pointer, so it keeps the worker from ever holding a Unix socket that could take one: a
   connected stream pair refuses any address (EISCONN), a seqpacket pair drops it and
   delivers to its own peer, and only a datagram socket could be aimed at a path the
   read-only ``/`` shows (``/dev/log``, the journal's, ``/run/systemd/notify``). The worker
   starts with no socket of ours (the forwarder's are its own, and it is not traceable);
3. becomes the worker (exec). The listeners exist before it starts; the child dies with the
   sandbox (its pid namespace ends with the worker).

It runs as ``python -I -S -c <this file's text> <spec> <argv...>`` with the interpreter the
daemon runs on (the read-only ``/`` shows it), so it imports the standard library only:
never ``executive``, never the worker's ``PYTHON*`` variables (``-I``).
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import socket
import struct
import sys
import threading

CHUNK = 65536
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
    with client, socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as upstream:
        try:
            upstream.connect(path)
        except OSError:
            return
        back = threading.Thread(target=pump, args=(upstream, client), daemon=True)
        back.start()
        pump(client, upstream)
        back.join()


def accept(listener: socket.socket, path: str) -> None:
    while True:
        client, _ = listener.accept()
        threading.Thread(target=forward, args=(client, path), daemon=True).start()


def serve(listeners: list[tuple[socket.socket, str]]) -> None:
    # Not traceable by the worker (same uid): it cannot make this process connect elsewhere.
    # (Fails closed: an OSError here ends the child, and the worker has no way out.)
    prctl(PR_SET_DUMPABLE, 0)
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
    for host, port, path, required in spec["forwards"]:
        try:
            listeners.append((listen(host, port), path))
        except OSError as exc:
            if required:
                print(f"sandbox launcher: cannot listen on {host}:{port}: {exc}", file=sys.stderr)
                return 126
    if listeners and os.fork() == 0:
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
