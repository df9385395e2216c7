from __future__ import annotations

import os

from executive.workers.record import Experience, runlog
from executive.workers.record import reader as record
from tests.workers import records as r


def read(
    log_path,
    *,
    vendor: str,
    exit_code: int,
    folder: record.FolderDiff | None = None,
    command: str | None = None,
) -> Experience:
    """The experience alone (what the run cost is tested in tests/test_spend.py), of a run in
    the log's folder: a command worker's ``sh w.sh`` or a claude worker, no folder changes."""
    if command is None:
        command = "sh w.sh" if vendor == "command" else ""
    return record.read_run(
        log_path,
        vendor=vendor,
        workdir=log_path.parent,
        folder=folder or record.FolderDiff(),
        command=command,
        exit_code=exit_code,
    )[0]


def test_the_folder_changes_are_created_changed_and_deleted_without_noise(tmp_path):
    (tmp_path / "keep.txt").write_text("a")
    (tmp_path / "edit.py").write_text("a")
    (tmp_path / "gone.md").write_text("a")
    (tmp_path / "CLAUDE.md").write_text("generated")
    before = record.snapshot(tmp_path, frozenset({"CLAUDE.md"}))
    (tmp_path / "edit.py").write_text("longer")
    (tmp_path / "gone.md").unlink()
    (tmp_path / "src" / "__pycache__").mkdir(parents=True)
    (tmp_path / "src" / "__pycache__" / "x.pyc").write_bytes(b"\0")
    (tmp_path / "src" / "new.py").write_text("x")
    (tmp_path / "CLAUDE.md").write_text("generated again")
    (tmp_path / "link").symlink_to("/etc/passwd")
    after = record.snapshot(tmp_path, frozenset({"CLAUDE.md"}))
    found = {(c.path, c.change) for c in record.changes(before, after).changes}
    assert found == {
        ("edit.py", "modified"),
        ("gone.md", "deleted"),
        ("src/new.py", "created"),
        ("link", "created"),  # noted by lstat, never followed
    }


def test_names_the_digest_cannot_keep_are_counted_and_said_never_raised(tmp_path):
    # A worker chooses its file names: one over the path limit and one that is not UTF-8
    # once raised out of the attempt and stopped the queue (issue 37).
    before = record.snapshot(tmp_path)
    (tmp_path / "ok.py").write_text("x")
    deep = tmp_path / ("d" * 100) / ("e" * 100)
    deep.mkdir(parents=True)
    (deep / "f.txt").write_text("x")  # 206 characters from the folder
    os.close(os.open(os.fsencode(tmp_path) + b"/caf\xe9.txt", os.O_CREAT | os.O_WRONLY, 0o644))
    diff = record.changes(before, record.snapshot(tmp_path))
    assert [(c.path, c.change) for c in diff.changes] == [("ok.py", "created")]
    assert diff.unkept == 2 and diff.compared
    assert diff.notes == [
        "2 changed files whose names cannot be kept (over 200 characters, not UTF-8, or not "
        "plain), left out"
    ]
    log = tmp_path / "run.log"
    log.write_text("done\n")
    found = read(log, vendor="command", folder=diff, exit_code=0)
    assert found.changed == ["ok.py"] and found.notes == diff.notes
    found.model_dump_json()  # every string in it can be written


def test_a_folder_over_its_file_count_is_too_large_to_compare_not_walked_on(tmp_path):
    for n in range(5):
        (tmp_path / f"f{n}").write_text("x")
    before = record.snapshot(tmp_path, max_files=3)
    assert len(before.files) == 3 and not before.complete
    diff = record.changes(before, record.snapshot(tmp_path, max_files=3), max_files=3)
    assert not diff.compared and diff.changes == []
    assert "holds over 3 files: too large to compare" in diff.notes[0]
    full = record.snapshot(tmp_path, max_files=5)
    assert full.complete and len(full.files) == 5


def test_a_line_over_the_limit_is_cut_and_the_rest_of_it_skipped(tmp_path):
    log = tmp_path / "run.log"
    with log.open("wb") as handle:
        handle.write(b'{"type": "x", "pad": "' + b"a" * (runlog.MAX_LINE_BYTES + 10) + b'"}\n')
        handle.write(r.init("/w"))
    with log.open("rb") as handle:
        got = list(record.lines(handle))
    assert len(got[0]) == runlog.MAX_LINE_BYTES + 1 and got[1] == r.init("/w")
    reading = runlog.read_lines(got)
    assert reading.cwd == "/w" and reading.skipped == 1


def test_a_claude_log_on_disk_is_read_whole_and_a_missing_one_is_a_partial_digest(tmp_path):
    log = tmp_path / "contract-1.log"
    log.write_bytes(b"".join(r.fixed_run(str(tmp_path))))
    found = read(log, vendor="claude", exit_code=0)
    assert found.fixes and found.complete
    missing = read(tmp_path / "nope.log", vendor="claude", exit_code=0)
    assert not missing.complete and "could not be read" in missing.notes[0]


def test_a_claude_run_that_printed_no_stream_json_is_its_output(tmp_path):
    log = tmp_path / "contract-2.log"
    log.write_text("error: unknown option '--verbose'\n")
    found = read(log, vendor="claude", exit_code=1)
    assert not found.complete and "unknown option" in found.summary


def test_a_command_workers_digest_reads_only_the_tail_of_its_log(tmp_path):
    log = tmp_path / "contract-3.log"
    log.write_text("x" * 100_000 + "\nError: the build failed\n")
    found = read(log, vendor="command", exit_code=2)
    assert found.commands[0].error == "Error: the build failed"
    assert len(found.summary) < 1000


def test_a_capped_log_says_so_and_its_marker_is_never_the_workers_last_word(tmp_path):
    from executive.workers.output import MARKER

    log = tmp_path / "contract-4.log"
    log.write_text("building\ncompiling module 812 of 900\n" + MARKER.format(limit=1048576))
    found = read(log, vendor="command", exit_code=1)
    assert found.commands[0].error == "compiling module 812 of 900"
    assert not found.complete and found.notes[0].startswith("the run log stops at its cap")
    claude = tmp_path / "contract-5.log"
    claude.write_bytes(b"".join(r.fixed_run(str(tmp_path)))[:-40] + MARKER.format(limit=9).encode())
    found = read(claude, vendor="claude", exit_code=0)
    assert not found.complete and found.notes[0].startswith("the run log stops at its cap")
