"""Our neutral :class:`Filter` as a SQL condition on the payload, with bind parameters.

Written here rather than through mem0's ``_build_filter_conditions``: every field is compared
as ``payload->>'field'``, exactly the expressions ``pgschema`` indexes, so the planner can use
them; and a value is always a parameter, never spliced into the text.
"""

from __future__ import annotations

import json
from typing import Any

from psycopg import sql

from executive.memory.store.base import Filter
from executive.memory.store.pgschema import CONFIDENCE

_SINGLE = ("user_id", "agent_id", "run_id", "env", "cohort", "key")


def compile_sql(where: Filter | None) -> tuple[sql.Composable, list[Any]]:
    """``(condition, params)``; the condition is ``TRUE`` for no filter."""
    if where is None:
        return sql.SQL("TRUE"), []
    parts: list[sql.Composable] = []
    params: list[Any] = []

    def equal(name: str, value: str) -> None:
        parts.append(sql.SQL("payload->>{} = %s").format(sql.Literal(name)))
        params.append(value)

    def one_of(name: str, values: tuple[str, ...]) -> None:
        if len(values) == 1:
            equal(name, values[0])
        elif values:
            parts.append(sql.SQL("payload->>{} = ANY(%s)").format(sql.Literal(name)))
            params.append(list(values))

    for name in _SINGLE:
        value = getattr(where, name)
        if value is not None:
            equal(name, value)
    one_of("app_id", where.app_ids)
    one_of("type", where.types)
    for name, value in where.metadata:
        # A list field (tags) matches when it holds the value, as Filter.matches says.
        parts.append(sql.SQL("(payload @> %s::jsonb OR payload @> %s::jsonb)"))
        params += [json.dumps({name: value}), json.dumps({name: [value]})]
    if where.min_confidence is not None:
        # Only numbers compare: a non-number never matches (and never fails the query).
        parts.append(sql.SQL(CONFIDENCE + " >= %s"))
        params.append(float(where.min_confidence))
    if not parts:
        return sql.SQL("TRUE"), []
    return sql.SQL(" AND ").join(parts), params
