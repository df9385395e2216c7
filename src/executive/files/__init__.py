"""Every file the daemon reads or writes, and every JSON or YAML text it is handed: its own
state, which must survive a SIGKILL (``_durable``); files someone else controls, never through
a link nor past a limit (``_foreign``); text from untrusted hands, bounded (``_bounded``)."""

from executive.files._bounded import JSON_MAX_DEPTH as JSON_MAX_DEPTH
from executive.files._bounded import JsonLimitError as JsonLimitError
from executive.files._bounded import YamlLimitError as YamlLimitError
from executive.files._bounded import parse_json as parse_json
from executive.files._bounded import parse_yaml as parse_yaml
from executive.files._durable import JsonlTail as JsonlTail
from executive.files._durable import append_jsonl as append_jsonl
from executive.files._durable import atomic_write as atomic_write
from executive.files._durable import read_jsonl as read_jsonl
from executive.files._durable import try_lock as try_lock
from executive.files._durable import write_json as write_json
from executive.files._foreign import UnsafeFile as UnsafeFile
from executive.files._foreign import append_regular as append_regular
from executive.files._foreign import fresh_dir as fresh_dir
from executive.files._foreign import lstat_in as lstat_in
from executive.files._foreign import read_in as read_in
from executive.files._foreign import read_regular as read_regular
from executive.files._foreign import read_text as read_text
from executive.files._foreign import write_in as write_in
