"""The scripted Messages API at its wire: what an HTTP client, not the CLI, gets back."""

from __future__ import annotations

import http.client
import json
import threading
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.messages_api import MessagesAPI
from tests.messages_script import Text, ToolResult, Turn, bash, write

KEY = "sk-ant-api03-wire-test-key"
TOOLS = [{"name": "Bash", "input_schema": {"type": "object"}}]


def _post(
    api: MessagesAPI, body: dict[str, Any], path: str = "/v1/messages", key: str = KEY
) -> tuple[int, dict[str, str], bytes]:
    address = urlsplit(api.url)
    conn = http.client.HTTPConnection(address.hostname or "", address.port, timeout=30)
    try:
        headers = {"x-api-key": key, "anthropic-version": "2023-06-01"}
        conn.request(
            "POST", path, json.dumps(body), {**headers, "content-type": "application/json"}
        )
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


def _events(data: bytes) -> list[tuple[str, dict[str, Any]]]:
    """SSE as a client parses it: blank-line separated events, an ``event:`` and a ``data:``."""
    out = []
    for chunk in data.decode().split("\n\n"):
        if chunk.strip():
            fields = dict(line.split(": ", 1) for line in chunk.splitlines())
            out.append((fields["event"], json.loads(fields["data"])))
    return out


def _text(events: list[tuple[str, dict[str, Any]]]) -> str:
    deltas = [e.get("delta", {}) for _, e in events]
    return "".join(d["text"] for d in deltas if d.get("type") == "text_delta")


def _body(*messages: dict[str, Any], stream: bool = True) -> dict[str, Any]:
    first = {"role": "user", "content": "Do it."}
    return {
        "model": "m-1",
        "max_tokens": 100,
        "tools": TOOLS,
        "stream": stream,
        "messages": [first, *messages],
    }


def test_a_streamed_turn_follows_the_documented_event_flow():
    script = [Turn([Text("Looking."), write("/w/a.py", "x = 1\n")])]
    with MessagesAPI(script, api_key=KEY) as api:
        status, headers, data = _post(api, _body())
    assert status == 200 and headers["content-type"].startswith("text/event-stream")
    assert headers["request-id"].startswith("req_")
    events = _events(data)
    assert [name for name, _ in events] == [
        "message_start", "ping",
        "content_block_start", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_stop",
        "content_block_start", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_stop",
        "message_delta", "message_stop",
    ]  # fmt: skip
    assert all(name == event["type"] for name, event in events)
    start = events[0][1]["message"]
    assert start["content"] == [] and start["model"] == "m-1" and start["stop_reason"] is None
    assert _text(events) == "Looking."
    tool = events[7][1]["content_block"]
    assert tool["type"] == "tool_use" and tool["name"] == "Write" and tool["input"] == {}
    pieces = [e["delta"] for _, e in events if e.get("index") == 1 and "delta" in e]
    assert {p["type"] for p in pieces} == {"input_json_delta"}
    assert json.loads("".join(p["partial_json"] for p in pieces)) == {
        "file_path": "/w/a.py",
        "content": "x = 1\n",
    }
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"
    assert events[-2][1]["usage"]["output_tokens"] > 0


def test_an_answer_without_stream_is_the_whole_message():
    with MessagesAPI([Turn([Text("Done.")])], api_key=KEY) as api:
        status, headers, data = _post(api, _body(stream=False))
    message = json.loads(data)
    assert status == 200 and headers["content-type"] == "application/json"
    assert message["type"] == "message" and message["role"] == "assistant"
    assert message["content"] == [{"type": "text", "text": "Done."}]
    assert message["stop_reason"] == "end_turn" and message["usage"]["input_tokens"] > 0


def test_turns_follow_the_conversation_and_a_check_sees_the_tool_results():
    seen: list[list[ToolResult]] = []
    script = [Turn([bash("false")]), Turn([Text("Saw it.")], check=seen.append)]
    with MessagesAPI(script, api_key=KEY) as api:
        _post(api, _body())
        assistant = {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}],
        }
        result = {
            "type": "tool_result",
            "tool_use_id": "t1",
            "content": "Exit code 1",
            "is_error": True,
        }
        status, _, data = _post(api, _body(assistant, {"role": "user", "content": [result]}))
    assert status == 200 and _text(_events(data)) == "Saw it."
    assert seen == [[ToolResult("t1", "Exit code 1", True)]]
    assert [r.turn for r in api.conversation] == [0, 1] and not api.failures


def test_a_failed_check_or_a_missing_turn_is_a_400_the_test_can_read():
    def refuse(results: list[ToolResult]) -> None:
        raise AssertionError("expected a failed command")

    with MessagesAPI([Turn([Text("a")], check=refuse)], api_key=KEY) as api:
        status, _, data = _post(api, _body())
        assert status == 400
        error = json.loads(data)
        assert error["type"] == "error" and error["error"]["type"] == "invalid_request_error"
        assert "expected a failed command" in error["error"]["message"] and error["request_id"]
        assistant = {"role": "assistant", "content": "a"}
        status, _, data = _post(api, _body(assistant, {"role": "user", "content": "more"}))
    assert status == 400 and "has 1 turns; the CLI asked for turn 1" in data.decode()
    assert len(api.failures) == 2


def test_keys_side_requests_and_unknown_paths():
    with MessagesAPI([], api_key=KEY) as api:
        denied = _post(api, _body(), key="sk-wrong")
        side = _post(
            api,
            {
                "model": "small",
                "max_tokens": 10,
                "messages": [{"role": "user", "content": "title?"}],
            },
        )
        counted = _post(api, _body(), path="/v1/messages/count_tokens")
        missing = _post(api, _body(), path="/v1/complete")
    assert denied[0] == 401 and json.loads(denied[2])["error"]["type"] == "authentication_error"
    assert side[0] == 200 and json.loads(side[2])["content"] == [{"type": "text", "text": "OK"}]
    assert counted[0] == 200 and json.loads(counted[2])["input_tokens"] > 0
    assert missing[0] == 404 and json.loads(missing[2])["error"]["type"] == "not_found_error"
    assert [r.turn for r in api.requests] == [None] * 4 and not api.failures
    assert api.requests[1].text() == "title?"


def test_a_hang_turn_answers_nothing_until_the_server_closes():
    api = MessagesAPI([Turn(hang=True)], api_key=KEY).start()
    outcome: list[BaseException | tuple[int, dict[str, str], bytes]] = []

    def ask() -> None:
        try:
            outcome.append(_post(api, _body()))
        except (OSError, http.client.HTTPException) as exc:
            outcome.append(exc)

    asking = threading.Thread(target=ask)
    asking.start()
    assert api.arrived(0).wait(30)
    assert not outcome  # it waits on the model
    api.close()
    asking.join(30)
    assert len(outcome) == 1 and isinstance(outcome[0], http.client.RemoteDisconnected)


@pytest.mark.parametrize("bad", [b"{nope", b"[1]"])
def test_a_body_that_is_not_a_request_is_refused(bad: bytes):
    with MessagesAPI([], api_key=KEY) as api:
        address = urlsplit(api.url)
        conn = http.client.HTTPConnection(address.hostname or "", address.port, timeout=30)
        conn.request("POST", "/v1/messages", bad, {"x-api-key": KEY})
        response = conn.getresponse()
        status, data = response.status, response.read()
        conn.close()
    error = json.loads(data)
    assert status == 400 and error["error"]["type"] == "invalid_request_error"
