"""Judging a control-socket peer from /proc: uid, namespaces, run mark, worker trees."""

from __future__ import annotations

import os
import subprocess

from executive import peers
from executive.peers import Peer, judge


def _me() -> Peer:
    return Peer(os.getpid(), os.getuid(), os.getgid())


def test_the_operator_itself_is_served():
    assert judge(_me()) is None


def test_another_uid_is_refused():
    assert "is not the daemon's" in (judge(Peer(os.getpid(), os.getuid() + 1, 0)) or "")


def test_a_child_of_a_registered_worker_is_refused_and_served_once_it_is_gone():
    worker = subprocess.Popen(
        ["sh", "-c", "sleep 60 & echo $!; wait"],
        start_new_session=True,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert worker.stdout is not None
        child = int(worker.stdout.readline())  # the shell says its child's pid once forked
        peers.register(worker.pid)
        try:
            assert "worker's process tree" in (judge(Peer(child, os.getuid(), 0)) or "")
        finally:
            peers.unregister(worker.pid)
        assert judge(Peer(child, os.getuid(), 0)) is None
    finally:
        os.killpg(worker.pid, 9)
        worker.wait()


def test_a_process_carrying_a_run_mark_is_refused():
    # Judged once it has printed: during an exec the kernel shows an empty environment for a
    # moment (Popen returns as the exec closes its pipe, before the new stack is set up).
    marked = subprocess.Popen(
        ["sh", "-c", "echo ready; sleep 60"],
        env={"GOAL_CONTRACT": "contract-7", "PATH": "/usr/bin:/bin"},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert marked.stdout.readline() == "ready\n"
        assert "run mark" in (judge(Peer(marked.pid, os.getuid(), 0)) or "")
    finally:
        marked.kill()
        marked.wait()


def test_a_vanished_peer_is_refused():
    gone = subprocess.Popen(["true"])
    gone.wait()
    assert judge(Peer(gone.pid, os.getuid(), 0)) is not None
