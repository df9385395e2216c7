"""A small PromQL evaluator for the constructs deploy/prometheus-alerts.yml uses, and a runner
of promtool's ``test rules`` files on it.

CI has no promtool, so the suite checks every alert rule with this: the same test file,
the same semantics as Prometheus 2.x for what it supports (instant selectors with a 5-minute
lookback, range selectors closed at both ends, ``increase``/``delta``/``rate`` with
Prometheus' extrapolation, ``sum [by (...)]``, ``vector(s)``, ``+ - * /`` between a vector and
a number or two vectors matched one to one (``on``/``ignoring``), comparisons against a
number, ``and``/``or``/``unless`` with ``on(...)``/``ignoring(...)``, alerting rules with
``for``).
Anything else is refused with :class:`Unsupported` naming it: a rule written with a
construct this evaluator does not know fails the suite rather than passing unchecked.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

LOOKBACK = 300.0  # seconds: an instant selector sees the latest sample this far back

Labels = frozenset[tuple[str, str]]


class Unsupported(ValueError):
    """A construct this evaluator does not implement."""


@dataclass
class Series:
    labels: Labels
    samples: list[tuple[float, float]] = field(default_factory=list)  # (seconds, value), sorted


@dataclass(frozen=True)
class Sample:
    labels: Labels
    value: float


def labels_of(mapping: Mapping[str, str]) -> Labels:
    return frozenset(mapping.items())


def without_name(labels: Labels) -> Labels:
    return frozenset((k, v) for k, v in labels if k != "__name__")


# --------------------------------------------------------------------------- durations


_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}


def seconds(text: str | int | float) -> float:
    """A Prometheus duration ("1h30m", "15m", "90s") in seconds."""
    if isinstance(text, int | float):
        return float(text)
    parts = re.findall(r"(\d+)(ms|s|m|h|d|w|y)", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise Unsupported(f"not a duration: {text!r}")
    return float(sum(int(n) * _UNITS[u] for n, u in parts))


# --------------------------------------------------------------------------- parsing

_TOKEN = re.compile(
    r"""\s*(?:
    (?P<number>\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)
    |(?P<duration>\[[0-9a-z]+\])
    |(?P<string>"(?:[^"\\]|\\.)*")
    |(?P<op>==|!=|>=|<=|=~|!~|>|<|=|\(|\)|\{|\}|,|\+|-|\*|/)
    |(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)
    )""",
    re.VERBOSE,
)

_COMPARISONS = {"==", "!=", ">", "<", ">=", "<="}
_ADDITIVE = {"+", "-"}
_MULTIPLICATIVE = {"*", "/"}
_SET_OPS = {"and", "or", "unless"}
_RANGE_FUNCTIONS = {"increase", "delta", "rate"}


def tokens(expr: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    expr = expr.strip()
    while pos < len(expr):
        match = _TOKEN.match(expr, pos)
        if match is None or match.end() == pos:
            raise Unsupported(f"cannot read {expr[pos:]!r} in {expr!r}")
        kind = match.lastgroup or ""
        out.append((kind, match.group(kind)))
        pos = match.end()
    return out


class _Parser:
    """Precedence, lowest first: or; and, unless; comparisons (Prometheus' own order)."""

    def __init__(self, expr: str) -> None:
        self.expr = expr
        self.toks = tokens(expr)
        self.i = 0

    def peek(self) -> tuple[str, str] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, value: str | None = None) -> tuple[str, str]:
        tok = self.peek()
        if tok is None or (value is not None and tok[1] != value):
            raise Unsupported(f"expected {value or 'more'} at token {self.i} of {self.expr!r}")
        self.i += 1
        return tok

    def parse(self) -> Any:
        node = self.set_op({"or"})
        if self.peek() is not None:
            raise Unsupported(f"unexpected {self.peek()} in {self.expr!r}")
        return node

    def set_op(self, ops: set[str]) -> Any:
        lower = {"or": {"and", "unless"}}.get(next(iter(ops)))
        node = self.set_op(lower) if lower else self.comparison()
        while (tok := self.peek()) is not None and tok[1] in ops:
            self.take()
            matching = self.matching()
            right = self.set_op(lower) if lower else self.comparison()
            node = ("set", tok[1], matching, node, right)
        return node

    def matching(self) -> tuple[str, tuple[str, ...]] | None:
        tok = self.peek()
        if tok is None or tok[1] not in ("on", "ignoring"):
            return None
        self.take()
        return tok[1], self.label_list()

    def label_list(self) -> tuple[str, ...]:
        self.take("(")
        names: list[str] = []
        while self.peek() is not None and self.peek()[1] != ")":  # type: ignore[index]
            names.append(self.take()[1])
            if self.peek() is not None and self.peek()[1] == ",":  # type: ignore[index]
                self.take(",")
        self.take(")")
        return tuple(names)

    def comparison(self) -> Any:
        node = self.arithmetic(_ADDITIVE)
        while (tok := self.peek()) is not None and tok[1] in _COMPARISONS:
            self.take()
            if self.peek() is not None and self.peek()[1] == "bool":  # type: ignore[index]
                raise Unsupported(f"'bool' comparisons in {self.expr!r}")
            matching = self.matching()
            node = ("compare", tok[1], matching, node, self.arithmetic(_ADDITIVE))
        return node

    def arithmetic(self, ops: set[str]) -> Any:
        tighter = ops is _ADDITIVE
        node = self.arithmetic(_MULTIPLICATIVE) if tighter else self.primary()
        while (tok := self.peek()) is not None and tok[1] in ops:
            self.take()
            matching = self.matching()
            right = self.arithmetic(_MULTIPLICATIVE) if tighter else self.primary()
            node = ("arith", tok[1], matching, node, right)
        return node

    def primary(self) -> Any:
        kind, value = self.take()
        if kind == "number":
            return ("number", float(value))
        if value == "(":
            node = self.set_op({"or"})
            self.take(")")
            return node
        if kind != "name":
            raise Unsupported(f"unexpected {value!r} in {self.expr!r}")
        if value == "sum":
            by = None
            if self.peek() is not None and self.peek()[1] == "by":  # type: ignore[index]
                self.take()
                by = self.label_list()
            self.take("(")
            inner = self.set_op({"or"})
            self.take(")")
            return ("sum", by, inner)
        if value == "vector":
            self.take("(")
            number = self.take()
            self.take(")")
            return ("vector", float(number[1]))
        if value in _RANGE_FUNCTIONS:
            self.take("(")
            selector = self.selector(self.take()[1])
            kind, window = self.take()
            if kind != "duration":
                raise Unsupported(f"{value}() needs a range selector in {self.expr!r}")
            self.take(")")
            return ("range", value, selector, seconds(window[1:-1]))
        if self.peek() is not None and self.peek()[1] == "(":  # type: ignore[index]
            raise Unsupported(f"function {value}() in {self.expr!r}")
        return ("select", self.selector(value))

    def selector(self, name: str) -> tuple[tuple[str, str, str], ...]:
        matchers = [("__name__", "=", name)]
        if self.peek() is not None and self.peek()[1] == "{":  # type: ignore[index]
            self.take("{")
            while self.peek()[1] != "}":  # type: ignore[index]
                label = self.take()[1]
                op = self.take()[1]
                if op != "=":
                    raise Unsupported(f"label matcher {op!r} in {self.expr!r}")
                matchers.append((label, op, self.take()[1][1:-1]))
                if self.peek()[1] == ",":  # type: ignore[index]
                    self.take(",")
            self.take("}")
        return tuple(matchers)


def parse(expr: str) -> Any:
    return _Parser(expr).parse()


# --------------------------------------------------------------------------- evaluating


def _matches(series: Series, matchers: Iterable[tuple[str, str, str]]) -> bool:
    labels = dict(series.labels)
    return all(labels.get(name, "") == value for name, _, value in matchers)


def _extrapolated(
    points: list[tuple[float, float]], start: float, end: float, function: str
) -> float | None:
    """Prometheus 2.x ``extrapolatedRate`` (promql/functions.go), for one series."""
    if len(points) < 2:
        return None
    counter = function in ("increase", "rate")
    first, last = points[0], points[-1]
    result = last[1] - first[1]
    if counter:
        for (_, before), (_, after) in pairwise(points):
            if after < before:
                result += before
    to_start, to_end = first[0] - start, end - last[0]
    sampled = last[0] - first[0]
    average = sampled / (len(points) - 1)
    if counter and result > 0 and first[1] >= 0:
        to_start = min(to_start, sampled * (first[1] / result))
    threshold = average * 1.1
    interval = sampled
    interval += to_start if to_start < threshold else average / 2
    interval += to_end if to_end < threshold else average / 2
    result *= interval / sampled
    if function == "rate":
        result /= end - start
    return result


def _signature(labels: Labels, matching: tuple[str, tuple[str, ...]] | None) -> Labels:
    if matching is None:
        return without_name(labels)
    how, names = matching
    if how == "on":
        return frozenset((k, v) for k, v in labels if k in names)
    return frozenset((k, v) for k, v in without_name(labels) if k not in names)


_COMPARE = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    ">": lambda a, b: a > b,
    "<": lambda a, b: a < b,
    ">=": lambda a, b: a >= b,
    "<=": lambda a, b: a <= b,
}


def evaluate(node: Any, series: list[Series], t: float) -> list[Sample] | float:
    """The value of ``node`` at ``t`` seconds: an instant vector, or a number."""
    kind = node[0]
    if kind == "number":
        return node[1]
    if kind == "vector":
        return [Sample(frozenset(), node[1])]
    if kind == "select":
        out = []
        for s in series:
            if _matches(s, node[1]):
                seen = [p for p in s.samples if t - LOOKBACK < p[0] <= t]
                if seen and not math.isnan(seen[-1][1]):
                    out.append(Sample(s.labels, seen[-1][1]))
        return out
    if kind == "range":
        _, function, matchers, window = node
        out = []
        for s in series:
            if _matches(s, matchers):
                points = [p for p in s.samples if t - window <= p[0] <= t]
                value = _extrapolated(points, t - window, t, function)
                if value is not None:
                    out.append(Sample(without_name(s.labels), value))
        return out
    if kind == "sum":
        _, by, inner = node
        sums: dict[Labels, float] = {}
        for sample in _vector(evaluate(inner, series, t)):
            key = frozenset((k, v) for k, v in sample.labels if by and k in by)
            sums[key] = sums.get(key, 0.0) + sample.value
        return [Sample(k, v) for k, v in sums.items()]
    if kind == "compare":
        _, op, matching, left, right = node
        lhs, rhs = _vector(evaluate(left, series, t)), evaluate(right, series, t)
        if isinstance(rhs, float):
            return [s for s in lhs if _COMPARE[op](s.value, rhs)]
        # Two vectors: a left sample stays (as it is) when its match on the right holds.
        by_key = {_signature(s.labels, matching): s for s in rhs}
        if len(by_key) != len(rhs):
            raise Unsupported("many-to-one matching (group_left/group_right)")
        return [
            s
            for s in lhs
            if (m := by_key.get(_signature(s.labels, matching))) is not None
            and _COMPARE[op](s.value, m.value)
        ]
    if kind == "arith":
        _, op, matching, left, right = node
        return _arithmetic(
            _ARITH[op], matching, evaluate(left, series, t), evaluate(right, series, t)
        )
    if kind == "set":
        _, op, matching, left, right = node
        lhs, rhs = _vector(evaluate(left, series, t)), _vector(evaluate(right, series, t))
        right_keys = {_signature(s.labels, matching) for s in rhs}
        if op == "and":
            return [s for s in lhs if _signature(s.labels, matching) in right_keys]
        if op == "unless":
            return [s for s in lhs if _signature(s.labels, matching) not in right_keys]
        left_keys = {_signature(s.labels, matching) for s in lhs}
        return lhs + [s for s in rhs if _signature(s.labels, matching) not in left_keys]
    raise Unsupported(f"node {kind}")


_ARITH = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a / b if b else math.copysign(math.inf, a) if a else math.nan,
}


def _arithmetic(
    fn: Any,
    matching: tuple[str, tuple[str, ...]] | None,
    lhs: list[Sample] | float,
    rhs: list[Sample] | float,
) -> list[Sample] | float:
    """Arithmetic drops the metric name; two vectors match one to one on their signature."""
    if isinstance(lhs, float) and isinstance(rhs, float):
        return float(fn(lhs, rhs))
    if isinstance(rhs, float):
        return [Sample(without_name(s.labels), fn(s.value, rhs)) for s in _vector(lhs)]
    if isinstance(lhs, float):
        return [Sample(without_name(s.labels), fn(lhs, s.value)) for s in rhs]
    right: dict[Labels, Sample] = {}
    for sample in rhs:
        key = _signature(sample.labels, matching)
        if key in right:
            raise Unsupported("many-to-one matching (group_left/group_right)")
        right[key] = sample
    keys = [_signature(s.labels, matching) for s in lhs]
    if len(set(keys)) != len(keys):
        raise Unsupported("duplicate series on the left of a one-to-one match")
    out = []
    for sample in lhs:
        match = right.get(_signature(sample.labels, matching))
        if match is not None:
            labels = (
                _signature(sample.labels, matching) if matching else without_name(sample.labels)
            )
            out.append(Sample(labels, fn(sample.value, match.value)))
    return out


def _vector(value: list[Sample] | float) -> list[Sample]:
    if isinstance(value, float):
        raise Unsupported("a number where an instant vector is needed")
    return value


def names(node: Any) -> set[str]:
    """The metric names an expression selects."""
    if node[0] == "select":
        return {node[1][0][2]}
    if node[0] == "range":
        return {node[2][0][2]}
    return set().union(
        *(names(n) for n in node[1:] if isinstance(n, tuple) and n and n[0] in _NODES)
    )


_NODES = {"number", "vector", "select", "range", "sum", "compare", "set", "arith"}


# --------------------------------------------------------------------------- alerting rules


@dataclass(frozen=True)
class Alert:
    labels: Labels
    annotations: Labels


def firing(rule: Mapping[str, Any], series: list[Series], at: float, step: float) -> list[Alert]:
    """The rule's alerts firing at ``at``, evaluated every ``step`` seconds from 0 (as a rule
    group is, and promtool's test runner does): an alert fires once its expression held at
    every evaluation for ``for``."""
    node = parse(rule["expr"])
    hold = seconds(rule.get("for", 0))
    active: dict[Labels, float] = {}  # alert labels -> first evaluation it held
    t = 0.0
    while t <= at + 1e-9:
        now = {}
        for sample in _vector(evaluate(node, series, t)):
            labels = without_name(sample.labels) | labels_of(rule.get("labels") or {})
            labels |= {("alertname", rule["alert"])}
            now[labels] = active.get(labels, t)
        active = now
        t += step
    annotations = labels_of(rule.get("annotations") or {})
    return sorted(
        (Alert(labels, annotations) for labels, since in active.items() if at - since >= hold),
        key=lambda a: sorted(a.labels),
    )


# --------------------------------------------------------------------------- promtool's format


_SERIES = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?$")
_EXPANDING = re.compile(r"^(-?[0-9.e+]+?)([+-][0-9.e]+)?x(\d+)$")


def parse_series(text: str) -> Labels:
    match = _SERIES.match(text.strip())
    if match is None:
        raise Unsupported(f"not a series: {text!r}")
    labels = {"__name__": match.group(1)}
    for part in filter(None, (p.strip() for p in (match.group(2) or "").split(","))):
        name, _, value = part.partition("=")
        labels[name.strip()] = value.strip().strip('"')
    return labels_of(labels)


def expand(values: str) -> list[float | None]:
    """promtool's values notation: ``a+bxn`` (n+1 values), ``a-bxn``, ``axn`` (``a+0xn``), a
    number, ``_``."""
    out: list[float | None] = []
    for word in values.split():
        if word == "_":
            out.append(None)
        elif match := _EXPANDING.match(word):
            start, n = float(match.group(1)), int(match.group(3))
            step = float(match.group(2) or 0)
            out.extend(start + i * step for i in range(n + 1))
        else:
            try:
                out.append(float(word))
            except ValueError:
                raise Unsupported(f"series value {word!r}") from None
    return out


def input_series(case: Mapping[str, Any]) -> list[Series]:
    interval = seconds(case.get("interval", "1m"))
    out = []
    for item in case.get("input_series") or []:
        points = [
            (i * interval, v) for i, v in enumerate(expand(str(item["values"]))) if v is not None
        ]
        out.append(Series(parse_series(item["series"]), points))
    return out


def expected(alert: Mapping[str, Any], rule: Mapping[str, Any]) -> Alert:
    labels = {**(alert.get("exp_labels") or {}), "alertname": rule["alert"]}
    return Alert(labels_of(labels), labels_of(alert.get("exp_annotations") or {}))


def run_case(
    rules: Mapping[str, Mapping[str, Any]], case: Mapping[str, Any], evaluation: float
) -> list[str]:
    """Every mismatch of one ``tests:`` entry (empty: it passes)."""
    series = input_series(case)
    problems = []
    for check in case.get("alert_rule_test") or []:
        rule = rules[check["alertname"]]
        at = seconds(check["eval_time"])
        got = firing(rule, series, at, evaluation)
        want = sorted(
            (expected(a, rule) for a in check.get("exp_alerts") or []),
            key=lambda a: sorted(a.labels),
        )
        if got != want:
            problems.append(
                f"{case.get('name', '?')}: {check['alertname']} at {check['eval_time']}: "
                f"expected {[dict(a.labels) for a in want]}, got {[dict(a.labels) for a in got]}"
                + ("" if [a.labels for a in got] != [a.labels for a in want] else " (annotations)")
            )
    return problems


def held(samples: Mapping[Labels, float], until: float, step: float = 60.0) -> list[Series]:
    """Series scraped once (a real daemon's /metrics), as Prometheus would see them scraped
    every ``step`` seconds with the same values until ``until``."""
    times = [i * step for i in range(int(until // step) + 1)]
    return [Series(labels, [(t, value) for t in times]) for labels, value in samples.items()]
