from __future__ import annotations

import pytest

from executive.workers import shell


@pytest.mark.parametrize(
    ("command", "key"),
    [
        ("python -m pytest -q", "python -m pytest"),
        ("cd app && PYTHONPATH=src timeout 60 python3 -m pytest tests/x.py", "python -m pytest"),
        ("pytest -x | tail -5", "pytest"),
        ("npm test -- --watch=false", "npm test"),
        ("/usr/bin/python3.11 tests/runtests.py utils", "python tests/runtests.py"),
        ("python -c 'import weather'", "python -c"),
        ("git -C repo status", "git repo"),
        ("ls -la", "ls"),
        ("echo 'unclosed", "echo"),
        ("FOO=1", ""),
    ],
)
def test_the_key_is_the_program_the_last_link_runs(command, key):
    assert shell.key(command) == key


def test_a_test_run_is_a_runner_or_a_script_named_for_tests():
    assert shell.is_test("PYTHONPATH=src python -m pytest -q")
    assert shell.is_test("python tests/runtests.py")
    assert shell.is_test("cargo test --all")
    assert not shell.is_test("python setup.py build")
    assert not shell.is_test("grep -r test .")


def test_the_error_line_prefers_the_exception_to_the_runner_count():
    output = (
        "ImportError while importing test module 'tests/test_parser.py'.\n"
        "E   ModuleNotFoundError: No module named 'weather'\n"
        "=========== 1 error in 0.05s ===========\n"
    )
    assert shell.error_line(output) == "ModuleNotFoundError: No module named 'weather'"
    assert shell.error_line("cp: cannot stat 'x': No such file or directory\n") == (
        "cp: cannot stat 'x': No such file or directory"
    )
    assert shell.error_line("\n\n") == ""
    assert len(shell.error_line("Error " * 500)) == 200


def test_the_counts_are_what_the_runner_said_last():
    assert (
        shell.test_counts("..F\n===== 1 failed, 2 passed in 0.1s =====\n") == "1 failed, 2 passed"
    )
    assert shell.test_counts("Ran 3 tests in 0.002s\n\nOK\n") == "3 tests: OK"
    assert shell.test_counts("nothing to see") == ""


def test_a_command_that_only_looks_is_never_half_of_a_fix():
    assert shell.only_looks("grep -rn parse src | head")
    assert shell.only_looks("cd app && ls -la")
    assert shell.only_looks("git diff HEAD~1")
    assert not shell.only_looks("python -m pytest")
    assert not shell.only_looks("sed -i s/a/b/ x.py")


def test_a_separator_inside_quotes_separates_nothing():
    assert shell.key("PYTHONPATH=src python3 -c 'import a; print(a.b(\"1|2\"))'") == "python -c"
    assert shell.key('make build 2>&1 | tee log; echo "done; really"') == "echo"
