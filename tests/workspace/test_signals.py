from __future__ import annotations

import pytest

from executive.workspace.signals import root_signal, signal_tag


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (
            "error: ECONNRESET talking to 10.0.0.7:443 (try 1)",
            "error: ECONNRESET talking to 10.0.0.9:8080 (try 2)",
        ),
        (
            'Traceback...\n  File "/x/a.py", line 3\nValueError: bad id 7f3a9c21d',
            "Traceback\nValueError: bad id 0b9e77aa1",
        ),
        (
            "fatal: could not read /tmp/run-1/file.txt",
            "fatal: could not read /var/run-22/other.txt",
        ),
    ],
)
def test_particulars_are_removed_so_the_same_failure_matches(a, b):
    assert root_signal(a) == root_signal(b)
    assert signal_tag(root_signal(a)) == signal_tag(root_signal(b))


def test_different_failures_differ():
    assert root_signal("error: disk full") != root_signal("permission denied")
    assert root_signal("") == "no error output"
