"""The mem0 Platform's wire shapes: our filter in its v2 grammar, and its answers as records.

Pure functions, no I/O: what :mod:`executive.memory.store.platform` sends and reads back.
"""

from __future__ import annotations

from typing import Any

from executive.memory.store.base import Filter

ENTITY_FIELDS = ("user_id", "agent_id", "app_id", "run_id")

# Matches every memory with at least one entity id, which is every Platform memory (an add
# without one is rejected). Mentioning all four fields keeps any implicit null scoping off.
EVERYTHING: dict[str, Any] = {"AND": [{"OR": [{name: "*"} for name in ENTITY_FIELDS]}]}


def compile_filter(where: Filter | None) -> dict[str, Any]:
    """The neutral filter in the Platform's v2 filter grammar (``filters`` of search/get_all),
    always ``{"AND": [...]}``.

    * Entity ids: ``{"user_id": u}`` and the like, several apps ``{"app_id": {"in": [...]}}``
      (entity fields accept ``eq``, ``ne``, ``in`` and ``*``). An entity field the filter
      leaves open is sent as ``"*"`` (non-null): under the implicit null scoping of the older
      docs an unmentioned field means "must be null", which would hide every record we write
      (ours carry all four ids); under the current docs it costs nothing. ``user_id`` and
      ``agent_id`` may sit in one AND: Direct Import (``infer=False``) sets both. No entity id
      at all asks for "any entity" (:data:`EVERYTHING`).
    * Metadata, equality only (the Platform accepts bare/``eq``/``ne``/``contains``, never
      ``in``/``gt``/``gte``): several types are an ``OR`` of equalities (the documented
      workaround), an extra pair ``{"metadata": {k: {"contains": v}}}`` (a list field such as
      ``tags`` holds the value).
    * ``min_confidence`` is never sent: it is applied in the daemon after over-fetching.
    """
    if where is None:
        return EVERYTHING
    entities: dict[str, Any] = dict.fromkeys(ENTITY_FIELDS)
    clauses: list[dict[str, Any]] = []
    for name, test, value in where.conditions():
        if name in entities and test in ("eq", "in"):
            entities[name] = {"in": list(value)} if test == "in" else value
        elif test == "in":  # several types: an OR of equalities
            clauses.append({"OR": [{"metadata": {name: v}} for v in value]})
        elif test == "eq":
            clauses.append({"metadata": {name: value}})
        elif test == "has":
            # A list field (tags) contains the value. ``contains`` also matches a string
            # holding it, which the post-filter narrows back to equality.
            clauses.append({"metadata": {name: {"contains": value}}})
    if all(value is None for value in entities.values()):
        return {"AND": EVERYTHING["AND"] + clauses}
    return {"AND": [{k: "*" if v is None else v} for k, v in entities.items()] + clauses}


def rows_of(body: Any) -> list[dict[str, Any]]:
    rows = body.get("results") if isinstance(body, dict) else body
    return [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []


def memory_id_of(results: Any) -> str | None:
    """The id of the memory an add created: the first ADD entry of an event's results."""
    for row in rows_of(results):
        if str(row.get("event") or "ADD").upper() != "ADD":
            continue
        value = row.get("id") or row.get("memory_id")
        if value:
            return str(value)
    return None


def event_head(body: Any) -> dict[str, Any]:
    """Where the add response keeps ``event_id``/``status``: top level, or the first result."""
    if isinstance(body, dict) and ("event_id" in body or "eventId" in body or "status" in body):
        return body
    rows = rows_of(body)
    return rows[0] if rows else {}


def status_code(exc: BaseException) -> int | None:
    info = getattr(exc, "debug_info", None)
    if isinstance(info, dict) and isinstance(info.get("status_code"), int):
        return info["status_code"]
    response = getattr(exc, "response", None)
    code = getattr(response, "status_code", None)
    return code if isinstance(code, int) else None


def describe(exc: BaseException) -> str:
    message = getattr(exc, "message", None)
    code = status_code(exc)
    where = f" (HTTP {code})" if code is not None else ""
    return f"{type(exc).__name__}{where}: {message if message is not None else exc}"
