"""Charts drawn on the server as inline SVG: no JavaScript library, nothing to vendor.

Two shapes cover the pages: lines over time (hook durations, memories by type) and grouped
bars (attempts per outcome). Every label is escaped; the numbers are ours.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import datetime

from markupsafe import Markup, escape

WIDTH, HEIGHT = 640, 220
LEFT, RIGHT, TOP, BOTTOM = 48, 130, 12, 28
PLOT_W, PLOT_H = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
# Distinguishable colours (Okabe-Ito), cycled by series.
COLOURS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#F0E442"]


def _frame(title: str, body: list[str]) -> Markup:
    return Markup(
        f'<svg class="chart" role="img" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'xmlns="http://www.w3.org/2000/svg"><title>{escape(title)}</title>'
        + "".join(body)
        + "</svg>"
    )


def _empty(title: str) -> Markup:
    text = f'<text x="{WIDTH / 2}" y="{HEIGHT / 2}" text-anchor="middle" class="muted">'
    return _frame(title, [f"{text}no data yet</text>"])


def _nice_top(top: float, counts: bool) -> float:
    """Counts get whole-number gridlines (a top divisible by the four gridline steps)."""
    if not counts:
        return top or 1.0
    return float(max(4, math.ceil(top / 4) * 4))


def _y_axis(top: float, unit: str) -> list[str]:
    parts = []
    for i in range(5):
        value = top * i / 4
        y = TOP + PLOT_H - PLOT_H * i / 4
        parts.append(
            f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>'
            f'<text x="{LEFT - 4}" y="{y + 4:.1f}" text-anchor="end">{value:.3g}{escape(unit)}</text>'
        )
    return parts


def _legend(names: Sequence[str]) -> list[str]:
    parts = []
    for i, name in enumerate(names):
        y = TOP + 14 * i + 8
        colour = COLOURS[i % len(COLOURS)]
        parts.append(
            f'<rect x="{WIDTH - RIGHT + 8}" y="{y - 8}" width="10" height="10" fill="{colour}"/>'
            f'<text x="{WIDTH - RIGHT + 22}" y="{y + 1}">{escape(name)}</text>'
        )
    return parts


def lines(
    title: str, series: Mapping[str, Sequence[tuple[datetime, float]]], unit: str = ""
) -> Markup:
    """One polyline per series over a shared time axis; y starts at zero."""
    points = [p for s in series.values() for p in s]
    if not points:
        return _empty(title)
    t0 = min(t for t, _ in points).timestamp()
    t1 = max(t for t, _ in points).timestamp()
    span = (t1 - t0) or 1.0
    top = _nice_top(max(v for _, v in points), all(isinstance(v, int) for _, v in points))
    body = _y_axis(top, unit)
    for i, (name, values) in enumerate(series.items()):
        coords = " ".join(
            f"{LEFT + PLOT_W * (t.timestamp() - t0) / span:.1f},"
            f"{TOP + PLOT_H - PLOT_H * v / top:.1f}"
            for t, v in sorted(values)
        )
        colour = COLOURS[i % len(COLOURS)]
        body.append(
            f'<polyline points="{coords}" fill="none" stroke="{colour}" stroke-width="2" '
            f'data-series="{escape(name)}"/>'
        )
        for coord in coords.split():
            x, y = coord.split(",")
            body.append(f'<circle cx="{x}" cy="{y}" r="2.5" fill="{colour}"/>')
    first = datetime.fromtimestamp(t0).strftime("%m-%d %H:%M")
    last = datetime.fromtimestamp(t1).strftime("%m-%d %H:%M")
    body.append(f'<text x="{LEFT}" y="{HEIGHT - 8}">{first}</text>')
    body.append(f'<text x="{WIDTH - RIGHT}" y="{HEIGHT - 8}" text-anchor="end">{last}</text>')
    body += _legend(list(series))
    return _frame(title, body)


def bars(title: str, groups: Mapping[str, Mapping[int, int]], x_label: str = "") -> Markup:
    """Counts per integer category (x), one bar per group side by side."""
    xs = sorted({x for g in groups.values() for x in g})
    if not xs:
        return _empty(title)
    top = _nice_top(max(n for g in groups.values() for n in g.values()), counts=True)
    slot = PLOT_W / len(xs)
    bar_w = slot * 0.8 / max(1, len(groups))
    body = _y_axis(top, "")
    for j, x in enumerate(xs):
        body.append(
            f'<text x="{LEFT + slot * (j + 0.5):.1f}" y="{HEIGHT - 12}" '
            f'text-anchor="middle">{x}</text>'
        )
        for i, (name, counts) in enumerate(groups.items()):
            n = counts.get(x, 0)
            h = PLOT_H * n / top
            body.append(
                f'<rect x="{LEFT + slot * j + slot * 0.1 + bar_w * i:.1f}" '
                f'y="{TOP + PLOT_H - h:.1f}" width="{bar_w:.1f}" height="{h:.1f}" '
                f'fill="{COLOURS[i % len(COLOURS)]}" data-series="{escape(name)}">'
                f"<title>{escape(name)}: {n} at {x}</title></rect>"
            )
    body.append(
        f'<text x="{WIDTH - RIGHT}" y="{HEIGHT - 1}" text-anchor="end">{escape(x_label)}</text>'
    )
    body += _legend(list(groups))
    return _frame(title, body)
