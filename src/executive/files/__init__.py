"""Every file the daemon reads or writes, and every JSON or YAML text it is handed, goes here.

Three kinds, one face:

- **Its own state**, which must survive a SIGKILL at any instant: :func:`atomic_write`,
  :func:`write_json`, :func:`append_jsonl`; read back with :func:`read_jsonl` or, a bit at a
  time, :class:`JsonlTail` (a torn line skipped, never fatal).
- **Files someone else controls** (a worker's output folder, a bundle's files): only a regular
  file, never through a link, never blocking on a FIFO, never more than a limit.
  :func:`read_regular`, :func:`read_text` and :func:`append_regular` take a path whose last
  component may be planted; :func:`read_in`, :func:`write_in`, :func:`lstat_in` and
  :func:`fresh_dir` walk a folder-relative path from its root without following anything.
  Every refusal is an :class:`UnsafeFile` (an ``OSError``) that says why.
- **Text from untrusted hands**: :func:`parse_json` and :func:`parse_yaml` check its size and
  nesting (and YAML's aliases) before parsing; every refusal is a :class:`JsonLimitError` or
  :class:`YamlLimitError` (a ``ValueError``) that says which limit.
"""

from executive.files._bounded import (
    JSON_MAX_DEPTH,
    JsonLimitError,
    YamlLimitError,
    parse_json,
    parse_yaml,
)
from executive.files._durable import (
    JsonlTail,
    append_jsonl,
    atomic_write,
    read_jsonl,
    write_json,
)
from executive.files._foreign import (
    UnsafeFile,
    append_regular,
    fresh_dir,
    lstat_in,
    read_in,
    read_regular,
    read_text,
    write_in,
)

__all__ = [
    "JSON_MAX_DEPTH",
    "JsonLimitError",
    "JsonlTail",
    "UnsafeFile",
    "YamlLimitError",
    "append_jsonl",
    "append_regular",
    "atomic_write",
    "fresh_dir",
    "lstat_in",
    "parse_json",
    "parse_yaml",
    "read_in",
    "read_jsonl",
    "read_regular",
    "read_text",
    "write_in",
    "write_json",
]
