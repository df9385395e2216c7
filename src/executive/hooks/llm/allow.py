"""The allow-list of the LLM engine: which shell commands a hook's agent may run.

The agent's one tool is Bash, and Bash may run exactly one ``executive mem`` command per
call, spelled with the prefix the prompt names (this interpreter, ``-m executive --home
<home>``). A read hook may run ``search``, ``get``, ``history``, ``list`` and ``validate``; a
write hook also ``add``; no hook ever ``update`` or ``delete``. Anything that would make the
shell do more than run that one program is refused before it runs: ``;``, ``&``, ``|``,
redirections, subshells, ``$`` (substitution and variables, which could read the
environment) and backticks outside single quotes, a backslash or a newline outside quotes,
and an unterminated quote. Inside single quotes everything is literal, so a JSON payload can
say anything.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from executive.files import parse_json

READ_OPS = ("search", "get", "history", "list", "validate")
WRITE_OPS = ("add",)

# What a refused character would let the shell do, for the message the agent reads.
_HAZARDS = {
    ";": "';' (a second command)",
    "&": "'&' (&&, or a background job)",
    "|": "'|' (a pipe, or ||)",
    "<": "'<' (a redirection)",
    ">": "'>' (a redirection)",
    "(": "'(' (a subshell)",
    ")": "')' (a subshell)",
    "`": "a backtick (command substitution)",
    "$": "'$' (a substitution or a variable)",
    "\\": "a backslash outside quotes",
    "\n": "a newline (a second command)",
    "\r": "a carriage return",
    "\x00": "a NUL byte",
}


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    reason: str = ""  # why it was refused; empty when allowed
    op: str | None = None  # the `mem` command, when allowed
    items: int = 0  # payloads in an `add`

    @property
    def label(self) -> str | None:
        """The name the tool-call histogram shows (``memory.search`` ...), when allowed."""
        return f"memory.{self.op}" if self.allowed and self.op else None


def shell_hazard(command: str) -> str | None:
    """What in ``command`` would let the shell run more than one plain program, or None."""
    quote: str | None = None
    i = 0
    while i < len(command):
        ch = command[i]
        if quote == "'":
            if ch == "'":
                quote = None
        elif quote == '"':
            if ch == "\\":
                i += 1  # \" \\ \$ \` are literal inside double quotes
            elif ch == '"':
                quote = None
            elif ch in "$`":
                return _HAZARDS[ch] + " inside double quotes"
            elif ch == "\x00":
                return _HAZARDS[ch]
        elif ch in "'\"":
            quote = ch
        elif ch in _HAZARDS:
            return _HAZARDS[ch]
        i += 1
    return "an unterminated quote" if quote else None


def payload_count(args: Sequence[str]) -> int:
    """How many payloads an ``add`` carries: one per --payload, the length of --batch."""
    count = 0
    for i, arg in enumerate(args):
        name, _, inline = arg.partition("=")
        if name == "--payload":
            count += 1
        elif name == "--batch":
            value = inline or (args[i + 1] if i + 1 < len(args) else "")
            try:
                # Bounded: an agent's 50,000 nested brackets must not raise RecursionError here.
                batch = parse_json(value)
            except ValueError:  # JsonLimitError included
                batch = None
            count += len(batch) if isinstance(batch, list) and batch else 1
    return max(count, 1)


class AllowList:
    """The commands one hook's agent may run. ``prefix`` is the argv before ``mem``."""

    def __init__(self, prefix: Sequence[str], *, writes: bool) -> None:
        self.prefix = list(prefix)
        self.writes = writes
        self.ops = READ_OPS + (WRITE_OPS if writes else ())

    @property
    def mem_command(self) -> str:
        """The command the prompt names for the memory CLI (the skill's ``{{MEM}}``)."""
        return shlex.join([*self.prefix, "mem"])

    def _refuse(self, why: str) -> Verdict:
        allowed = ", ".join(self.ops)
        return Verdict(
            False,
            f"Refused by the executive's allow-list: {why}. This hook may run only "
            f"`{self.mem_command} <{'|'.join(self.ops)}> ...` ({allowed}), one command per "
            "call, with no shell operators.",
        )

    def check(self, tool_name: str, tool_input: Mapping[str, Any]) -> Verdict:
        if tool_name != "Bash":
            return self._refuse(f"the {tool_name} tool is not available")
        command = tool_input.get("command")
        if not isinstance(command, str) or not command.strip():
            return self._refuse("no command given")
        if tool_input.get("run_in_background"):
            return self._refuse("commands may not run in the background")
        hazard = shell_hazard(command)
        if hazard is not None:
            return self._refuse(f"the command contains {hazard}")
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            return self._refuse(f"the command cannot be parsed ({exc})")
        n = len(self.prefix)
        if argv[:n] != self.prefix or argv[n : n + 1] != ["mem"]:
            return self._refuse("only the executive memory CLI may run")
        op = argv[n + 1] if len(argv) > n + 1 else ""
        if op not in self.ops:
            if op in ("update", "delete"):
                return self._refuse(f"`mem {op}` changes stored memory; no hook may")
            if op in WRITE_OPS:
                return self._refuse(f"`mem {op}` writes memory, and this hook is read-only")
            return self._refuse(f"`mem {op or '(nothing)'}` is not a command this hook may run")
        items = payload_count(argv[n + 2 :]) if op in WRITE_OPS else 0
        return Verdict(True, op=op, items=items)
