"""A scripted Anthropic Messages API on loopback, for driving the real Claude Code CLI.

:class:`MessagesAPI` is a real HTTP server on ``127.0.0.1`` (an ephemeral port) in a thread of
the test process, so any process on this machine (a daemon, a worker inside bubblewrap that
shares the host's network) reaches it at :attr:`MessagesAPI.url`: point the CLI's
``ANTHROPIC_BASE_URL`` there. The "model" plays a script (:mod:`tests.messages_script`: a
list of turns, each the content blocks of one assistant message, a turn's check reading the
tool results of the one before), in order, for the main conversation. Every request is kept
in :attr:`MessagesAPI.requests`, so a test can see what reached the model (``CLAUDE.md``,
the memory pack)::

    with MessagesAPI([Turn([bash("make")]), Turn([Text("Built.")])], api_key=KEY) as api:
        ...  # run the CLI with ANTHROPIC_BASE_URL=api.url, ANTHROPIC_API_KEY=KEY, **CLI_ENV
    assert not api.failures and "my rule" in api.conversation[0].text()

The wire format follows Anthropic's documentation (Messages, streaming, errors):

- ``POST /v1/messages``: with ``"stream": true`` an SSE stream (``text/event-stream``, chunked):
  ``message_start`` (the message, empty ``content``), ``ping``, then per block
  ``content_block_start`` / ``content_block_delta`` (``text_delta``, or ``input_json_delta``
  whose ``partial_json`` pieces join into the tool's input) / ``content_block_stop``, then
  ``message_delta`` (``stop_reason`` ``tool_use`` or ``end_turn``, output ``usage``) and
  ``message_stop``. Without ``stream``, the whole message as JSON.
- ``POST /v1/messages/count_tokens``: ``{"input_tokens": N}``.
- Errors: ``{"type": "error", "error": {"type": ..., "message": ...}, "request_id": ...}`` with
  the documented status (401 ``authentication_error`` for a wrong ``x-api-key``, 400
  ``invalid_request_error``, 404 ``not_found_error``). Every answer has a ``request-id``.

What the bundled CLI (2.1.332, run as the daemon runs a worker: ``-p <goal> --output-format
stream-json --verbose --permission-mode acceptEdits --no-session-persistence``) sent, observed
with this server's log and, for other hosts, an ``HTTPS_PROXY`` pointing at it:

- ``POST /v1/messages?beta=true``, streaming, one per model turn (turn N's request carries N
  assistant messages, which is how a request finds its turn: a retry asks for the same one).
  Headers: ``x-api-key``, ``anthropic-version: 2023-06-01``, ``anthropic-beta``
  (``claude-code-20250219,...``), ``x-app: cli``, ``User-Agent: claude-cli/<version>
  (external, sdk-cli)``, ``X-Claude-Code-Session-Id``, ``X-Stainless-*``. Body: ``model``
  (the CLI's default unless ``--model``), ``system`` (text blocks), ``messages`` (``user``,
  ``assistant`` and ``system`` roles), ``tools`` (``Bash``, ``Edit``, ``Write``, ``Read``,
  ``Glob``, ``Grep``, ``Agent``, ... with schemas), ``max_tokens``, ``thinking``,
  ``context_management``, ``output_config``, ``metadata``, ``stream``.
- ``CLAUDE.md`` of the working folder arrives in the first user message, in a
  ``<system-reminder>`` after ``Contents of <path>/CLAUDE.md (project instructions, ...)``,
  with its HTML comments (outside code fences) removed.
- An error answer (400) was retried: six requests for the turn, in two body shapes, then the
  run ended with ``API Error: 400 <message>`` as its result (``is_error`` true, exit 1).
- Without ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1``: also ``HEAD /api/hello`` to the base
  URL (answered 200) and connections to ``api.anthropic.com:443`` (telemetry), whatever the
  base URL. With it (:data:`CLI_ENV`), nothing but the conversation, to the base URL only.
- No title, quota or topic call with a small model and no ``count_tokens`` in these runs
  (both are answered anyway: a request without ``tools`` gets a short text, outside the
  script).

A request whose turn the script does not have, or whose check fails, is answered 400 with
the reason and recorded in :attr:`MessagesAPI.failures` (once per request the CLI sends): the
run fails, and a test that asserts ``not api.failures`` says why.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.messages_script import Block, Text, Turn, request_texts, tool_results

# What a CLI talking to this server needs besides ANTHROPIC_BASE_URL and a key: no traffic
# to any other host (telemetry, update checks), so a run needs no network beyond loopback.
CLI_ENV = {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
SIDE_ANSWER = "OK"


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: Any  # the parsed JSON body, None when there is none
    turn: int | None  # the script's turn this request asked for; None: a side request

    def text(self) -> str:
        """Every text the request carries to the model (system blocks and messages)."""
        return "\n".join(request_texts(self.body)) if isinstance(self.body, dict) else ""


@dataclass
class _State:
    script: Sequence[Turn]
    api_key: str | None
    requests: list[Request] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    arrived: dict[int, threading.Event] = field(default_factory=dict)
    closing: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    ids: Iterator[int] = field(default_factory=itertools.count)

    def event(self, turn: int) -> threading.Event:
        with self.lock:
            return self.arrived.setdefault(turn, threading.Event())


class MessagesAPI:
    """The server; a context manager (started on enter, stopped on exit)."""

    def __init__(
        self,
        script: Sequence[Turn],
        *,
        api_key: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        """Bound at once (``url`` is known before ``start``); ``port`` 0 is an ephemeral one.
        With ``api_key``, a request without that ``x-api-key`` is refused (401)."""
        self._state = _State(list(script), api_key)
        self._server = _Server((host, port), self._state)
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def requests(self) -> list[Request]:
        with self._state.lock:
            return list(self._state.requests)

    @property
    def conversation(self) -> list[Request]:
        """The main conversation's requests (those offering tools), in order; each one's ``turn``
        is the script's turn it asked for (a retried turn appears twice)."""
        return [r for r in self.requests if r.turn is not None]

    @property
    def failures(self) -> list[str]:
        with self._state.lock:
            return list(self._state.failures)

    def arrived(self, turn: int) -> threading.Event:
        """Set when the CLI asks for ``turn`` (0 is its first request)."""
        return self._state.event(turn)

    def _serve(self) -> None:
        self._server.serve_forever(poll_interval=0.05)  # how soon close() is noticed

    def start(self) -> MessagesAPI:
        self._thread.start()
        return self

    def close(self) -> None:
        self._state.closing.set()  # a hanging answer ends
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(10)

    def __enter__(self) -> MessagesAPI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a hanging answer never holds the test process

    def __init__(self, address: tuple[str, int], state: _State) -> None:
        super().__init__(address, _Handler)
        self.state = state


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the CLI's client expects
    server: _Server

    @property
    def state(self) -> _State:
        return self.server.state

    def log_message(self, format: str, *args: Any) -> None:
        pass  # every request is in state.requests

    def do_HEAD(self) -> None:
        self._record(None, None)
        self._send(200, b"", "text/plain")

    def do_GET(self) -> None:
        self._record(None, None)
        self._error(404, "not_found_error", f"no such resource: {self.path}")

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw) if raw else None
        except json.JSONDecodeError as exc:
            self._record(raw.decode(errors="replace"), None)
            return self._error(400, "invalid_request_error", f"the body is not JSON: {exc}")
        path = self.path.split("?", 1)[0]
        if path not in ("/v1/messages", "/v1/messages/count_tokens"):
            self._record(body, None)
            return self._error(404, "not_found_error", f"no such resource: {self.path}")
        if not isinstance(body, dict):
            self._record(body, None)
            return self._error(400, "invalid_request_error", "the body is not a JSON object")
        if self.state.api_key is not None and self.headers.get("x-api-key") != self.state.api_key:
            self._record(body, None)
            return self._error(401, "authentication_error", "invalid x-api-key")
        if path.endswith("/count_tokens"):
            self._record(body, None)
            return self._json(200, {"input_tokens": _tokens(body)})
        self._messages(body)

    def _messages(self, body: dict[str, Any]) -> None:
        if not body.get("tools"):
            # A side request (a title, a summary): not the conversation the script plays.
            self._record(body, None)
            return self._answer(body, [Text(SIDE_ANSWER)], f"side_{next(self.state.ids)}")
        messages = body.get("messages")
        turn = sum(
            1 for m in messages or [] if isinstance(m, dict) and m.get("role") == "assistant"
        )
        self._record(body, turn)
        self.state.event(turn).set()
        problem = self._play(turn, body)
        if problem is not None:
            with self.state.lock:
                self.state.failures.append(problem)
            return self._error(400, "invalid_request_error", problem)
        step = self.state.script[turn]
        if step.hang:
            self.state.closing.wait()
            self.close_connection = True
            return None
        self._answer(body, step.blocks, str(turn))

    def _play(self, turn: int, body: dict[str, Any]) -> str | None:
        """Why ``turn`` cannot be played for ``body``, or None."""
        script = self.state.script
        if turn >= len(script):
            return f"the script has {len(script)} turns; the CLI asked for turn {turn}"
        check = script[turn].check
        if check is None:
            return None
        try:
            check(tool_results(body))
        except Exception as exc:  # any failed check: the test reads it in failures
            return f"turn {turn}: the check of the previous tool results failed: {exc!r}"
        return None

    def _answer(self, body: dict[str, Any], blocks: Sequence[Block], name: str) -> None:
        message = _message(body, blocks, name)
        if body.get("stream"):
            self._stream(message)
        else:
            self._json(200, message)

    def _stream(self, message: dict[str, Any]) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("request-id", self._request_id())
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for event in sse_events(message):
            data = f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _record(self, body: Any, turn: int | None) -> None:
        request = Request(self.command, self.path, dict(self.headers.items()), body, turn)
        with self.state.lock:
            self.state.requests.append(request)

    def _request_id(self) -> str:
        return f"req_scripted_{next(self.state.ids):06d}"

    def _error(self, status: int, kind: str, message: str) -> None:
        request_id = self._request_id()
        error = {"type": kind, "message": message}
        self._json(status, {"type": "error", "error": error, "request_id": request_id})

    def _json(self, status: int, value: object) -> None:
        self._send(status, json.dumps(value).encode(), "application/json")

    def _send(self, status: int, data: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("request-id", self._request_id())
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)


def _message(body: dict[str, Any], blocks: Sequence[Block], name: str) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    for index, block in enumerate(blocks):
        if isinstance(block, Text):
            content.append({"type": "text", "text": block.text})
        else:
            tool_id = f"toolu_scripted_{name}_{index}"
            content.append(
                {"type": "tool_use", "id": tool_id, "name": block.name, "input": block.input}
            )
    uses_tools = any(b["type"] == "tool_use" for b in content)
    return {
        "id": f"msg_scripted_{name}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "claude-scripted"),
        "content": content,
        "stop_reason": "tool_use" if uses_tools else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": _tokens(body), "output_tokens": _tokens(content)},
    }


def sse_events(message: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The documented event flow of a streamed ``message``, its deltas in a few pieces."""
    start = {**message, "content": [], "stop_reason": None}
    start["usage"] = {**message["usage"], "output_tokens": 1}
    yield {"type": "message_start", "message": start}
    yield {"type": "ping"}
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            first = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": piece} for piece in _pieces(block["text"])]
        else:
            first = {**block, "input": {}}
            encoded = json.dumps(block["input"])
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in _pieces(encoded)]
        yield {"type": "content_block_start", "index": index, "content_block": first}
        for delta in deltas:
            yield {"type": "content_block_delta", "index": index, "delta": delta}
        yield {"type": "content_block_stop", "index": index}
    yield {
        "type": "message_delta",
        "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
        "usage": {"output_tokens": message["usage"]["output_tokens"]},
    }
    yield {"type": "message_stop"}


def _pieces(text: str, count: int = 3) -> list[str]:
    """``text`` in up to ``count`` pieces, as a model streams it (never an empty delta)."""
    size = max(1, -(-len(text) // count))
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _tokens(value: object) -> int:
    # Not a tokenizer: a stable count of the right order (about four characters a token).
    return max(1, len(json.dumps(value)) // 4)
