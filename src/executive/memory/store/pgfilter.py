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


def compile_sql(where: Filter | None) -> tuple[sql.Composable, list[Any]]:
    """``(condition, params)``; the condition is ``TRUE`` for no filter."""
    parts: list[sql.Composable] = []
    params: list[Any] = []
    for name, test, value in where.conditions() if where else ():
        field = sql.Literal(name)
        if test == "eq":
            parts.append(sql.SQL("payload->>{} = %s").format(field))
            params.append(value)
        elif test == "in":
            parts.append(sql.SQL("payload->>{} = ANY(%s)").format(field))
            params.append(list(value))
        elif test == "has":
            # A list field (tags) matches when it holds the value, as Filter.matches says.
            parts.append(sql.SQL("(payload @> %s::jsonb OR payload @> %s::jsonb)"))
            params += [json.dumps({name: value}), json.dumps({name: [value]})]
        else:
            # Only numbers compare: a non-number never matches (and never fails the query).
            parts.append(sql.SQL(CONFIDENCE + " >= %s"))
            params.append(float(value))
    if not parts:
        return sql.SQL("TRUE"), []
    return sql.SQL(" AND ").join(parts), params
