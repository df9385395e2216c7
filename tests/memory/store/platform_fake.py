"""A local fake of the mem0 Platform: a real HTTP server on 127.0.0.1 that the real SDK talks to.

It enforces the wire contract as the Platform docs state it (docs/openapi.json and
docs/platform/features/v2-memory-filters.mdx of mem0ai/mem0, Aug 2026) for the paths the
2.2.1 SDK uses. Deliberate choices, where the docs moved or say "silently":

* Filter root must be ``AND``/``OR``/``NOT`` (the docs before 2026-07-30 required it; the
  current docs also accept flat roots). A root mixing ``AND`` and ``OR`` is rejected, where
  the real API silently drops the ``OR`` branch.
* Entity scoping: ``scoping="implicit-null"`` (default) is the older documented rule, an
  entity field mentioned nowhere in the filter must be null; ``scoping="mentioned-only"`` is
  the current one ("unmentioned entities are not constrained").
* Writes: ``infer=False`` stores each non-system message verbatim with every entity id given
  and drops an exact repeat in the same scope (SUCCEEDED with no result); ``infer=True``
  attributes user messages to ``user_id`` only and assistant messages to ``agent_id`` only.
* ``add_mode``: ``queued`` answers ``{"event_id", "status": "PENDING"}`` (the add-memories
  reference), ``queued-list`` answers ``{"results": [{"message", "status", "event_id"}]}``
  (the shape in mem0-offline.md §5), ``sync`` answers the Direct Import page's synchronous
  ``{"status": "SUCCEEDED", "results": [...]}``. A queued event goes PENDING, RUNNING, then
  its final status over successive polls; :meth:`FakePlatform.script` changes the next write.

Search ranking is token overlap; it is a fake, ranking is not under test.
"""

from __future__ import annotations

import json
import re
import threading
import uuid
from collections import deque
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

ENTITY = ("user_id", "agent_id", "app_id", "run_id")
TIME = ("created_at", "updated_at", "timestamp", "expiration_date")
LOGICAL = ("AND", "OR", "NOT")
ALLOWED = (
    *LOGICAL,
    *ENTITY,
    *TIME,
    "text",
    "categories",
    "metadata",
    "keywords_search",
    "memory_ids",
    "keywords",
)
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_WORD = re.compile(r"[a-z0-9]+")


class ApiError(Exception):
    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(body)
        self.status = status
        self.body = body


def bad(message: str, kind: str = "ValidationError") -> ApiError:
    return ApiError(400, {"detail": f"{kind}: {message}"})


def filter_error(message: str) -> ApiError:
    return bad(message, "FilterValidationError")


@dataclass
class Seen:
    """One request as the fake received it, and what it answered."""

    method: str
    path: str
    query: dict[str, list[str]]
    body: Any
    authorization: str | None
    status: int = 0
    answer: Any = None


@dataclass
class Script:
    """What the next write does: ``succeed``, ``fail`` or ``hang`` (RUNNING forever), after
    ``errors`` polls answered with HTTP 500."""

    outcome: str = "succeed"
    errors: int = 0


@dataclass
class Event:
    id: str
    payload: dict[str, Any]
    script: Script
    polls: int = 0
    status: str = "PENDING"
    results: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    created_at: str = ""


def now() -> str:
    return datetime.now(UTC).isoformat()


# --- the v2 filter grammar ----------------------------------------------------------------
def validate(node: Any, *, root: bool = False) -> None:
    if not isinstance(node, dict) or not node:
        raise filter_error("a filter condition must be a non-empty object")
    if root and not (len(node) == 1 and next(iter(node)) in LOGICAL):
        raise filter_error("the root must be exactly one of AND, OR, NOT")
    if "AND" in node and "OR" in node:
        raise filter_error("AND and OR siblings at one level (the OR branch would be dropped)")
    for key, value in node.items():
        if key not in ALLOWED:
            raise bad(f"Top-level key must be a logical operator or an allowed field: {ALLOWED}")
        if key in ("AND", "OR"):
            if not isinstance(value, list) or not value:
                raise filter_error(f"{key} takes a non-empty list of conditions")
            for child in value:
                validate(child)
        elif key == "NOT":
            for child in value if isinstance(value, list) else [value]:
                validate(child)
        elif key in ENTITY:
            check_ops(key, value, {"eq", "ne", "in"}, scalar=True)
        elif key in TIME:
            check_ops(key, value, {"gt", "gte", "lt", "lte", "ne", "in"}, scalar=True)
        elif key == "metadata":
            if not isinstance(value, dict) or not value:
                raise filter_error("metadata takes an object of top-level keys")
            for name, condition in value.items():
                check_ops(f"metadata.{name}", condition, {"eq", "ne", "contains"}, scalar=True)
        elif key == "categories":
            check_ops(key, value, {"in", "contains"}, scalar=False)
        elif key == "keywords":
            check_ops(key, value, {"contains", "icontains"}, scalar=False)
        elif key == "memory_ids" and not isinstance(value, list):
            raise filter_error("memory_ids takes a list")


def check_ops(name: str, value: Any, ops: set[str], *, scalar: bool) -> None:
    if isinstance(value, dict):
        if len(value) != 1 or next(iter(value)) not in ops:
            raise filter_error(f"{name}: operators allowed are {sorted(ops)}, got {list(value)}")
        op, operand = next(iter(value.items()))
        if op == "in" and not isinstance(operand, list):
            raise filter_error(f"{name}: 'in' takes a list")
    elif isinstance(value, list) or not scalar:
        raise filter_error(f"{name}: unsupported value {value!r}")


def mentioned(node: Any, found: set[str]) -> set[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ENTITY:
                found.add(key)
            elif key in LOGICAL:
                mentioned(value, found)
    elif isinstance(node, list):
        for child in node:
            mentioned(child, found)
    return found


def positive_entity(node: Any, negated: bool = False) -> bool:
    if isinstance(node, list):
        return any(positive_entity(child, negated) for child in node)
    if not isinstance(node, dict):
        return False
    for key, value in node.items():
        if key in ENTITY and not negated and not (isinstance(value, dict) and "ne" in value):
            return True
        if key in LOGICAL and positive_entity(value, negated or key == "NOT"):
            return True
    return False


def compare(actual: Any, condition: Any) -> bool:
    if condition == "*":
        return actual is not None
    if not isinstance(condition, dict):
        return actual == condition
    op, operand = next(iter(condition.items()))
    if op == "eq":
        return actual == operand
    if op == "ne":
        return actual != operand
    if op == "in":
        return actual in operand
    if op == "contains":
        return actual is not None and operand in actual
    if op == "icontains":
        return actual is not None and str(operand).lower() in str(actual).lower()
    if actual is None:
        return False
    return {
        "gt": actual > operand,
        "gte": actual >= operand,
        "lt": actual < operand,
        "lte": actual <= operand,
    }[op]


def evaluate(node: dict[str, Any], memory: dict[str, Any]) -> bool:
    for key, value in node.items():
        if key == "AND":
            ok = all(evaluate(child, memory) for child in value)
        elif key == "OR":
            ok = any(evaluate(child, memory) for child in value)
        elif key == "NOT":
            ok = not all(
                evaluate(c, memory) for c in (value if isinstance(value, list) else [value])
            )
        elif key == "metadata":
            meta = memory["metadata"] or {}
            ok = all(compare(meta.get(k), v) for k, v in value.items())
        elif key == "categories":
            op, operand = next(iter(value.items()))
            cats = memory.get("categories") or []
            ok = (
                bool(set(cats) & set(operand))
                if op == "in"
                else any(operand.lower() in c.lower() for c in cats)
            )
        elif key == "keywords":
            ok = compare(memory["memory"], value)
        elif key == "memory_ids":
            ok = memory["id"] in value
        else:
            ok = compare(memory.get(key), value)
        if not ok:
            return False
    return True


# --- the server ----------------------------------------------------------------------------
class FakePlatform:
    """Start with ``with FakePlatform() as fake:``; point the SDK at ``fake.url``."""

    def __init__(self, api_key: str = "m0-fake-key-0123456789abcdef", **options: Any) -> None:
        self.api_key = api_key
        self.scoping: str = options.get("scoping", "implicit-null")
        self.add_mode: str = options.get("add_mode", "queued")
        # A ping is answered at once, or held until the test lets it go (see hold_pings).
        self.ping_arrived = threading.Event()
        self.ping_gate: threading.Event | None = None
        self.ping_released: bool | None = None
        self.memories: dict[str, dict[str, Any]] = {}
        self.history: dict[str, list[dict[str, Any]]] = {}
        self.events: dict[str, Event] = {}
        self.seen: list[Seen] = []
        self._scripts: deque[Script] = deque()
        self._lock = threading.RLock()
        self._server: ThreadingHTTPServer | None = None

    # -- control --
    def __enter__(self) -> FakePlatform:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body leave in separate writes: with Nagle on, each answer on a
            # kept-alive connection waited ~40 ms for the client's delayed ACK.
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def handle_one(self) -> None:
                fake.dispatch(self)

            do_GET = do_POST = do_PUT = do_DELETE = handle_one

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def script(self, outcome: str = "succeed", *, errors: int = 0) -> None:
        """Make the next write end with ``outcome`` after ``errors`` polls answered 500."""
        assert outcome in ("succeed", "fail", "hang")
        self._scripts.append(Script(outcome, errors))

    def insert(self, text: str, metadata: dict[str, Any] | None = None, **ids: str | None) -> str:
        """Seed one memory directly (no HTTP), as if a write had succeeded long ago."""
        with self._lock:
            return self._store(text, {k: ids.get(k) for k in ENTITY}, metadata or {}, None)

    def hold_pings(self) -> threading.Event:
        """Hold the next ping until the event returned is set (or 30 s pass: ``ping_released``
        then says False). ``ping_arrived`` is set once the ping is being held."""
        self.ping_arrived.clear()
        self.ping_released = None
        self.ping_gate = threading.Event()
        return self.ping_gate

    def requests(self, path_prefix: str, method: str | None = None) -> list[Seen]:
        return [
            s
            for s in self.seen
            if s.path.startswith(path_prefix) and (method is None or s.method == method)
        ]

    # -- HTTP plumbing --
    def dispatch(self, handler: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(handler.path)
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode(errors="replace")
        seen = Seen(
            handler.command,
            parts.path,
            parse_qs(parts.query),
            body,
            handler.headers.get("Authorization"),
        )
        with self._lock:
            self.seen.append(seen)
        try:
            if seen.authorization != f"Token {self.api_key}":
                raise ApiError(
                    401, {"detail": "Invalid API key. You can find your API key on the dashboard."}
                )
            status, answer = 200, self.route(seen)
        except ApiError as exc:
            status, answer = exc.status, exc.body
        seen.status, seen.answer = status, answer
        data = json.dumps(answer).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def route(self, req: Seen) -> Any:
        m, p = req.method, req.path
        if m == "GET" and p == "/v1/ping/":
            self.ping_arrived.set()
            if self.ping_gate is not None:
                self.ping_released = self.ping_gate.wait(timeout=30)
            return {
                "status": "ok",
                "org_id": "org-fake",
                "project_id": "proj-fake",
                "user_email": "fake@example.invalid",
            }
        with self._lock:
            if m == "POST" and p == "/v3/memories/add/":
                return self.add(req.body)
            if m == "POST" and p == "/v3/memories/search/":
                return self.search(req.body)
            if m == "POST" and p == "/v3/memories/":
                return self.list_memories(req.body, req.query)
            if (found := re.fullmatch(r"/v1/event/([^/]+)/", p)) and m == "GET":
                return self.poll(found[1])
            if (found := re.fullmatch(r"/v1/memories/([^/]+)/history/", p)) and m == "GET":
                return self.history.get(self._memory(found[1])["id"], [])
            if found := re.fullmatch(r"/v1/memories/([^/]+)/", p):
                memory = self._memory(found[1])
                if m == "GET":
                    return self._shape(memory, run_key="session_id")
                if m == "PUT":
                    return self.update(memory, req.body)
                if m == "DELETE":
                    del self.memories[memory["id"]]
                    return {"message": "Memory deleted successfully!"}
        raise ApiError(404, {"detail": "Not found."})

    # -- endpoints --
    def add(self, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            raise bad("messages is required")
        for message in body["messages"]:
            if (
                not isinstance(message, dict)
                or message.get("role") not in ("user", "assistant", "system")
                or not isinstance(message.get("content"), str)
            ):
                raise bad("each message needs a role (user|assistant|system) and string content")
        ids = {k: body.get(k) for k in ENTITY}
        if not any(ids.values()):
            raise bad("At least one entity ID (user_id, agent_id, app_id, run_id) is required")
        if "filters" in body:
            raise bad("filters are not accepted on add")
        if not isinstance(body.get("metadata", {}), dict):
            raise bad("metadata must be an object")
        if "timestamp" in body and not isinstance(body["timestamp"], int):
            raise bad("timestamp must be an integer (Unix epoch seconds)")
        event = Event(
            str(uuid.uuid4()),
            body,
            self._scripts.popleft() if self._scripts else Script(),
            created_at=now(),
        )
        self.events[event.id] = event
        if self.add_mode == "sync":
            self._finish(event)
            return {
                "message": "Memories stored successfully",
                "status": event.status,
                "event_id": event.id,
                "results": event.results,
            }
        if self.add_mode == "queued-list":
            return {
                "results": [
                    {
                        "message": "Memory processing has been queued for background execution",
                        "status": "PENDING",
                        "event_id": event.id,
                    }
                ]
            }
        return {"event_id": event.id, "status": "PENDING"}

    def poll(self, event_id: str) -> dict[str, Any]:
        event = self.events.get(event_id)
        if event is None:
            raise ApiError(
                404, {"error": "Event not found or you don't have permission to access it."}
            )
        if event.script.errors > 0:
            event.script.errors -= 1
            raise ApiError(500, {"detail": "Internal server error"})
        event.polls += 1
        if event.status in ("PENDING", "RUNNING") and event.polls >= 2:
            event.status = "RUNNING"
            if event.polls >= 3 and event.script.outcome != "hang":
                self._finish(event)
        return {
            "id": event.id,
            "event_type": "ADD",
            "status": event.status,
            "payload": event.payload,
            "metadata": None,
            "results": event.results,
            "created_at": event.created_at,
            "updated_at": now(),
            "latency": 12.5,
            "error": event.error,
        }

    def _finish(self, event: Event) -> None:
        if event.script.outcome == "fail":
            event.status, event.error = "FAILED", "Memory processing failed: simulated failure"
            return
        body = event.payload
        ids = {k: body.get(k) for k in ENTITY}
        stamp = body.get("timestamp")
        created = datetime.fromtimestamp(stamp, UTC).isoformat() if stamp is not None else None
        for message in body["messages"]:
            if message["role"] == "system":
                continue
            scope = dict(ids)
            if body.get("infer", True):  # extraction attributes each fact to its speaker
                scope["agent_id" if message["role"] == "user" else "user_id"] = None
            text = message["content"]
            if any(
                m["memory"] == text and all(m[k] == scope[k] for k in ENTITY)
                for m in self.memories.values()
            ):
                continue  # an exact repeat in the same scope is dropped
            memory_id = self._store(text, scope, body.get("metadata") or {}, created)
            event.results.append({"id": memory_id, "data": {"memory": text}, "event": "ADD"})
        event.status = "SUCCEEDED"

    def _store(
        self, text: str, ids: dict[str, Any], metadata: dict[str, Any], created: str | None
    ) -> str:
        memory_id = str(uuid.uuid4())
        stamp = created or now()
        self.memories[memory_id] = {
            "id": memory_id,
            "memory": text,
            **ids,
            "metadata": dict(metadata),
            "categories": [],
            "created_at": stamp,
            "updated_at": stamp,
        }
        self.history[memory_id] = [self._history_entry(memory_id, None, text, "ADD")]
        return memory_id

    def _history_entry(
        self, memory_id: str, old: str | None, new: str, event: str
    ) -> dict[str, Any]:
        memory = self.memories.get(memory_id, {})
        stamp = now()
        return {
            "id": str(uuid.uuid4()),
            "memory_id": memory_id,
            "input": [],
            "old_memory": old,
            "new_memory": new,
            "user_id": memory.get("user_id"),
            "agent_id": memory.get("agent_id"),
            "app_id": memory.get("app_id"),
            "session_id": memory.get("run_id"),
            "event": event,
            "metadata": memory.get("metadata"),
            "created_at": stamp,
            "updated_at": stamp,
        }

    def _filtered(self, body: Any, *, search: bool) -> list[dict[str, Any]]:
        if not isinstance(body, dict):
            raise bad("a JSON body is required")
        if top := [k for k in ENTITY if k in body]:
            raise bad(f"Top-level entity parameters {top} are not supported; use filters")
        filters = body.get("filters")
        if filters is None:
            raise bad("filters are required")
        validate(filters, root=True)
        if not positive_entity(filters):
            raise bad("filters must include at least one entity ID")
        if search and "keywords" in mentioned_keys(filters):
            raise ApiError(500, {"detail": "Internal server error"})  # MEM-5746
        null_scoped = (
            set(ENTITY) - mentioned(filters, set()) if self.scoping == "implicit-null" else set()
        )
        return [
            m
            for m in self.memories.values()
            if evaluate(filters, m) and all(m[k] is None for k in null_scoped)
        ]

    def search(self, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict) or not str(body.get("query") or "").strip():
            raise bad("query must be a non-empty string")
        top_k = body.get("top_k", 10)
        threshold = body.get("threshold", 0.1)
        if not isinstance(top_k, int) or not 1 <= top_k <= 1000:
            raise bad("top_k must be an integer in 1..1000")
        query = set(_WORD.findall(body["query"].lower()))
        scored = []
        for memory in self._filtered(body, search=True):
            words = set(_WORD.findall(memory["memory"].lower()))
            score = len(query & words) / len(query) if query else 0.0
            if score >= threshold:
                scored.append((score, memory))
        scored.sort(key=lambda pair: (-pair[0], pair[1]["created_at"]))
        return {
            "results": [{**self._shape(m, run_key="run_id"), "score": s} for s, m in scored[:top_k]]
        }

    def list_memories(self, body: Any, query: dict[str, list[str]]) -> dict[str, Any]:
        try:
            page = int(query.get("page", ["1"])[0])
            size = int(query.get("page_size", ["100"])[0])
        except ValueError:
            raise bad("page and page_size must be integers") from None
        if page < 1 or not 1 <= size <= 200:
            raise bad("page must be >= 1 and page_size in 1..200")
        rows = sorted(self._filtered(body, search=False), key=lambda m: (m["created_at"], m["id"]))
        start = (page - 1) * size
        if start and start >= len(rows):
            raise ApiError(404, {"detail": "Invalid page."})
        chunk = rows[start : start + size]
        more = start + size < len(rows)
        return {
            "count": len(rows),
            "next": f"{self.url}/v3/memories/?page={page + 1}&page_size={size}" if more else None,
            "previous": f"{self.url}/v3/memories/?page={page - 1}&page_size={size}"
            if page > 1
            else None,
            "results": [self._shape(m, run_key="session_id") for m in chunk],
        }

    def update(self, memory: dict[str, Any], body: Any) -> dict[str, Any]:
        if not isinstance(body, dict) or not {"text", "metadata", "expiration_date"} & set(body):
            raise bad("one of text, metadata or expiration_date is required")
        old = memory["memory"]
        if "text" in body:
            memory["memory"] = body["text"]
        if "metadata" in body:
            if not isinstance(body["metadata"], dict):
                raise bad("metadata must be an object")
            memory["metadata"] = dict(body["metadata"])  # replaced whole, never merged
        memory["updated_at"] = now()
        self.history[memory["id"]].append(
            self._history_entry(memory["id"], old, memory["memory"], "UPDATE")
        )
        return self._shape(memory, run_key="session_id")

    def _memory(self, memory_id: str) -> dict[str, Any]:
        if not _UUID.match(memory_id):
            raise ApiError(400, {"error": "memory_id should be a valid UUID"})
        memory = self.memories.get(memory_id)
        if memory is None:
            raise ApiError(404, {"error": "Memory not found!"})
        return memory

    @staticmethod
    def _shape(memory: dict[str, Any], *, run_key: str) -> dict[str, Any]:
        shaped = {k: v for k, v in memory.items() if k != "run_id"}
        shaped[run_key] = memory["run_id"]
        shaped["expiration_date"] = None
        return shaped


def mentioned_keys(node: Any) -> set[str]:
    keys: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            keys.add(key)
            if key in LOGICAL:
                keys |= mentioned_keys(value)
    elif isinstance(node, list):
        for child in node:
            keys |= mentioned_keys(child)
    return keys
